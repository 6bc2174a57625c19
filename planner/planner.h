/* planner.h — the common interface of every planner (memetic, exact and the
 * baselines): given a topology, a job and options, produce a plan.
 *
 * Planners live in planner/ and planner/baselines/, one per file, and are
 * listed in planner/registry.c: one row per planner or variant, each naming
 * the planner's entry function and the configuration it is called with (an
 * ablation or a variant is a row with another configuration, not another
 * function), and the planners whose plans it is seeded with. Run a row with
 * planner_plan (planner.c), which runs those seed planners first and hands
 * their plans in: a planner never looks another one up. Planners evaluate
 * candidates with the simulator's estimator (sim/estimator/estimator.h) and never
 * print unless opts->progress is set. */
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
    const plan *seeds;       /* other planners' plans to start from, handed in by the
                                caller (planner_plan: the row's seed planners); planners
                                without seeds in their row ignore them */
    int nseeds;
} planner_opts;

typedef struct planner_stats {
    double objective_value;  /* lower is better */
    long evaluations;
    double plan_time_s;
    char note[256];          /* e.g. "proved optimal, 1234 plans examined" */
} planner_stats;

/* A planner's entry function; cfg is its registry row's configuration
 * (the planner's own type, e.g. memetic_cfg; NULL for planners without
 * variants). */
typedef int (*planner_fn)(const void *cfg, const topology *t, const job *j,
                          const planner_opts *o, plan *out, planner_stats *st, gt_err *e);

typedef struct planner_def {
    const char *name;
    planner_fn run;
    const char *summary;     /* one line for --help */
    bool baseline;           /* counts as a baseline in `compare` */
    const void *cfg;         /* handed to run */
    const char *const *seeds; /* NULL-terminated names of the planners whose plans
                                 planner_plan hands in as o->seeds, or NULL */
} planner_def;

const planner_def *planner_find(const char *name);
/* NULL-terminated table of all planners, in `compare` order. */
const planner_def *planner_all(int *n);

/* Run row d (planner.c): its seed planners (planner_seeds_run), then
 * d->run(d->cfg, ...) with their plans in a copy of o (seeds the caller's
 * o may carry are not passed on; o itself is left as it is). Every caller
 * runs a planner this way. */
int planner_plan(const planner_def *d, const topology *t, const job *j, const planner_opts *o,
                 plan *out, planner_stats *st, gt_err *e);

/* The seeding step alone, for callers that run d's search themselves (the
 * island model of `plan --islands`): run the planners d->seeds names, in
 * order, on t and j as given (no progress, no budget or generations of
 * their own), skipping those that find no plan, and stopping early on
 * o->stop or when they have used a quarter of o->budget_s; set o->seeds and
 * o->nseeds to their plans and take their time out of o->budget_s (at most
 * that quarter). -1 when out of memory. Free with planner_seeds_free. */
int planner_seeds_run(const planner_def *d, const topology *t, const job *j, planner_opts *o);
void planner_seeds_free(planner_opts *o);

#endif
