/* compare_out.h — what `geotrain compare`'s runner (cli/cmd_compare.c) and
 * its output (cli/compare_out.c: the table, --json, --csv) share: one run,
 * one row per planner, the options and the report. Private to the command. */
#ifndef GT_COMPARE_OUT_H
#define GT_COMPARE_OUT_H

#include <stdbool.h>

#include "planner/objective.h"
#include "planner/planner.h"
#include "planner/planner_run.h"
#include "sim/inputs/job.h"
#include "sim/inputs/topology.h"

typedef struct run_rec {
    bool ok;                   /* planned and replayed */
    planner_run run;
    double dtfm_cost;          /* NAN unless --dtfm-cost and a grid plan */
    int tp;                    /* tensor-parallel degree of the plan (ok runs) */
    double peak_mem;           /* bytes on the fullest GPU (ok runs) */
    sim_result fmax;           /* --freq: the replay at maximum clocks (ok runs) */
} run_rec;

typedef struct row {
    const planner_def *def;
    run_rec *runs;
    int nruns, nok, best;      /* best = ok run with the lowest objective */
    double time_s, time_min, time_max, energy_j, energy_min, energy_max;
    double carbon_g, usd, plan_s, obj, dtfm_cost;
    double time_fmax, energy_fmax; /* --freq: means at maximum clocks */
    double rel;                /* obj / best baseline's obj - 1 (NAN if none) */
} row;

typedef struct cmp_opts {
    const char *planners, *objective, *json, *csv;
    long seeds, seed, threads;
    double budget_s;
    bool dtfm_cost, quiet, freq;
    int wan_policy;
    volatile int *stop;        /* the signal that asked to stop, 0 = none */
    const char *inputs[3];     /* topology, model, profile: for the provenance */
} cmp_opts;

typedef struct report {
    const topology *t;
    const job *j;
    const cmp_opts *co;
    const objective *ob;
    row *rows;
    int n, best;
    double tokens;
    long done, total;          /* runs done (kept) and asked for */
    bool interrupted;          /* a signal stopped a run or skipped some */
} report;

/* False when no run is feasible, or the objective rules the row out
 * (energy-within:X: over the time limit). */
static inline bool compare_obj_ok(const row *rw)
{
    return rw->nok > 0 && rw->obj < OBJ_INFEASIBLE;
}

/* The first failure of a row (for rows and notes). */
static inline const char *compare_row_error(const row *rw)
{
    for (int s = 0; s < rw->nruns; s++)
        if (!rw->runs[s].ok)
            return rw->runs[s].run.err;
    return NULL;
}

/* The table on standard output (or standard error when --json - / --csv -
 * hold it), then --json and --csv, written whole or not at all; an exit code. */
int compare_write_outputs(const report *rp);

#endif
