/* test_exact_walk.c — the exact referee's walk over placements
 * (planner/exact_space.c) against brute force: on small pools of three
 * sites with nodes of one and two GPUs, for every selection (shape and
 * counts per class) and a threshold between its best and worst grids,
 * every S x D grid of the selection's GPUs (all of them, every order) whose
 * unit bound (the least over microbatch sizes of exact_unit_bound's
 * formula, exact_grid_bound) lies below the threshold has a placement the
 * walk generates with that same bound. The walk's cuts (a partial row's
 * next cell and fastest GPU, the last row's entries into every node and
 * site it must still reach, the rows' sync) are lower bounds of that unit
 * bound, so they may only cut grids at or above the threshold; a grid is
 * matched by its bound since symmetric grids (rows permuted, identical
 * nodes swapped) have identical bounds. */
#include "testutil.h"

#include <gsl/gsl_rng.h>
#include <math.h>

#include "planner/encoding.h"
#include "planner/exact.h"
#include "planner/exact_space.h"

static const char *const TYPES[] = {"a100_sxm_80gb", "v100_sxm2_32gb", "t4", "l4", "h100_sxm"};

/* Three sites: x with two nodes of one GPU, y with a node of two, z with a
 * node of one (5 GPUs); types, WAN and LAN speeds from the seed. */
static void walk_topology(int seed, char *buf, size_t cap)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)(311 + seed));
    const char *ty[3];
    for (int i = 0; i < 3; i++)
        ty[i] = TYPES[gsl_rng_uniform_int(r, 5)];
    double w[3], l[3];
    for (int i = 0; i < 3; i++) {
        w[i] = 0.5 + 10 * gsl_rng_uniform(r);
        l[i] = 2 + 60 * gsl_rng_uniform(r);
    }
    snprintf(buf, cap,
             "{\"name\":\"walk%d\",\"sites\":["
             "{\"id\":\"x\",\"nodes\":[{\"gpu\":\"%s\",\"count\":1},{\"gpu\":\"%s\",\"count\":1}],"
             "\"lan\":{\"gbps\":%.1f,\"latency_ms\":0.2}},"
             "{\"id\":\"y\",\"nodes\":[{\"gpu\":\"%s\",\"count\":2}],\"lan\":{\"gbps\":10,"
             "\"latency_ms\":0.5}},"
             "{\"id\":\"z\",\"nodes\":[{\"gpu\":\"%s\",\"count\":1}],\"lan\":{\"gbps\":10,"
             "\"latency_ms\":0.5}}],"
             "\"links\":[{\"a\":\"x\",\"b\":\"y\",\"gbps\":%.2f,\"latency_ms\":%.1f},"
             "{\"a\":\"x\",\"b\":\"z\",\"gbps\":%.2f,\"latency_ms\":%.1f},"
             "{\"a\":\"y\",\"b\":\"z\",\"gbps\":%.2f,\"latency_ms\":%.1f}]}",
             seed, ty[0], ty[0], 1 + 20 * gsl_rng_uniform(r), ty[1], ty[2], w[0], l[0], w[1],
             l[1], w[2], l[2]);
    gsl_rng_free(r);
}

static void walk_job(int seed, job *j)
{
    model_spec m = {.layers = 4 + seed % 4, .hidden = 1024 + 512 * (seed % 3), .heads = 16,
                    .kv_heads = 16, .ffn = 4096, .vocab = 32000, .seq_len = 1024,
                    .bias = true, .learned_pos = true};
    snprintf(m.id, sizeof m.id, "tiny");
    job_defaults(j, &m);
    j->batch = 4 << (seed % 3);
}

static double grid_key(const exact_space *sp, int S, int D, const int *gpus)
{
    double k = INFINITY;
    for (int bi = 0; bi < sp->pr->nb; bi++)
        k = fmin(k, exact_grid_bound(sp, S, D, gpus, bi).time_s);
    return k;
}

static int group_of_gpu(const exact_space *sp, int g)
{
    const enc_problem *pr = sp->pr;
    for (int c = 0; c < pr->nclass; c++)
        if (pr->class_first[c] <= g && g < pr->class_first[c] + pr->class_size[c])
            return sp->group_of[c];
    return -1;
}

typedef struct grids {
    const exact_space *sp;
    int S, D, *cnt, *gpus;
    char *used;
    double *key;
    int n, cap;
} grids;

/* Every grid of distinct GPUs using cnt[g] GPUs of each group. */
static void grids_dfs(grids *b, int at)
{
    if (at == b->S * b->D) {
        if (b->n == b->cap) {
            b->cap = b->cap ? 2 * b->cap : 256;
            b->key = realloc(b->key, sizeof *b->key * (size_t)b->cap);
            assert_non_null(b->key);
        }
        b->key[b->n++] = grid_key(b->sp, b->S, b->D, b->gpus);
        return;
    }
    for (int g = 0; g < b->sp->pr->N; g++) {
        int gr = group_of_gpu(b->sp, g);
        if (b->used[g] || !b->cnt[gr])
            continue;
        b->used[g] = 1;
        b->cnt[gr]--;
        b->gpus[at] = g;
        grids_dfs(b, at + 1);
        b->cnt[gr]++;
        b->used[g] = 0;
    }
}

static void walk_keeps_grids_below_threshold(void **state)
{
    (void)state;
    long checked = 0, below = 0, cut = 0;
    for (int seed = 0; seed < 8; seed++) {
        char json[4096];
        walk_topology(seed, json, sizeof json);
        topology t;
        job j;
        gt_err e;
        assert_int_equal(topo_parse(&t, "walk", json, strlen(json), NULL, &e), 0);
        walk_job(seed, &j);
        enc_problem pr;
        assert_int_equal(enc_problem_init(&pr, &t, &j, NULL, &e), 0);
        exact_space *sp;
        assert_int_equal(exact_enumerate(&pr, 60, 1, &sp, &e), 0);
        int *cnt = malloc(sizeof *cnt * (size_t)sp->ngroup), *gpus = malloc(sizeof(int) * 8);
        char *used = calloc((size_t)pr.N, 1);
        assert_true(cnt && gpus && used);
        for (int s = 0; s < sp->nsel; s++) {
            const xsel *q = &sp->sel[s];
            memcpy(cnt, &sp->sel_cnt[q->off], sizeof *cnt * (size_t)sp->ngroup);
            grids b = {sp, q->S, q->D, cnt, gpus, used, NULL, 0, 0};
            grids_dfs(&b, 0);
            double lo = INFINITY, hi = 0;
            for (int i = 0; i < b.n; i++)
                if (isfinite(b.key[i])) {
                    lo = fmin(lo, b.key[i]);
                    hi = fmax(hi, b.key[i]);
                }
            if (!isfinite(lo)) {
                free(b.key);
                continue;
            }
            /* between the best and the worst grid: the walk has to cut */
            xprune x = {NULL, NULL, -INFINITY, lo + 0.6 * (hi - lo) + 1e-12};
            int *out = NULL;
            long n = 0, cap = 0;
            double next;
            assert_int_equal(exact_expand(sp, s, &x, &out, &n, &cap, &next), 0);
            for (int i = 0; i < b.n; i++) {
                checked++;
                if (!(b.key[i] < x.thr))
                    continue;
                below++;
                bool found = false;
                for (long k = 0; k < n && !found; k++) {
                    double pk = INFINITY;
                    for (int bi = 0; bi < pr.nb; bi++)
                        pk = fmin(pk, exact_unit_bound(sp, out[k], bi).time_s);
                    found = fabs(pk - b.key[i]) <= 1e-12 * fabs(b.key[i]);
                }
                if (!found)
                    fprintf(stderr, "seed %d selection %d (%d x %d): a grid of bound %.9g "
                                    "below %.9g was cut\n", seed, s, q->S, q->D, b.key[i], x.thr);
                assert_true(found);
            }
            cut += b.n;
            free(out);
            free(b.key);
        }
        free(cnt);
        free(gpus);
        free(used);
        exact_space_free(sp);
        enc_problem_free(&pr);
        topo_free(&t);
    }
    printf("walk: %ld grids of 8 three-site pools, %ld below the threshold, each generated\n",
           checked, below);
    (void)cut;
    assert_true(below > 0 && below < checked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(walk_keeps_grids_below_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
