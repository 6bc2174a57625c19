/* test_group_bound.c — the sync groups' cross-group bound (load_bound.h:
 * sync_loads_*) against its definition, worked out here by brute force: on
 * each resource carrying loads of several groups, taken in key order, the
 * groups starting at or after each start s cannot all finish before s +
 * the least latency + their bytes / capacity (load_floor_ns), and the group
 * that ends last there (the first in (start, group) order among equals) is
 * raised to the largest such bound. Random loads on a few resources (keys
 * below and past the array), both the full pass and the counts kept across
 * evaluations (loads at fixed addresses under one epoch), and ends drawn so
 * that many resources raise a group and many cannot: every group's end
 * must be the definition's, to the ns. */
#include "testutil.h"

#include <gsl/gsl_rng.h>

#include "sim/estimator/load_bound.h"
#include "sim/models/collective.h"

#define NG 6
#define NR 6

typedef struct ref_load {
    coll_load l;
    int group;
    int64_t start;
} ref_load;

static int by_start(const void *a, const void *b)
{
    const ref_load *x = a, *y = b;
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return x->group - y->group;
}

/* The definition, on the loads of each group (l[g][0..m[g])), into end. */
static int reference(coll_load l[NG][NR], const int *m, const int64_t *start, int ng,
                     const long *keys, int64_t *end)
{
    int raised = 0;
    for (int r = 0; r < NR; r++) { /* keys ascending */
        ref_load v[NG];
        int n = 0;
        for (int g = 0; g < ng; g++)
            for (int x = 0; x < m[g]; x++)
                if (l[g][x].key == keys[r])
                    v[n++] = (ref_load){l[g][x], g, start[g]};
        if (n < 2)
            continue;
        qsort(v, (size_t)n, sizeof *v, by_start);
        int64_t bound = 0;
        for (int i = 0; i < n; i++) {
            double bytes = 0, lat = v[n - 1].l.min_lat;
            long flows = 0;
            for (int x = n - 1; x >= i; x--) { /* the same order of additions */
                bytes += v[x].l.bytes;
                flows += v[x].l.flows;
                lat = v[x].l.min_lat < lat ? v[x].l.min_lat : lat;
            }
            int64_t b = t_add(v[i].start, load_floor_ns(lat, bytes, v[i].l.cap, flows));
            bound = b > bound ? b : bound;
        }
        int last = v[0].group;
        for (int i = 1; i < n; i++)
            last = end[v[i].group] > end[last] ? v[i].group : last;
        if (bound > end[last]) {
            end[last] = bound;
            raised++;
        }
    }
    return raised;
}

static void test_group_bound_by_definition(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    const long keys[NR] = {0, 1, 2, 3, 40, 900};
    const double cap[NR] = {1.25e9, 1.25e8, 5e8, 1.25e9, 4e7, 2.5e8};
    sync_loads kept = {0};
    long raised = 0, resources = 0;
    for (int trial = 0; trial < 3000; trial++) {
        int ng = 2 + (int)gsl_rng_uniform_int(r, NG - 1), m[NG];
        coll_load l[NG][NR];
        int64_t start[NG], want[NG], got[NG], again[NG];
        for (int g = 0; g < ng; g++) {
            m[g] = 0;
            for (int k = 0; k < NR; k++)
                if (gsl_rng_uniform(r) < 0.6)
                    l[g][m[g]++] = (coll_load){keys[k], cap[k], 1e5 + 4e7 * gsl_rng_uniform(r),
                                               1e-4 * (double)gsl_rng_uniform_int(r, 50),
                                               1 + (int)gsl_rng_uniform_int(r, 9)};
            start[g] = (int64_t)gsl_rng_uniform_int(r, 40000000);
            want[g] = got[g] = start[g] + (int64_t)gsl_rng_uniform_int(r, 900000000);
        }
        int64_t base[NG];
        memcpy(base, got, sizeof base);
        raised += reference(l, m, start, ng, keys, want);
        for (int k = 0; k < NR; k++) {
            int on = 0;
            for (int g = 0; g < ng; g++)
                for (int x = 0; x < m[g]; x++)
                    on += l[g][x].key == keys[k];
            resources += on > 1;
        }
        /* the full pass, then twice with the counts kept (epoch 1: the loads
         * stay at these addresses), the second time against the first's */
        for (int pass = 0; pass < 3; pass++) {
            int64_t *out = pass < 2 ? got : again;
            memcpy(out, base, sizeof base);
            timing tm = {.group_end = out};
            sync_loads_reset(&kept);
            kept.epoch = pass == 0 ? 0 : (unsigned long)trial + 1;
            for (int g = 0; g < ng; g++)
                assert_int_equal(sync_loads_push(&kept, l[g], m[g], g, start[g]), 0);
            /* every key in the array, or those past 4 through the hash table */
            assert_int_equal(sync_loads_bound(&kept, trial % 2 ? 4 : 1024, &tm), 0);
            for (int g = 0; g < ng; g++)
                if (out[g] != want[g])
                    fail_msg("trial %d pass %d group %d: end %lld, by definition %lld", trial,
                             pass, g, (long long)out[g], (long long)want[g]);
        }
    }
    fprintf(stderr, "%ld of %ld shared resources raised a group\n", raised, resources);
    /* both outcomes were common: the bound raised groups and left others */
    assert_true(raised > 1000);
    assert_true(resources - raised > 1000);
    sync_loads_free(&kept);
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_bound_by_definition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
