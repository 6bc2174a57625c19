/* flash_attn.c — the fused causal attention core priced from measured kernel
 * efficiencies (see flash_attn.h, docs/compute-model.md).
 *
 * Work unit: one key-block step of a query tile, FA_BLOCK x FA_BLOCK scores:
 * forward S = Q K^T and O += P V (2 products of FA_BLOCK^2 x d MACs), backward
 * S again, dV, dP, dQ, dK (5 products: 2.5x). With n = ceil(s / FA_BLOCK) key
 * blocks, query tile i (1..n) does i steps under the causal mask, plus a fixed
 * FA_C0 steps (load the Q tile, rescale and write O; backward also the dQ /
 * dK / dV accumulators). Each step also pays the softmax's exp / max / sum,
 * a cost per score rather than per MAC: the head-dimension factor
 * d / (d + FA_D0). */
#include "sim/models/flash_attn.h"

#include <math.h>

/* Fixed steps per query tile, forward / backward. From the sequence ramp of
 * FlashAttention-2's own benchmark (benchmarks/benchmark_flash_attention.py)
 * on an H100, d = 64 (Dao-AILab/flash-attention pull request 2688): forward
 * 252 TFLOP/s at s = 512 vs 312 at 4k, backward 190 vs 280; n / (n + c0)
 * reproduces those ratios with c0 = 1.1 and 2.3. */
static const double FA_C0[2] = {1.0, 2.0};
/* Softmax cost per score in head-dimension columns: FlashAttention-2 on H100,
 * non-causal s = 8k, forward: d = 64 reaches 310 TFLOP/s (pull request 2688),
 * d = 128 370 TFLOP/s (pull request 1791); (64/(64+D0)) / (128/(128+D0)) =
 * 310/370 gives D0 = 30. */
#define FA_D0 30.0

/* The Triton FlashAttention kernel (HazyResearch flash_attn_triton.py, the
 * FlashAttention-1 algorithm; llm-foundry's attn_impl triton) against
 * FlashAttention-2: "1.3-2.5x faster than FlashAttention in Triton" forward +
 * backward on A100 (Dao, FlashAttention-2, arXiv:2307.08691, Sec. 4.1); the
 * middle of the range. No per-architecture measurement: the same factor is
 * applied to FlashAttention-2's rate on every architecture. */
#define FA_TRITON_SLOWDOWN 1.9

static double pass_eff(const gpu_type *g, attn_impl_kind impl, int bwd)
{
    double a = bwd ? g->attn_bwd_eff : g->attn_fwd_eff;
    double f = bwd ? g->fa2_bwd_eff : g->fa2_fwd_eff;
    if (impl == ATTN_DEFAULT)
        return a;
    double fa2 = f > 0 ? f : a;
    return impl == ATTN_TRITON ? fa2 / FA_TRITON_SLOWDOWN : fa2;
}

int flash_has_data(const gpu_type *g, attn_impl_kind impl, int bwd)
{
    return pass_eff(g, impl, bwd) > 0 && g->sms > 0;
}

/* Steps of one head: the causal triangle of blocks plus the fixed part. */
static double head_steps(double n, int bwd)
{
    return n * (n + 1) / 2 + FA_C0[bwd] * n;
}

double flash_counted_flops(double s, double d, double batch, int bwd)
{
    return batch * 2.0 * s * s * d * (bwd ? 2.5 : 1.0);
}

double flash_attn_s(const gpu_type *g, double peak, double s, double d, double batch, int bwd,
                    attn_impl_kind impl, double bytes)
{
    if (s <= 0 || d <= 0 || batch <= 0)
        return 0;
    double mult = bwd ? 2.5 : 1.0;
    double step_flops = 4.0 * FA_BLOCK * FA_BLOCK * d * mult;
    /* executed step-FLOPs per counted FLOP at the reference shape: the rate
     * below is scaled by it so the reference reproduces the measurement */
    double nref = FA_REF_S / FA_BLOCK;
    double w_ref = head_steps(nref, bwd) * 4.0 * FA_BLOCK * FA_BLOCK /
                   (2.0 * (double)FA_REF_S * FA_REF_S);
    double hd = (d / (d + FA_D0)) / (FA_REF_D / (FA_REF_D + FA_D0));
    double per_sm = peak / g->sms * pass_eff(g, impl, bwd) * hd * w_ref;
    double n = ceil(s / FA_BLOCK);
    /* query tiles spread over the SMs; the longest tile (the last query block:
     * n steps + the fixed part) bounds the time when there are few heads */
    double total = batch * head_steps(n, bwd) / g->sms, longest = n + FA_C0[bwd];
    double compute = (total > longest ? total : longest) * step_flops / per_sm;
    double memory = bytes / (g->mem_bw * g->mem_eff);
    return compute > memory ? compute : memory;
}
