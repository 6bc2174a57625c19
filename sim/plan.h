/* plan.h — what a planner outputs and the simulator replays (DESIGN 3.4).
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
#include "error.h"
#include "job.h"
#include "topology.h"

#define PLAN_MAX_TP 16

typedef enum { SCHED_GPIPE = 0, SCHED_1F1B = 1, SCHED_INTERLEAVED = 2 } sched_kind;
typedef enum { SYNC_RING = 0, SYNC_HIERARCHICAL = 1, SYNC_PS = 2 } sync_kind;

typedef struct plan_stage {
    int ngpus;                 /* tensor-parallel degree */
    int gpus[PLAN_MAX_TP];     /* global GPU indices (topology order) */
    int first, last;           /* layers, inclusive */
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

/* Everything that makes a plan runnable: each GPU at most once, every layer
 * covered once per pipeline, TP inside one node, microbatches x b = B, memory
 * fits. The first problem found is reported with the reason. */
int plan_check(const plan *p, const topology *t, const job *j, gt_err *e);

/* Number of physical stages of a pipeline (S; listed stages / v). */
int plan_physical_stages(const plan *p, int pipe);
/* Activations in flight on listed stage k of a pipeline (schedule rule). */
int plan_in_flight(const plan *p, int pipe, int k);
/* Peak memory of GPU g in the plan (0 if unused). */
double plan_gpu_memory(const plan *p, const job *j, int g);
/* The same for every GPU at once, in one pass: *out = malloc'd array of
 * ngpus figures. Returns 0, or -1 when out of memory. */
int plan_memory_all(const plan *p, const job *j, int ngpus, double **out);
int plan_gpus_used(const plan *p);

/* JSON form (DESIGN 3.4); the caller may add "objective_value", "estimate",
 * "simulated" before writing. */
struct json_t *plan_to_json(const plan *p, const topology *t);
int plan_write(const plan *p, const topology *t, const char *path, gt_err *e);

#endif
