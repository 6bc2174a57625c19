/* kernels.h — the per-layer compute model: a Transformer layer as the GPU
 * kernels it launches (docs/compute-model.md).
 *
 * Each layer is its GEMMs with their (M, N, K) under the tensor-parallel
 * split, the attention core (fused FlashAttention-style or unfused), the
 * memory-bound elementwise / norm / softmax kernels as bytes over memory
 * bandwidth, a fixed cost per kernel, and the tensor-parallel collectives
 * over the node's GPU links. Parameters come from the GPU catalog
 * (topologies/gpus.csv, kernel-model columns, each with its source). A GPU
 * type without them (gemm_eff == 0) falls back to FLOPs / (peak x
 * efficiency) in sim/models/cost.c, reported by kern_has_model(). */
#ifndef GT_KERNELS_H
#define GT_KERNELS_H

#include "sim/inputs/catalog.h"
#include "sim/inputs/job.h"

/* The GEMM tile every SM works on per wave (CUTLASS / cuBLAS default
 * threadblock tile for large half-precision GEMMs). */
#define KERN_TILE_M 128
#define KERN_TILE_N 128

/* Where one pass of a layer (or of the embedding / head) spends its time. */
typedef struct kern_time {
    double gemm_s;     /* tensor-core GEMMs, attention's included */
    double mem_s;      /* memory-bound kernels */
    double launch_s;   /* fixed cost per kernel */
    double comm_s;     /* tensor-parallel collectives */
    int kernels;       /* kernels launched (collectives excluded) */
} kern_time;

/* 1 when the type carries the kernel-model columns. */
int kern_has_model(const gpu_type *g);
/* Bytes of an activation element of the job (its precision's, or the job's
 * precision_bytes where given). */
int kern_elem_bytes(const job *j);
/* Dense tensor peak of the GEMMs under precision p (FLOP/s): bf16/fp16 the
 * 16-bit peak; fp8 the fp8 peak (the 16-bit one where the GPU has no fp8:
 * frameworks fall back to bf16); tf32 the TF32 peak (FP32 without TF32). */
double kern_peak(const gpu_type *g, precision_kind p);

/* One GEMM C[M,N] = A[M,K] B[K,N], `batch` independent copies, operands of
 * `eb` bytes: max(compute, memory) where compute runs in waves of one
 * KERN_TILE_M x KERN_TILE_N tile per SM at peak/sms x gemm_eff x
 * K / (K + k_sat), and memory moves A, B and C once at mem_bw x mem_eff. */
double kern_gemm_s(const gpu_type *g, double peak, double eb, double M, double N, double K,
                   double batch);
/* A memory-bound kernel moving `bytes`. */
double kern_mem_s(const gpu_type *g, double bytes);
/* Ring collective over tp GPUs of one node moving `bytes` of payload:
 * `phases` = 2 for an all-reduce (reduce-scatter + all-gather), 1 for either
 * half: phases x ((tp-1)/tp x bytes / (link_bw x link_eff) + (tp-1) x lat). */
double kern_ring_s(const gpu_type *g, int tp, double bytes, int phases);

/* One transformer layer, forward (bwd = 0) or backward (bwd = 1; without
 * recomputation), for b sequences of the job's length on a tp-way stage. */
void kern_layer(const job *j, const gpu_type *g, int tp, int b, int bwd, kern_time *out);
/* The attention core alone (what selective recomputation redoes). */
void kern_attention(const job *j, const gpu_type *g, int tp, int b, int bwd, kern_time *out);
void kern_embedding(const job *j, const gpu_type *g, int tp, int b, int bwd, kern_time *out);
/* Final norm, LM head GEMM and the cross-entropy. */
void kern_head(const job *j, const gpu_type *g, int tp, int b, int bwd, kern_time *out);
/* Seconds of a kern_time at frequency scale f (GEMMs slow down with the
 * clock; memory, launches and links do not). */
double kern_total_s(const kern_time *t, double freq_scale);

/* n layers' forward or backward seconds, the backward with the job's
 * recomputation. */
double kern_layers_s(const job *j, const gpu_type *g, int tp, int b, int n, int bwd,
                     double freq_scale);
/* Forward or backward seconds of a stage holding layers [first, last]:
 * layers (+ recomputation in backward), the embedding on layer 0's stage,
 * the head on the last layer's stage. Requires kern_has_model(g). */
double kern_stage_s(const job *j, const gpu_type *g, int tp, int b, int first, int last,
                    int bwd, double freq_scale);
/* Tensor-parallel collectives of one layer's pass: `count` ring collectives
 * of `bytes` each (all-reduces, or with sequence parallelism the
 * reduce-scatter + all-gather pairs that replace them). */
void kern_tp_layer_traffic(const job *j, int tp, int b, int *count, double *bytes);

#endif
