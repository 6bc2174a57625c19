/* test_exact_fill.c — the exact referee's pipeline-fill bound
 * (planner/exact_fill.c) against independent answers: its closed form for
 * equal stages, a brute force over every integral layer split of the
 * pipeline formula it bounds (enc_bound's per-stage terms), and a brute
 * force over every share of the microbatches between rows. (On real pools
 * the unit bound that includes it is checked below the estimate of random
 * plans in test_exact.c, placement_bounds_below_estimate.) */
#include "testutil.h"

#include <gsl/gsl_rng.h>
#include <math.h>

#include "planner/exact_space.h"

/* enc_bound's pipeline terms for layer counts l[k] of w FLOPs each on
 * stages of speed v[k]: max over k of sum_{i<k} t_i + m t_k + X_k. */
static double pipe_terms(const double *v, const double *X, const int *l, int S, int m,
                         double w)
{
    double pre = 0, T = 0;
    for (int k = 0; k < S; k++) {
        double t = l[k] * w / v[k];
        T = fmax(T, pre + m * t + X[k]);
        pre += t;
    }
    return T;
}

/* The least of pipe_terms over every split of L layers into S stages of at
 * least one layer (compositions, recursively). */
static double best_split(const double *v, const double *X, int *l, int k, int S, int left,
                         int m, double w)
{
    if (k == S - 1) {
        l[k] = left;
        return pipe_terms(v, X, l, S, m, w);
    }
    double best = INFINITY;
    for (int n = 1; n <= left - (S - 1 - k); n++) {
        l[k] = n;
        best = fmin(best, best_split(v, X, l, k + 1, S, left - n, m, w));
    }
    return best;
}

static void closed_form_equal_stages(void **state)
{
    (void)state;
    /* S equal stages of speed v, no transfer: the dual's y_i are
     * (v/m)(1 - 1/m)^(S-1-i), so T >= W / (v (1 - (1 - 1/m)^S)) */
    double v[6] = {2, 2, 2, 2, 2, 2};
    for (int S = 1; S <= 6; S++)
        for (int m = 1; m <= 12; m++) {
            double want = 10.0 / (2 * (1 - pow(1 - 1.0 / m, S)));
            double got = exact_fill_row(v, NULL, S, m, 10.0);
            assert_true(fabs(got - want) <= 1e-12 * want);
            /* above the throughput bound m W / (S v) once there is a bubble */
            if (S > 1 && m > 1)
                assert_true(got > m * 10.0 / (S * 2) * (1 + 1e-3));
        }
    /* by hand, one microbatch, speeds 1, 4, 2, transfers before the stages
     * 0, 0.5, 0.7: from the last stage y2 = 2, y1 = 4 - 2 = 2, y0 = 0 (1 < 4),
     * so T >= (8 + 2 x 0.5 + 2 x 0.7) / 4 = 2.6; the pipeline itself needs
     * 8 / 4 + 0.7 = 2.7 at best (all on the fastest, then the last transfer) */
    double u[3] = {1, 4, 2}, X[3] = {0, 0.5, 0.7};
    double got = exact_fill_row(u, X, 3, 1, 8.0);
    assert_true(fabs(got - 2.6) <= 1e-12);
}

static void below_every_split(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    int checked = 0, tight = 0;
    for (int it = 0; it < 400; it++) {
        int S = 1 + (int)gsl_rng_uniform_int(r, 4), L = S + (int)gsl_rng_uniform_int(r, 9);
        int m = 1 + (int)gsl_rng_uniform_int(r, 16);
        double v[4], X[4], x = 0;
        int l[4];
        for (int k = 0; k < S; k++) {
            v[k] = 0.5 + 4 * gsl_rng_uniform(r);
            X[k] = x;
            x += gsl_rng_uniform(r) < 0.5 ? 0 : 0.3 * gsl_rng_uniform(r);
        }
        double w = 0.1 + gsl_rng_uniform(r);
        double lb = exact_fill_row(v, X, S, m, L * w);
        double bf = best_split(v, X, l, 0, S, L, m, w);
        assert_true(lb <= bf * (1 + 1e-12));
        double tab[16];
        exact_fill_table(v, X, S, m, L * w, tab); /* non-decreasing, each one a bound */
        for (int q = 0; q < m; q++) {
            assert_true(q == 0 || tab[q] >= tab[q - 1]);
            assert_true(tab[q] <= best_split(v, X, l, 0, S, L, q + 1, w) * (1 + 1e-12));
        }
        checked++;
        tight += lb > 0.9 * bf;
    }
    printf("fill bound: %d random pipelines, below the best integral split on all, within "
           "10 %% of it on %d\n", checked, tight);
    gsl_rng_free(r);
}

/* The least over every share (each row >= 1) of the slowest row's bound. */
static double best_share(const double *lb, int D, int stride, int r, int left)
{
    if (r == D - 1)
        return left >= 1 && left <= stride ? lb[(long)r * stride + left - 1] : INFINITY;
    double best = INFINITY;
    for (int n = 1; n <= left - (D - 1 - r) && n <= stride; n++)
        best = fmin(best, fmax(lb[(long)r * stride + n - 1], best_share(lb, D, stride, r + 1,
                                                                       left - n)));
    return best;
}

static void share_equals_brute_force(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    for (int it = 0; it < 300; it++) {
        int D = 1 + (int)gsl_rng_uniform_int(r, 4), M = D + (int)gsl_rng_uniform_int(r, 9);
        double lb[4 * 12];
        int share[4];
        for (int q = 0; q < D; q++) {
            double run = gsl_rng_uniform(r);
            for (int k = 0; k < M; k++) {
                run += gsl_rng_uniform(r) < 0.3 ? 0 : gsl_rng_uniform(r);
                lb[q * M + k] = run;
            }
        }
        double got = exact_fill_share(lb, D, M, M, share);
        assert_true(got == best_share(lb, D, M, 0, M));
    }
    int share[2];
    double lb[2] = {1, 2};
    assert_true(isinf(exact_fill_share(lb, 2, 1, 1, share))); /* fewer microbatches than rows */
    gsl_rng_free(r);
}

/* The least of exact_fill_row over every order of v[k..S) (swaps,
 * recursively). */
static double least_order(double *v, int k, int S, int m, double W)
{
    if (k == S)
        return exact_fill_row(v, NULL, S, m, W);
    double best = INFINITY;
    for (int i = k; i < S; i++) {
        double t = v[k];
        v[k] = v[i];
        v[i] = t;
        best = fmin(best, least_order(v, k + 1, S, m, W));
        v[i] = v[k];
        v[k] = t;
    }
    return best;
}

static int desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* What the selection bound (planner/exact_sel.c) takes for every row: over
 * every order of a row's speeds the fill bound is least with the fastest
 * stage first, and it only falls when a stage gets faster (so the
 * selection's S fastest GPUs, fastest first, bound every row of S of its
 * GPUs). */
static void fastest_first_is_least(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 23);
    int strict = 0;
    for (int it = 0; it < 300; it++) {
        int S = 1 + (int)gsl_rng_uniform_int(r, 6), m = 1 + (int)gsl_rng_uniform_int(r, 12);
        double v[6], u[6], W = 0.5 + gsl_rng_uniform(r);
        for (int k = 0; k < S; k++) {
            v[k] = 0.2 + 5 * gsl_rng_uniform(r);
            u[k] = v[k] * (1 + gsl_rng_uniform(r)); /* each stage faster */
        }
        double any = exact_fill_row(v, NULL, S, m, W); /* v's own (random) order */
        double least = least_order(v, 0, S, m, W);
        qsort(v, (size_t)S, sizeof *v, desc);
        double first = exact_fill_row(v, NULL, S, m, W);
        assert_true(fabs(first - least) <= 1e-12 * least);
        strict += any > first * (1 + 1e-9);
        qsort(u, (size_t)S, sizeof *u, desc);
        assert_true(exact_fill_row(u, NULL, S, m, W) <= first * (1 + 1e-12));
    }
    printf("fill bound: fastest first is the least order on 300 rows (strictly below the "
           "drawn order on %d), faster stages lower it\n", strict);
    assert_true(strict > 0);
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_form_equal_stages),
        cmocka_unit_test(below_every_split),
        cmocka_unit_test(share_equals_brute_force),
        cmocka_unit_test(fastest_first_is_least),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
