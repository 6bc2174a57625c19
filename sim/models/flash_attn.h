/* flash_attn.h — time of a fused (FlashAttention-style) causal attention core
 * from measured kernel efficiencies (docs/compute-model.md, "Fused attention").
 *
 * The kernel is priced by its own work structure rather than as a GEMM:
 * query tiles of FA_BLOCK rows, each looping over the key blocks left of the
 * causal diagonal (the diagonal block computed whole) plus a fixed prologue /
 * epilogue, spread over the SMs. Its rate comes from the catalog's measured
 * fraction of peak at the reference shape (causal, s = FA_REF_S, d = FA_REF_D),
 * scaled by the model's own work and head-dimension factors so that the
 * reference shape reproduces the measurement exactly. */
#ifndef GT_FLASH_ATTN_H
#define GT_FLASH_ATTN_H

#include "sim/inputs/catalog.h"
#include "sim/inputs/job.h"

#define FA_BLOCK 128  /* query rows and key columns per block (FA2/FA3 at d = 128) */
#define FA_REF_S 8192 /* shape of the catalog's measurements */
#define FA_REF_D 128

/* 1 when the type has a measured efficiency for this kernel and pass. */
int flash_has_data(const gpu_type *g, attn_impl_kind impl, int bwd);
/* Seconds of one causal attention core, `batch` (sequences x heads on this
 * GPU) independent heads of length s and head dimension d, forward (bwd = 0)
 * or backward (bwd = 1, with the recomputation of the scores inside the
 * kernel), at the 16-bit tensor peak `peak`, moving `bytes` of Q, K, V, O
 * (and gradients). impl: ATTN_DEFAULT the architecture's default kernel
 * (attn_* columns); ATTN_FLASH2 FlashAttention-2 (fa2_* columns, the default
 * kernel's when empty); ATTN_TRITON the Triton FlashAttention kernel,
 * FlashAttention-2's rate / flash_triton_slowdown(g, s, d). Requires
 * flash_has_data(). */
double flash_attn_s(const gpu_type *g, double peak, double s, double d, double batch, int bwd,
                    attn_impl_kind impl, double bytes);
/* How much slower the Triton FlashAttention kernel runs a causal forward +
 * backward of sequence length s and head dimension d on g than
 * FlashAttention-2: on Ampere FlashAttention-1's measured speed against
 * FlashAttention-2's (A100, interpolated over s and d), elsewhere the
 * earlier prior of 1.9 (flash_attn.c says why). */
double flash_triton_slowdown(const gpu_type *g, double s, double d);
/* The FLOPs the measurements count for that core (the FlashAttention
 * benchmarks' convention: causal = half of 4 s^2 d per head forward, 2.5x
 * that backward). */
double flash_counted_flops(double s, double d, double batch, int bwd);

#endif
