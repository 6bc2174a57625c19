/* greedy.c — the greedy baseline: fastest GPUs first, layers in proportion
 * to speed (a common heuristic for heterogeneous clusters; no single paper).
 *
 * What it decides: for every pipeline shape S stages x D pipelines (S <=
 * layers, D dividing B/b, S*D <= GPUs) it takes the S*D fastest GPUs
 * (achievable FLOP/s; ties: more memory, then topology order), deals them
 * to the pipelines tier by tier in snake order (tier k = stage k, so every
 * pipeline gets a similar mix), and cuts each pipeline's layers in
 * proportion to its stages' speeds (min-max of layers/speed) within memory.
 * The shape with the fastest estimate wins.
 * What it ignores: the network entirely (placement never looks at links),
 * energy; 1F1B, ring all-reduce, equal batch shares, no tensor parallelism. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "common.h"
#include "fit.h"

typedef struct ranked {
    int gpu;
    double speed, mem;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->speed != y->speed)
        return x->speed < y->speed ? 1 : -1;
    if (x->mem != y->mem)
        return x->mem < y->mem ? 1 : -1;
    return x->gpu - y->gpu;
}

static int *fastest_first(const topology *t)
{
    ranked *r = malloc(sizeof *r * (size_t)t->ngpus);
    int *order = malloc(sizeof *order * (size_t)t->ngpus);
    if (!r || !order) {
        free(r);
        free(order);
        return NULL;
    }
    for (int g = 0; g < t->ngpus; g++)
        r[g] = (ranked){g, bl_gpu_speed(t, g), topo_gpu_type(t, g)->mem_bytes};
    qsort(r, (size_t)t->ngpus, sizeof *r, cmp_ranked);
    for (int g = 0; g < t->ngpus; g++)
        order[g] = r[g].gpu;
    free(r);
    return order;
}

/* Candidate S x D from the ranked GPUs (0, or -1 on error). */
static int build(const topology *t, const job *j, const int *order, int S, int D, plan *p,
                 gt_err *e)
{
    size_t cells = (size_t)S * (size_t)D;
    int *gpus = malloc(sizeof *gpus * cells), *first = malloc(sizeof *first * cells);
    int *last = malloc(sizeof *last * cells), *mb = malloc(sizeof *mb * (size_t)D);
    bl_stage_hw *hw = malloc(sizeof *hw * (size_t)S);
    int rc = 0;
    if (!gpus || !first || !last || !mb || !hw) {
        rc = gt_fail(e, "out of memory");
        goto done;
    }
    bl_even_split(j->batch / j->microbatch, D, mb);
    for (int k = 0; k < S; k++)
        for (int i = 0; i < D; i++) { /* snake: tier k runs left to right, then back */
            int d = k % 2 ? D - 1 - i : i;
            gpus[(size_t)d * (size_t)S + (size_t)k] = order[k * D + i];
        }
    bool fits = true;
    for (int d = 0; d < D && fits; d++) {
        for (int k = 0; k < S; k++)
            hw[k] = (bl_stage_hw){topo_gpu_type(t, gpus[(size_t)d * (size_t)S + (size_t)k]), 1,
                                  bl_in_flight(SCHED_1F1B, S, k, mb[d])};
        fits = bl_speed_cuts(j, j->microbatch, S, hw, first + (size_t)d * (size_t)S,
                             last + (size_t)d * (size_t)S) >= 0;
    }
    /* nothing fits: even cuts, so that plan_check names the stage that
     * overflows (the caller reports the candidate closest to fitting) */
    for (size_t c = 0; !fits && c < cells; c++)
        bl_even_cut(j->model.layers, S, (int)(c % (size_t)S), &first[c], &last[c]);
    rc = bl_grid_plan(p, "greedy", D, S, 1, gpus, first, last, mb, j->microbatch, SCHED_1F1B,
                      SYNC_RING, e);
done:
    free(gpus);
    free(first);
    free(last);
    free(mb);
    free(hw);
    return rc;
}

static int greedy_once(const void *cfg, const topology *t, const job *j,
                       const planner_opts *o, plan *out, planner_stats *st, gt_err *e)
{
    (void)cfg;
    double t0 = bl_now();
    int *order = fastest_first(t);
    if (!order)
        return gt_fail(e, "out of memory");
    int L = j->model.layers, total = j->batch / j->microbatch;
    bl_best b;
    bl_best_init(&b);
    for (int S = 1; S <= L && S <= t->ngpus && !bl_out_of_time(o, t0); S++)
        for (int D = 1; D * S <= t->ngpus && D <= total; D++) {
            if (total % D)
                continue;
            plan p;
            gt_err ce;
            char what[64];
            snprintf(what, sizeof what, "%d stages x %d pipelines", S, D);
            if (build(t, j, order, S, D, &p, &ce))
                bl_best_reject(&b, NULL, what, 1e9, &ce);
            else
                bl_try(&b, t, j, o, &p, what, false, false);
        }
    free(order);
    int rc = bl_best_finish(&b, "greedy", o, out, st, t0, e);
    if (!rc && st)
        snprintf(st->note, sizeof st->note, "%ld shapes estimated, %ld infeasible", b.tried,
                 b.rejected);
    bl_best_free(&b);
    return rc;
}

/* The project's own baseline: the options every pipeline runtime has
 * (microbatch size, activation recomputation). */
static const bl_fit_opts GREEDY_FIT = {"GeoTrain-greedy", true, true, false};

int planner_greedy(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                   plan *out, planner_stats *st, gt_err *e)
{
    return bl_fit(greedy_once, cfg, &GREEDY_FIT, t, j, o, out, st, e);
}
