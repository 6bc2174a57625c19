/* workload.h — a plan turned into ops: per GPU ("lane"), the ordered list of
 * forward and backward ops the schedule prescribes, each with its duration
 * and the op whose output it waits for.
 *
 * Both the estimator and the event simulator replay this same list, which
 * is why they agree exactly when no link is shared. Schedules:
 *   gpipe        all forwards, then all backwards (B0 first)
 *   1f1b         PipeDream-flush: min(S-i-1, m) warm-up forwards, then one
 *                forward / one backward, then the remaining backwards
 *   interleaved  Megatron-LM's interleaved 1F1B over v chunks per GPU
 *                (needs m to be a multiple of S)
 * With gradient accumulation (k flushes per optimizer step) each lane runs
 * its schedule k times in a row over microbatches f*m .. f*m+m-1 of flush f;
 * the sync follows the last flush. */
#ifndef GT_WORKLOAD_H
#define GT_WORKLOAD_H

#include <stdint.h>
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"
#include "sim/models/plan_view.h"

typedef enum { OP_FWD = 0, OP_BWD = 1 } op_kind;

typedef struct wl_op {
    int32_t pipe, stage, mb;  /* stage = listed stage index (chunk*S + i) */
    int32_t kind;
    int32_t lane;             /* index into workload.lanes */
    int32_t next_on_lane;     /* -1 at the end */
    int32_t input;            /* op whose output this op needs, -1 if none */
    int32_t consumer;         /* the op that needs this op's output, -1 */
    int64_t dur_ns;           /* at the op's SM clock */
    int32_t freq_mhz;         /* SM clock of the op, 0 = maximum (freq.h) */
    double xfer_bytes;        /* bytes of the transfer from `input` (0: same GPU) */
} wl_op;

typedef struct wl_lane {
    int gpu;                  /* representative GPU (first of a TP stage) */
    int tp;                   /* GPUs of the stage */
    int pipe;
    int first_op;             /* first op in lane order */
    int nops;
    double params_held;       /* per GPU, for the optimizer and memory */
    int64_t opt_ns;           /* optimizer step duration */
} wl_lane;

typedef struct sync_group {
    int nmembers;
    int *members;             /* lane indices, in plan order */
    double bytes;             /* gradient bytes each member holds for this group */
    double weights;           /* bytes of its 2-byte working weights (sharded sync) */
    int passes;               /* forward passes of its layers per step (the members'
                                 most microbatches x accumulation): ZeRO-3 / FSDP
                                 gather the weights for each (dp_sync.h) */
    /* Overlapped sync only (else NULL): member m's gradients are ready
     * ready_frac[m] of the way through op ready_op[m] (its last backward). */
    int *ready_op;
    double *ready_frac;
} sync_group;

typedef struct workload {
    plan_view view;           /* the plan resolved once: stages, lanes, in-flight */
    wl_op *ops;
    int nops;
    wl_lane *lanes;
    int nlanes;
    int *lane_of_gpu;         /* topology GPU -> lane, -1 when unused */
    sync_group *groups;
    int ngroups;
    int *group_members;       /* storage for groups[].members */
    int *group_ready_op;      /* storage for groups[].ready_op (overlap) */
    double *group_ready_frac; /* storage for groups[].ready_frac (overlap) */
    shard_kind shard;         /* the plan's dp_shard (collective.c) */
    gsync_kind gsync;         /* the plan's grad_sync */
    int accumulation;         /* pipeline flushes per optimizer step */
    double tokens;            /* tokens per iteration */
    double flops;             /* model FLOPs per iteration */
    int *sg_scratch;          /* syncgroups_build's work arrays */
    /* elements each buffer above holds (workload_rebuild keeps them) */
    struct wl_caps {
        size_t ops, lanes, gpus, groups, members, ready_op, ready_frac, sg_scratch;
    } cap;
} workload;

/* Build the op lists of a checked plan (plan_check first). */
int workload_build(workload *w, const topology *t, const job *j, const plan *p, gt_err *e);
/* The same without the op list (ops NULL, nops 0, lanes' first_op -1):
 * lanes and sync groups only, for the estimator's per-stage path. */
int workload_build_lanes(workload *w, const topology *t, const job *j, const plan *p, gt_err *e);
/* Forward/backward op durations of listed stage k of pipeline pi at the
 * maximum clock (the kernel model, or the job's profile). Returns 0, or -1
 * when out of memory (the caller reports it). */
int workload_stage_base_ns(const topology *t, const job *j, const plan *p, int pi, int k,
                           int64_t *fwd_ns, int64_t *bwd_ns);
/* From those, what every op of the stage is given: durations as
 * [kind][edge] (edge = first or last microbatch, kept at f_max) and SM
 * clocks (0 = maximum) under the stage's clocks. */
void workload_stage_clocks(const topology *t, const plan *p, int pi, int k, int64_t fns,
                           int64_t bns, int64_t dur[2][2], int32_t clk[2][2]);
/* workload_build / workload_build_lanes into w's buffers, grown only when
 * too small (w from an earlier build, or zeroed): no allocation once they
 * are large enough, for a caller building many plans in turn. */
int workload_rebuild(workload *w, const topology *t, const job *j, const plan *p, gt_err *e);
int workload_rebuild_lanes(workload *w, const topology *t, const job *j, const plan *p,
                           gt_err *e);
/* workload_rebuild (with_ops) or workload_rebuild_lanes when w->view is
 * already p resolved over t (the plan check's view, built into it): the
 * view is not resolved again. */
int workload_rebuild_viewed(workload *w, const topology *t, const job *j, const plan *p,
                            int with_ops, gt_err *e);
void workload_free(workload *w);

#endif
