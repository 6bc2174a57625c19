/* job.h — a training job: which model, how much data per iteration, how.
 * Parsed from the command line's JOB options (see DESIGN section 3.3). */
#ifndef GT_JOB_H
#define GT_JOB_H

#include "model.h"

typedef enum { RECOMPUTE_NONE, RECOMPUTE_FULL } recompute_kind;

typedef struct job {
    model_spec model;
    int batch;              /* global batch B, sequences */
    int microbatch;         /* microbatch size b (planners' default) */
    int seq;                /* sequence length s */
    int precision_bytes;    /* 2 for bf16/fp16 */
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
