/* exact_fill.c — the exact referee's pipeline-fill bound (exact_space.h):
 * a pipeline passing m microbatches pays for filling and draining itself,
 * whatever its layer split, and the rows of a placement share the
 * microbatches.
 *
 * Why it holds. enc_bound (enc_fitness.c), a lower bound of the estimate,
 * charges pipeline p for each of its stages k: the first microbatch's way
 * to k (the forwards and transfers of stages i < k), k's own work on all m
 * microbatches, and the last gradient's way back to stage 0 (the backwards
 * and transfers of stages i < k):
 *     T >= sum_{i<k} t_i + m t_k + X_k      for every k,
 * t_i the forward plus backward time of stage i for one microbatch, X_k the
 * lone transfers both ways between stages i and i + 1 for i < k. A stage
 * holding w_i of the microbatch's W FLOPs on a GPU whose type runs at most
 * v_i FLOP/s (the type's best over every layer range, exact_space.c) has
 * t_i >= w_i / v_i, and the w_i sum to W (a stage's FLOPs are the sum of its
 * layers', the head's on the last). So the FLOPs that fit in T are at most
 * the optimum of the linear program
 *     max sum_i v_i t_i  s.t.  sum_{i<k} t_i + m t_k <= T - X_k,  t >= 0,
 * and by weak duality at most sum_k y_k (T - X_k) for any y >= 0 with
 *     m y_i + sum_{k>i} y_k >= v_i      for every i.
 * Taking y from the last stage back, each as small as that allows, gives
 * T >= (W + sum_k y_k X_k) / sum_k y_k. A y feasible for m is feasible for
 * every larger m, so the bound of m' <= m microbatches holds for m too
 * (the table is made non-decreasing). The rows share the unit's microbatches, each passing one
 * at least: the least over those shares of the slowest row's bound is
 * found by handing the microbatches out one by one to the row whose bound
 * grows least (the bounds being non-decreasing, that greedy share is
 * optimal). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exact_space.h"

double exact_fill_row(const double *v, const double *X, int S, int m, double W)
{
    if (m < 1 || S < 1)
        return 0;
    double sum = 0, sumx = 0; /* sum_{k>i} y_k, and sum_k y_k X_k */
    for (int i = S - 1; i >= 0; i--) {
        double y = (v[i] - sum) / m;
        if (!(y > 0))
            continue;
        sum += y;
        sumx += y * (X ? X[i] : 0);
    }
    if (!(sum > 0) || isinf(sum))
        return 0; /* a free stage (infinite speed): no bound */
    return (W + sumx) / sum;
}

void exact_fill_table(const double *v, const double *X, int S, int M, double W, double *lb)
{
    double run = 0;
    for (int m = 1; m <= M; m++) {
        run = fmax(run, exact_fill_row(v, X, S, m, W));
        lb[m - 1] = run;
    }
}

double exact_fill_share(const double *lb, int D, int stride, int M, int *share)
{
    if (D < 1 || M < D)
        return INFINITY;
    double T = 0;
    for (int r = 0; r < D; r++) {
        share[r] = 1;
        T = fmax(T, lb[(long)r * stride]);
    }
    for (int n = D; n < M; n++) {
        int best = -1;
        for (int r = 0; r < D; r++)
            if (share[r] < M && (best < 0 || lb[(long)r * stride + share[r]] <
                                                 lb[(long)best * stride + share[best]]))
                best = r;
        if (best < 0)
            return INFINITY;
        T = fmax(T, lb[(long)best * stride + share[best]]);
        share[best]++;
    }
    return T;
}

/* --- rows of GPUs ------------------------------------------------------------------ */

/* Row `gpus` (S GPU ids) at microbatch size bi: its table of M entries. */
static void row_table(const exact_space *sp, const int *gpus, int S, int bi, double *v,
                      double *X, double *lb)
{
    const enc_problem *pr = sp->pr;
    double x = 0;
    for (int k = 0; k < S; k++) {
        v[k] = sp->type_speed[pr->t->gpus[gpus[k]].type];
        X[k] = x;
        if (k + 1 < S)
            x += 1e-9 * (double)(exact_xfer_ns(sp, bi, gpus[k], gpus[k + 1]) +
                                 exact_xfer_ns(sp, bi, gpus[k + 1], gpus[k]));
    }
    exact_fill_table(v, X, S, pr->mtot[bi], sp->mb_flops[bi], lb);
}

int exact_fill_alloc(const exact_space *sp, int S, int D, exact_fill_buf *b)
{
    const enc_problem *pr = sp->pr;
    int M = 1;
    for (int bi = 0; bi < pr->nb; bi++)
        M = pr->mtot[bi] > M ? pr->mtot[bi] : M;
    b->M = M;
    b->rows = malloc(sizeof *b->rows * (size_t)((long)D * M + 2 * S));
    b->share = malloc(sizeof *b->share * (size_t)D);
    if (!b->rows || !b->share) {
        exact_fill_free(b);
        return -1;
    }
    b->v = b->rows + (long)D * M;
    b->X = b->v + S;
    return 0;
}

void exact_fill_free(exact_fill_buf *b)
{
    free(b->rows);
    free(b->share);
    b->rows = NULL;
    b->share = NULL;
}

double exact_fill_grid(const exact_space *sp, int S, int D, const int *gpus, int bi,
                       exact_fill_buf *b)
{
    for (int r = 0; r < D; r++)
        row_table(sp, gpus + (long)r * S, S, bi, b->v, b->X, b->rows + (long)r * b->M);
    return exact_fill_share(b->rows, D, b->M, sp->pr->mtot[bi], b->share);
}
