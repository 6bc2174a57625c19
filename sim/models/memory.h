/* memory.h — the memory model: bytes a GPU holds for the stages it runs.
 *
 * Peak per GPU = parameters + gradients + optimizer state (each possibly
 * sharded over the data-parallel replicas, ZeRO / FSDP) + activations of the
 * microbatches in flight + the largest temporary buffer + the runtime's
 * reserved overhead. Sources beside each term in memory.c and in
 * docs/training-model.md. Uses the cost model's parameter counts (cost.h).
 *
 * What a framework keeps for backward differs (Megatron's fused kernels,
 * PyTorch eager ops, torchtitan's per-op checkpointing policy): a mem_policy
 * says which; memory_policy_of() gives the one a job implies (Megatron-LM
 * style), which is what plan check, the simulator and the planners use. */
#ifndef GT_MEMORY_H
#define GT_MEMORY_H

#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"

/* CUDA context, cuBLAS/NCCL workspaces and the caching allocator's reserve:
 * one figure per GPU, whatever it runs (docs/training-model.md). */
#define COST_RUNTIME_OVERHEAD_BYTES (1.5 * 1073741824.0)

/* Which activations a layer keeps for its backward. */
typedef enum {
    MEM_ACT_NONE,      /* everything the backward reads */
    MEM_ACT_SELECTIVE, /* attention core recomputed (Korthikanti et al. section 5) */
    MEM_ACT_FULL,      /* only the layer's input; the layer is re-run in backward */
    MEM_ACT_OPS        /* torchtitan's per-op policy: GEMM outputs kept except every
                          second one, the attention kernel's output kept, the rest
                          recomputed (docs/training-model.md) */
} mem_act_policy;

typedef struct mem_policy {
    mem_act_policy act;
    /* bytes per logit alive at the loss on the last stage: 4 for Megatron's
     * fused vocabulary-parallel cross entropy (fp32 logits, Korthikanti 4.1),
     * 14 for PyTorch's eager cross_entropy on logits cast to fp32 (16-bit
     * logits kept + fp32 log-softmax output + its gradient + the input gradient) */
    double loss_bytes;
    /* FSDP keeps a stage's gathered 16-bit weights between forward and
     * backward (PyTorch FSDP2 reshard_after_forward=False, torchtitan's
     * choice under pipeline parallelism) */
    int fsdp_keep_unsharded;
    /* tensor parallelism keeps the all-gathered input of a column-parallel
     * GEMM for its backward (PyTorch DTensor ColwiseParallel, torchtitan);
     * 0: it keeps the sequence shard and re-gathers it in the backward
     * (Megatron-LM's sequence parallelism) */
    int tp_keeps_gathered;
} mem_policy;

/* The policy a job implies: its recomputation, loss bytes 4, FSDP resharding,
 * Megatron-style sequence-sharded GEMM inputs. */
void memory_policy_of(const job *j, mem_policy *pol);

typedef struct mem_terms {
    double params;       /* working copy of the weights, 2 bytes each */
    double grads;        /* job.grad_bytes each (FSDP: 4, the fp32 shard's) */
    double optimizer;    /* opt_bytes_per_param - 4 each (Adam: fp32 master, m, v) */
    double activations;  /* in_flight microbatches kept for backward */
    double temporary;    /* largest transient buffer (see memory.c) */
    double overhead;     /* COST_RUNTIME_OVERHEAD_BYTES */
} mem_terms;

/* Unsharded bytes of training state per parameter: 2 (weights) +
 * grad_bytes + the optimizer's opt_bytes_per_param - 4 (16 by default). */
double memory_state_bytes_per_param(const job *j);
/* Activation bytes one microbatch of size b leaves per layer on each GPU
 * of a tp-way stage (Korthikanti et al., generalised to the model's MLP,
 * grouped-query attention and attention kernel; see memory.c). */
double memory_layer_activation_bytes(const job *j, int b, int tp);
double memory_layer_activation_policy(const job *j, const mem_policy *pol, int b, int tp);
/* The same for a stage [first, last] without tensor parallelism. */
double cost_stage_activation_bytes(const job *j, int b, int first, int last);
/* The largest transient buffer of a stage ending at layer `last` for one
 * microbatch of size b:
 * the logits of the loss on the last stage, one layer's recomputed
 * activations under full recomputation, the gathered parameters of ZeRO-3 /
 * FSDP; per GPU of a tp-way stage. */
double memory_stage_temporary(const job *j, int b, int last, int tp,
                              shard_kind shard, int dp);
/* Every term of a GPU holding layers [first,last] of a tp-way stage with
 * `in_flight` microbatches alive, its state sharded `shard` over dp
 * data-parallel replicas (dp = 1 or SHARD_NONE: unsharded). */
void memory_stage_terms(const job *j, int b, int first, int last, int tp, int in_flight,
                        shard_kind shard, int dp, mem_terms *out);
void memory_stage_terms_policy(const job *j, const mem_policy *pol, int b, int first,
                               int last, int tp, int in_flight, shard_kind shard, int dp,
                               mem_terms *out);
double memory_terms_total(const mem_terms *t);
/* Peak memory of an unsharded stage (the sum of memory_stage_terms). */
double cost_stage_memory(const job *j, int b, int first, int last, int tp, int in_flight);

#endif
