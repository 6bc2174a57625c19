/* sim_state.h — the mutable state of one event-driven replay (internal to
 * simulator.c, sim_state.c and simulate.c). Everything is allocated before
 * the event loop starts; the loop itself only touches preallocated arrays. */
#ifndef GT_SIM_STATE_H
#define GT_SIM_STATE_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>
#include "sim/models/collective.h"
#include "sim/engine/eventq.h"
#include "sim/engine/network.h"
#include "sim/engine/simulator.h"
#include "sim/inputs/trace.h"

typedef struct lane_state {
    int cursor;          /* next op on this GPU, -1 when done */
    int busy;
    int group0, ngroups; /* its sync groups in sim_state.lane_groups */
    double slow;         /* straggler factor this iteration */
} lane_state;

typedef struct group_state {
    coll_plan coll;
    int step, left, waiting;
} group_state;

typedef struct preempt_event {
    int64_t time;
    int node;            /* topology node index */
    char name[64];       /* the trace's node name */
} preempt_event;

typedef struct sim_trace {
    int res;             /* network resource whose capacity follows the trace */
    bwtrace tr;
} sim_trace;

typedef struct sim_state {
    const topology *t;
    const workload *w;
    const sim_options *opt;
    gt_err *e;
    const timing *est;   /* the estimator's timing: temporal priorities (op times:
                          * NULL when no link is temporal, simulate.c) */
    timing *tm;          /* this iteration's */
    sync_kind sync;
    eventq q;
    network net;
    int max_flows;
    lane_state *lane;
    group_state *group;
    int *lane_groups;
    /* overlapped sync: the sync groups whose gradients op i readies are
     * ready_group[ready_first[i] .. ready_first[i+1]-1], ready_frac[] of
     * the way through the op (NULL when the sync follows the backward) */
    int *ready_first, *ready_group;
    double *ready_frac;
    uint8_t *input_ready;
    int64_t *dur;
    gsl_rng *rng;
    int64_t now, t0;     /* t0: absolute start of this iteration */
    long events;
    int open;            /* lanes and sync groups not yet finished */
    sim_trace *traces;
    int ntraces;
    preempt_event *preempts;
    int npreempts;
    bool preempted;
    char preempt_msg[256];
} sim_state;

int sim_state_init(sim_state *s, const topology *t, const workload *w, sync_kind sync,
                   const sim_options *o, const timing *est, timing *tm, gt_err *e);
void sim_state_free(sim_state *s);
/* Fresh network, queue and lane cursors for the next iteration. */
int sim_reset(sim_state *s);
int sim_run_iteration(sim_state *s);
/* Bandwidth traces and preemption events (sim_events.c). */
int sim_load_events(sim_state *s);
int sim_schedule_traces(sim_state *s);
int sim_capacity_event(sim_state *s, int idx);
int sim_preempt_event(sim_state *s, int idx);
void sim_free_events(sim_state *s);

#endif
