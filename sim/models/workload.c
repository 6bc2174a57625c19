/* workload.c — op lists per GPU from a plan and a schedule (workload.h). */
#include "sim/models/workload.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"
#include "sim/models/cost.h"
#include "sim/models/dp_overlap.h"
#include "sim/models/plan_check.h"
#include "sim/inputs/freq.h"
#include "sim/models/syncgroup.h"

/* The (kind, listed stage, microbatch) of the n-th op of physical stage i
 * of a pipeline with S physical stages, v chunks and m microbatches. */
typedef struct slot {
    int kind, chunk, mb;
} slot;

static slot virtual_slot(int kind, int k, int S, int v)
{
    slot s;
    s.kind = kind;
    int c = (k / S) % v;
    s.chunk = kind == OP_FWD ? c : v - 1 - c;
    s.mb = (k / (S * v)) * S + k % S;
    return s;
}

/* Fill out[0 .. 2*m*v-1] with the op order of physical stage i. */
static void schedule_order(sched_kind sched, int i, int S, int v, int m, slot *out)
{
    int n = 0, total = m * v;
    if (sched == SCHED_GPIPE) {
        for (int j = 0; j < m; j++)
            out[n++] = (slot){OP_FWD, 0, j};
        for (int j = 0; j < m; j++)
            out[n++] = (slot){OP_BWD, 0, j};
        return;
    }
    int warm = sched == SCHED_1F1B ? S - i - 1 : (S - i - 1) * 2 + (v - 1) * S;
    if (warm > total)
        warm = total;
    int f = 0, b = 0;
    for (; f < warm; f++)
        out[n++] = v == 1 ? (slot){OP_FWD, 0, f} : virtual_slot(OP_FWD, f, S, v);
    for (; f < total; f++, b++) {
        out[n++] = v == 1 ? (slot){OP_FWD, 0, f} : virtual_slot(OP_FWD, f, S, v);
        out[n++] = v == 1 ? (slot){OP_BWD, 0, b} : virtual_slot(OP_BWD, b, S, v);
    }
    for (; b < total; b++)
        out[n++] = v == 1 ? (slot){OP_BWD, 0, b} : virtual_slot(OP_BWD, b, S, v);
}

static int count_ops(const plan *p, int acc)
{
    long long n = plan_op_count(p);
    return n > PLAN_MAX_OPS / acc ? -1 : (int)(n * acc);
}

/* Op index of (listed stage k, microbatch j, kind) inside a pipeline's block:
 * ops of one pipeline are laid out [k][j][kind]. */
static int op_index(int base, int m, int k, int j, int kind)
{
    return base + (k * m + j) * 2 + kind;
}

int workload_stage_base_ns(const topology *t, const job *j, const plan *p, int pi, int k,
                           int64_t *fwd_ns, int64_t *bwd_ns)
{
    const plan_stage *st = &p->pipes[pi].stages[k];
    const gpu_type *g = topo_gpu_type(t, st->gpus[0]);
    int b = p->microbatch_size;
    *fwd_ns = cost_stage_fwd_ns(j, g, st->ngpus, b, st->first, st->last, 1.0);
    *bwd_ns = cost_stage_bwd_ns(j, g, st->ngpus, b, st->first, st->last, 1.0);
    /* sharded data parallelism: the per-pass collectives slow the compute
     * they overlap (dp_overlap.h) */
    double c[2];
    if (dp_overlap_traffic_s(t, j, p, pi, k, c))
        return -1;
    *fwd_ns = dp_overlap_ns(*fwd_ns, c[0]);
    *bwd_ns = dp_overlap_ns(*bwd_ns, c[1]);
    return 0;
}

void workload_stage_clocks(const topology *t, const plan *p, int pi, int k, int64_t fns,
                           int64_t bns, int64_t dur[2][2], int32_t clk[2][2])
{
    const plan_stage *st = &p->pipes[pi].stages[k];
    const gpu_type *g = topo_gpu_type(t, st->gpus[0]);
    /* [kind][edge]: the stage's SM clocks (freq.h); the ops of the first
     * and the last microbatch keep f_max: they fill and drain the
     * pipeline, on its critical path at every stage */
    dur[OP_FWD][0] = freq_op_ns(g, fns, st->freq_fwd_mhz);
    dur[OP_FWD][1] = fns;
    dur[OP_BWD][0] = freq_op_ns(g, bns, st->freq_bwd_mhz);
    dur[OP_BWD][1] = bns;
    clk[OP_FWD][0] = st->freq_fwd_mhz;
    clk[OP_BWD][0] = st->freq_bwd_mhz;
    clk[OP_FWD][1] = clk[OP_BWD][1] = 0;
}

static int fill_pipe_ops(workload *w, const topology *t, const job *j, const plan *p, int pi,
                         int base, int lane0)
{
    const plan_pipeline *pp = &p->pipes[pi];
    int K = pp->nstages, m = pp->microbatches * w->accumulation, S = w->view.S[pi];
    int b = p->microbatch_size;
    double act = cost_activation_bytes(j, b);
    for (int k = 0; k < K; k++) {
        const plan_stage *st = &pp->stages[k];
        int64_t dur[2][2], fns, bns;
        int32_t clk[2][2];
        if (workload_stage_base_ns(t, j, p, pi, k, &fns, &bns))
            return -1;
        workload_stage_clocks(t, p, pi, k, fns, bns, dur, clk);
        for (int mb = 0; mb < m; mb++)
            for (int kind = 0; kind < 2; kind++) {
                wl_op *o = &w->ops[op_index(base, m, k, mb, kind)];
                o->pipe = pi;
                o->stage = k;
                o->mb = mb;
                o->kind = kind;
                o->lane = lane0 + k % S;
                int edge = mb == 0 || mb == m - 1;
                o->dur_ns = dur[kind][edge];
                o->freq_mhz = clk[kind][edge];
                o->next_on_lane = -1;
                o->consumer = -1;
                o->input = -1;
                if (kind == OP_FWD && k > 0)
                    o->input = op_index(base, m, k - 1, mb, OP_FWD);
                else if (kind == OP_BWD && k < K - 1)
                    o->input = op_index(base, m, k + 1, mb, OP_BWD);
                else if (kind == OP_BWD)
                    o->input = op_index(base, m, k, mb, OP_FWD);
                o->xfer_bytes = 0;
                if (o->input >= 0 && !(kind == OP_BWD && k == K - 1) &&
                    pp->stages[(kind == OP_FWD ? k - 1 : k + 1)].gpus[0] != st->gpus[0])
                    o->xfer_bytes = act;
            }
    }
    for (int k = 0; k < K; k++)
        for (int mb = 0; mb < m; mb++)
            for (int kind = 0; kind < 2; kind++) {
                int id = op_index(base, m, k, mb, kind);
                if (w->ops[id].input >= 0)
                    w->ops[w->ops[id].input].consumer = id;
            }
    return 0;
}

/* Lane order: the schedule of one flush, repeated for each of the k flushes
 * over their own microbatches (ops are laid out over all k*m of them). */
static int link_lanes(workload *w, const plan *p, int pi, int base, int lane0, gt_err *e)
{
    const plan_pipeline *pp = &p->pipes[pi];
    int m = pp->microbatches, S = w->view.S[pi], v = w->view.v[pi];
    int acc = w->accumulation, M = m * acc;
    slot *order = malloc(sizeof *order * (size_t)(2 * m * v));
    if (!order)
        return gt_fail(e, "out of memory");
    for (int i = 0; i < S; i++) {
        schedule_order(p->schedule, i, S, v, m, order);
        wl_lane *ln = &w->lanes[lane0 + i];
        int prev = -1;
        for (int f = 0; f < acc; f++)
            for (int n = 0; n < 2 * m * v; n++) {
                int id = op_index(base, M, order[n].chunk * S + i, f * m + order[n].mb,
                                  order[n].kind);
                if (prev < 0)
                    ln->first_op = id;
                else
                    w->ops[prev].next_on_lane = id;
                prev = id;
            }
        ln->nops = 2 * M * v;
    }
    free(order);
    return 0;
}

/* Under ZeRO / FSDP each of the D replicas updates its 1/D of the state. */
static void fill_lanes(workload *w, const topology *t, const job *j, const plan *p, int pi,
                       int lane0)
{
    double opt_share = p->dp_shard != SHARD_NONE && p->npipes > 1 ? 1.0 / p->npipes : 1.0;
    const plan_pipeline *pp = &p->pipes[pi];
    int S = w->view.S[pi];
    for (int i = 0; i < S; i++) {
        wl_lane *ln = &w->lanes[lane0 + i];
        const plan_stage *st = &pp->stages[i];
        ln->gpu = st->gpus[0];
        ln->tp = st->ngpus;
        ln->pipe = pi;
        ln->params_held = 0;
        for (int k = i; k < pp->nstages; k += S)
            ln->params_held += cost_stage_params(&j->model, pp->stages[k].first,
                                                 pp->stages[k].last) / st->ngpus;
        ln->opt_ns = cost_optimizer_ns(topo_gpu_type(t, ln->gpu),
                                       opt_share == 1.0 ? ln->params_held
                                                        : ln->params_held * opt_share);
        for (int x = 0; x < st->ngpus; x++)
            w->lane_of_gpu[st->gpus[x]] = lane0 + i;
    }
}

/* viewed: w->view is already p's over t (plan_view_rebuild), kept as is. */
static int build(workload *w, const topology *t, const job *j, const plan *p, int with_ops,
                 int viewed, gt_err *e)
{
    workload keep = *w; /* buffers to reuse (workload_rebuild) */
    memset(w, 0, sizeof *w);
    w->view = keep.view;
    w->ops = keep.ops;
    w->lanes = keep.lanes;
    w->lane_of_gpu = keep.lane_of_gpu;
    w->groups = keep.groups;
    w->group_members = keep.group_members;
    w->group_ready_op = keep.group_ready_op;
    w->group_ready_frac = keep.group_ready_frac;
    w->sg_scratch = keep.sg_scratch;
    w->cap = keep.cap;
    w->accumulation = plan_accumulation(p, j);
    w->shard = p->dp_shard;
    w->gsync = p->grad_sync;
    int nops = count_ops(p, w->accumulation);
    if (nops < 0)
        return gt_fail(e, "plan too large to simulate (over %d ops; plan_check says why)", PLAN_MAX_OPS);
    if (!viewed && plan_view_rebuild(&w->view, p, t->ngpus, e)) {
        workload_free(w);
        return -1;
    }
    int nlanes = w->view.nlanes;
    if (!with_ops)
        nops = 0; /* lanes and groups only: the estimator's per-stage path */
    if (gt_grow(&w->ops, &w->cap.ops, (size_t)nops, sizeof *w->ops) ||
        gt_grow(&w->lanes, &w->cap.lanes, (size_t)nlanes, sizeof *w->lanes) ||
        gt_grow(&w->lane_of_gpu, &w->cap.gpus, (size_t)t->ngpus, sizeof *w->lane_of_gpu)) {
        workload_free(w);
        return gt_fail(e, "out of memory for %d ops", nops);
    }
    memset(w->lanes, 0, sizeof *w->lanes * (size_t)nlanes);
    for (int g = 0; g < t->ngpus; g++)
        w->lane_of_gpu[g] = -1;
    w->nops = nops;
    w->nlanes = nlanes;
    int base = 0;
    for (int pi = 0; pi < p->npipes; pi++) {
        const plan_pipeline *pp = &p->pipes[pi];
        int lane0 = w->view.lane0[pi];
        if (p->schedule == SCHED_INTERLEAVED && pp->microbatches % w->view.S[pi]) {
            workload_free(w);
            return gt_fail(e, "pipelines[%d]: the interleaved schedule needs microbatches "
                              "(%d) to be a multiple of the stages (%d)",
                           pi, pp->microbatches, w->view.S[pi]);
        }
        if (with_ops && fill_pipe_ops(w, t, j, p, pi, base, lane0)) {
            workload_free(w);
            return gt_fail(e, "pipelines[%d]: out of memory for the ring of its stages' "
                              "data-parallel replicas", pi);
        }
        fill_lanes(w, t, j, p, pi, lane0);
        if (!with_ops) {
            for (int i = lane0; i < lane0 + plan_physical_stages(p, pi); i++)
                w->lanes[i].first_op = -1;
        } else if (link_lanes(w, p, pi, base, lane0, e)) {
            workload_free(w);
            return -1;
        }
        base += 2 * pp->nstages * pp->microbatches * w->accumulation;
    }
    w->tokens = (double)j->batch * j->seq;
    w->flops = cost_iteration_flops(j);
    if (syncgroups_build(w, j, p, e)) {
        workload_free(w);
        return -1;
    }
    return 0;
}

int workload_build(workload *w, const topology *t, const job *j, const plan *p, gt_err *e)
{
    memset(w, 0, sizeof *w);
    return build(w, t, j, p, 1, 0, e);
}

int workload_build_lanes(workload *w, const topology *t, const job *j, const plan *p, gt_err *e)
{
    memset(w, 0, sizeof *w);
    return build(w, t, j, p, 0, 0, e);
}

int workload_rebuild(workload *w, const topology *t, const job *j, const plan *p, gt_err *e)
{
    return build(w, t, j, p, 1, 0, e);
}

int workload_rebuild_lanes(workload *w, const topology *t, const job *j, const plan *p,
                           gt_err *e)
{
    return build(w, t, j, p, 0, 0, e);
}

int workload_rebuild_viewed(workload *w, const topology *t, const job *j, const plan *p,
                            int with_ops, gt_err *e)
{
    return build(w, t, j, p, with_ops, 1, e);
}

void workload_free(workload *w)
{
    free(w->ops);
    free(w->lanes);
    free(w->lane_of_gpu);
    free(w->groups);
    free(w->group_members);
    free(w->group_ready_op);
    free(w->group_ready_frac);
    free(w->sg_scratch);
    plan_view_free(&w->view);
    memset(w, 0, sizeof *w);
}
