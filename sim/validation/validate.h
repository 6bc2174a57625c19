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

#include "sim/inputs/catalog.h"
#include "sim/base/error.h"

typedef struct val_row {
    char id[48];
    char source_key[24];     /* id prefix: the publication (KOR, NAR, LLMF, ...) */
    char gpu[32];
    char model[80];
    char schedule[16];       /* 1f1b | interleaved */
    char dp_shard[8];        /* none | zero1 | zero2 | zero3 | fsdp (the framework's) */
    char grad_sync[16];      /* after_backward | overlap */
    char grad_dtype[8];      /* bf16 | fp16 | fp32: gradients reduced in */
    char recompute[16];      /* none | full | selective */
    char precision[8];
    char attention[16];      /* fused | flash2 | flash2_unpad | triton | unfused */
    char metric[24];
    char role[8];            /* fit | holdout */
    char skip[200];          /* why the row is not replayed ("" = replayed) */
    int n_gpus, node_gpus;
    int layers, hidden, heads, kv_heads, ffn, vocab, seq;
    int gated_mlp, bias, learned_pos;
    int micro_batch, global_batch, tp, pp, dp, vp, sequence_parallel;
    int tp_comm_overlap;     /* Megatron-Core --tp-comm-overlap (kernels.c) */
    double nic_gbps, grad_bucket_mb, value, measured_s;
    /* GPU power limit of the run, W (optional column power_limit_w; 0 = none):
     * the replay runs the GEMMs at the clock the limit holds the GPU at
     * (freq_clock_at_limit), peaks x f / f_max */
    double power_limit_w;
    /* How the run's elementwise ops ran (optional column eager): "" or none =
     * fused (compiled, or fused kernels), ops = eager PyTorch ops with a fused
     * RMSNorm kernel, ops+norm = RMSNorm eager too (job.eager, kernels_eager.c) */
    char eager[12];
} val_row;

/* Read the whole file; *rows malloc'd. Errors name file:line and column. */
int val_load(const char *path, val_row **rows, int *n, gt_err *e);

/* The in-memory case of a row (topology, job, plan) that val_simulate
 * replays with `replicas` data-parallel replicas (val_replicas(r)); k_sat as
 * there. On success the caller frees t and p. */
struct topology;
struct plan;
struct job;
int val_build(const val_row *r, const gpu_catalog *cat, double k_sat, int replicas,
              struct topology *t, struct job *j, struct plan *p, gt_err *e);

/* The job of a row: its model, sequence, microbatch, recomputation
 * (selective = attention core), precision, attention kernel and sequence
 * parallelism, the rest job_defaults(). */
void val_build_job(const val_row *r, struct job *j);

/* LAN latency of the validation topologies (5 us, a switch hop of an
 * InfiniBand / RoCE fabric). */
#define VAL_LAN_LAT_MS 0.005
/* Replicas simulated at most for a row without TP and PP (FSDP / DDP rows of
 * up to 512 GPUs): dp members of a ring all-reduce, reduce-scatter or
 * all-gather take the same time as D members whose NIC rates are scaled by
 * (D-1)/D x dp/(dp-1) and LAN latency by (dp-1)/(D-1) (every step moves 1/D
 * of the buffer and its slowest flow crosses a NIC). Not exact: each replica's
 * optimizer step updates 1/D instead of 1/dp of a sharded state (bounded
 * and tested, docs/validation.md). */
#define VAL_MAX_REPLICAS 64
/* Replicas val_simulate runs for row r: dp, or VAL_MAX_REPLICAS above it. */
int val_replicas(const val_row *r);

/* The data-parallel options a row replays with, as one short word list
 * ("fsdp overlap:1MiB acc:6 grad:fp32"): the per-row `options` column. */
void val_options(const val_row *r, char *buf, size_t cap);

/* Simulated iteration seconds of a row on the catalog's types. k_sat < 0
 * keeps the catalog's saturation constant, else it replaces the row's
 * type's. Returns -1 (reason in e) when the row cannot be built. */
int val_simulate(const val_row *r, const gpu_catalog *cat, double k_sat, double *sim_s,
                 gt_err *e);

/* Architecture of a row's GPU type ("" if unknown). */
const char *val_arch(const val_row *r, const gpu_catalog *cat);

#endif
