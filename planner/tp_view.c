/* tp_view.c — the unit view of a topology for tensor parallelism
 * (tp_view.h). */
#include "tp_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "objective.h"
#include "sim/models/cost.h"
#include "sim/models/memory.h"

int tp_degrees(const topology *t, const model_spec *m, int *out, int cap)
{
    int biggest = 0, n = 0;
    for (int i = 0; i < t->nnodes; i++)
        biggest = t->nodes[i].ngpus > biggest ? t->nodes[i].ngpus : biggest;
    for (int tp = 1; tp <= PLAN_MAX_TP && tp <= biggest && n < cap; tp *= 2)
        if (m->heads % tp == 0)
            out[n++] = tp;
    return n;
}

/* tp GPUs acting as one: tp x the work per second, memory and power. The
 * intra-node link stays (units of one node talk over the same links).
 * Memory: each GPU of a tp-way stage needs its share (cost_stage_memory)
 * plus the runtime overhead; the decoder counts tp x a GPU's share
 * (encoding.c) plus one overhead, so the unit holds tp x the memory less
 * (tp - 1) overheads and its check is the real one. */
static gpu_type unit_type(const gpu_type *g, int tp)
{
    gpu_type u = *g;
    snprintf(u.id, sizeof u.id, "%.24sx%d", g->id, tp);
    u.mem_bytes = tp * g->mem_bytes - (tp - 1) * COST_RUNTIME_OVERHEAD_BYTES;
    u.mem_bw *= tp;
    u.peak_flops *= tp;
    u.tdp_w *= tp;
    u.idle_w *= tp;
    return u;
}

/* Nodes keep their index, site and NIC; their GPUs become units. */
static int build_units(tp_view *v, const topology *real, int tp)
{
    topology *t = &v->t;
    int units = 0;
    for (int n = 0; n < real->nnodes; n++)
        units += real->nodes[n].ngpus / tp;
    if (units == 0)
        return -1;
    t->gpus = calloc((size_t)units, sizeof *t->gpus);
    v->unit_gpu = malloc(sizeof *v->unit_gpu * (size_t)units);
    if (!t->gpus || !v->unit_gpu)
        return -1;
    int u = 0;
    for (int s = 0; s < real->nsites; s++) {
        t->sites[s].first_gpu = u;
        for (int n = real->sites[s].first_node; n < real->sites[s].first_node + real->sites[s].nnodes; n++) {
            topo_node *node = &t->nodes[n];
            node->first_gpu = u;
            node->ngpus = real->nodes[n].ngpus / tp;
            for (int k = 0; k < node->ngpus; k++, u++) {
                t->gpus[u] = (topo_gpu){s, n, k, node->type};
                v->unit_gpu[u] = real->nodes[n].first_gpu + k * tp;
            }
        }
        t->sites[s].ngpus = u - t->sites[s].first_gpu;
    }
    t->ngpus = units;
    return 0;
}

int tp_view_build(tp_view *v, const topology *real, int tp, gt_err *e)
{
    memset(v, 0, sizeof *v);
    v->real = real;
    v->tp = tp;
    topology *t = &v->t;
    *t = *real;
    t->sources = NULL;
    t->nsources = 0;
    t->types = malloc(sizeof *t->types * (size_t)real->ntypes);
    t->sites = malloc(sizeof *t->sites * (size_t)real->nsites);
    t->nodes = malloc(sizeof *t->nodes * (size_t)real->nnodes);
    t->gpus = NULL;
    if (!t->types || !t->sites || !t->nodes) {
        tp_view_free(v);
        return gt_fail(e, "out of memory");
    }
    for (int i = 0; i < real->ntypes; i++)
        t->types[i] = unit_type(&real->types[i], tp);
    memcpy(t->sites, real->sites, sizeof *t->sites * (size_t)real->nsites);
    memcpy(t->nodes, real->nodes, sizeof *t->nodes * (size_t)real->nnodes);
    if (build_units(v, real, tp)) {
        tp_view_free(v);
        return gt_fail(e, "no node has %d GPUs for tensor parallelism (or out of memory)", tp);
    }
    return 0;
}

void tp_view_free(tp_view *v)
{
    free(v->t.types);
    free(v->t.sites);
    free(v->t.nodes);
    free(v->t.gpus);
    free(v->unit_gpu);
    memset(v, 0, sizeof *v);
}

void tp_view_expand_stage(const tp_view *v, plan_stage *s)
{
    int first = v->unit_gpu[s->gpus[0]];
    s->ngpus = v->tp;
    for (int x = 0; x < v->tp; x++)
        s->gpus[x] = first + x;
}

/* Units of a degree's view, for sharing a time budget. */
static double units_of(const topology *t, int tp)
{
    double u = 0;
    for (int n = 0; n < t->nnodes; n++)
        u += t->nodes[n].ngpus / tp;
    return u;
}

/* Keeps (p, ds) in (out, st) when it is the first plan or a better one. */
static void keep_best(plan *p, const planner_stats *ds, bool *have, plan *out, planner_stats *st)
{
    if (p->npipes > 0 && (!*have || ds->objective_value < st->objective_value)) {
        if (*have)
            plan_free(out);
        *out = *p;
        *st = *ds;
        *have = true;
    } else {
        plan_free(p);
    }
}

int tp_search(const topology *t, const job *j, const planner_opts *o, bool strict, tp_run run,
              void *ctx, plan *out, planner_stats *st, gt_err *e)
{
    objective obj;
    if (objective_parse(o->objective ? o->objective : "time", &obj, e))
        return -1;
    int deg[8], nd = tp_degrees(t, &j->model, deg, 8);
    if (objective_needs_fastest(&obj) || obj.kind == OBJ_PARETO || nd < 1)
        nd = 1, deg[0] = 1;
    double all = 0;
    for (int i = 0; i < nd; i++)
        all += units_of(t, deg[i]);
    bool have = false;
    int tried = 0;
    long evals = 0;
    double spent = 0;
    gt_err first = {""};
    memset(out, 0, sizeof *out);
    for (int i = 0; i < nd && !(i > 0 && o->stop && *o->stop); i++) {
        tp_view v;
        planner_opts od = *o;
        gt_err de = {""};
        if (o->budget_s > 0)
            od.budget_s = o->budget_s * units_of(t, deg[i]) / all;
        if (deg[i] > 1 && tp_view_build(&v, t, deg[i], &de))
            continue;
        plan p = {0};
        planner_stats ds;
        memset(&ds, 0, sizeof ds);
        if (o->progress && nd > 1)   /* which of the searches is running */
            fprintf(stderr, "%stensor-parallel degree %d (%d of %d)\n",
                    isatty(STDERR_FILENO) ? "\n" : "", deg[i], i + 1, nd);
        int rc = run(ctx, deg[i] > 1 ? &v.t : t, deg[i] > 1 ? &v : NULL, &od, &p, &ds, &de);
        tried++;
        evals += ds.evaluations;
        spent += ds.plan_time_s;
        if (rc && !first.msg[0])
            first = de;
        if (rc && strict) {
            if (deg[i] > 1)
                tp_view_free(&v);
            break;
        }
        if (!rc)
            keep_best(&p, &ds, &have, out, st);
        if (deg[i] > 1)
            tp_view_free(&v);
    }
    if ((!have || strict) && first.msg[0]) {
        if (have)
            plan_free(out);
        *e = first;
        return -1;
    }
    if (have && nd > 1) {
        size_t n = strlen(st->note);
        snprintf(st->note + n, sizeof st->note - n, "; tensor-parallel degree %d won (%d tried, "
                 "%ld evaluations in all)", out->pipes[0].stages[0].ngpus, tried, evals);
        st->evaluations = evals;
        st->plan_time_s = spent;
    }
    return 0;
}
