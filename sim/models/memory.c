/* memory.c — formulas of the memory model (see memory.h,
 * docs/training-model.md for the derivations and sources). */
#include "sim/models/memory.h"

#include "sim/models/cost.h"

void memory_policy_of(const job *j, mem_policy *pol)
{
    pol->act = j->recompute == RECOMPUTE_FULL ? MEM_ACT_FULL
               : j->recompute_ops             ? MEM_ACT_OPS
               : j->recompute_attention       ? MEM_ACT_SELECTIVE
                                              : MEM_ACT_NONE;
    pol->loss_bytes = 4.0;
    pol->fsdp_keep_unsharded = 0;
    pol->tp_keeps_gathered = 0;
}

/* Bytes per token of one layer's saved activations on a GPU of a t-way stage.
 *
 * Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
 * Transformer Models", arXiv 2205.05198) section 4 count, for a GPT layer
 * with 16-bit activations, per token: the two LayerNorm inputs (4h), the
 * QKV input (2h), Q and K (4h), the softmax output, its dropout mask and
 * output (5as), V (2h), the output projection's input (2h), its dropout mask
 * (h), the MLP input (2h), the GeLU input and the second GEMM's input (8h
 * each for an ffn of 4h) and the MLP dropout mask (h): 34h + 5as. Under
 * t-way tensor parallelism the norm inputs, the two GEMM inputs and the
 * dropout masks (10h) are replicated, the rest split; sequence parallelism
 * splits everything (section 4.2.2). The same count, term by term, for the
 * model's own shapes:
 *   - grouped-query attention keeps K and V of kv_heads heads (2h kv/a each);
 *   - a gated (SwiGLU) MLP keeps the first GEMM's two outputs and the down
 *     projection's input, 3 x ffn (Megatron-Core's fused SwiGLU); a GeLU MLP
 *     keeps 2 x ffn;
 *   - dropout only in models without a gated MLP (GPT-style): Llama-family
 *     recipes train with dropout 0, so no masks there;
 *   - a fused (FlashAttention) kernel never writes the s x s scores: it keeps
 *     its output (the projection's input, counted) and one fp32 log-sum-exp
 *     per head and token (4a) instead of 5as (Dao et al. 2022, section 3.1);
 *   - activations of e bytes (2, or 4 under tf32 / fp32) scale every
 *     16-bit term; masks stay one byte. */
static double layer_bytes_per_token(const job *j, const mem_policy *pol, double t)
{
    const model_spec *m = &j->model;
    double h = m->hidden, a = m->heads, s = j->seq;
    double kv = m->kv_heads > 0 ? m->kv_heads : a, f = m->ffn > 0 ? m->ffn : 4 * h;
    double e = j->precision_bytes > 0 ? j->precision_bytes : 2;
    int dropout = !m->gated_mlp;
    double rep = j->sequence_parallel ? t : 1; /* divisor of the replicated part */
    if (pol->act == MEM_ACT_FULL)
        return e * h / rep; /* the layer's input (Korthikanti section 5) */
    if (pol->act == MEM_ACT_OPS)
        /* layer input; of the GEMMs in order wq wk wv wo w1 w3 w2 the odd ones
         * (wq, wv, w1, w2) keep their outputs; the attention output + lse */
        return e * h / rep + (e * h + e * h * kv / a + e * h + 4 * a + e * f + e * h) / t;
    double core;
    if (j->attention != ATTN_UNFUSED) /* resolved by the caller (attn_job_on) */
        core = 4 * a;
    else if (pol->act == MEM_ACT_SELECTIVE)
        core = 0;
    else
        core = e * a * s + (dropout ? a * s + e * a * s : 0);
    double split = e * (h + 2 * h * kv / a) + core + e * h + (m->gated_mlp ? 3 : 2) * e * f;
    /* the norm inputs and masks follow the sequence split; the two GEMM
     * inputs (QKV, MLP up) stay whole where the framework keeps the gather */
    double norms = 2 * e * h + (dropout ? 2 * h : 0), gemm_in = 2 * e * h;
    return norms / rep + gemm_in / (pol->tp_keeps_gathered ? 1 : rep) + split / t;
}

double memory_layer_activation_policy(const job *j, const mem_policy *pol, int b, int tp)
{
    return (double)j->seq * b * layer_bytes_per_token(j, pol, tp);
}

double memory_layer_activation_bytes(const job *j, int b, int tp)
{
    mem_policy pol;
    memory_policy_of(j, &pol);
    return memory_layer_activation_policy(j, &pol, b, tp);
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

static double stage_temporary(const job *j, const mem_policy *pol, int b, int last, int tp,
                              shard_kind shard, int dp)
{
    const model_spec *m = &j->model;
    double t = 0;
    /* the loss: pol->loss_bytes per logit (Korthikanti et al. 4.1: 4sbv of
     * fp32 logits), vocabulary-parallel under tensor parallelism; beside it
     * the output projection's saved input, the final norm's output (e sbh):
     * a column-parallel GEMM, so sequence-sharded only where the framework
     * keeps the shard (policy) */
    if (last == m->layers - 1) {
        double e = j->precision_bytes > 0 ? j->precision_bytes : 2;
        double shard = j->sequence_parallel && !pol->tp_keeps_gathered ? tp : 1;
        t = pol->loss_bytes * b * j->seq * (double)m->vocab / tp + e * b * j->seq * m->hidden / shard;
    }
    /* full (or per-op) recomputation re-runs one layer's forward inside its
     * backward: that layer's full activations are alive meanwhile (ibid.
     * section 5) */
    if (pol->act == MEM_ACT_FULL || pol->act == MEM_ACT_OPS) {
        mem_policy none = *pol;
        none.act = MEM_ACT_NONE;
        double layer = memory_layer_activation_policy(j, &none, b, tp);
        t = layer > t ? layer : t;
    }
    /* ZeRO-3 / FSDP gather a unit's full parameters before using it and
     * prefetch the next one (FSDP's default backward_prefetch BACKWARD_PRE):
     * two layers' 2-byte weights, beside the buffers above */
    if (sharded(shard, dp, SHARD_ZERO3) && !pol->fsdp_keep_unsharded)
        t += 2 * 2.0 * cost_layer_params(m) / tp;
    return t;
}

double memory_stage_temporary(const job *j, int b, int last, int tp,
                              shard_kind shard, int dp)
{
    mem_policy pol;
    memory_policy_of(j, &pol);
    return stage_temporary(j, &pol, b, last, tp, shard, dp);
}

void memory_stage_terms_policy(const job *j, const mem_policy *pol, int b, int first,
                               int last, int tp, int in_flight, shard_kind shard, int dp,
                               mem_terms *out)
{
    /* ZeRO (Rajbhandari et al. SC'20) section 5: mixed-precision Adam holds
     * 2 bytes of weights, 2 of gradients and K = 12 of optimizer state per
     * parameter (fp32 weights, momentum, variance); stage 1 shards the K,
     * stage 2 the gradients too, stage 3 the weights too, over Nd = dp.
     * PyTorch FSDP (mixed precision) shards the fp32 parameter itself, which
     * is the optimizer's master copy: no 16-bit shard is kept (the 16-bit
     * weights exist only while gathered), and the sharded gradient takes the
     * parameter's fp32 dtype whatever the reduce dtype. */
    double p = cost_stage_params(&j->model, first, last) / tp;
    double nd = dp > 1 ? dp : 1;
    int fsdp = shard == SHARD_FSDP && dp > 1;
    out->params = 2.0 * p / (sharded(shard, dp, SHARD_ZERO3) ? nd : 1);
    out->grads = j->grad_bytes * p / (sharded(shard, dp, SHARD_ZERO2) ? nd : 1);
    if (fsdp) {
        /* PyTorch FSDP2 does not reshard its root module (the embedding, the
         * final norm and the output projection) after the forward: the
         * backward needs it at once (fully_shard's reshard_after_forward
         * docs), so those stay gathered from the forward to the end of the
         * backward */
        double root = ((first == 0 ? cost_embedding_params(&j->model) : 0) +
                       (last == j->model.layers - 1 ? cost_head_params(&j->model) : 0)) / tp;
        out->params = 2.0 * (pol->fsdp_keep_unsharded ? p : root);
        out->grads = 4.0 * p / nd;
    }
    out->optimizer = (j->opt_bytes_per_param - 4.0) * p / (sharded(shard, dp, SHARD_ZERO1) ? nd : 1);
    out->activations = (last - first + 1) * memory_layer_activation_policy(j, pol, b, tp) * in_flight;
    out->temporary = stage_temporary(j, pol, b, last, tp, shard, dp);
    out->overhead = COST_RUNTIME_OVERHEAD_BYTES;
}

void memory_stage_terms(const job *j, int b, int first, int last, int tp, int in_flight,
                        shard_kind shard, int dp, mem_terms *out)
{
    mem_policy pol;
    memory_policy_of(j, &pol);
    memory_stage_terms_policy(j, &pol, b, first, last, tp, in_flight, shard, dp, out);
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
