/* kineto.h — per-layer times of one training step from a PyTorch profiler
 * (Kineto) Chrome-trace JSON, for `geotrain profile import`.
 *
 * Layers are found by name (docs/library.md, "Profiler traces"): complete
 * events ("ph": "X") whose name, after an optional "nn.Module: " prefix, holds
 *   layers.N / layer.N / h.N / blocks.N, or a class name ending in Layer_N or
 *   Block_N                                   -> Transformer block N
 *   embed (any case), wte, wpe                -> embedding
 *   lm_head                                   -> head
 * A layer event is backward when its name contains "backward" (any case) or
 * when it runs on another thread than the first forward layer event (autograd
 * runs the backward pass on its own engine thread).
 *
 * Time of a layer: when the trace holds GPU kernels ("cat": "kernel") linked
 * by args.correlation to a CPU launch, the union of the kernels launched
 * inside the layer's events (GPU busy time); otherwise the union of the layer's
 * CPU events (nested events count once). Each disjoint run of a layer's events
 * is one microbatch: times are per microbatch, averaged over microbatches and,
 * for blocks, over the blocks. */
#ifndef GT_KINETO_H
#define GT_KINETO_H

#include <stdbool.h>
#include "sim/base/error.h"
#include "sim/inputs/trace.h"

typedef struct kineto_times {
    double fwd_us[3], bwd_us[3];   /* per layer_kind, one layer, one microbatch; 0 = absent */
    int blocks;                    /* distinct block indices seen */
    int microbatches;              /* forward runs of the first block seen */
    bool from_kernels;             /* GPU kernel time (else CPU event time) */
} kineto_times;

int kineto_load(const char *path, kineto_times *out, gt_err *e);

/* `geotrain profile import` (traces/cmd_profile_import.c). */
int cmd_profile_import(int argc, char **argv);

#endif
