/* random.c — the random baseline: the best of N random valid plans (the
 * "random assignment" every planner paper compares against).
 *
 * A random plan draws, from gsl_rng_mt19937 seeded with opts->seed: how
 * many GPUs to use (1..all), stages S (1..min(layers, GPUs used)),
 * pipelines D (1..min(GPUs used / S, B/b)), which GPUs and where (a random
 * permutation), and each pipeline's cut points (S-1 distinct random cuts).
 * The batch is split as evenly as D allows; 1F1B, ring all-reduce, no
 * tensor parallelism. Invalid draws (memory) are redrawn, up to 50 N draws
 * in all; the N valid plans (planner_opts.samples, default 100) are
 * estimated and the best by the requested objective is kept.
 * What it ignores: everything a planner should know — that is the point. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "common.h"
#include "fit.h"

#define RANDOM_DEFAULT_SAMPLES 100
#define RANDOM_DRAWS_PER_SAMPLE 50

/* Random sorted cut points: layers split into S non-empty ranges. */
static void random_cuts(gsl_rng *rng, int L, int S, int *pool, int *first, int *last)
{
    int cuts[S > 1 ? S - 1 : 1];
    for (int i = 0; i < L - 1; i++)
        pool[i] = i + 1; /* a cut before layer i+1 */
    if (S > 1) /* gsl_ran_choose keeps the pool's order: the cuts come sorted */
        gsl_ran_choose(rng, cuts, (size_t)(S - 1), pool, (size_t)(L - 1), sizeof *pool);
    for (int k = 0; k < S; k++) {
        first[k] = k ? cuts[k - 1] : 0;
        last[k] = k < S - 1 ? cuts[k] - 1 : L - 1;
    }
}

/* Draw one random plan. */
static int draw(const topology *t, const job *j, gsl_rng *rng, int *perm, int *pool, plan *p,
                char *what, size_t cap, gt_err *e)
{
    int N = t->ngpus, L = j->model.layers, total = j->batch / j->microbatch;
    int k = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)N);
    int S = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)(k < L ? k : L));
    int dmax = k / S < total ? k / S : total;
    int D = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)dmax);
    snprintf(what, cap, "random %d stages x %d pipelines", S, D);
    for (int g = 0; g < N; g++)
        perm[g] = g;
    gsl_ran_shuffle(rng, perm, (size_t)N, sizeof *perm);
    size_t cells = (size_t)S * (size_t)D;
    int *first = malloc(sizeof *first * cells), *last = malloc(sizeof *last * cells);
    int *mb = malloc(sizeof *mb * (size_t)D);
    int rc = 0;
    if (!first || !last || !mb) {
        rc = gt_fail(e, "out of memory");
    } else {
        for (int d = 0; d < D; d++)
            random_cuts(rng, L, S, pool, first + (size_t)d * (size_t)S,
                        last + (size_t)d * (size_t)S);
        bl_even_split(total, D, mb);
        rc = bl_grid_plan(p, "random", D, S, 1, perm, first, last, mb, j->microbatch, SCHED_1F1B,
                          SYNC_RING, e);
    }
    free(first);
    free(last);
    free(mb);
    return rc;
}

static int random_once(const void *cfg, const topology *t, const job *j,
                       const planner_opts *o, plan *out, planner_stats *st, gt_err *e)
{
    (void)cfg;
    double t0 = bl_now();
    int want = o->samples > 0 ? o->samples : RANDOM_DEFAULT_SAMPLES;
    long max_draws = (long)want * RANDOM_DRAWS_PER_SAMPLE;
    int *perm = malloc(sizeof *perm * (size_t)t->ngpus);
    int *pool = malloc(sizeof *pool * (size_t)(j->model.layers + 1));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!perm || !pool || !rng) {
        free(perm);
        free(pool);
        if (rng)
            gsl_rng_free(rng);
        return gt_fail(e, "out of memory");
    }
    gsl_rng_set(rng, (unsigned long)o->seed);
    bl_best b;
    bl_best_init(&b);
    int valid = 0;
    for (long n = 0; n < max_draws && valid < want && !bl_out_of_time(o, t0); n++) {
        plan p;
        gt_err ce;
        char what[96];
        if (draw(t, j, rng, perm, pool, &p, what, sizeof what, &ce)) {
            bl_best_reject(&b, NULL, what, 1e9, &ce);
            continue;
        }
        long rejected = b.rejected;
        bl_try(&b, t, j, o, &p, what, false, true);
        valid += b.rejected == rejected;
    }
    free(perm);
    free(pool);
    gsl_rng_free(rng);
    int rc = bl_best_finish(&b, "random", o, out, st, t0, e);
    if (!rc && st)
        snprintf(st->note, sizeof st->note, "best of %d valid random plans (%ld drawn)", valid,
                 b.tried);
    bl_best_free(&b);
    return rc;
}

/* The project's own baseline: the options every pipeline runtime has
 * (microbatch size, activation recomputation). */
static const bl_fit_opts RANDOM_FIT = {"GeoTrain-random", true, true, false};

int planner_random(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                   plan *out, planner_stats *st, gt_err *e)
{
    return bl_fit(random_once, cfg, &RANDOM_FIT, t, j, o, out, st, e);
}
