/* tp_view.h — tensor parallelism for the memetic and exact planners, by a
 * change of view.
 *
 * The genome puts one GPU on each stage (encoding.h). With tensor-parallel
 * degree tp, every tp consecutive GPUs of a node become one "unit" GPU of a
 * derived type (tp times the FLOP/s, memory and power of the real type), and
 * the planners search the units exactly as they search GPUs. A plan over the
 * units maps back to the real topology with each stage on its unit's tp GPUs
 * (tp_view_expand); the fitness and the replays price that real plan, so the
 * derived type only steers decoding: layer cuts under memory caps,
 * microbatch split, seeds and bounds. A node with fewer than tp GPUs left
 * over keeps them out of that view.
 *
 * The planners run one search per admissible degree (tp_degrees: powers of
 * two up to PLAN_MAX_TP that divide the model's heads, with some node of at
 * least tp GPUs) and keep the best simulated plan. */
#ifndef GT_TP_VIEW_H
#define GT_TP_VIEW_H

#include <stdbool.h>

#include "planner.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"

typedef struct tp_view {
    topology t;              /* the units; shares sites' WAN matrix with real */
    const topology *real;
    int tp;
    int *unit_gpu;           /* [t.ngpus]: first real GPU of each unit */
} tp_view;

/* Degrees to search, ascending, 1 first; returns how many (<= cap). */
int tp_degrees(const topology *t, const model_spec *m, int *out, int cap);
/* The view of degree tp >= 2 (tp must leave at least one unit). */
int tp_view_build(tp_view *v, const topology *real, int tp, gt_err *e);
void tp_view_free(tp_view *v);
/* Rewrite stage s of a unit plan onto the real GPUs of its unit. */
void tp_view_expand_stage(const tp_view *v, plan_stage *s);

/* One search on topology t: the real one (v NULL) or v's units (t = &v->t).
 * A run that ends without a plan on this process (an MPI rank other than the
 * one holding the result) returns 0 with out->npipes == 0. */
typedef int (*tp_run)(void *ctx, const topology *t, const tp_view *v, const planner_opts *o,
                      plan *out, planner_stats *st, gt_err *e);
/* Runs `run` for every degree of tp_degrees and keeps the plan with the best
 * (simulated) objective value, ties to the smaller degree. A time budget is
 * shared in proportion to the units each degree searches; a generation
 * budget applies to each. energy-within and pareto compare plans with the
 * fastest of their own search, so they search degree 1 only. Returns the
 * first error when no degree found a plan, or with `strict` the first error
 * at all (the exact referee: a degree it refuses leaves nothing proved);
 * out->npipes == 0 when no degree found a plan on this process. */
int tp_search(const topology *t, const job *j, const planner_opts *o, bool strict, tp_run run,
              void *ctx, plan *out, planner_stats *st, gt_err *e);

#endif
