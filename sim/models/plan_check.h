/* plan_check.h — what makes a plan runnable, and its memory per GPU
 * (defined in plan_check.c; the plan's format is sim/inputs/plan.h, its
 * resolved stages, lanes and in-flight counts sim/models/plan_view.h). */
#ifndef GT_PLAN_CHECK_H
#define GT_PLAN_CHECK_H

#include "sim/base/error.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"
#include "sim/models/plan_view.h"

/* Everything that makes a plan runnable: each GPU at most once, every layer
 * covered once per pipeline, TP inside one node, microbatches x b = B, memory
 * fits. The first problem found is reported with the reason. */
int plan_check(const plan *p, const topology *t, const job *j, gt_err *e);
/* The same into buffers kept for the next check (zeroed at first): for a
 * caller checking many plans. On success b->mem[g] is GPU g's memory
 * (plan_memory_all's figures, t->ngpus of them). */
typedef struct plan_check_buf {
    plan_view v;
    double *mem;
    char *used;
    int *owner;        /* check_gpus' work array */
    size_t cap[3];
    struct stage_mem_slot *memo; /* stage bytes of this check, by stage shape */
    size_t cap_memo;
    signed char *by_type;  /* per GPU type: runs the fused attention kernel (this check) */
    size_t cap_by_type;
} plan_check_buf;
int plan_check_into(const plan *p, const topology *t, const job *j, plan_check_buf *b, gt_err *e);
void plan_check_buf_free(plan_check_buf *b);

/* Ops a replay of the plan holds: 2 x stages x microbatches, summed; plan_check
 * refuses more than PLAN_MAX_OPS before anything is allocated. */
#define PLAN_MAX_OPS 4000000
long long plan_op_count(const plan *p);

/* Peak memory of GPU g in the plan (0 if unused). t gives each stage's GPU
 * types, which decide its attention kernel under --attention auto
 * (attn_choice.h); t == NULL counts auto as fused. */
double plan_gpu_memory(const plan *p, const topology *t, const job *j, int g);
/* The same for every GPU at once, in one pass: *out = malloc'd array of
 * ngpus figures. Returns 0, or -1 when out of memory. */
int plan_memory_all(const plan *p, const topology *t, const job *j, int ngpus, double **out);
int plan_gpus_used(const plan *p);

/* plan_memory_all over an already resolved view. */
int plan_view_memory(const plan_view *v, const plan *p, const topology *t, const job *j,
                     double **out);

#endif
