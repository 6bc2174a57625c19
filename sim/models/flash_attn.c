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
#include <string.h>

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

/* The Triton FlashAttention kernel (llm-foundry's attn_impl triton,
 * HazyResearch's flash_attn_triton.py: the FlashAttention-1 algorithm in
 * Triton). Its header, written for A100 ("only been tested on A100"), puts
 * its forward + backward "slightly slower" than the CUDA FlashAttention-1
 * (forward faster, backward slower), without a figure; "slightly" is taken
 * as equal (a lower bound on its time). On Ampere the kernel therefore runs
 * at FlashAttention-1's measured speed: the FA2 release's benchmark measured
 * both generations side by side (arXiv:2307.08691 Fig. 4 (c), (d) =
 * Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png at
 * 4f285b35: causal forward + backward TFLOP/s on an A100 80GB SXM4, d = 64
 * and 128, s = 512 .. 16k at 16k tokens per batch, hidden 2048), and the
 * ratio FA2 / FA1 of a bar pair is the slowdown against FlashAttention-2 at
 * that shape. Between the measured shapes it is interpolated linearly in
 * log2 s and in d; outside them the nearest measured value holds (both
 * kernels are on their plateau from 4k on). Forward and backward are not
 * measured apart: both passes take the combined ratio.
 *
 * Other architectures keep the earlier prior, the middle of the FA2 paper's
 * summary range ("1.3-2.5x faster than FlashAttention in Triton", A100,
 * Sec. 4.1): the kernel's Hopper build (llm-foundry's triton-pre-mlir
 * sm90 fork) has no measurement, and the A100 relation to FlashAttention-1
 * carried to H100 (docs/validation.md) puts llm-foundry's H100 rows 13 %
 * too slow on average and 32 % beyond 16k tokens: it does not hold there. */
#define FA_TRITON_SLOWDOWN 1.9
#define TRITON_NS 6
static const double TRITON_LOG2S[TRITON_NS] = {9, 10, 11, 12, 13, 14};
static const double TRITON_D[2] = {64, 128};
/* A100 80GB SXM4, causal forward + backward TFLOP/s, [d: 64, 128][s] */
static const double FA2_TFLOPS[2][TRITON_NS] = {{88, 119, 140, 156, 165, 171},
                                                {99, 133, 155, 173, 182, 189}};
static const double FA1_TFLOPS[2][TRITON_NS] = {{58, 70, 77, 87, 92, 97},
                                                {55, 62, 69, 76, 80, 83}};

static double ratio_at(int di, int i)
{
    return FA2_TFLOPS[di][i] / FA1_TFLOPS[di][i];
}

/* The measured slowdown at head dimension index di, sequence length s. */
static double ampere_at_d(int di, double s)
{
    double x = log2(s);
    if (x <= TRITON_LOG2S[0])
        return ratio_at(di, 0);
    for (int i = 1; i < TRITON_NS; i++)
        if (x <= TRITON_LOG2S[i]) {
            double a = ratio_at(di, i - 1), b = ratio_at(di, i);
            return a + (b - a) * (x - TRITON_LOG2S[i - 1]);
        }
    return ratio_at(di, TRITON_NS - 1);
}

double flash_triton_slowdown(const gpu_type *g, double s, double d)
{
    if (strcmp(g->arch, "ampere") != 0)
        return FA_TRITON_SLOWDOWN;
    double lo = ampere_at_d(0, s), hi = ampere_at_d(1, s);
    if (d <= TRITON_D[0])
        return lo;
    if (d >= TRITON_D[1])
        return hi;
    return lo + (hi - lo) * (d - TRITON_D[0]) / (TRITON_D[1] - TRITON_D[0]);
}

static double pass_eff(const gpu_type *g, attn_impl_kind impl, int bwd, double s, double d)
{
    double a = bwd ? g->attn_bwd_eff : g->attn_fwd_eff;
    double f = bwd ? g->fa2_bwd_eff : g->fa2_fwd_eff;
    if (impl == ATTN_DEFAULT)
        return a;
    double fa2 = f > 0 ? f : a;
    return impl == ATTN_TRITON ? fa2 / flash_triton_slowdown(g, s, d) : fa2;
}

int flash_has_data(const gpu_type *g, attn_impl_kind impl, int bwd)
{
    return pass_eff(g, impl, bwd, FA_REF_S, FA_REF_D) > 0 && g->sms > 0;
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
    double per_sm = peak / g->sms * pass_eff(g, impl, bwd, s, d) * hd * w_ref;
    double n = ceil(s / FA_BLOCK);
    /* query tiles spread over the SMs; the longest tile (the last query block:
     * n steps + the fixed part) bounds the time when there are few heads */
    double total = batch * head_steps(n, bwd) / g->sms, longest = n + FA_C0[bwd];
    double compute = (total > longest ? total : longest) * step_flops / per_sm;
    double memory = bytes / (g->mem_bw * g->mem_eff);
    return compute > memory ? compute : memory;
}
