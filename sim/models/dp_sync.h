/* dp_sync.h — what the data-parallel gradient sync of a set of parameters
 * moves: the phases (all-reduce, reduce-scatter, all-gather) and their bytes,
 * under plain data parallelism and under ZeRO-1/2/3 / FSDP sharding.
 *
 * One source for the simulator's collectives (collective.c) and the
 * planners' traffic floor (planner/enc_fitness.c), so both price the same
 * bytes. A reduce-scatter or an all-gather of G bytes is half of an
 * all-reduce of G (ring and parameter server alike). Volumes follow the
 * ZeRO paper (Rajbhandari et al. SC'20, section 7): ZeRO-1/2 move what an
 * all-reduce moves (reduce-scatter of the gradients, all-gather of the
 * updated weights), ZeRO-3 / FSDP 1.5x (the weights are all-gathered
 * before the forward and again before the backward, the gradients
 * reduce-scattered). */
#ifndef GT_DP_SYNC_H
#define GT_DP_SYNC_H

#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"

typedef enum { PHASE_ALL_REDUCE = 0, PHASE_REDUCE_SCATTER = 1, PHASE_ALL_GATHER = 2 } sync_phase_kind;

typedef struct sync_phase {
    sync_phase_kind kind;
    double bytes;          /* the full buffer each member contributes / receives */
    int reps;              /* times it runs per optimizer step, back to back */
} sync_phase;

#define DP_SYNC_MAX_PHASES 3

/* Phases of syncing a member's `grads` gradient bytes and `weights` bytes of
 * 2-byte working weights under `shard`, in the order the simulator runs
 * them, for `passes` forward passes of these layers per optimizer step
 * (microbatches x accumulation flushes); returns their count. ZeRO-3 / FSDP
 * free the gathered weights after each forward and each backward
 * (reshard_after_forward), so both all-gathers run once per pass; ZeRO-1/2
 * keep whole weights and gather once per step. */
int dp_sync_phases(shard_kind shard, double grads, double weights, int passes,
                   sync_phase out[DP_SYNC_MAX_PHASES]);
/* A member's gradient and weight bytes of parameters [first, last] of a
 * tp-way stage (gradients in the job's gradient type). */
double dp_grad_bytes(const job *j, int first, int last, int tp);
double dp_weight_bytes(const job *j, int first, int last, int tp);
/* Bytes of an all-reduce that one run of the phase amounts to (1 or 1/2 of
 * its bytes; times reps for the step). */
double dp_sync_phase_allreduce_bytes(const sync_phase *ph);

#endif
