/* test_coll_shape.c — the collective cache's second key (coll_shape.h): a
 * sync group new to the cache takes the collective priced for a group of
 * the same shape, its resources renamed. On random groups of four
 * topologies (three sites with shared WAN links and nodes of two GPUs;
 * per-pair WAN links by node and by GPU pair over nodes of mixed GPUs;
 * case5's eight sites of single-GPU nodes), under every sync kind and
 * sharding, each entry the cache hands out, renamed or not, must be what
 * the collective built and priced for that very group gives, to the bit:
 * its estimate, every load (resource key, capacity, bytes, least latency,
 * flows) in order, and every WAN flow's bytes in order. Sizes are drawn
 * from a few values so that shapes come back and the renaming runs. */
#include "est_plans.h"

#include "sim/estimator/coll_cache.h"
#include "sim/estimator/load_bound.h"
#include "sim/models/collective.h"
#include "sim/models/path_memo.h"

/* The entry x against group g's own collective. */
static void same_as_priced(const coll_entry *x, const topology *t, const workload *w,
                           const sync_group *g, sync_kind kind)
{
    gt_err e;
    coll_plan c;
    assert_int_equal(collective_build(&c, t, w, g, kind, &e), 0);
    coll_load *l;
    int64_t est;
    int n = collective_price(&c, t, w, &est, &l);
    assert_true(n >= 0);
    assert_true(x->est_ns == est);
    assert_int_equal(x->nloads, n);
    for (int i = 0; i < n; i++) {
        assert_true(x->loads[i].key == l[i].key);
        assert_int_equal(x->loads[i].flows, l[i].flows);
        assert_memory_equal(&x->loads[i].cap, &l[i].cap, sizeof l[i].cap);
        assert_memory_equal(&x->loads[i].bytes, &l[i].bytes, sizeof l[i].bytes);
        assert_memory_equal(&x->loads[i].min_lat, &l[i].min_lat, sizeof l[i].min_lat);
    }
    int nwan = 0;
    for (int f = 0; f < c.nflows; f++)
        if (t->gpus[w->lanes[c.flows[f].src_lane].gpu].site !=
            t->gpus[w->lanes[c.flows[f].dst_lane].gpu].site) {
            assert_true(nwan < x->nwan);
            assert_memory_equal(&x->wan[nwan], &c.flows[f].bytes, sizeof c.flows[f].bytes);
            nwan++;
        }
    assert_int_equal(nwan, x->nwan);
    free(l);
    collective_free(&c);
}

/* Groups of up to most members (distinct lanes, one lane per GPU) through
 * one cache; returns how many entries it made by renaming. */
static long random_groups(const topology *t, gsl_rng *r, int most, int trials)
{
    wl_lane lanes[64] = {{0}};
    for (int i = 0; i < t->ngpus; i++)
        lanes[i].gpu = i;
    workload w = {.lanes = lanes, .nlanes = t->ngpus};
    coll_cache cc = {0};
    path_memo pm = {0};
    assert_int_equal(coll_cache_begin(&cc, t), 0);
    assert_int_equal(path_memo_reset(&pm, t), 0);
    cc.pw.pm = &pm;
    int members[16];
    for (int trial = 0; trial < trials; trial++) {
        sync_kind kind = (sync_kind)pick(r, 0, 2);
        w.shard = kind == SYNC_HIERARCHICAL ? SHARD_NONE : (shard_kind)pick(r, 0, 4);
        int n = pick(r, 1, most < t->ngpus ? most : t->ngpus);
        pick_distinct(r, members, n, w.nlanes);
        sync_group g = {.nmembers = n, .members = members, .bytes = pick(r, 0, 1) ? 4e6 : 3e8,
                        .weights = 2e6, .passes = pick(r, 1, 2)};
        gt_err e;
        const coll_entry *x = coll_cache_get(&cc, t, &w, &g, kind, &e);
        assert_non_null(x);
        same_as_priced(x, t, &w, &g, kind);
    }
    long renamed = cc.renamed;
    coll_cache_free(&cc);
    path_memo_free(&pm);
    return renamed;
}

static const char *PER_PAIR =
    "{\"name\":\"pp\",\"sites\":["
    "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100,"
    "\"repeat\":2},{\"gpu\":\"v100_sxm2_32gb\",\"count\":2,\"nic_gbps\":25}],"
    "\"lan\":{\"gbps\":40,\"latency_ms\":0.2}},"
    "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100,"
    "\"repeat\":2}],\"lan\":{\"gbps\":100,\"latency_ms\":0}}],"
    "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":3,\"latency_ms\":10,"
    "\"sharing\":\"per_pair\"%s}],\"tcp\":{\"window_mb\":4,\"connections\":2}}";

static void test_renamed_equals_priced(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    gt_err e;
    for (int v = 0; v < 4; v++) {
        topology t;
        if (v == 0) {
            assert_int_equal(topo_parse(&t, "est", TOPO, strlen(TOPO), NULL, &e), 0);
        } else if (v < 3) {
            char buf[1024];
            int n = snprintf(buf, sizeof buf, PER_PAIR, v == 1 ? "" : ",\"pair\":\"gpu\"");
            if (topo_parse(&t, "pp", buf, (size_t)n, NULL, &e))
                fail_msg("%s", e.msg);
        } else {
            assert_int_equal(topo_load(&t, "topologies/yuan2022/case5.json", NULL, &e), 0);
        }
        long renamed = random_groups(&t, r, v == 3 ? 4 : 8, 1500);
        fprintf(stderr, "topology %d: %ld of 1500 entries renamed from a group of their shape\n",
                v, renamed);
        assert_true(renamed > 100);
        topo_free(&t);
    }
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_renamed_equals_priced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
