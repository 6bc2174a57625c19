/* plan_view.h — a plan resolved once: what every consumer used to re-derive
 * from the stage lists (the simulator's workload, the plan check and its
 * memory figures, the planners' run summaries).
 *
 * Per pipeline: its physical stages S (listed stages / v under the
 * interleaved schedule, where stage k runs on the GPUs of stage k mod S),
 * its v chunks per GPU, its first lane (a lane is one physical stage, lanes
 * numbered pipeline by pipeline) and microbatches; per listed stage the
 * activations in flight (the schedule's rule, plan_in_flight_rule); per GPU
 * its pipeline and physical stage. Built from any plan, checked or not
 * (GPU indices outside [0, ngpus) are left out of the GPU lookup). */
#ifndef GT_PLAN_VIEW_H
#define GT_PLAN_VIEW_H

#include "sim/base/error.h"
#include "sim/inputs/plan.h"

typedef struct plan_view {
    int npipes;
    int *S;            /* physical stages of each pipeline */
    int *v;            /* chunks per GPU (1 unless interleaved) */
    int *lane0;        /* first lane of each pipeline; nlanes in all */
    int nlanes;
    int *mb;           /* microbatches of each pipeline (one flush) */
    int *stage0;       /* first listed stage of each pipeline in in_flight[] */
    int *in_flight;    /* activations alive on each listed stage */
    int ngpus;
    int *gpu_pipe;     /* per GPU: its pipeline, -1 when unused */
    int *gpu_stage;    /* per GPU: its physical stage, -1 when unused */
    size_t cap[3];     /* entries the three blocks hold (plan_view_rebuild) */
} plan_view;

/* Resolve p over a topology of ngpus GPUs. 0, or -1 with e set (memory). */
int plan_view_build(plan_view *v, const plan *p, int ngpus, gt_err *e);
/* The same into v's blocks, grown only when too small (v from an earlier
 * build or zeroed): for a caller resolving many plans in turn. */
int plan_view_rebuild(plan_view *v, const plan *p, int ngpus, gt_err *e);
void plan_view_free(plan_view *v);
static inline int plan_view_in_flight(const plan_view *v, int pipe, int k)
{
    return v->in_flight[v->stage0[pipe] + k];
}

/* The primitive the view is built from: physical stages of one pipeline. */
int plan_physical_stages(const plan *p, int pipe);
/* Activations in flight on physical stage i of S (v chunks per GPU, m
 * microbatches) under schedule s: gpipe keeps all m; 1F1B min(S - i, m);
 * interleaved its warm-up forwards per chunk (Megatron-LM), at most m.
 * The planners' stage memory uses it for the stages they lay out (inline:
 * their decoders ask once per stage). */
static inline int plan_in_flight_rule(sched_kind s, int S, int v, int i, int m)
{
    switch (s) {
    case SCHED_GPIPE:
        return m;
    case SCHED_1F1B:
        return S - i < m ? S - i : m;
    case SCHED_INTERLEAVED: {
        int warm = (S - i - 1) * 2 + (v - 1) * S + 1;
        int per_chunk = (warm + v - 1) / v;
        return per_chunk < m ? per_chunk : m;
    }
    }
    return m;
}
/* The same for listed stage k of a pipeline of p, without a view. */
int plan_in_flight(const plan *p, int pipe, int k);

#endif
