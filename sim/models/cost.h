/* cost.h — the cost model: the one source of truth for the estimator, the
 * simulator and every planner (docs/models.md).
 *
 * Parameter counts, FLOPs, memory, transfer sizes and op durations of a
 * decoder-only Transformer. Layers are 0..L-1; the embedding rides with layer
 * 0's stage and the LM head with layer L-1's. */
#ifndef GT_COST_H
#define GT_COST_H

#include <stdint.h>
#include "sim/inputs/catalog.h"
#include "sim/inputs/job.h"
#include "sim/base/timecap.h"

/* --- parameters ---------------------------------------------------------- */
double cost_layer_params(const model_spec *m);
double cost_layer_matmul_params(const model_spec *m);
double cost_embedding_params(const model_spec *m);   /* tokens (+ learned positions) */
double cost_head_params(const model_spec *m);        /* LM head (0 extra if tied) + final norm */
double cost_model_params(const model_spec *m);       /* the published-style total */
/* Parameters held by a stage with layers [first, last]. A tied head still
 * holds a copy of the embedding on the last stage (as Megatron-LM does). */
double cost_stage_params(const model_spec *m, int first, int last);

/* --- FLOPs -------------------------------------------------------------- */
/* Forward FLOPs of one layer for b sequences of length s. */
double cost_layer_fwd_flops(const model_spec *m, int b, int s);
double cost_head_fwd_flops(const model_spec *m, int b, int s);
/* Forward / backward FLOPs of a stage for one microbatch. Backward is twice
 * the forward; full recomputation adds one forward of the layers (not of the
 * head, whose activations are always kept). */
double cost_stage_fwd_flops(const job *j, int b, int first, int last);
double cost_stage_bwd_flops(const job *j, int b, int first, int last);
/* FLOPs of one training iteration of the whole model (B sequences). */
double cost_iteration_flops(const job *j);

/* --- time --------------------------------------------------------------- */
/* cost_ns (seconds -> DES nanoseconds) lives in sim/base/timecap.h. */
/* The constant-efficiency fallback: `flops` / (peak x efficiency) / tp plus
 * the TP all-reduces over the node's GPU link, at frequency scale f (1 = max).
 * Used for GPU types without kernel-model data (sim/models/kernels.h) and by
 * planners' quick speed estimates. */
int64_t cost_compute_ns(const gpu_type *g, double flops, int tp, double tp_allreduce_bytes,
                        double freq_scale);
/* Forward and backward op durations of a stage on type g: a measured
 * profile (job->profile) if it has the row, else the kernel model
 * (sim/models/kernels.h), else the fallback above. */
int64_t cost_stage_fwd_ns(const job *j, const gpu_type *g, int tp, int b, int first, int last,
                          double freq_scale);
int64_t cost_stage_bwd_ns(const job *j, const gpu_type *g, int tp, int b, int first, int last,
                          double freq_scale);
/* Forward + backward of one microbatch (b sequences) through one layer (with
 * the job's recomputation), the head or the embedding on one GPU: the parts
 * planners add up (a stage's time is their sum up to rounding). */
int64_t cost_layer_pass_ns(const job *j, const gpu_type *g, int b);
int64_t cost_head_pass_ns(const job *j, const gpu_type *g, int b);
int64_t cost_embedding_pass_ns(const job *j, const gpu_type *g, int b);
/* Highest FLOP rate (counted FLOPs / time) any layer or head pass reaches on
 * g over the microbatch sizes bvals[0..nb-1]: an upper bound planners may
 * divide work by. */
double cost_max_rate(const job *j, const gpu_type *g, const int *bvals, int nb);
/* Optimizer step: params_held * 32 bytes / memory bandwidth. */
int64_t cost_optimizer_ns(const gpu_type *g, double params_held);
/* A lone transfer: latency + bytes / rate. */
int64_t cost_transfer_ns(double bytes, double lat_s, double rate);

/* --- sizes (memory: memory.h) ---------------------------------------------------- */
double cost_activation_bytes(const job *j, int b);   /* b*s*h*2: between stages */
double cost_grad_bytes(const model_spec *m, int first, int last); /* fp16 grads to sync */

#endif
