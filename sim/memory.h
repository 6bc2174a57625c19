/* memory.h — the memory model: bytes a GPU holds for the stages it runs
 * (parameters, gradients and optimizer state, activations in flight and the
 * runtime's reserved overhead). Split out of the cost model (cost.h), whose
 * parameter counts it uses. */
#ifndef GT_MEMORY_H
#define GT_MEMORY_H

#include "job.h"

/* Activation bytes one microbatch leaves on a stage (Korthikanti et al.). */
double cost_stage_activation_bytes(const job *j, int b, int first, int last);
/* Peak memory of a GPU holding layers [first,last] of a tp-way stage with
 * `in_flight` microbatches of activations alive. */
double cost_stage_memory(const job *j, int b, int first, int last, int tp, int in_flight);
#define COST_RUNTIME_OVERHEAD_BYTES (1.5 * 1073741824.0)

#endif
