/* freq_assign.c — energy-minimal SM clocks under the critical path (freq_assign.h). */
#include "freq_assign.h"

#include <stdlib.h>
#include <string.h>

#include "sim/models/cost.h"
#include "sim/inputs/freq.h"

typedef struct fa_ctx {
    const topology *t;
    const job *j;
    plan *p;
    double limit_s;           /* iteration time allowed */
    long evals;
} fa_ctx;

/* Estimate with stage s at clock index i (0 = f_max): 1 when within the time
 * limit, 0 when over, -1 on error. The stage is left at that clock. */
static int try_clock(fa_ctx *c, plan_stage *s, int i, est_summary *out, gt_err *e)
{
    const gpu_type *g = topo_gpu_type(c->t, s->gpus[0]);
    s->freq_fwd_mhz = s->freq_bwd_mhz = i == 0 ? 0 : freq_clock(g, i);
    c->evals++;
    if (estimate_plan(c->t, c->j, c->p, out, e))
        return -1;
    return out->iteration_s <= c->limit_s;
}

/* The stage's clock: lowest feasible, then up while energy falls. */
static int assign_stage(fa_ctx *c, plan_stage *s, est_summary *cur, gt_err *e)
{
    const gpu_type *g = topo_gpu_type(c->t, s->gpus[0]);
    int n = freq_nclocks(g), lo = 0, hi = n - 1, r;
    est_summary es;
    if (n <= 1)
        return 0;
    while (lo < hi) { /* largest index (lowest clock) within the time limit */
        int mid = (lo + hi + 1) / 2;
        if ((r = try_clock(c, s, mid, &es, e)) < 0)
            return -1;
        if (r)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == 0) {
        s->freq_fwd_mhz = s->freq_bwd_mhz = 0;
        return 0;
    }
    est_summary best;
    int bi = lo;
    if (try_clock(c, s, lo, &best, e) < 0)
        return -1;
    for (int i = lo - 1; i >= 0; i--) { /* past the energy-optimal clock? */
        if (try_clock(c, s, i, &es, e) < 0)
            return -1;
        if (es.energy_j >= best.energy_j)
            break;
        best = es;
        bi = i;
    }
    if (best.energy_j < cur->energy_j) {
        s->freq_fwd_mhz = s->freq_bwd_mhz = bi == 0 ? 0 : freq_clock(g, bi);
        *cur = best;
    } else {
        s->freq_fwd_mhz = s->freq_bwd_mhz = 0;
    }
    return 0;
}

typedef struct stage_ref {
    int pipe, stage;
    int64_t work_ns;
} stage_ref;

static int by_work(const void *a, const void *b)
{
    const stage_ref *x = a, *y = b;
    if (x->work_ns != y->work_ns)
        return x->work_ns < y->work_ns ? -1 : 1;
    if (x->pipe != y->pipe)
        return x->pipe - y->pipe;
    return x->stage - y->stage;
}

/* Stages least loaded first (ties in plan order: deterministic). */
static stage_ref *stage_order(const topology *t, const job *j, const plan *p, int *n)
{
    int total = 0;
    for (int pi = 0; pi < p->npipes; pi++)
        total += p->pipes[pi].nstages;
    stage_ref *r = malloc(sizeof *r * (size_t)(total > 0 ? total : 1));
    if (!r)
        return NULL;
    int k = 0;
    for (int pi = 0; pi < p->npipes; pi++)
        for (int s = 0; s < p->pipes[pi].nstages; s++) {
            const plan_stage *st = &p->pipes[pi].stages[s];
            const gpu_type *g = topo_gpu_type(t, st->gpus[0]);
            int b = p->microbatch_size;
            r[k++] = (stage_ref){pi, s,
                                 cost_stage_fwd_ns(j, g, st->ngpus, b, st->first, st->last, 1.0) +
                                     cost_stage_bwd_ns(j, g, st->ngpus, b, st->first, st->last, 1.0)};
        }
    qsort(r, (size_t)total, sizeof *r, by_work);
    *n = total;
    return r;
}

int freq_assign(const topology *t, const job *j, plan *p, double slowdown,
                est_summary *before, est_summary *after, long *evals, gt_err *e)
{
    for (int pi = 0; pi < p->npipes; pi++)
        for (int s = 0; s < p->pipes[pi].nstages; s++)
            p->pipes[pi].stages[s].freq_fwd_mhz = p->pipes[pi].stages[s].freq_bwd_mhz = 0;
    est_summary base, cur;
    if (estimate_plan(t, j, p, &base, e))
        return -1;
    fa_ctx c = {t, j, p, base.iteration_s * (1.0 + slowdown), 1};
    cur = base;
    int n;
    stage_ref *order = stage_order(t, j, p, &n);
    if (!order)
        return gt_fail(e, "out of memory");
    int rc = 0;
    for (int k = 0; k < n && !rc; k++)
        rc = assign_stage(&c, &p->pipes[order[k].pipe].stages[order[k].stage], &cur, e);
    free(order);
    if (rc)
        return -1;
    if (before)
        *before = base;
    if (after)
        *after = cur;
    if (evals)
        *evals += c.evals;
    return 0;
}

int freq_front(const topology *t, const job *j, const plan *p, const double *budgets, int n,
               plan *plans, est_summary *pts, gt_err *e)
{
    int got = 0;
    for (int b = 0; b < n; b++) {
        plan q;
        est_summary after;
        if (plan_copy(&q, p))
            return gt_fail(e, "out of memory");
        if (freq_assign(t, j, &q, budgets[b], NULL, &after, NULL, e)) {
            plan_free(&q);
            for (int i = 0; i < got; i++)
                plan_free(&plans[i]);
            return -1;
        }
        int dominated = 0; /* by a point already kept (budgets grow: times grow) */
        for (int i = 0; i < got; i++)
            if (pts[i].iteration_s <= after.iteration_s && pts[i].energy_j <= after.energy_j)
                dominated = 1;
        if (dominated) {
            plan_free(&q);
            continue;
        }
        for (int i = 0; i < got;) /* drop points the new one dominates */
            if (after.iteration_s <= pts[i].iteration_s && after.energy_j <= pts[i].energy_j) {
                plan_free(&plans[i]);
                memmove(&plans[i], &plans[i + 1], sizeof *plans * (size_t)(got - i - 1));
                memmove(&pts[i], &pts[i + 1], sizeof *pts * (size_t)(got - i - 1));
                got--;
            } else {
                i++;
            }
        plans[got] = q;
        pts[got++] = after;
    }
    return got;
}
