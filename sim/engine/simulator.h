/* simulator.h — the discrete-event replay of a plan (docs/models.md): ops on GPUs,
 * flows on a max-min fair fluid network (or Atlas's temporal sharing on WAN
 * links), gradient sync as flow steps, jitter, stragglers, bandwidth traces
 * and preemptions. The referee of every planner. */
#ifndef GT_SIMULATOR_H
#define GT_SIMULATOR_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/models/accounting.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/models/timing.h"
#include "sim/inputs/topology.h"
#include "sim/models/workload.h"

typedef struct sim_options {
    int wan_policy;            /* -1 = as the topology says (default fair) */
    int tcp_connections;       /* 0 = the topology's */
    int iterations;            /* >= 1 */
    uint64_t seed;
    double jitter_cv;          /* compute time x lognormal(cv), 0 = none */
    double straggler_prob;     /* per GPU and iteration */
    double straggler_factor;   /* slowdown of a straggler (e.g. 1.5) */
    bool charge_unselected;
    const char *avail_trace;   /* preemption events file, NULL = none */
    /* sim_detail.est with the estimator's time of every op (its op-by-op
     * recurrence), for callers that compare the replay with it op by op;
     * else only its lane, group and iteration figures are kept, from its
     * per-stage path where that applies (the same figures to the bit). */
    bool est_op_times;
} sim_options;

void sim_options_default(sim_options *o);

typedef struct sim_result {
    double iteration_s;        /* mean over the simulated iterations */
    double energy_j;           /* per iteration */
    double est_iteration_s, est_energy_j;
    double carbon_g, usd;
    double tokens_per_s;
    double utilization;        /* compute time / (GPUs x time) */
    double bubble_fraction;    /* idle time / (GPUs x time) */
    int gpus_used;
    bool preempted;
    char preempt_msg[256];
} sim_result;

/* Check, build and replay a plan; the summary planners and `compare` use. */
int simulate_plan(const topology *t, const job *j, const plan *p, const sim_options *o,
                  sim_result *out, gt_err *e);

#endif
