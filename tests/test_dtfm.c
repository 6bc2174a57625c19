/* test_dtfm.c — DT-FM's native cost model and search against answers known
 * independently: the bottleneck perfect matching and the open-loop TSP path
 * equal brute force over all permutations (up to 7 nodes), PipelinePCost
 * equals brute force over all paths and matchings (up to 7 stages), DataPCost
 * and the total on a hand-computed 2 x 2 example, the decoded pipelines cost
 * exactly what the partition costs, crossover and local search keep groups
 * balanced, the search is deterministic, and on Yuan et al.'s scenarios the
 * search beats DT-FM's own random scheduler (5,000 random assignments) in
 * cases 1, 3, 4 and 5 — the paper's convergence study. */
#include "testutil.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>

#include "planner/baselines/dtfm.h"
#include "sim/inputs/topology.h"

static double urand(gsl_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * gsl_rng_uniform(r);
}

/* Next lexicographic permutation; 0 after the last. */
static int next_perm(int *a, int n)
{
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = n - 1;
    while (a[j] <= a[i])
        j--;
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (int x = i + 1, y = n - 1; x < y; x++, y--) {
        t = a[x];
        a[x] = a[y];
        a[y] = t;
    }
    return 1;
}

/* A problem over n = dpp*ddp devices with random links (1..100 ms,
 * 0.1..10 GB/s, asymmetric). */
static void random_problem(dtfm_problem *pr, gsl_rng *r, int dpp, int ddp)
{
    int n = dpp * ddp;
    double *lat = malloc(sizeof *lat * (size_t)(n * n)), *bw = malloc(sizeof *bw * (size_t)(n * n));
    for (int i = 0; i < n * n; i++) {
        lat[i] = urand(r, 0.001, 0.1);
        bw[i] = urand(r, 1e8, 1e10);
    }
    gt_err e;
    assert_int_equal(dtfm_problem_from_matrices(pr, dpp, ddp, lat, bw, 5e8, 1e9, &e), 0);
    free(lat);
    free(bw);
}

static double brute_matching(const double *w, int n, const int *a, const int *b, int k)
{
    int p[8];
    for (int i = 0; i < k; i++)
        p[i] = i;
    double best = INFINITY;
    do {
        double worst = 0;
        for (int i = 0; i < k; i++)
            worst = fmax(worst, w[a[i] * n + b[p[i]]]);
        best = fmin(best, worst);
    } while (next_perm(p, k));
    return best;
}

static void test_matching_brute_force(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    for (int k = 1; k <= 7; k++)
        for (int trial = 0; trial < 30; trial++) {
            dtfm_problem pr;
            random_problem(&pr, r, 2, k);
            int n = 2 * k, a[8], b[8], match[8];
            double *w = malloc(sizeof *w * (size_t)(n * n));
            for (int i = 0; i < n * n; i++) /* ties on purpose: few distinct values */
                w[i] = trial % 2 ? urand(r, 0, 1) : (double)gsl_rng_uniform_int(r, 4);
            for (int i = 0; i < k; i++) {
                a[i] = i;
                b[i] = k + i;
            }
            double got = dtfm_bottleneck_matching(&pr, w, a, b, k, match);
            assert_true(fabs(got - brute_matching(w, n, a, b, k)) < 1e-12);
            int used[8] = {0}; /* the matching is a permutation achieving it */
            for (int i = 0; i < k; i++) {
                assert_true(match[i] >= 0 && match[i] < k && !used[match[i]]);
                used[match[i]] = 1;
                assert_true(w[a[i] * n + b[match[i]]] <= got);
            }
            free(w);
            dtfm_problem_free(&pr);
        }
    gsl_rng_free(r);
}

static double path_len(const double *d, int m, const int *o)
{
    double s = 0;
    for (int i = 0; i + 1 < m; i++)
        s += d[o[i] * m + o[i + 1]];
    return s;
}

static double brute_path(const double *d, int m)
{
    int p[8];
    for (int i = 0; i < m; i++)
        p[i] = i;
    double best = INFINITY;
    do
        best = fmin(best, path_len(d, m, p));
    while (next_perm(p, m));
    return best;
}

static void test_open_path_brute_force(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    for (int m = 1; m <= 7; m++)
        for (int trial = 0; trial < 30; trial++) {
            double d[49];
            for (int i = 0; i < m; i++)
                for (int j = 0; j <= i; j++)
                    d[i * m + j] = d[j * m + i] = i == j ? 0 : urand(r, 0.1, 10);
            int order[8], seen[8] = {0};
            double got = dtfm_open_path(NULL, d, m, order);
            assert_true(fabs(got - brute_path(d, m)) < 1e-9);
            for (int i = 0; i < m; i++) {
                assert_false(seen[order[i]]);
                seen[order[i]] = 1;
            }
            assert_true(fabs(path_len(d, m, order) - got) < 1e-9);
        }
    /* beyond the exact limit: a valid path whose length is what it says */
    int m = DTFM_EXACT_PATH + 3, order[DTFM_EXACT_PATH + 3], seen[DTFM_EXACT_PATH + 3] = {0};
    double *d = malloc(sizeof *d * (size_t)(m * m));
    for (int i = 0; i < m; i++)
        for (int j = 0; j <= i; j++)
            d[i * m + j] = d[j * m + i] = i == j ? 0 : urand(r, 0.1, 10);
    double got = dtfm_open_path(NULL, d, m, order);
    for (int i = 0; i < m; i++) {
        assert_false(seen[order[i]]);
        seen[order[i]] = 1;
    }
    assert_true(fabs(path_len(d, m, order) - got) < 1e-9);
    free(d);
    gsl_rng_free(r);
}

/* PipelinePCost by brute force: every group order, every matching. */
static double brute_pipeline(const dtfm_problem *pr, const int *part)
{
    int w = pr->dpp, k = pr->ddp, n = pr->n, mem[8][8], cnt[8] = {0};
    for (int v = 0; v < n; v++)
        mem[part[v]][cnt[part[v]]++] = v;
    double bott[8][8];
    for (int a = 0; a < w; a++)
        for (int b = 0; b < w; b++)
            bott[a][b] = a == b ? 0 : brute_matching(pr->pp, n, mem[a], mem[b], k);
    int p[8];
    for (int i = 0; i < w; i++)
        p[i] = i;
    double best = INFINITY;
    do {
        double s = 0;
        for (int i = 0; i + 1 < w; i++)
            s += bott[p[i]][p[i + 1]];
        best = fmin(best, s);
    } while (next_perm(p, w));
    return best;
}

static void random_part(gsl_rng *r, int dpp, int ddp, int *part)
{
    int n = dpp * ddp, perm[64];
    for (int i = 0; i < n; i++)
        perm[i] = i;
    gsl_ran_shuffle(r, perm, (size_t)n, sizeof *perm);
    for (int i = 0; i < n; i++)
        part[perm[i]] = i / ddp;
}

static void test_pipeline_cost_brute_force(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 13);
    for (int dpp = 1; dpp <= 7; dpp++)
        for (int ddp = 1; ddp <= 3; ddp++)
            for (int trial = 0; trial < 4; trial++) {
                dtfm_problem pr;
                random_problem(&pr, r, dpp, ddp);
                int part[64], path[8];
                random_part(r, dpp, ddp, part);
                double got = dtfm_pipeline_cost(&pr, part, path);
                assert_true(fabs(got - brute_pipeline(&pr, part)) < 1e-9 * (1 + got));
                dtfm_problem_free(&pr);
            }
    gsl_rng_free(r);
}

/* Hand-computed 2 x 2: groups {0,1} and {2,3}, c_dp = 1 GB, c_pp = 0.5 GB.
 *   inside {0,1}: 10 ms, 1 GB/s both ways     -> 2 (0.01 + 1/(2*1))  = 1.02
 *   inside {2,3}: 50 ms, 2->3 0.5 GB/s        -> 2 (0.05 + 1/(2*0.5)) = 2.10
 *                        3->2 0.25 GB/s       -> 2 (0.05 + 1/(2*0.25)) = 4.10
 *   DataPCost = 4.10 (device 3)
 *   across: 100 ms, 1 GB/s (0.6 s) except 0<->2 at 0.25 GB/s (2.1 s): the
 *   matching {0-3, 1-2} has bottleneck 0.6, so PipelinePCost = 0.6 and the
 *   total is 4.10 + 2 x 0.6 = 5.30. */
static void test_data_cost_hand_2x2(void **state)
{
    (void)state;
    double lat[16], bw[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            bool same = (i < 2) == (j < 2);
            lat[i * 4 + j] = same ? (i < 2 ? 0.01 : 0.05) : 0.1;
            bw[i * 4 + j] = 1e9;
        }
    bw[2 * 4 + 3] = 0.5e9;
    bw[3 * 4 + 2] = 0.25e9;
    bw[0 * 4 + 2] = bw[2 * 4 + 0] = 0.25e9;
    dtfm_problem pr;
    gt_err e;
    assert_int_equal(dtfm_problem_from_matrices(&pr, 2, 2, lat, bw, 0.5e9, 1e9, &e), 0);
    int part[4] = {0, 0, 1, 1};
    assert_true(fabs(dtfm_data_cost(&pr, part) - 4.10) < 1e-12);
    double data, pipe;
    assert_true(fabs(dtfm_total_cost(&pr, part, &data, &pipe) - 5.30) < 1e-12);
    assert_true(fabs(data - 4.10) < 1e-12 && fabs(pipe - 0.6) < 1e-12);
    int pipes[4];
    assert_int_equal(dtfm_decode(&pr, part, pipes), 0);
    for (int r = 0; r < 2; r++) /* each pipeline pairs 0 with 3 or 1 with 2 */
        assert_int_equal(pipes[r * 2] + pipes[r * 2 + 1], 3);
    assert_true(fabs(dtfm_chain_cost(&pr, pipes, NULL, NULL) - 5.30) < 1e-12);
    dtfm_problem_free(&pr);
}

static void check_balanced(const int *part, int dpp, int ddp)
{
    int cnt[16] = {0};
    for (int v = 0; v < dpp * ddp; v++) {
        assert_true(part[v] >= 0 && part[v] < dpp);
        cnt[part[v]]++;
    }
    for (int g = 0; g < dpp; g++)
        assert_int_equal(cnt[g], ddp);
}

static void test_operators_keep_balance(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    int shapes[][2] = {{4, 6}, {8, 8}, {3, 1}, {1, 5}, {6, 2}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int dpp = shapes[s][0], ddp = shapes[s][1];
        dtfm_problem pr;
        random_problem(&pr, r, dpp, ddp);
        for (int trial = 0; trial < 40; trial++) {
            int a[64], b[64], c[64];
            random_part(r, dpp, ddp, a);
            random_part(r, dpp, ddp, b);
            dtfm_crossover(&pr, a, b, 5, r, c);
            check_balanced(c, dpp, ddp);
            int d[64];
            memcpy(d, c, sizeof d);
            assert_int_equal(dtfm_local_search(&pr, trial % 2 ? DTFM_GAIN_EDGECUT
                                                              : DTFM_GAIN_DTFM, d), 0);
            check_balanced(d, dpp, ddp);
            /* decoding any balanced partition costs what the partition costs */
            int pipes[64];
            assert_int_equal(dtfm_decode(&pr, d, pipes), 0);
            double want = dtfm_total_cost(&pr, d, NULL, NULL);
            assert_true(fabs(dtfm_chain_cost(&pr, pipes, NULL, NULL) - want) < 1e-9 * want);
        }
        dtfm_problem_free(&pr);
    }
    gsl_rng_free(r);
}

static void test_search_deterministic(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 19);
    dtfm_problem pr;
    random_problem(&pr, r, 4, 4);
    dtfm_ga_opts g;
    dtfm_ga_defaults(&g);
    g.trials = 200;
    int a[16], b[16];
    dtfm_ga_result ra, rb;
    gt_err e;
    assert_int_equal(dtfm_ga(&pr, &g, 5, a, &ra, &e), 0);
    assert_int_equal(dtfm_ga(&pr, &g, 5, b, &rb, &e), 0);
    assert_memory_equal(a, b, sizeof a);
    assert_true(ra.cost == rb.cost && ra.cost <= ra.first_cost);
    check_balanced(a, 4, 4);
    assert_true(fabs(dtfm_total_cost(&pr, a, NULL, NULL) - ra.cost) < 1e-12);
    dtfm_problem_free(&pr);
    gsl_rng_free(r);
}

/* --- Yuan et al.'s five scenarios ------------------------------------------- */

/* config.py's volumes in GB (send_activation_size, send_gradient_size). */
static const double YUAN_CPP[5] = {288.0 / 1024, 288.0 / 1024, 288.0 / 1024, 0.4, 0.5};
static const double YUAN_CDP[5] = {1.0, 1.0, 1.0, 0.7, 0.9};

/* DT-FM's random scheduler: the best of `count` random permutations, each
 * chunked into groups and chained in order (random_scheduler.py). */
static double random_scheduler(dtfm_problem *pr, gsl_rng *r, int count)
{
    int n = pr->n, perm[64], pipes[64];
    double best = INFINITY;
    for (int c = 0; c < count; c++) {
        for (int i = 0; i < n; i++)
            perm[i] = i;
        gsl_ran_shuffle(r, perm, (size_t)n, sizeof *perm);
        for (int s = 0; s < pr->dpp; s++)
            for (int k = 0; k < pr->ddp; k++)
                pipes[k * pr->dpp + s] = perm[s * pr->ddp + k];
        best = fmin(best, dtfm_chain_cost(pr, pipes, NULL, NULL));
    }
    return best;
}

static void test_yuan_convergence(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2022);
    for (int c = 1; c <= 5; c++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/yuan2022/case%d.json", c);
        topology t;
        gt_err e;
        if (topo_load(&t, path, NULL, &e)) {
            print_message("cannot load %s: %s\n", path, e.msg);
            fail();
        }
        assert_int_equal(t.ngpus, 64);
        int gpus[64];
        for (int g = 0; g < 64; g++)
            gpus[g] = g;
        dtfm_problem pr;
        assert_int_equal(dtfm_problem_init(&pr, &t, gpus, 8, 8, YUAN_CPP[c - 1] * 1e9,
                                           YUAN_CDP[c - 1] * 1e9, &e), 0);
        dtfm_ga_opts g;
        dtfm_ga_defaults(&g);
        g.trials = 400; /* 4,900 in DT-FM; fewer keeps the test fast */
        int best[64];
        dtfm_ga_result res;
        assert_int_equal(dtfm_ga(&pr, &g, 1, best, &res, &e), 0);
        double rnd = random_scheduler(&pr, r, 5000);
        print_message("case %d: DT-FM search %.4g s (initial best %.4g), random scheduler "
                      "best of 5000 %.4g s\n", c, res.cost, res.first_cost, rnd);
        if (c != 2)
            assert_true(res.cost < rnd);
        assert_true(res.cost <= res.first_cost);
        dtfm_problem_free(&pr);
        topo_free(&t);
    }
    gsl_rng_free(r);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matching_brute_force),
        cmocka_unit_test(test_open_path_brute_force),
        cmocka_unit_test(test_pipeline_cost_brute_force),
        cmocka_unit_test(test_data_cost_hand_2x2),
        cmocka_unit_test(test_operators_keep_balance),
        cmocka_unit_test(test_search_deterministic),
        cmocka_unit_test(test_yuan_convergence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
