/* enc_fitness.c — what a decoded genome is worth (encoding.h): the
 * finalists' replays, the traffic floor and the planners' fitness, and the
 * lower bounds of the estimator's metrics. */
#include "encoding.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "enc_pipe.h"
#include "partition_dp.h"
#include "tp_view.h"
#include "sim/models/collective.h"
#include "sim/models/cost.h"
#include "sim/models/dp_sync.h"
#include "sim/base/res_table.h"
#include "sim/base/timecap.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/simulator.h"
#include "sim/models/path.h"

/* --- finalists ------------------------------------------------------------------ */

int enc_simulate(const enc_problem *pr, const genome *g, const char *planner,
                 const char *objtext, plan *p, obj_metrics *sim, gt_err *e)
{
    if (enc_to_plan(pr, g, planner, objtext, p, e))
        return -1;
    sim_options so;
    sim_options_default(&so);
    sim_result r;
    if (simulate_plan(pr->real, pr->j, p, &so, &r, e)) {
        plan_free(p);
        return -1;
    }
    *sim = obj_from_sim(&r);
    return 0;
}

double enc_replay_work(const plan *p)
{
    double w = 0, D = p->npipes;
    int smax = 0;
    for (int pi = 0; pi < p->npipes; pi++) {
        double S = p->pipes[pi].nstages, m = p->pipes[pi].microbatches;
        w += 2 * S * m + 2 * (S - 1) * m; /* ops; activation and gradient flows */
        smax = p->pipes[pi].nstages > smax ? p->pipes[pi].nstages : smax;
    }
    if (D > 1) /* a sync group per stage */
        w += smax * collective_replay_work(p->sync, D);
    return w;
}

/* The first candidate, unreplayed: too large for the simulator. */
static int final_unreplayed(const enc_problem *pr, const genome *g, const objective *sobj,
                            const char *planner, const char *objtext, enc_final *out, gt_err *e)
{
    if (enc_to_plan(pr, g, planner, objtext, &out->p, e))
        return -1;
    out->est = out->sim = g->est;
    out->value = objective_value(sobj, &g->est);
    out->index = 0;
    out->replayed = 0;
    return 0;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool replays_over(const enc_replay_limits *lim, int replayed)
{
    return replayed >= lim->max || (lim->stop && *lim->stop) ||
           (lim->deadline > 0 && mono_s() > lim->deadline);
}

int enc_pick_final(const enc_problem *pr, const genome *const *cand, int n,
                   const objective *sobj, const char *planner, const char *objtext,
                   const enc_replay_limits *lim, enc_final *out, gt_err *e)
{
    bool have = false;
    gt_err last = {""};
    int replayed = 0;
    if (n > 0) {
        plan p;
        if (enc_to_plan(pr, cand[0], planner, objtext, &p, e))
            return -1;
        double w = enc_replay_work(&p);
        plan_free(&p);
        if (w > ENC_REPLAY_MAX_WORK)
            return final_unreplayed(pr, cand[0], sobj, planner, objtext, out, e);
    }
    for (int i = 0; i < n; i++) {
        if (have && (!(cand[i]->fit < out->value) || replays_over(lim, replayed)))
            break;
        plan p;
        obj_metrics sim;
        replayed++;
        if (enc_simulate(pr, cand[i], planner, objtext, &p, &sim, &last))
            continue;
        double v = objective_value(sobj, &sim);
        if (have && !(v < out->value)) {
            plan_free(&p);
            continue;
        }
        if (have)
            plan_free(&out->p);
        *out = (enc_final){p, cand[i]->est, sim, v, i, 0};
        have = true;
    }
    if (have)
        out->replayed = replayed;
    if (!have)
        return gt_fail(e, "%s", last.msg[0] ? last.msg : "no feasible plan found");
    return 0;
}

/* --- traffic floor and fitness --------------------------------------------------- */

/* Bytes per shared resource of sim/models/path.h: its dense keys (GPU
 * links, NICs, WAN) in one array of nres, per-pair resources (keys from
 * nres on) through a hash, as there can be ngpus^2 of them. */
typedef struct traffic {
    const enc_problem *pr;
    double *bytes;
    int nres;
    res_table pairs;
    double *pair_bytes, *pair_cap;
    int npairs;
} traffic;

static void flow_bytes(traffic *tr, int a, int b, double bytes)
{
    path_res r[3];
    int k = path_resources(tr->pr->t, a, b, r);
    for (int i = 0; i < k; i++) {
        if (r[i].key < tr->nres) {
            tr->bytes[r[i].key] += bytes;
            continue;
        }
        bool added;
        int x = res_table_index(&tr->pairs, r[i].key, tr->npairs, &added);
        if (added) {
            tr->npairs++;
            tr->pair_bytes[x] = 0;
            tr->pair_cap[x] = r[i].cap;
        }
        tr->pair_bytes[x] += bytes;
    }
}

/* The collective's transfers (sim/models/collective.h) as bytes on their
 * resources: all reps steps of one at once. */
static int floor_xfer(void *ctx, int src, int dst, double bytes, int div, int reps)
{
    flow_bytes(ctx, src, dst, (double)reps * bytes / div);
    return 0;
}

static int floor_end(void *ctx)
{
    (void)ctx;
    return 0;
}

/* Seconds the busiest resource needs for the bytes added to tr->bytes since
 * the keys were zero, listed in keys[0..n); the bytes are cleared again. */
static double phase_s(traffic *tr, const int *keys, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++)
        if (tr->bytes[keys[i]] > 0) {
            worst = fmax(worst, tr->bytes[keys[i]] / path_dense_cap(tr->pr->t, keys[i]));
            tr->bytes[keys[i]] = 0;
        }
    return worst;
}

/* One direction of pipeline p's activation (fwd) or gradient traffic on its
 * own: its resources' keys into keys (returns how many), bytes into tr. */
static int pipe_flows(traffic *tr, const genome *g, int p, double act, bool fwd, int *keys)
{
    int S = g->S, n = 0;
    for (int k = 0; k + 1 < S; k++) {
        int a = g->perm[p * S + k], b = g->perm[p * S + k + 1];
        path_res r[3];
        int nr = fwd ? path_resources(tr->pr->t, a, b, r)
                     : path_resources(tr->pr->t, b, a, r);
        for (int i = 0; i < nr; i++) {
            /* per-pair resources (keys from nres on) are left out of the
             * phase bound: fewer resources only lower it, so it stays a floor */
            if (r[i].key >= tr->nres)
                continue;
            tr->bytes[r[i].key] += g->mb[p] * act;
            keys[n++] = r[i].key;
        }
    }
    return n;
}

/* GPipe runs every forward of a stage before its first backward
 * (sim/models/workload.c), so each pipeline's activation transfers all end before
 * its first gradient transfer starts: the iteration lasts at least the
 * forward phase's busiest resource plus the backward phase's, where the
 * whole-iteration floor sees only the busier of the two (the two directions
 * of a link are separate resources). */
static double gpipe_phases_s(traffic *tr, const genome *g, double act)
{
    int *keys = malloc(sizeof(int) * (size_t)(3 * (g->S > 1 ? g->S - 1 : 1)));
    double worst = 0;
    for (int p = 0; keys && p < g->D && g->S > 1; p++) {
        double f = phase_s(tr, keys, pipe_flows(tr, g, p, act, true, keys));
        double b = phase_s(tr, keys, pipe_flows(tr, g, p, act, false, keys));
        worst = fmax(worst, f + b);
    }
    free(keys);
    return worst;
}

/* Room for the distinct per-pair resources the floor can meet: one per
 * flow_bytes call (pipeline transfers, then each layer's sync flows). */
static int traffic_alloc(traffic *tr, const genome *g, int L)
{
    const topology *t = tr->pr->t;
    tr->bytes = calloc((size_t)tr->nres, sizeof(double));
    if (!tr->bytes)
        return -1;
    if (!path_any_per_pair(t))
        return 0;
    /* one phase per layer: the planners' plans are unsharded */
    long D = g->D, per_layer = collective_xfers_per_phase(g->sync, g->D);
    long calls = 2 * D * g->S + (long)L * per_layer + 1;
    if (calls > INT32_MAX / 4)
        return -1;
    tr->pair_bytes = malloc(sizeof(double) * (size_t)calls);
    tr->pair_cap = malloc(sizeof(double) * (size_t)calls);
    if (!tr->pair_bytes || !tr->pair_cap || res_table_init(&tr->pairs, (int)calls))
        return -1;
    return 0;
}

static void traffic_free(traffic *tr)
{
    free(tr->bytes);
    free(tr->pair_bytes);
    free(tr->pair_cap);
    res_table_free(&tr->pairs);
}

/* The busiest resource's bytes over its capacity. */
static double traffic_worst(const traffic *tr)
{
    double worst = 0;
    for (int r = 0; r < tr->nres; r++)
        if (tr->bytes[r] > 0)
            worst = fmax(worst, tr->bytes[r] / path_dense_cap(tr->pr->t, r));
    for (int i = 0; i < tr->npairs; i++)
        worst = fmax(worst, tr->pair_bytes[i] / tr->pair_cap[i]);
    return worst;
}

double enc_traffic_floor(const enc_problem *pr, const genome *g)
{
    const topology *t = pr->t;
    traffic tr = {pr, NULL, (int)path_dense_count(t), {0}, NULL, NULL, 0};
    int S = g->S, D = g->D;
    coll_member *mem = malloc(sizeof *mem * (size_t)(D + 1));
    if (!mem || traffic_alloc(&tr, g, pr->L)) {
        traffic_free(&tr);
        free(mem);
        return -1; /* out of memory: no floor (0 would pass for one, below bounds of it) */
    }
    double act = cost_activation_bytes(pr->j, pr->bval[g->bi]);
    double phases = g->sched == SCHED_GPIPE ? gpipe_phases_s(&tr, g, act) : 0;
    for (int p = 0; p < D; p++)
        for (int k = 0; k + 1 < S; k++) {
            flow_bytes(&tr, g->perm[p * S + k], g->perm[p * S + k + 1], g->mb[p] * act);
            flow_bytes(&tr, g->perm[p * S + k + 1], g->perm[p * S + k], g->mb[p] * act);
        }
    for (int l = 0; l < pr->L && D > 1; l++) {
        for (int p = 0; p < D; p++) {
            int k = S - 1;
            while (k > 0 && g->first[p * S + k] > l)
                k--;
            int gpu = g->perm[p * S + k];
            mem[p] = (coll_member){gpu, t->gpus[gpu].site, gpu};
        }
        /* the simulator's algorithm and phases; the planners' plans are unsharded */
        coll_sink sink = {floor_xfer, floor_end, &tr};
        collective_emit(mem, D, g->sync, SHARD_NONE, dp_grad_bytes(pr->j, l, l, 1),
                        dp_weight_bytes(pr->j, l, l, 1), 1, &sink);
    }
    double worst = fmax(phases, traffic_worst(&tr));
    traffic_free(&tr);
    free(mem);
    return worst;
}

int enc_estimate(const enc_problem *pr, const genome *g, obj_metrics *m)
{
    plan p;
    gt_err e;
    if (enc_to_plan(pr, g, "", "", &p, &e))
        return -1;
    est_summary s;
    int st = estimate_plan(pr->real, pr->j, &p, &s, &e) == 0 ? 1 : -1;
    plan_free(&p);
    if (st != 1)
        return -1;
    *m = obj_from_estimate(&s);
    double floor_s = enc_traffic_floor(pr, g);
    if (floor_s < 0)
        return -2; /* out of memory: an estimate without its floor is no estimate (the
                    * exact referee's NIC-load bounds are bounds of the floor) */
    if (floor_s > m->time_s) {
        double dt = floor_s - m->time_s;
        for (int x = 0; x < g->S * g->D; x++) {
            const topo_site *site = &pr->t->sites[pr->t->gpus[g->perm[x]].site];
            double j = dt * site->pue * topo_gpu_type(pr->t, g->perm[x])->idle_w;
            m->energy_j += j;
            m->carbon_g += j / 3.6e6 * site->carbon_g_per_kwh;
            m->usd += j / 3.6e6 * site->price_kwh;
        }
        m->time_s = floor_s;
    }
    return 1;
}

/* --- bounds ------------------------------------------------------------------ */

typedef struct stage_times {
    int64_t f, b, opt, xf, xb;   /* xf/xb: transfer to / from the next stage */
} stage_times;

/* The estimator's own op durations for stage k of pipeline p. */
static void stage_exact(const enc_problem *pr, const genome *g, int p, int k, stage_times *st)
{
    const job *j = pr->j;
    int S = g->S, gpu = g->perm[p * S + k], b = pr->bval[g->bi];
    int a = g->first[p * S + k], e = k + 1 < S ? g->first[p * S + k + 1] - 1 : pr->L - 1;
    const gpu_type *ty = topo_gpu_type(pr->t, gpu);
    st->f = cost_stage_fwd_ns(j, ty, 1, b, a, e, 1.0);
    st->b = cost_stage_bwd_ns(j, ty, 1, b, a, e, 1.0);
    st->opt = cost_optimizer_ns(ty, cost_stage_params(&j->model, a, e));
    st->xf = st->xb = 0;
    if (k + 1 < S) {
        st->xf = enc_xfer_ns(pr, g->bi, gpu, g->perm[p * S + k + 1]);
        st->xb = enc_xfer_ns(pr, g->bi, g->perm[p * S + k + 1], gpu);
    }
}

/* Time bound of pipeline p (ns); busy[k] gets each stage's compute ns. */
static int64_t pipe_bound(const enc_problem *pr, const genome *g, int p, stage_times *st,
                          int64_t *busy)
{
    int S = g->S;
    int64_t m = g->mb[p], best = 0, arrive = 0, back = 0, rt = 0;
    for (int k = 0; k < S; k++)
        stage_exact(pr, g, p, k, &st[k]);
    for (int k = 0; k < S; k++) { /* saturating at the time cap (sim/base/timecap.h) */
        int64_t work = t_mul(m, t_add(st[k].f, st[k].b));
        busy[k] = t_add(work, st[k].opt);
        int64_t end_k = t_add(arrive, work);
        int64_t v = t_add(t_add(end_k, back), st[0].opt); /* the gradient's way down to stage 0 */
        int64_t w = t_add(end_k, st[k].opt);
        v = v > w ? v : w;
        best = v > best ? v : best;
        arrive = t_add(arrive, t_add(st[k].f, st[k].xf));
        back = t_add(back, t_add(st[k].b, st[k].xb));
        rt = t_add(rt, t_add(t_add(st[k].f, st[k].b), t_add(st[k].xf, st[k].xb)));
    }
    if (g->sched == SCHED_1F1B) {
        /* stage 0 runs F(j+S) after B(j), which ends a round trip after F(j) */
        int64_t v = t_add(t_mul((m + S - 1) / S, rt), st[0].opt);
        best = v > best ? v : best;
    }
    return best;
}

obj_metrics enc_bound(const enc_problem *pr, const genome *g)
{
    int S = g->S;
    stage_times *st = malloc(sizeof *st * (size_t)S);
    int64_t *busy = malloc(sizeof *busy * (size_t)(S * g->D));
    obj_metrics lb = {0, 0, 0, 0};
    if (!st || !busy) {
        free(st);
        free(busy);
        return lb;
    }
    int64_t T = 0;
    for (int p = 0; p < g->D; p++) {
        int64_t v = pipe_bound(pr, g, p, st, &busy[p * S]);
        T = v > T ? v : T;
    }
    for (int x = 0; x < S * g->D; x++) {
        const topo_site *site = &pr->t->sites[pr->t->gpus[g->perm[x]].site];
        const gpu_type *ty = topo_gpu_type(pr->t, g->perm[x]);
        double j = site->pue * 1e-9 * ((double)busy[x] * ty->tdp_w + (double)(T - busy[x]) * ty->idle_w);
        lb.energy_j += j;
        lb.carbon_g += j / 3.6e6 * site->carbon_g_per_kwh;
        lb.usd += j / 3.6e6 * site->price_kwh;
    }
    /* a hair below, so that summation order can never lift a bound above the truth */
    const double shave = 1 - 1e-12;
    lb.time_s = (double)T * 1e-9 * shave;
    lb.energy_j *= shave;
    lb.carbon_g *= shave;
    lb.usd *= shave;
    free(st);
    free(busy);
    return lb;
}

int enc_critical_cell(const enc_problem *pr, const genome *g)
{
    int S = g->S, cell = 0;
    stage_times *st = malloc(sizeof *st * (size_t)S);
    int64_t *busy = malloc(sizeof *busy * (size_t)S), worst = -1;
    if (!st || !busy) {
        free(st);
        free(busy);
        return 0;
    }
    for (int p = 0; p < g->D; p++) {
        int64_t v = pipe_bound(pr, g, p, st, busy);
        if (v <= worst)
            continue;
        worst = v;
        int kb = 0;
        for (int k = 1; k < S; k++)
            if (busy[k] > busy[kb])
                kb = k;
        cell = p * S + kb;
    }
    free(st);
    free(busy);
    return cell;
}

