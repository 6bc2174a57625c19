/* megatron.c — the Megatron-LM baseline (Shoeybi et al., arXiv:1909.08053;
 * Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
 * Clusters Using Megatron-LM", SC 2021).
 *
 * What it decides: the tensor- (T), pipeline- (S) and data-parallel (D)
 * degrees, by grid search over every T x S x D = all GPUs, each candidate
 * replayed by the simulator (simulate_plan), keeping the fastest.
 * What it takes as given: all GPUs, uniform layers (L/S per stage; when S
 * does not divide L the first L mod S stages take one more — Megatron itself
 * insists on divisibility, which would leave most GPU counts without a
 * shape), an equal share of the batch per pipeline (D must divide B/b, as
 * Megatron requires), the 1F1B schedule and ring all-reduce, and Megatron's
 * rank order: rank r is the r-th GPU in topology order, with TP ranks
 * adjacent, then DP, then PP outermost (rank = (k*D + d)*T + x for stage k,
 * pipeline d, TP rank x). T ranges over powers of two that divide the heads
 * and every node's GPU count (so TP groups stay inside a node).
 * What it ignores: GPU heterogeneity, the network (no placement search),
 * energy.
 *
 * Variant `megatron-random`: the same grid search over a random placement
 * (T-GPU chunks of nodes shuffled with the seed), the "random assignment"
 * of DT-FM's comparisons. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "common.h"
#include "fit.h"

/* The GPU order ranks are taken from: topology order, or (random) T-chunks
 * in shuffled order. */
static void rank_order(const topology *t, int T, gsl_rng *rng, int *order)
{
    int N = t->ngpus, chunks = N / T;
    int *c = malloc(sizeof *c * (size_t)chunks);
    for (int i = 0; i < N; i++)
        order[i] = i;
    if (!rng || !c) {
        free(c);
        return;
    }
    for (int i = 0; i < chunks; i++)
        c[i] = i;
    gsl_ran_shuffle(rng, c, (size_t)chunks, sizeof *c);
    for (int i = 0; i < chunks; i++)
        for (int x = 0; x < T; x++)
            order[i * T + x] = c[i] * T + x;
    free(c);
}

/* Try the shape T x S x D on the ranks `order`. */
static void try_shape(bl_best *b, const topology *t, const job *j, const planner_opts *o,
                      const char *name, const int *order, int T, int S, int D)
{
    int N = t->ngpus;
    int *gpus = malloc(sizeof *gpus * (size_t)N);
    char what[96];
    snprintf(what, sizeof what, "TP %d x PP %d x DP %d", T, S, D);
    if (!gpus) {
        gt_err e;
        gt_fail(&e, "out of memory");
        bl_best_reject(b, NULL, what, 1e9, &e);
        return;
    }
    for (int k = 0; k < S; k++)
        for (int d = 0; d < D; d++)
            for (int x = 0; x < T; x++)
                gpus[((size_t)d * (size_t)S + (size_t)k) * (size_t)T + (size_t)x] =
                    order[(k * D + d) * T + x];
    plan p;
    gt_err e;
    if (bl_uniform_plan(&p, name, j, D, S, T, gpus, SCHED_1F1B, SYNC_RING, &e))
        bl_best_reject(b, NULL, what, 1e9, &e);
    else
        bl_try(b, t, j, o, &p, what, true, false);
    free(gpus);
}

/* The variants (rows of planner/registry.c). */
struct megatron_cfg {
    const char *name;    /* written into the plan */
    bool random;         /* a random placement instead of the rank order */
};
const megatron_cfg MEGATRON_CFG = {"megatron", false};
const megatron_cfg MEGATRON_RANDOM_CFG = {"megatron-random", true};

/* One grid search with configuration vcfg (a megatron_cfg), for bl_fit. */
static int run_megatron(const void *vcfg, const topology *t, const job *j,
                        const planner_opts *o, plan *out, planner_stats *st, gt_err *e)
{
    const megatron_cfg *cfg = vcfg;
    bool random = cfg->random;
    const char *name = cfg->name;
    double t0 = bl_now();
    int N = t->ngpus, L = j->model.layers, total = j->batch / j->microbatch;
    int tps[8], ntp = bl_tp_degrees(t, &j->model, NULL, 0, tps, 8);
    int *order = malloc(sizeof *order * (size_t)N);
    gsl_rng *rng = random ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    if (!order || (random && !rng)) {
        free(order);
        if (rng)
            gsl_rng_free(rng);
        return gt_fail(e, "out of memory");
    }
    if (rng)
        gsl_rng_set(rng, (unsigned long)o->seed);
    bl_best b;
    bl_best_init(&b);
    for (int i = 0; i < ntp && !bl_out_of_time(o, t0); i++) {
        int T = tps[i];
        rank_order(t, T, rng, order);
        for (int S = 1; S <= L && S * T <= N; S++) {
            if (N % (S * T) || (b.tried && bl_out_of_time(o, t0)))
                continue;
            int D = N / (S * T);
            if (D <= total && total % D == 0)
                try_shape(&b, t, j, o, name, order, T, S, D);
        }
    }
    free(order);
    if (rng)
        gsl_rng_free(rng);
    int rc = bl_best_finish(&b, name, o, out, st, t0, e);
    if (!rc && st)
        snprintf(st->note, sizeof st->note, "%ld TP x PP x DP shapes simulated, %ld infeasible",
                 b.tried, b.rejected);
    bl_best_free(&b);
    return rc;
}

/* Megatron-LM's memory options: --micro-batch-size, --recompute-granularity
 * full, and Megatron-Core's precision-aware optimizer with --exp-avg-dtype
 * and --exp-avg-sq-dtype bf16 (megatron/training/arguments.py). */
static const bl_fit_opts MEGATRON_FIT = {"Megatron-LM", true, true, true};

int planner_megatron(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                     plan *out, planner_stats *st, gt_err *e)
{
    return bl_fit(run_megatron, cfg, &MEGATRON_FIT, t, j, o, out, st, e);
}
