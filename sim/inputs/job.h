/* job.h — a training job: which model, how much data per iteration, how.
 * Parsed from the command line's JOB options (see docs/formats.md). */
#ifndef GT_JOB_H
#define GT_JOB_H

#include <stdbool.h>

#include "sim/inputs/model.h"

typedef enum { RECOMPUTE_NONE, RECOMPUTE_FULL } recompute_kind;
/* Arithmetic of the GEMMs (sim/models/kernels.c picks the matching peak). bf16 and
 * fp16 share the 16-bit tensor peak; fp8 runs the GEMMs in fp8 and keeps
 * activations in 16 bits (Transformer Engine style); tf32 and fp32 keep
 * 4-byte activations. */
typedef enum { PREC_BF16 = 0, PREC_FP16, PREC_FP8, PREC_TF32, PREC_FP32 } precision_kind;
const char *precision_name(precision_kind p);
/* "bf16" -> PREC_BF16 ...; 0, or -1 for an unknown name. */
int precision_parse(const char *s, precision_kind *out);
/* Bytes of one activation element under precision p (2 or 4). */
int precision_act_bytes(precision_kind p);

/* The fused attention kernel: the architecture's default (cuDNN / FlashAttention-3
 * class on Hopper, FlashAttention-2 on Ampere), FlashAttention-2, or the Triton
 * FlashAttention kernel (FlashAttention-1 class). */
typedef enum { ATTN_DEFAULT = 0, ATTN_FLASH2, ATTN_TRITON } attn_impl_kind;
/* Which attention the job runs: ATTN_AUTO (default) the fused kernel on GPU
 * types whose architecture runs FlashAttention-2, the unfused softmax path on
 * the others, stage by stage (sim/models/flash_attn.h, attn_fused_on);
 * ATTN_FUSED / ATTN_UNFUSED force one kernel on every GPU. */
typedef enum { ATTN_AUTO = 0, ATTN_FUSED, ATTN_UNFUSED } attn_choice;
/* How the layer's elementwise work runs: EAGER_NONE (default) as fused
 * kernels (a compiled graph, or a framework's hand-fused ones); EAGER_OPS as
 * eager PyTorch runs torchtitan's Llama block, one kernel per op (RoPE as a
 * complex multiply in fp32, the key/value heads repeated by a copy, SwiGLU
 * as silu then mul) with a fused RMSNorm kernel; EAGER_OPS_NORM the same
 * with RMSNorm as its composite ops in fp32 (sim/models/kernels_eager.c). */
typedef enum { EAGER_NONE = 0, EAGER_OPS, EAGER_OPS_NORM } eager_kind;

typedef struct job {
    model_spec model;
    int batch;              /* global batch B, sequences */
    int microbatch;         /* microbatch size b (planners' default) */
    int seq;                /* sequence length s */
    int precision_bytes;    /* 2 for bf16/fp16/fp8, 4 for tf32/fp32 */
    precision_kind precision;   /* GEMM arithmetic (default bf16) */
    attn_choice attention;  /* auto (default), forced fused or forced unfused */
    attn_impl_kind attn_impl; /* which fused kernel (sim/models/flash_attn.c) */
    bool attn_unpad;        /* the fused kernel is called through its variable-length
                               API: Q, K, V unpadded and the output padded back around
                               it (llm-foundry attn_impl flash; validation rows'
                               attention "flash2_unpad"; kernels.c) */
    bool sequence_parallel; /* Megatron SP: norms/dropout split over TP, RS + AG */
    bool recompute_attention; /* selective recompute: attention core redone in backward */
    bool recompute_ops;     /* torchtitan's per-op selective checkpointing (validation
                               rows' recompute "ops"): every second GEMM and the
                               pointwise ops redone in backward (kernels.c) */
    eager_kind eager;       /* elementwise work fused (default) or eager PyTorch ops
                               (validation rows' column eager) */
    bool tp_comm_overlap;   /* Megatron-Core --tp-comm-overlap: with sequence parallelism,
                               each TP all-gather / reduce-scatter runs under its GEMM
                               (sim/models/kernels.c); off by default */
    double opt_bytes_per_param; /* weights+grads+optimizer state, default 16 */
    recompute_kind recompute;
    int iterations;         /* iterations to simulate */
    int accumulation;       /* pipeline flushes per optimizer step; 0 = not given
                               (the plan's "accumulation_steps", else 1) */
    int grad_bytes;         /* bytes per gradient element, held and synced:
                               2 (bf16/fp16, default) or 4 (fp32) */
    const struct profile *profile; /* measured per-layer times (traces/), or NULL */
} job;

/* Defaults: batch 1024 (or what the model's published setup uses), b = 1,
 * seq = the model's, bf16, 16 bytes/param, no recomputation, 1 iteration,
 * accumulation not given, bf16 gradients. */
void job_defaults(job *j, const model_spec *m);

#endif
