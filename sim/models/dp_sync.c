/* dp_sync.c — phases and bytes of the data-parallel sync (dp_sync.h). */
#include "sim/models/dp_sync.h"

#include "sim/models/cost.h"

double dp_grad_bytes(const job *j, int first, int last, int tp)
{
    /* bf16 gradients: the cost model's figure, bit for bit */
    double g = j->grad_bytes == 2 ? cost_grad_bytes(&j->model, first, last)
                                  : j->grad_bytes * cost_stage_params(&j->model, first, last);
    return g / tp;
}

double dp_weight_bytes(const job *j, int first, int last, int tp)
{
    return 2.0 * cost_stage_params(&j->model, first, last) / tp;
}

int dp_sync_phases(shard_kind shard, double grads, double weights, int passes,
                   sync_phase out[DP_SYNC_MAX_PHASES])
{
    int k = passes > 1 ? passes : 1;
    switch (shard) {
    case SHARD_NONE:
        out[0] = (sync_phase){PHASE_ALL_REDUCE, grads, 1};
        return 1;
    case SHARD_ZERO1:
    case SHARD_ZERO2:
        /* each replica updates its 1/D of the weights, then shares them */
        out[0] = (sync_phase){PHASE_REDUCE_SCATTER, grads, 1};
        out[1] = (sync_phase){PHASE_ALL_GATHER, weights, 1};
        return 2;
    case SHARD_ZERO3:
    case SHARD_FSDP:
        /* the forward's and the backward's gathers of every pass (priced
         * at the sync point: see docs/training-model.md), then the
         * gradients' reduce-scatter once per step */
        out[0] = (sync_phase){PHASE_ALL_GATHER, weights, k};
        out[1] = (sync_phase){PHASE_ALL_GATHER, weights, k};
        out[2] = (sync_phase){PHASE_REDUCE_SCATTER, grads, 1};
        return 3;
    }
    return 0;
}

double dp_sync_phase_allreduce_bytes(const sync_phase *ph)
{
    return ph->kind == PHASE_ALL_REDUCE ? ph->bytes : 0.5 * ph->bytes;
}
