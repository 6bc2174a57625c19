/* validate.h — replaying the validation set (validation/runs.csv, written by
 * validation/derive_validation.py; docs/validation.md).
 *
 * Each representable row becomes, in memory, a one-site topology of nodes of
 * node_gpus GPUs behind a NIC of nic_gbps, a job (the row's model, batch,
 * sequence, recomputation, precision, attention kernel, sequence
 * parallelism) and a plan in Megatron rank order (TP innermost, then DP, then
 * PP; layers split evenly, v virtual stages when interleaved), replayed by
 * the simulator. Memory is not checked (the runs are measured to fit; the
 * memory model is validated on its own). */
#ifndef GT_VALIDATE_H
#define GT_VALIDATE_H

#include <stddef.h>

#include "catalog.h"
#include "error.h"

typedef struct val_row {
    char id[48];
    char source_key[24];     /* id prefix: the publication (KOR, NAR, LLMF, ...) */
    char gpu[32];
    char model[80];
    char schedule[16];       /* 1f1b | interleaved */
    char sim_mode[16];       /* full | replica (one data-parallel replica, no sync) */
    char recompute[16];      /* none | full | selective */
    char precision[8];
    char attention[8];       /* fused | unfused */
    char metric[24];
    char role[8];            /* fit | holdout */
    char skip[200];          /* why the row is not replayed ("" = replayed) */
    int n_gpus, node_gpus;
    int layers, hidden, heads, kv_heads, ffn, vocab, seq;
    int gated_mlp, bias, learned_pos;
    int micro_batch, global_batch, tp, pp, dp, vp, sequence_parallel;
    double nic_gbps, value, measured_s;
} val_row;

/* Read the whole file; *rows malloc'd. Errors name file:line and column. */
int val_load(const char *path, val_row **rows, int *n, gt_err *e);

/* Simulated iteration seconds of a row on the catalog's types. k_sat < 0
 * keeps the catalog's saturation constant, else it replaces the row's
 * type's. Returns -1 (reason in e) when the row cannot be built. */
int val_simulate(const val_row *r, const gpu_catalog *cat, double k_sat, double *sim_s,
                 gt_err *e);

/* Architecture of a row's GPU type ("" if unknown). */
const char *val_arch(const val_row *r, const gpu_catalog *cat);

#endif
