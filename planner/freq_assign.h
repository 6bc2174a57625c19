/* freq_assign.h — per-stage SM clocks for a fixed placement (docs/energy-model.md).
 *
 * Given a plan (GPUs, split, schedule fixed), choose each stage's clock so
 * that the estimated energy is lowest while the estimated iteration time
 * stays within (1 + slowdown) x the time at maximum clocks: stages with
 * slack run slower, the critical stage keeps f_max (Perseus SOSP'24 /
 * EnvPipe ATC'23 idea, on the simulator's own estimator). Greedy over
 * stages, least loaded first; for each, the lowest clock that keeps the time
 * (binary search: lowering a clock never shortens the iteration), then up the
 * grid while that lowers energy (energy is unimodal in the clock). */
#ifndef GT_FREQ_ASSIGN_H
#define GT_FREQ_ASSIGN_H

#include "sim/estimator/estimator.h"
#include "sim/inputs/plan.h"

/* Assign clocks in p (all stages start from f_max). before/after (may be
 * NULL): estimates at maximum clocks and with the assignment. */
int freq_assign(const topology *t, const job *j, plan *p, double slowdown,
                est_summary *before, est_summary *after, long *evals, gt_err *e);

/* A time-energy front over clocks for a fixed plan: freq_assign at each
 * slowdown budget of `budgets` (n of them), the non-dominated points kept in
 * time order. plans[i] (caller frees with plan_free) and pts[i]; returns the
 * number of points, or -1. Arrays need room for n entries. */
int freq_front(const topology *t, const job *j, const plan *p, const double *budgets, int n,
               plan *plans, est_summary *pts, gt_err *e);

#endif
