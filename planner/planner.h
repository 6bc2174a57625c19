/* planner.h — the common interface of every planner (memetic, exact and the
 * baselines): given a topology, a job and options, produce a plan.
 *
 * Planners live in planner/ and planner/baselines/, one per file, and are
 * listed in planner/registry.c. They evaluate candidates with the simulator's
 * estimator (sim/estimator/estimator.h) and never print unless opts->progress is set. */
#ifndef GT_PLANNER_H
#define GT_PLANNER_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/base/error.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"

typedef struct planner_opts {
    const char *objective;   /* "time", "energy", "weighted:0.5", ... */
    uint64_t seed;
    double budget_s;         /* wall-clock budget, 0 = planner default */
    int generations;         /* 0 = planner default */
    int threads;             /* 0 = OpenMP default */
    bool progress;           /* print a progress line on stderr */
    int samples;             /* random planner: N plans (0 = default) */
    volatile int *stop;      /* set to 1 (e.g. by SIGINT): return the best so far */
} planner_opts;

typedef struct planner_stats {
    double objective_value;  /* lower is better */
    long evaluations;
    double plan_time_s;
    char note[256];          /* e.g. "proved optimal, 1234 plans examined" */
} planner_stats;

typedef int (*planner_fn)(const topology *t, const job *j, const planner_opts *o, plan *out,
                          planner_stats *st, gt_err *e);

typedef struct planner_def {
    const char *name;
    planner_fn run;
    const char *summary;     /* one line for --help */
    bool baseline;           /* counts as a baseline in `compare` */
} planner_def;

const planner_def *planner_find(const char *name);
/* NULL-terminated table of all planners, in `compare` order. */
const planner_def *planner_all(int *n);

#endif
