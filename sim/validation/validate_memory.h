/* validate_memory.h — published measured peak memory per GPU
 * (validation/memory_runs.csv) against the memory model (sim/models/memory.c):
 * reading the rows, replaying one row, the report and the fit of the one
 * memory-validation parameter (docs/validation.md, "Peak memory").
 *
 * A row gives the model, the parallel layout (tp, pp, dp, vp, microbatches
 * of micro_batch sequences), sharding, recomputation and the framework's
 * loss and FSDP choices (mem_policy). Its simulated peak is the largest, over
 * the pipeline stages, of the bytes the model allocates on one GPU; the
 * measured figure is what the caching allocator had reserved, so the report
 * also gives allocations x (1 + reserve), `reserve` being the allocator's
 * reserved-over-allocated share fitted on the role=fit rows only. */
#ifndef GT_VALIDATE_MEMORY_H
#define GT_VALIDATE_MEMORY_H

#include <stdio.h>

#include "sim/base/error.h"
#include "sim/validation/validate_report.h"

typedef struct mem_row {
    char id[48], source_key[24], gpu[32], model[80];
    char schedule[16], dp_shard[8], recompute[16], precision[8], attention[8];
    char measure[16], role[8], skip[200];
    int layers, hidden, heads, kv_heads, ffn, vocab, seq, gated_mlp, bias, learned_pos;
    int micro_batch, microbatches, tp, pp, dp, vp, sequence_parallel;
    int fsdp_keep_unsharded, tp_keeps_gathered, compile, grad_bytes;
    double loss_bytes, measured_gib;
} mem_row;

/* Read the whole file; *rows malloc'd. Errors name file:line:column. */
int mem_load(const char *path, mem_row **rows, int *n, gt_err *e);

/* Bytes the memory model allocates on the fullest GPU of the row's layout
 * (no runtime overhead, no allocator reserve). -1 with a reason in e when
 * the row cannot be built. */
int mem_simulate(const mem_row *r, double *bytes, gt_err *e);

typedef struct mem_result {
    const mem_row *row;
    int done;
    double alloc_gib;        /* mem_simulate in GiB */
    double sim_gib;          /* alloc_gib x (1 + reserve) */
    double rel_err;          /* (sim_gib - measured) / measured */
    double raw_rel_err;      /* the same without the reserve */
    char why[200];
} mem_result;

typedef struct mem_report {
    mem_result *res;
    int n;
    double reserve;          /* fitted on role=fit rows (grid 0 .. 0.30) */
    int reserve_rows;        /* rows it was fitted on (0 = none: reserve 0) */
    val_stats fit, holdout, overall, raw_holdout;
} mem_report;

#define MEM_RESERVE_MAX 0.30
#define MEM_RESERVE_STEP 0.005

int mem_run(const mem_row *rows, int n, mem_report *rep, gt_err *e);
void mem_report_free(mem_report *rep);
void mem_report_print(const mem_report *rep, int table, FILE *out);
struct json_t *mem_report_json(const mem_report *rep);

#endif
