/* stage_path.h — the estimator's per-stage fast path (docs/estimator.md).
 *
 * When every microbatch of a pipeline costs the same (GPipe or 1F1B, one
 * chunk per GPU, every op at the maximum SM clock), the op recurrence is a
 * max-plus system that repeats itself round after round: once a round's
 * op ends are the previous round's plus one constant, every later round of
 * the steady phase is too. This path runs the recurrence over per-stage
 * state in rounds (one forward and one backward per stage), detects that
 * period and jumps over the rest of the steady phase, giving exactly the
 * op path's values (same integer arithmetic, same max) for what the
 * estimator's readers need: each lane's last op, its compute and
 * transfer-blocked time, the transfer streams of the load bound and the
 * WAN bytes. No op list is built. Anything else (interleaved, lowered
 * clocks, sums that would not be exact) goes to the op path. */
#ifndef GT_STAGE_PATH_H
#define GT_STAGE_PATH_H

#include <stdint.h>
#include "sim/estimator/load_bound.h"
#include "sim/estimator/run_memo.h"
#include "sim/estimator/stage_costs.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"
#include "sim/models/timing.h"
#include "sim/models/workload.h"

/* One lane's op sums, as the op path's readers would compute them. */
typedef struct sp_lane {
    int64_t ops_ns;        /* sum of its op durations */
    int64_t xfer_comm_ns;  /* blocked on an input transfer (accounting.h) */
    int64_t last_start, last_end; /* its last op (the last backward) */
} sp_lane;

/* Per-stage durations and the run's results; buffers kept between
 * evaluations (grown, never shrunk). */
typedef struct stage_path {
    struct sp_stage *st;   /* one per lane: durations, transfers, state */
    int cap_st;
    sp_lane *lanes;
    int cap_lanes;
    struct sp_hist *hist;  /* the last rounds' states, to find the period */
    int cap_hist;
    xfer_stream *streams;  /* up to two per lane (forward and backward input) */
    int nstreams, cap_streams;
    double wan_bytes;      /* of the pipeline transfers */
    double act;            /* bytes of one activation (or gradient) transfer */
    long skipped;          /* rounds jumped over in the last run (its speed-up) */
    int reused;            /* pipelines of the last run that took an earlier one's result */
    int recalled;          /* ... that took a stored result of an earlier plan's (memo) */
    run_memo memo;         /* pipelines' end states by their recurrence's inputs */
    run_memo prep;         /* pipelines' prepared stages by their plan entries (one
                            * topology and job: stage_path_forget) */
    int64_t *key;          /* the key being looked up */
    int cap_key;
    unsigned char *val;    /* the value being stored */
    int cap_val;
} stage_path;

/* Does the fast path apply to this checked plan? Fills the per-stage
 * durations (through sc) and transfers; returns 1, 0 when it does not
 * apply, -1 when out of memory. A pipeline whose stages (GPUs, layers,
 * clocks) and microbatch size an earlier call prepared takes the stored
 * result: the caller calls stage_path_forget when the topology or the job
 * differs from the last call's. */
int stage_path_prepare(stage_path *sp, stage_costs *sc, const topology *t, const job *j,
                       const plan *p);
/* Runs it on the lanes-only workload of the same plan: sets each lane's
 * bwd_end in tm and fills sp's results. Returns 0, 1 when the times come
 * near the time cap (the caller falls back to the op path, which saturates
 * exactly), or -1 when out of memory. */
int stage_path_run(stage_path *sp, const plan *p, const workload *w, timing *tm);
void stage_path_forget(stage_path *sp);
void stage_path_free(stage_path *sp);

#endif
