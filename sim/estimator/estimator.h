/* estimator.h — the contention-free, dependency-exact estimator (DESIGN 5).
 *
 * Every op starts when its GPU finished the previous op of the schedule and
 * its input has arrived (a lone transfer: latency + bytes / rate). Gradient
 * sync steps cost the same flows as in the simulator but without sharing;
 * the optimizer runs after each GPU's sync. Exact when no link is shared;
 * otherwise a lower bound of the simulator. No I/O: the planner's fitness. */
#ifndef GT_ESTIMATOR_H
#define GT_ESTIMATOR_H

#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/models/accounting.h"
#include "sim/models/timing.h"
#include "sim/inputs/topology.h"
#include "sim/models/workload.h"

/* What planners need of one evaluation. */
typedef struct est_summary {
    double iteration_s;
    double energy_j;        /* GPUs (x PUE) + WAN network energy */
    double carbon_g;
    double usd;
    double tokens_per_s;
    int gpus_used;
    double peak_mem_frac;   /* max over GPUs of used / available memory */
} est_summary;

/* Check, build, estimate: the one call a planner makes per candidate.
 * Returns -1 with the reason when the plan is invalid (e.g. memory).
 * Uses the calling thread's workspace (below), so buffers are reused. */
int estimate_plan(const topology *t, const job *j, const plan *p, est_summary *out, gt_err *e);

/* Buffers of one evaluation kept for the next (one per thread), and the
 * choice of path: the per-stage fast path where it is exact (stage_path.h)
 * or always the op-by-op recurrence (the oracle). */
typedef enum { EST_PATH_AUTO = 0, EST_PATH_OPS = 1 } est_path;
typedef struct est_workspace est_workspace;
est_workspace *est_workspace_new(void);
void est_workspace_free(est_workspace *ws);
void est_workspace_set_path(est_workspace *ws, est_path path);
/* on: the transfer bound tries every shared resource's subsets of streams,
 * also where a ceiling of them shows they cannot pass the estimate (the
 * default skips those: the same estimate, the oracle of the skip). */
void est_workspace_set_every_subset(est_workspace *ws, int on);
int estimate_plan_ws(est_workspace *ws, const topology *t, const job *j, const plan *p,
                     est_summary *out, gt_err *e);
/* What the last evaluation in ws computed (valid until the next one): the
 * workload (no op list on the fast path), its timing (no op times there),
 * the per-lane accounts, and whether the fast path ran. */
const workload *est_workspace_workload(const est_workspace *ws);
const timing *est_workspace_timing(const est_workspace *ws);
const lane_account *est_workspace_accounts(const est_workspace *ws);
int est_workspace_fast(const est_workspace *ws);
/* Rounds of one forward and one backward per stage the fast path jumped
 * over (its periodic steady state); 0 on the op path. */
long est_workspace_skipped(const est_workspace *ws);
/* Pipelines the fast path did not run because an earlier pipeline of the
 * plan had the same stages (it took that one's result); 0 on the op path. */
int est_workspace_reused(const est_workspace *ws);
/* Pipelines the fast path did not run because the workspace had stored the
 * end state of the same recurrence from an earlier evaluation (run_memo.h);
 * 0 on the op path. */
int est_workspace_recalled(const est_workspace *ws);
/* Resources whose transfer bound the fast path took as the workspace had
 * kept it from earlier evaluations, their streams unchanged (xfer_kept.c);
 * 0 on the op path. */
int est_workspace_xfer_taken(const est_workspace *ws);
/* Sync-group collectives the workspace's cache made by renaming the
 * resources of one priced for a group of the same shape (coll_shape.h),
 * since the workspace was made. */
long est_workspace_coll_renamed(const est_workspace *ws);

/* The recurrence on a built workload: fills tm (op and lane times). */
int estimate_run(const topology *t, const workload *w, sync_kind sync, timing *tm, gt_err *e);
/* The same with the load bounds' buffers in lw (kept for the next call). */
struct lb_work;
int estimate_run_ws(const topology *t, const workload *w, sync_kind sync, timing *tm,
                    struct lb_work *lw, gt_err *e);

/* After each lane's bwd_end (and op times, or the fast path's sums in sp):
 * sync groups (their collectives from cc when given, coll_cache.h), their
 * load bound, optimizer, iteration, transfer bound (buffers from lw when
 * given, load_bound.h, else its own). */
struct stage_path;
struct coll_cache;
int estimate_finish(const topology *t, const workload *w, sync_kind sync, timing *tm,
                    const struct stage_path *sp, struct coll_cache *cc, struct lb_work *lw,
                    gt_err *e);

#endif
