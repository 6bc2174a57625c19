/* memory.c — formulas of the memory model (see memory.h,
 * docs/training-model.md for the derivations and sources). */
#include "sim/models/memory.h"

#include "sim/models/cost.h"

double memory_layer_activation_bytes(const job *j, int b, int tp)
{
    /* Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
     * Transformer Models", arXiv 2205.05198) section 4, 16-bit activations:
     * sbh(34 + 5as/h) per layer on one GPU; with t-way tensor parallelism
     * (no sequence parallelism) sbh(10 + 24/t + 5as/(ht)) on each GPU, the
     * 10sbh of the LayerNorm inputs, the dropout masks and the residual
     * being replicated. Full recomputation keeps only the layer's 2sbh input,
     * replicated on every tensor-parallel GPU. Selective recomputation (the
     * attention core redone in backward, section 5 there) drops the 5as/(ht)
     * term; sequence parallelism splits the replicated 10sbh over t as well
     * (sbh(34/t + 5as/(ht)), section 4.2.2). */
    const model_spec *m = &j->model;
    double s = j->seq, h = m->hidden, a = m->heads, t = tp;
    if (j->recompute == RECOMPUTE_FULL)
        return 2.0 * s * b * h;
    double core = j->recompute_attention ? 0.0 : 5.0 * a * s / (h * t);
    double rest = j->sequence_parallel ? 34.0 / t : 10.0 + 24.0 / t;
    return s * b * h * (rest + core);
}

double cost_stage_activation_bytes(const job *j, int b, int first, int last)
{
    return (last - first + 1) * memory_layer_activation_bytes(j, b, 1);
}

double memory_state_bytes_per_param(const job *j)
{
    return j->grad_bytes == 2 ? j->opt_bytes_per_param : j->opt_bytes_per_param - 2 + j->grad_bytes;
}

static int sharded(shard_kind shard, int dp, shard_kind from)
{
    return dp > 1 && shard != SHARD_NONE && (shard == SHARD_FSDP ? SHARD_ZERO3 : shard) >= from;
}

double memory_stage_temporary(const job *j, int b, int last, int tp,
                              shard_kind shard, int dp)
{
    const model_spec *m = &j->model;
    double t = 0;
    /* the loss: Korthikanti et al. 4.1, the logits in fp32 take 4sbv bytes
     * (vocabulary-parallel under tensor parallelism) */
    if (last == m->layers - 1)
        t = 4.0 * b * j->seq * (double)m->vocab;
    /* full recomputation re-runs one layer's forward inside its backward:
     * that layer's full activations are alive meanwhile (ibid. section 5) */
    t /= tp;
    if (j->recompute == RECOMPUTE_FULL) {
        job none = *j;
        none.recompute = RECOMPUTE_NONE;
        double layer = memory_layer_activation_bytes(&none, b, tp);
        t = layer > t ? layer : t;
    }
    /* ZeRO-3 / FSDP gather a unit's full parameters before using it and
     * prefetch the next one (FSDP's default backward_prefetch BACKWARD_PRE):
     * two layers' 2-byte weights, beside the buffers above */
    if (sharded(shard, dp, SHARD_ZERO3))
        t += 2 * 2.0 * cost_layer_params(m) / tp;
    return t;
}

void memory_stage_terms(const job *j, int b, int first, int last, int tp, int in_flight,
                        shard_kind shard, int dp, mem_terms *out)
{
    /* ZeRO (Rajbhandari et al. SC'20) section 5: mixed-precision Adam holds
     * 2 bytes of weights, 2 of gradients and K = 12 of optimizer state per
     * parameter (fp32 weights, momentum, variance); stage 1 shards the K,
     * stage 2 the gradients too, stage 3 the weights too, over Nd = dp */
    double p = cost_stage_params(&j->model, first, last) / tp;
    double nd = dp > 1 ? dp : 1;
    out->params = 2.0 * p / (sharded(shard, dp, SHARD_ZERO3) ? nd : 1);
    out->grads = j->grad_bytes * p / (sharded(shard, dp, SHARD_ZERO2) ? nd : 1);
    out->optimizer = (j->opt_bytes_per_param - 4.0) * p / (sharded(shard, dp, SHARD_ZERO1) ? nd : 1);
    out->activations = (last - first + 1) * memory_layer_activation_bytes(j, b, tp) * in_flight;
    out->temporary = memory_stage_temporary(j, b, last, tp, shard, dp);
    out->overhead = COST_RUNTIME_OVERHEAD_BYTES;
}

double memory_terms_total(const mem_terms *t)
{
    return t->params + t->grads + t->optimizer + t->activations + t->temporary + t->overhead;
}

double cost_stage_memory(const job *j, int b, int first, int last, int tp, int in_flight)
{
    mem_terms t;
    memory_stage_terms(j, b, first, last, tp, in_flight, SHARD_NONE, 1, &t);
    return memory_terms_total(&t);
}
