/* planner_run.h — what `geotrain compare` (cli/cmd_compare.c) and
 * `geotrain study` (study/study.c) share: run one planner on a
 * topology and job, time it and replay its plan in the simulator (the
 * referee), so that both commands report the same figures for the same run;
 * and the wrapped list of planner names their help and errors print.
 *
 * Library code: no printing. How a run becomes a row (columns, quoting) is
 * each command's own business: their CSVs differ and scripts parse both. */
#ifndef GT_PLANNER_RUN_H
#define GT_PLANNER_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include "planner.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/engine/simulator.h"
#include "sim/inputs/topology.h"

typedef enum {
    PLANNER_RUN_OK,            /* planned and replayed: sim holds the figures */
    PLANNER_RUN_INFEASIBLE,    /* the planner returned no plan (err says why) */
    PLANNER_RUN_REPLAY_FAILED  /* the plan does not replay (err says why) */
} planner_run_status;

typedef struct planner_run {
    planner_run_status status;
    bool stopped;              /* opts->stop was set when the planner returned */
    planner_stats st;          /* the planner's note, evaluations, objective value */
    double plan_s;             /* the planner's wall-clock seconds */
    int gpus;                  /* GPUs the plan uses (0 without a plan) */
    int smin, smax, pipes;     /* physical stages per pipeline (fewest, most), pipelines */
    sim_result sim;            /* status OK: the replay */
    char err[1024];            /* status not OK: why */
} planner_run;

/* Run planner d with o (its seed also seeds the replay, which simulates
 * j->iterations iterations with WAN policy wan_policy, -1 = as the topology
 * says). With keep non-NULL the plan is left there for the caller (who frees
 * it with plan_free; an empty plan when there is none). */
void planner_run_replay(const planner_def *d, const topology *t, const job *j,
                        const planner_opts *o, int wan_policy, planner_run *r, plan *keep);

/* `--freq` of compare: after an OK planner_run_replay that kept plan p, give
 * p the per-stage SM clocks of freq_assign (no estimated slowdown, so every
 * planner's plan is finished the same way: a fair energy comparison) and
 * replay it again with the same seed and policy. r->sim becomes the clocked
 * replay, *fmax (may be NULL) the replay at maximum clocks; r->st.note gains
 * the replayed change. A run that is not OK is left alone; a failing
 * assignment or replay makes it PLANNER_RUN_REPLAY_FAILED with err. */
void planner_run_freq(const topology *t, const job *j, plan *p, uint64_t seed, int wan_policy,
                      planner_run *r, sim_result *fmax);

/* Monotonic wall-clock seconds (for timing runs). */
double planner_run_clock(void);

/* The registered planner names into buf, `per_line` to a line, each line
 * starting with a newline and `indent` spaces (help texts, "known:" lists). */
void planner_run_names(char *buf, size_t cap, int per_line, int indent);

#endif
