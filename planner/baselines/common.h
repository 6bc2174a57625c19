/* common.h — helpers shared by the baseline planners (planner/baselines/).
 *
 * The baselines all build "grid" plans: D pipelines x S stages, each stage on
 * T GPUs of one node (tensor parallelism). This header gathers what they
 * share: cutting layers (evenly, in proportion to speed, or min-max balanced
 * under memory caps), splitting microbatches over pipelines, the usable
 * tensor-parallel degrees, evaluating a candidate (estimator or simulator),
 * the objective value, and a keeper of the best candidate that remembers why
 * candidates were rejected so that an infeasible job is reported with the
 * reason closest to fitting. No I/O, no global state. */
#ifndef GT_BL_COMMON_H
#define GT_BL_COMMON_H

#include <stdbool.h>
#include "planner/planner.h"
#include "sim/models/cost.h"
#include "sim/inputs/plan.h"

/* --- layers and microbatches --------------------------------------------- */

/* Layers [first, last] of stage k when L layers are cut into S stages as
 * evenly as possible ("uniform layers"); the first L mod S stages get one
 * more layer (S <= L). */
void bl_even_cut(int L, int S, int k, int *first, int *last);

/* total microbatches over D pipelines as evenly as possible (the first
 * total mod D pipelines get one more). */
void bl_even_split(int total, int D, int *mb);

/* Cut L layers into S stages (each >= 1 layer) minimising the largest
 * cost(ctx, k, first, last) over the stages; a negative cost marks a stage
 * that cannot hold those layers (memory). Exact dynamic programming,
 * O(S L^2) cost calls. Returns the bottleneck, or -1 when nothing fits. */
typedef double (*bl_stage_cost)(void *ctx, int k, int first, int last);
double bl_minmax_cuts(int L, int S, bl_stage_cost cost, void *ctx, int *first, int *last);

/* What a stage of a candidate pipeline runs on, for the two cut rules below. */
typedef struct bl_stage_hw {
    const gpu_type *type;
    int tp;            /* tensor-parallel degree */
    int in_flight;     /* microbatches of activations alive (schedule rule) */
} bl_stage_hw;

/* Layers in proportion to stage speed: minimise max(layers / speed) subject
 * to memory (the greedy baseline's rule). -1 when nothing fits. */
double bl_speed_cuts(const job *j, int b, int S, const bl_stage_hw *hw, int *first, int *last);
/* Load-balanced layers: minimise the largest forward + backward time of one
 * microbatch (embedding and head included) subject to memory (Metis's rule).
 * Returns the bottleneck seconds, or -1 when nothing fits. */
double bl_balanced_cuts(const job *j, int b, int S, const bl_stage_hw *hw, int *first,
                        int *last);
/* Microbatches in flight on stage k of S under a schedule with m per pipeline. */
int bl_in_flight(sched_kind sched, int S, int k, int m);

/* --- plans ---------------------------------------------------------------- */

/* A plan of D pipelines x S stages of T GPUs. Stage k of pipeline d runs on
 * gpus[(d*S + k)*T .. +T-1] and holds layers first[d*S+k]..last[d*S+k];
 * pipeline d takes mb[d] microbatches of b sequences. */
int bl_grid_plan(plan *p, const char *planner, int D, int S, int T, const int *gpus,
                 const int *first, const int *last, const int *mb, int b, sched_kind sched,
                 sync_kind sync, gt_err *e);

/* The same with uniform layers shared by every pipeline and the job's
 * microbatches (batch / microbatch) split as evenly as possible over D. */
int bl_uniform_plan(plan *p, const char *planner, const job *j, int D, int S, int T,
                    const int *gpus, sched_kind sched, sync_kind sync, gt_err *e);

/* Tensor-parallel degrees (powers of two up to PLAN_MAX_TP) that divide the
 * model's heads and the GPU count of every node in `nodes` (all nodes when
 * nodes is NULL), so that rank-order TP groups never straddle a node. */
int bl_tp_degrees(const topology *t, const model_spec *m, const int *nodes, int nnodes, int *out,
                  int cap);

/* Achievable FLOP/s of GPU g (peak x efficiency). */
double bl_gpu_speed(const topology *t, int g);

/* Peak memory / capacity over the GPUs of a plan (> 1 means overflow). */
double bl_mem_frac(const topology *t, const job *j, const plan *p);

/* --- evaluation ------------------------------------------------------------ */

typedef struct bl_eval {
    double iteration_s, energy_j, carbon_g, usd;
} bl_eval;

/* Check and evaluate with the fast estimator (planner-side search). */
int bl_estimate(const topology *t, const job *j, const plan *p, bl_eval *ev, gt_err *e);
/* Check and replay with the referee simulator (simulate_plan, defaults). */
int bl_simulate(const topology *t, const job *j, const plan *p, bl_eval *ev, gt_err *e);

/* Objective value (lower is better) of an evaluation under opts->objective
 * (planner/objective.h); -1 for objectives that need reference plans
 * (weighted:W, energy-within:X), where callers fall back to time. */
int bl_objective(const char *objective, const bl_eval *ev, double *out, gt_err *e);

double bl_now(void);    /* monotonic seconds */
/* True when the caller asked to stop or the budget (if any) is spent. */
bool bl_out_of_time(const planner_opts *o, double t0);

/* --- the best candidate so far ------------------------------------------- */

typedef struct bl_best {
    plan p;
    bool have;
    double key;          /* what the planner minimises (lower is better) */
    bl_eval ev;
    long tried, rejected;
    double why_score;    /* closeness of the recorded rejection (lower = closer) */
    char why[640];       /* reason of the closest rejected candidate */
} bl_best;

void bl_best_init(bl_best *b);
/* Offer a candidate: keeps it (moving it into b) when better, frees it
 * otherwise. The candidate is always consumed. */
void bl_best_offer(bl_best *b, plan *cand, double key, const bl_eval *ev);
/* Record a rejected candidate: `what` names it ("S=8 D=8"), e->msg says why;
 * score orders reasons (e.g. peak memory fraction). Frees the candidate. */
void bl_best_reject(bl_best *b, plan *cand, const char *what, double score, const gt_err *e);
/* Move the best plan into out and fill the stats, or fail with the reason
 * closest to success. */
int bl_best_finish(bl_best *b, const char *planner, const planner_opts *o, plan *out,
                   planner_stats *st, double t0, gt_err *e);
void bl_best_free(bl_best *b);

/* Evaluate a candidate and offer or reject it: the usual inner step of a
 * baseline's search. simulate = use simulate_plan instead of the estimator.
 * The key is the iteration time unless by_objective (then opts->objective). */
void bl_try(bl_best *b, const topology *t, const job *j, const planner_opts *o, plan *cand,
            const char *what, bool simulate, bool by_objective);

#endif
