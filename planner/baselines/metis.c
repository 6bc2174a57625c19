/* metis.c — a baseline in the spirit of Metis (Um et al., "Metis: Fast
 * Automatic Distributed Training on Heterogeneous GPUs", USENIX ATC 2024).
 *
 * What it decides: which GPU types take part (the k fastest types, for every
 * k), the order of the type groups along the pipeline (every order for up to
 * four types, fastest-first and slowest-first beyond), the TP and DP degrees
 * (every power-of-two T dividing the heads and the nodes' GPU counts, every
 * D dividing B/b), how many stages each type gets (as many as its GPUs
 * allow: floor(count / (D*T)); the slowest types give stages up when there
 * are more stages than layers) and a load-balanced layer split: cuts that
 * minimise the slowest stage's forward + backward time, under each stage's
 * memory (min-max dynamic programming — Metis balances layers by profiled
 * compute capability; our cost model stands in for the profile).
 * Every stage holds D replicas of one GPU type, so pipelines are identical
 * and take equal shares of the batch. GPUs of a type are used in topology
 * order (stage-major, TP chunks inside a node). 1F1B and ring all-reduce.
 *
 * How it ranks candidates — its own cost model, not our simulator:
 *   (m - 1) * max_k tau_k + sum_k tau_k + max_k allreduce_k
 * with tau_k = stage k's compute + 2 x activation bytes / the slowest link
 * from stage k to stage k+1 (over its D replicas), allreduce_k = the ring's
 * 2(D-1)/D x gradient bytes / the slowest link of stage k's DP ring.
 * What it ignores: latency and the WAN beyond each stage's slowest link,
 * contention, energy (no objective but time), the optimizer step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "common.h"
#include "sim/models/dp_sync.h"
#include "sim/models/path.h"
#include "sim/models/plan_check.h"
#include "fit.h"

/* GPUs of one type in topology order. */
typedef struct type_group {
    int type;
    int n;
    int *gpus;
    double speed;
} type_group;

typedef struct metis_ctx {
    const topology *t;
    const job *j;
    const planner_opts *o;
    type_group *g;     /* sorted fastest first */
    int ng;
    int total;         /* microbatches B/b */
} metis_ctx;

static int cmp_speed(const void *a, const void *b)
{
    const type_group *x = a, *y = b;
    if (x->speed != y->speed)
        return x->speed < y->speed ? 1 : -1;
    return x->type - y->type;
}

static int build_groups(metis_ctx *c, gt_err *e)
{
    const topology *t = c->t;
    c->g = calloc((size_t)t->ntypes, sizeof *c->g);
    if (!c->g)
        return gt_fail(e, "out of memory");
    for (int g = 0; g < t->ngpus; g++) {
        type_group *tg = &c->g[t->gpus[g].type];
        if (!tg->gpus && !(tg->gpus = malloc(sizeof *tg->gpus * (size_t)t->ngpus)))
            return gt_fail(e, "out of memory");
        tg->gpus[tg->n++] = g;
    }
    c->ng = 0;
    for (int ty = 0; ty < t->ntypes; ty++) {
        if (!c->g[ty].n)
            continue;
        type_group tg = c->g[ty];
        tg.type = ty;
        tg.speed = t->types[ty].peak_flops * t->types[ty].efficiency;
        c->g[ty] = (type_group){0};
        c->g[c->ng++] = tg;
    }
    qsort(c->g, (size_t)c->ng, sizeof *c->g, cmp_speed);
    return 0;
}

static void free_groups(metis_ctx *c)
{
    if (!c->g)
        return;
    for (int i = 0; i < c->t->ntypes; i++)
        free(c->g[i].gpus);
    free(c->g);
}

/* One candidate's shape: group order and stage counts. */
typedef struct shape {
    int k;             /* groups used: c->g[order[i]] */
    int order[8];
    int stages[8];     /* stages of each used group, in `order` order */
    int S, D, T;
} shape;

/* Fill the GPU grid (pipeline-major, as bl_grid_plan wants) and the stage
 * hardware of a shape. */
static void fill_grid(const metis_ctx *c, const shape *sh, int *gpus, bl_stage_hw *hw)
{
    int k = 0, m = c->total / sh->D;
    for (int i = 0; i < sh->k; i++) {
        const type_group *tg = &c->g[sh->order[i]];
        for (int s = 0; s < sh->stages[i]; s++, k++) {
            hw[k] = (bl_stage_hw){&c->t->types[tg->type], sh->T,
                                  bl_in_flight(SCHED_1F1B, sh->S, k, m)};
            for (int d = 0; d < sh->D; d++)
                for (int x = 0; x < sh->T; x++)
                    gpus[((size_t)d * (size_t)sh->S + (size_t)k) * (size_t)sh->T + (size_t)x] =
                        tg->gpus[(s * sh->D + d) * sh->T + x];
        }
    }
}

static double slow_rate(const topology *t, int a, int b)
{
    double lat, rate;
    path_lone(t, a, b, &lat, &rate);
    return rate;
}

/* Metis's estimate of one iteration of a grid plan (see the header). */
static double metis_cost(const metis_ctx *c, const shape *sh, const int *gpus, const int *first,
                         const int *last, const bl_stage_hw *hw)
{
    const job *j = c->j;
    int S = sh->S, D = sh->D, T = sh->T, m = c->total / D, b = j->microbatch;
    double act = cost_activation_bytes(j, b), sum = 0, worst = 0, sync = 0;
    for (int k = 0; k < S; k++) {
        double tau = (cost_stage_fwd_ns(j, hw[k].type, T, b, first[k], last[k], 1.0) +
                      cost_stage_bwd_ns(j, hw[k].type, T, b, first[k], last[k], 1.0)) * 1e-9;
        double bw = INFINITY, bw_dp = INFINITY;
        for (int d = 0; d < D; d++) {
            int g = gpus[((size_t)d * (size_t)S + (size_t)k) * (size_t)T];
            if (k + 1 < S) {
                double r = slow_rate(c->t, g, gpus[((size_t)d * (size_t)S + (size_t)k + 1) *
                                                   (size_t)T]);
                bw = r < bw ? r : bw;
            }
            if (D > 1) {
                int nxt = gpus[((size_t)((d + 1) % D) * (size_t)S + (size_t)k) * (size_t)T];
                double r = slow_rate(c->t, g, nxt);
                bw_dp = r < bw_dp ? r : bw_dp;
            }
        }
        if (k + 1 < S)
            tau += 2 * act / bw;
        if (D > 1) {
            double grad = dp_grad_bytes(j, first[k], last[k], 1) / T;
            double ar = 2.0 * (D - 1) / D * grad / bw_dp;
            sync = ar > sync ? ar : sync;
        }
        sum += tau;
        worst = tau > worst ? tau : worst;
    }
    return (m - 1) * worst + sum + sync;
}

/* Evaluate one ordered shape: balanced cuts, Metis cost, keep the best. */
static void try_order(const metis_ctx *c, const shape *sh, bl_best *best)
{
    size_t cells = (size_t)sh->D * (size_t)sh->S;
    int *gpus = malloc(sizeof *gpus * cells * (size_t)sh->T);
    int *first = malloc(sizeof *first * cells), *last = malloc(sizeof *last * cells);
    bl_stage_hw *hw = malloc(sizeof *hw * (size_t)sh->S);
    int *mb = malloc(sizeof *mb * (size_t)sh->D);
    char what[128];
    int at = snprintf(what, sizeof what, "TP %d x DP %d, stages", sh->T, sh->D);
    for (int i = 0; i < sh->k && at < (int)sizeof what; i++)
        at += snprintf(what + at, sizeof what - (size_t)at, " %dx%s", sh->stages[i],
                       c->t->types[c->g[sh->order[i]].type].id);
    gt_err e;
    if (!gpus || !first || !last || !hw || !mb) {
        bl_best_reject(best, NULL, what, 1e9, &(gt_err){"out of memory"});
        goto done;
    }
    fill_grid(c, sh, gpus, hw);
    bool fits = bl_balanced_cuts(c->j, c->j->microbatch, sh->S, hw, first, last) >= 0;
    for (int k = 0; !fits && k < sh->S; k++) /* even cuts name the overflowing stage */
        bl_even_cut(c->j->model.layers, sh->S, k, &first[k], &last[k]);
    double cost = metis_cost(c, sh, gpus, first, last, hw);
    for (int d = 1; d < sh->D; d++) { /* every pipeline cuts alike */
        memcpy(first + (size_t)d * (size_t)sh->S, first, sizeof *first * (size_t)sh->S);
        memcpy(last + (size_t)d * (size_t)sh->S, last, sizeof *last * (size_t)sh->S);
    }
    bl_even_split(c->total, sh->D, mb);
    plan p;
    if (bl_grid_plan(&p, "metis", sh->D, sh->S, sh->T, gpus, first, last, mb, c->j->microbatch,
                     SCHED_1F1B, SYNC_RING, &e)) {
        bl_best_reject(best, NULL, what, 1e9, &e);
        goto done;
    }
    if (!fits) {
        double fr = bl_mem_frac(c->t, c->j, &p);
        if (plan_check(&p, c->t, c->j, &e))
            bl_best_reject(best, &p, what, fr > 1 ? fr : 1e9, &e);
        else /* cannot happen: the exact split search would have found it */
            bl_best_reject(best, &p, what, 1e9, &(gt_err){"no layer split fits memory"});
        goto done;
    }
    bl_eval none = {cost, 0, 0, 0};
    bl_best_offer(best, &p, cost, &none);
done:
    free(gpus);
    free(first);
    free(last);
    free(hw);
    free(mb);
}

/* All orders of the k used groups (k <= 4), or fastest-first and
 * slowest-first beyond. */
static void try_orders(const metis_ctx *c, shape *sh, int depth, int *used, bl_best *best)
{
    if (sh->k > 4) {
        try_order(c, sh, best);
        shape rev = *sh;
        for (int i = 0; i < sh->k; i++) {
            rev.order[i] = sh->order[sh->k - 1 - i];
            rev.stages[i] = sh->stages[sh->k - 1 - i];
        }
        try_order(c, &rev, best);
        return;
    }
    if (depth == sh->k) {
        try_order(c, sh, best);
        return;
    }
    for (int i = 0; i < sh->k; i++) {
        if (used[i])
            continue;
        used[i] = 1;
        shape next = *sh;
        next.order[depth] = i;
        next.stages[depth] = sh->stages[8 - sh->k + i]; /* counts parked at the end */
        try_orders(c, &next, depth + 1, used, best);
        used[i] = 0;
    }
}

/* Stage counts for the k fastest groups at D x T, trimmed to the layers. */
static int stage_counts(const metis_ctx *c, int k, int D, int T, int *cnt)
{
    int S = 0, L = c->j->model.layers;
    for (int i = 0; i < k; i++) {
        cnt[i] = c->g[i].n / (D * T);
        if (!cnt[i])
            return 0;
        S += cnt[i];
    }
    if (k > L)
        return 0;
    for (int i = k - 1; S > L; i = i > 0 ? i - 1 : k - 1) /* slowest give stages up */
        if (cnt[i] > 1) {
            cnt[i]--;
            S--;
        }
    return S;
}

static void search(const metis_ctx *c, bl_best *best, double t0)
{
    for (int k = 1; k <= c->ng && k <= 8; k++) {
        int nodes[c->t->nnodes], nn = 0;
        for (int n = 0; n < c->t->nnodes; n++)
            for (int i = 0; i < k; i++)
                if (c->t->nodes[n].type == c->g[i].type) {
                    nodes[nn++] = n;
                    break;
                }
        int tps[8], ntp = bl_tp_degrees(c->t, &c->j->model, nodes, nn, tps, 8);
        for (int ti = 0; ti < ntp; ti++)
            for (int D = 1; D <= c->total; D++) {
                if (c->total % D || bl_out_of_time(c->o, t0))
                    continue;
                shape sh = {.k = k, .D = D, .T = tps[ti]};
                int cnt[8];
                if (!(sh.S = stage_counts(c, k, D, sh.T, cnt)))
                    continue;
                if (k > 4) {
                    for (int i = 0; i < k; i++) {
                        sh.order[i] = i;
                        sh.stages[i] = cnt[i];
                    }
                } else {
                    for (int i = 0; i < k; i++)
                        sh.stages[8 - k + i] = cnt[i];
                }
                int used[8] = {0};
                try_orders(c, &sh, 0, used, best);
            }
    }
}

static int metis_once(const void *cfg, const topology *t, const job *j,
                      const planner_opts *o, plan *out, planner_stats *st, gt_err *e)
{
    (void)cfg;
    double t0 = bl_now();
    metis_ctx c = {t, j, o, NULL, 0, j->batch / j->microbatch};
    if (build_groups(&c, e)) {
        free_groups(&c);
        return -1;
    }
    bl_best best;
    bl_best_init(&best);
    search(&c, &best, t0);
    free_groups(&c);
    double metis_s = best.key;
    if (bl_best_finish(&best, "metis", o, out, st, t0, e))
        return -1;
    bl_eval ev;
    if (bl_estimate(t, j, out, &ev, e)) {
        plan_free(out);
        return gt_prefix(e, "metis: its best plan");
    }
    if (st) {
        if (bl_objective(o->objective, &ev, &st->objective_value, NULL))
            st->objective_value = ev.iteration_s;
        snprintf(st->note, sizeof st->note,
                 "Metis cost model %.4g s for its choice (%ld candidates, %ld infeasible)",
                 metis_s, best.tried, best.rejected);
    }
    bl_best_free(&best);
    return 0;
}

/* Metis (Um et al., USENIX ATC 2024) plans for pipeline runtimes whose
 * settings include the microbatch size and activation recomputation; its
 * planner does not change the optimizer. */
static const bl_fit_opts METIS_FIT = {"Metis", true, true, false};

int planner_metis(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                  plan *out, planner_stats *st, gt_err *e)
{
    return bl_fit(metis_once, cfg, &METIS_FIT, t, j, o, out, st, e);
}
