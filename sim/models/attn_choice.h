/* attn_choice.h — which attention kernel a job runs on a GPU type: the fused
 * (FlashAttention-style) kernel or the unfused softmax path, from the job's
 * --attention choice and the type's architecture (docs/compute-model.md,
 * "Which attention kernel"). The compute model (kernels.c) and the memory
 * model (memory.c) both follow it, stage by stage. */
#ifndef GT_ATTN_CHOICE_H
#define GT_ATTN_CHOICE_H

#include "sim/inputs/catalog.h"
#include "sim/inputs/job.h"

/* 1 when the architecture runs FlashAttention-2 (Ampere or newer, CDNA2/3):
 * what ATTN_AUTO picks the fused kernel on. An empty arch (a catalog without
 * the column) counts as capable, as before the column existed. */
int attn_arch_runs_fa2(const gpu_type *g);
/* 1 when no FlashAttention version runs on the architecture (Volta and
 * older): a forced fused kernel is refused there (attn_check_forced). */
int attn_arch_runs_no_flash(const gpu_type *g);
/* 1 when job j runs the fused kernel on type g. g == NULL (no GPU named,
 * e.g. `geotrain model`): ATTN_AUTO counts as fused. */
int attn_fused_on(const job *j, const gpu_type *g);
/* j with its attention resolved for type g (ATTN_AUTO becomes ATTN_FUSED or
 * ATTN_UNFUSED): j itself when nothing changes, else a copy in *buf. */
const job *attn_job_on(const job *j, const gpu_type *g, job *buf);

#endif
