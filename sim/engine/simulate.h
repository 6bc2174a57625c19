/* simulate.h — a whole simulation run kept for reporting: the workload, the
 * estimator's timing, the first iteration's timeline (ops and flows), and
 * per-GPU accounts averaged over the iterations. `geotrain simulate` and
 * BubbleTea read it; simulate_plan() (simulator.h) is the summary form. */
#ifndef GT_SIMULATE_H
#define GT_SIMULATE_H

#include "sim/models/accounting.h"
#include "sim/engine/network.h"
#include "sim/engine/simulator.h"
#include "sim/models/timing.h"
#include "sim/models/workload.h"

typedef struct sim_detail {
    workload w;
    timing est;            /* estimator (op times only with sim_options.est_op_times
                            * or a temporal link, else ops is NULL) */
    int est_per_stage;     /* the estimate came from its per-stage path */
    timing tm;             /* first simulated iteration */
    net_flow *flows;       /* flows of the first iteration */
    int nflows;
    double *wan_link_bytes; /* nsites*nsites, first iteration */
    lane_account *acc;     /* per lane, averaged over iterations */
    lane_account *est_acc; /* per lane, estimator */
    run_totals tot, est_tot;
    double mean_iteration_ns;
    long events;
    long stale_events;     /* flow completions that fired early (rate dropped) */
    long solves, solved_flows, moved_events; /* the network's re-solves (bench) */
    double wall_s;
    double replay_cpu_s;   /* CPU of the replay alone (its state, event loops, accounts), for the bench */
    int iterations_done;
    sim_result res;
} sim_detail;

int sim_detail_run(const topology *t, const job *j, const plan *p, const sim_options *o,
                   sim_detail *d, gt_err *e);
void sim_detail_free(sim_detail *d);

#endif
