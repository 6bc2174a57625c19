/* plan.h — what a planner outputs and the simulator replays (docs/formats.md).
 *
 * A plan is D pipelines; pipeline p has S_p stages; a stage is a contiguous
 * layer range on one GPU or several GPUs of one node (tensor parallelism).
 * Under the `interleaved` schedule a pipeline lists S*v stages in layer
 * order and stage k runs on the GPUs of stage k mod S (v virtual stages per
 * GPU, as in Megatron-LM's interleaved 1F1B); this is the only case where a
 * GPU may appear in more than one stage. */
#ifndef GT_PLAN_H
#define GT_PLAN_H

#include <stdbool.h>
#include <stdio.h>
#include "sim/base/error.h"
#include "sim/inputs/job.h"
#include "sim/inputs/topology.h"

#define PLAN_MAX_TP 16

typedef enum { SCHED_GPIPE = 0, SCHED_1F1B = 1, SCHED_INTERLEAVED = 2 } sched_kind;
/* Gradient-sync algorithms (their flows: sim/models/collective.c). SYNC_COUNT
 * stays last: the planners search [0, SYNC_COUNT). */
typedef enum { SYNC_RING = 0, SYNC_HIERARCHICAL = 1, SYNC_PS = 2, SYNC_COUNT } sync_kind;
/* Sharded data parallelism (docs/training-model.md): what each of the D
 * replicas of a layer keeps 1/D of (ZeRO, Rajbhandari et al. SC'20), and
 * FSDP (PyTorch, FULL_SHARD: the same sharding as ZeRO-3). */
typedef enum {
    SHARD_NONE = 0, SHARD_ZERO1 = 1, SHARD_ZERO2 = 2, SHARD_ZERO3 = 3, SHARD_FSDP = 4
} shard_kind;
/* When gradient sync starts: after the stage's last backward op (default),
 * or bucket by bucket while that backward runs (PyTorch DDP, Megatron). */
typedef enum { GSYNC_AFTER_BACKWARD = 0, GSYNC_OVERLAP = 1 } gsync_kind;
/* PyTorch DDP's default bucket_cap_mb = 25 (torch.nn.parallel.
 * DistributedDataParallel documentation). */
#define PLAN_DEFAULT_BUCKET_MB 25.0

typedef struct plan_stage {
    int ngpus;                 /* tensor-parallel degree */
    int gpus[PLAN_MAX_TP];     /* global GPU indices (topology order) */
    int first, last;           /* layers, inclusive */
    int freq_fwd_mhz;          /* SM clock of forward ops, 0 = maximum (freq.h) */
    int freq_bwd_mhz;          /* SM clock of backward ops, 0 = maximum */
} plan_stage;

typedef struct plan_pipeline {
    int microbatches;
    int nstages;               /* listed stages (S*v when interleaved) */
    plan_stage *stages;
} plan_pipeline;

typedef struct plan {
    char planner[48];
    char objective[64];
    sched_kind schedule;
    sync_kind sync;
    int microbatch_size;
    /* Zero in every field below is today's behaviour (and what a plan that
     * does not name the field gets). */
    int accumulation;          /* "accumulation_steps"; 0 = not given (job's, else 1) */
    shard_kind dp_shard;       /* "dp_shard" */
    gsync_kind grad_sync;      /* "grad_sync" */
    double bucket_mb;          /* "grad_bucket_mb"; 0 = PLAN_DEFAULT_BUCKET_MB */
    /* Memory options the planner chose on top of the job's (a baseline that
     * does not fit otherwise, planner/baselines/common.h): activation
     * recomputation, and the bytes per parameter of weights, gradients and
     * optimizer state when > 0. Zero: as the job says. Every check, estimate
     * and replay of the plan applies them (plan_job). */
    bool recompute_full;
    double opt_bytes_per_param;
    int npipes;
    plan_pipeline *pipes;
} plan;

const char *sched_name(sched_kind s);
const char *sync_name(sync_kind s);
int sched_parse(const char *s, sched_kind *out);
int sync_parse(const char *s, sync_kind *out);
const char *shard_name(shard_kind s);
int shard_parse(const char *s, shard_kind *out);
/* Pipeline flushes per optimizer step: the plan's accumulation_steps, else
 * the job's, else 1 (plan_check rejects a plan and a job that disagree). */
int plan_accumulation(const plan *p, const job *j);
/* Gradient bucket size in bytes (overlapped sync). */
double plan_bucket_bytes(const plan *p);

/* The job as plan p runs it: j itself, or a copy in *buf with the plan's
 * memory options applied. */
const job *plan_job(const plan *p, const job *j, job *buf);
/* Allocation helpers for planners: D pipelines, stage arrays sized per pipe. */
int plan_init(plan *p, int npipes);
int plan_pipe_alloc(plan *p, int pipe, int nstages);
void plan_free(plan *p);
int plan_copy(plan *dst, const plan *src);

/* Read a plan file; GPU names are resolved against the topology. Structural
 * checks (names, ranges) happen here; plan_check() does the rest. */
int plan_load(plan *p, const char *path, const topology *t, gt_err *e);
int plan_parse(plan *p, const char *name, const char *buf, size_t len, const topology *t,
               gt_err *e);

/* Checking a plan (plan_check, its memory and in-flight figures):
 * sim/models/plan_check.h; its resolved stages and lanes: plan_view.h. */

/* JSON form (docs/formats.md); the caller may add "objective_value", "estimate",
 * "simulated" before writing. */
struct json_t *plan_to_json(const plan *p, const topology *t);
int plan_write(const plan *p, const topology *t, const char *path, gt_err *e);

#endif
