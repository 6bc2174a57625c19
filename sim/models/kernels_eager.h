/* kernels_eager.h — the elementwise work of a Llama layer as eager PyTorch
 * runs it, one kernel per op (job.eager; docs/compute-model.md, "Eager
 * elementwise ops"). kernels.c prices the fused kernels of a compiled or
 * hand-fused layer; this file prices what the same ops cost unfused. */
#ifndef GT_KERNELS_EAGER_H
#define GT_KERNELS_EAGER_H

#include "sim/inputs/catalog.h"
#include "sim/inputs/job.h"
#include "sim/models/kernels.h"

/* One op of a pass: DRAM bytes per element of its activation and the kernels
 * it launches. */
typedef struct eager_pass {
    double bytes;
    int kernels;
} eager_pass;

/* torchtitan's RMSNorm (x.float(), pow, mean, + eps, rsqrt, mul, type_as,
 * * weight) forward (bwd = 0) or its autograd backward, e = activation bytes. */
eager_pass eager_rmsnorm(double e, int bwd);
/* SwiGLU as F.silu(w1 x) * (w3 x): per element of one of the two inputs. */
eager_pass eager_swiglu(double e, int bwd);
/* The attention glue eager mode adds between the QKV GEMM and the attention
 * kernel (RoPE in fp32 complex arithmetic on Q and K; repeat_kv's copy of K
 * and V to every query head when kv_heads < heads), added to o; one pass,
 * forward or backward (both move the same bytes). */
void eager_attention_glue(const job *j, const gpu_type *g, int tp, int b, kern_time *o);

#endif
