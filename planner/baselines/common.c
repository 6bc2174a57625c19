/* common.c — helpers shared by the baseline planners (see common.h). */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner/objective.h"
#include "sim/estimator/estimator.h"
#include "sim/models/attn_choice.h"
#include "sim/models/memory.h"
#include "sim/engine/simulator.h"
#include "sim/models/plan_check.h"
#include "sim/models/plan_view.h"

/* --- layers and microbatches --------------------------------------------- */

void bl_even_cut(int L, int S, int k, int *first, int *last)
{
    int base = L / S, rem = L % S;
    *first = k * base + (k < rem ? k : rem);
    *last = *first + base + (k < rem ? 1 : 0) - 1;
}

void bl_even_split(int total, int D, int *mb)
{
    for (int d = 0; d < D; d++)
        mb[d] = total / D + (d < total % D ? 1 : 0);
}

int bl_in_flight(sched_kind sched, int S, int k, int m)
{
    return plan_in_flight_rule(sched, S, 1, k, m); /* the simulator's rule */
}

double bl_minmax_cuts(int L, int S, bl_stage_cost cost, void *ctx, int *first, int *last)
{
    if (S < 1 || S > L)
        return -1;
    size_t w = (size_t)L + 1;
    /* f[k][l]: best bottleneck with layers 0..l-1 on stages 0..k-1 */
    double *f = malloc(sizeof *f * (size_t)(S + 1) * w);
    int *from = malloc(sizeof *from * (size_t)(S + 1) * w);
    if (!f || !from) {
        free(f);
        free(from);
        return -1;
    }
    for (size_t i = 0; i < (size_t)(S + 1) * w; i++)
        f[i] = INFINITY;
    f[0] = 0;
    for (int k = 1; k <= S; k++)
        /* stage k-1 ends at layer l-1; leave at least one layer per later stage */
        for (int l = k; l <= L - (S - k); l++)
            for (int p = k - 1; p < l; p++) {
                double prev = f[(size_t)(k - 1) * w + (size_t)p];
                if (!isfinite(prev))
                    continue;
                double c = cost(ctx, k - 1, p, l - 1);
                if (c < 0)
                    continue;
                double v = c > prev ? c : prev;
                if (v < f[(size_t)k * w + (size_t)l]) {
                    f[(size_t)k * w + (size_t)l] = v;
                    from[(size_t)k * w + (size_t)l] = p;
                }
            }
    double best = f[(size_t)S * w + (size_t)L];
    if (isfinite(best))
        for (int k = S, l = L; k >= 1; k--) {
            int p = from[(size_t)k * w + (size_t)l];
            first[k - 1] = p;
            last[k - 1] = l - 1;
            l = p;
        }
    free(f);
    free(from);
    return isfinite(best) ? best : -1;
}

typedef struct cut_ctx {
    const job *j;
    int b;
    const bl_stage_hw *hw;
} cut_ctx;

static bool stage_fits(const cut_ctx *c, int k, int first, int last)
{
    const bl_stage_hw *h = &c->hw[k];
    job jb;
    const job *j = attn_job_on(c->j, h->type, &jb);
    return cost_stage_memory(j, c->b, first, last, h->tp, h->in_flight) <= h->type->mem_bytes;
}

static double speed_cost(void *ctx, int k, int first, int last)
{
    const cut_ctx *c = ctx;
    if (!stage_fits(c, k, first, last))
        return -1;
    const bl_stage_hw *h = &c->hw[k];
    return (last - first + 1) / (h->type->peak_flops * h->type->efficiency * h->tp);
}

static double time_cost(void *ctx, int k, int first, int last)
{
    const cut_ctx *c = ctx;
    if (!stage_fits(c, k, first, last))
        return -1;
    const bl_stage_hw *h = &c->hw[k];
    int64_t ns = cost_stage_fwd_ns(c->j, h->type, h->tp, c->b, first, last, 1.0) +
                 cost_stage_bwd_ns(c->j, h->type, h->tp, c->b, first, last, 1.0);
    return ns * 1e-9;
}

double bl_speed_cuts(const job *j, int b, int S, const bl_stage_hw *hw, int *first, int *last)
{
    cut_ctx c = {j, b, hw};
    return bl_minmax_cuts(j->model.layers, S, speed_cost, &c, first, last);
}

double bl_balanced_cuts(const job *j, int b, int S, const bl_stage_hw *hw, int *first, int *last)
{
    cut_ctx c = {j, b, hw};
    return bl_minmax_cuts(j->model.layers, S, time_cost, &c, first, last);
}

/* --- plans ---------------------------------------------------------------- */

int bl_grid_plan(plan *p, const char *planner, int D, int S, int T, const int *gpus,
                 const int *first, const int *last, const int *mb, int b, sched_kind sched,
                 sync_kind sync, gt_err *e)
{
    if (D < 1 || S < 1 || T < 1 || T > PLAN_MAX_TP)
        return gt_fail(e, "%s: bad grid %d pipelines x %d stages x %d GPUs", planner, D, S, T);
    if (plan_init(p, D))
        return gt_fail(e, "out of memory");
    snprintf(p->planner, sizeof p->planner, "%s", planner);
    p->schedule = sched;
    p->sync = sync;
    p->microbatch_size = b;
    for (int d = 0; d < D; d++) {
        if (plan_pipe_alloc(p, d, S)) {
            plan_free(p);
            return gt_fail(e, "out of memory");
        }
        p->pipes[d].microbatches = mb[d];
        for (int k = 0; k < S; k++) {
            plan_stage *s = &p->pipes[d].stages[k];
            size_t at = (size_t)d * (size_t)S + (size_t)k;
            s->ngpus = T;
            memcpy(s->gpus, gpus + at * (size_t)T, sizeof(int) * (size_t)T);
            s->first = first[at];
            s->last = last[at];
        }
    }
    return 0;
}

int bl_uniform_plan(plan *p, const char *planner, const job *j, int D, int S, int T,
                    const int *gpus, sched_kind sched, sync_kind sync, gt_err *e)
{
    int L = j->model.layers;
    if (S > L)
        return gt_fail(e, "%s: %d stages for %d layers", planner, S, L);
    size_t n = (size_t)D * (size_t)S;
    int *first = malloc(sizeof *first * n), *last = malloc(sizeof *last * n);
    int *mb = malloc(sizeof *mb * (size_t)D);
    int rc = 0;
    if (!first || !last || !mb) {
        rc = gt_fail(e, "out of memory");
    } else {
        for (int d = 0; d < D; d++)
            for (int k = 0; k < S; k++)
                bl_even_cut(L, S, k, &first[(size_t)d * (size_t)S + (size_t)k],
                            &last[(size_t)d * (size_t)S + (size_t)k]);
        bl_even_split(j->batch / j->microbatch, D, mb);
        rc = bl_grid_plan(p, planner, D, S, T, gpus, first, last, mb, j->microbatch, sched,
                          sync, e);
    }
    free(first);
    free(last);
    free(mb);
    return rc;
}

int bl_tp_degrees(const topology *t, const model_spec *m, const int *nodes, int nnodes, int *out,
                  int cap)
{
    int n = 0;
    for (int tp = 1; tp <= PLAN_MAX_TP && n < cap; tp *= 2) {
        if (m->heads % tp)
            continue;
        bool ok = true;
        int count = nodes ? nnodes : t->nnodes;
        for (int i = 0; i < count && ok; i++)
            ok = t->nodes[nodes ? nodes[i] : i].ngpus % tp == 0;
        if (ok)
            out[n++] = tp;
    }
    return n;
}

double bl_gpu_speed(const topology *t, int g)
{
    const gpu_type *ty = topo_gpu_type(t, g);
    return ty->peak_flops * ty->efficiency;
}

double bl_mem_frac(const topology *t, const job *j, const plan *p)
{
    double worst = 0;
    for (int pi = 0; pi < p->npipes; pi++)
        for (int k = 0; k < p->pipes[pi].nstages; k++) {
            int g = p->pipes[pi].stages[k].gpus[0];
            if (g < 0 || g >= t->ngpus)
                continue;
            double f = plan_gpu_memory(p, t, j, g) / topo_gpu_type(t, g)->mem_bytes;
            worst = f > worst ? f : worst;
        }
    return worst;
}

/* --- evaluation ------------------------------------------------------------ */

int bl_estimate(const topology *t, const job *j, const plan *p, bl_eval *ev, gt_err *e)
{
    est_summary s;
    if (estimate_plan(t, j, p, &s, e))
        return -1;
    *ev = (bl_eval){s.iteration_s, s.energy_j, s.carbon_g, s.usd};
    return 0;
}

int bl_simulate(const topology *t, const job *j, const plan *p, bl_eval *ev, gt_err *e)
{
    sim_options so;
    sim_options_default(&so);
    sim_result r;
    if (simulate_plan(t, j, p, &so, &r, e))
        return -1;
    *ev = (bl_eval){r.iteration_s, r.energy_j, r.carbon_g, r.usd};
    return 0;
}

int bl_objective(const char *objective, const bl_eval *ev, double *out, gt_err *e)
{
    struct objective ob;
    if (objective_parse(objective && *objective ? objective : "time", &ob, e))
        return -1;
    /* weighted and energy-within need references the baselines do not have */
    if (objective_needs_refs(&ob) || objective_needs_fastest(&ob))
        return gt_fail(e, "objective '%s' needs reference plans", ob.text);
    obj_metrics m = {ev->iteration_s, ev->energy_j, ev->carbon_g, ev->usd};
    *out = objective_value(&ob, &m);
    return 0;
}

double bl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

bool bl_out_of_time(const planner_opts *o, double t0)
{
    if (o->stop && *o->stop)
        return true;
    return o->budget_s > 0 && bl_now() - t0 > o->budget_s;
}

/* --- the best candidate so far ------------------------------------------- */

void bl_best_init(bl_best *b)
{
    memset(b, 0, sizeof *b);
    b->why_score = INFINITY;
}

void bl_best_offer(bl_best *b, plan *cand, double key, const bl_eval *ev)
{
    b->tried++;
    if (b->have && !(key < b->key)) {
        plan_free(cand);
        return;
    }
    if (b->have)
        plan_free(&b->p);
    b->p = *cand;
    memset(cand, 0, sizeof *cand);
    b->have = true;
    b->key = key;
    b->ev = *ev;
}

void bl_best_reject(bl_best *b, plan *cand, const char *what, double score, const gt_err *e)
{
    b->tried++;
    b->rejected++;
    if (cand)
        plan_free(cand);
    if (score < b->why_score) {
        b->why_score = score;
        snprintf(b->why, sizeof b->why, "%s: %s", what, e ? e->msg : "rejected");
    }
}

int bl_best_finish(bl_best *b, const char *planner, const planner_opts *o, plan *out,
                   planner_stats *st, double t0, gt_err *e)
{
    if (!b->have) {
        if (!b->tried && bl_out_of_time(o, t0))
            return gt_fail(e, "%s: stopped (budget %g s) before the first candidate", planner,
                           o->budget_s);
        if (!b->tried)
            return gt_fail(e, "%s: no candidate plan fits this topology and job", planner);
        return gt_fail(e, "%s: none of %ld candidate plans is feasible; closest: %s", planner,
                       b->tried, b->why);
    }
    *out = b->p;
    memset(&b->p, 0, sizeof b->p);
    b->have = false;
    snprintf(out->planner, sizeof out->planner, "%s", planner);
    snprintf(out->objective, sizeof out->objective, "%s",
             o->objective && *o->objective ? o->objective : "time");
    if (st) {
        memset(st, 0, sizeof *st);
        if (bl_objective(o->objective, &b->ev, &st->objective_value, NULL))
            st->objective_value = b->ev.iteration_s;
        st->evaluations = b->tried;
        st->plan_time_s = bl_now() - t0;
    }
    return 0;
}

void bl_best_free(bl_best *b)
{
    if (b->have)
        plan_free(&b->p);
    b->have = false;
}

void bl_try(bl_best *b, const topology *t, const job *j, const planner_opts *o, plan *cand,
            const char *what, bool simulate, bool by_objective)
{
    gt_err e;
    bl_eval ev;
    int rc = simulate ? bl_simulate(t, j, cand, &ev, &e) : bl_estimate(t, j, cand, &ev, &e);
    if (rc) {
        double f = bl_mem_frac(t, j, cand);
        bl_best_reject(b, cand, what, f > 1 ? f : 1e9, &e);
        return;
    }
    double key = ev.iteration_s;
    if (by_objective && bl_objective(o->objective, &ev, &key, NULL))
        key = ev.iteration_s;
    bl_best_offer(b, cand, key, &ev);
}
