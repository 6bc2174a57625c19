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
 * Returns -1 with the reason when the plan is invalid (e.g. memory). */
int estimate_plan(const topology *t, const job *j, const plan *p, est_summary *out, gt_err *e);

/* The recurrence on a built workload: fills tm (op and lane times). */
int estimate_run(const topology *t, const workload *w, sync_kind sync, timing *tm, gt_err *e);

#endif
