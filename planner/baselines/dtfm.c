/* dtfm.c — the DT-FM baseline: Yuan et al., "Decentralized Training of
 * Foundation Models in Heterogeneous Environments", NeurIPS 2022, and its
 * scheduler code (github.com/DS3Lab/DT-FM, commit 69f05e50,
 * scheduler/heuristic_evolutionary_solver/scheduler.py, function GCMA).
 *
 * What it decides: the partition of ALL GPUs into D_PP stage groups of D_DP
 * GPUs (a balanced graph partition), the order of the groups along the
 * pipeline (open-loop TSP path) and which replicas form each pipeline
 * (bottleneck matchings between consecutive groups) — all by its own
 * communication-only cost DataPCost + 2 * PipelinePCost (dtfm_cost.c).
 * What it ignores: compute speed and memory of individual GPUs (it assumes
 * identical devices), energy, contention, bubbles. Layers are uniform (D_PP
 * equal stages), every pipeline takes the same share of the batch, the
 * schedule is GPipe (--pp-mode gpipe in its run scripts) and gradients are
 * synchronised by the sharded parameter server (central_ps), as in its code.
 *
 * The search is DT-FM's hybrid genetic algorithm: 100 random permutations,
 * 4,900 steady-state trials (planner_opts.generations overrides), each a
 * five-point crossover of two random parents with balance repair, one pass
 * of cyclic partitioning local search, and replacement of the worse parent
 * unless the offspring is worse than both. Two deliberate departures from
 * the code, both fixing evident slips: the replacement test is the intended
 * "worse than both parents" (the code compares with max(score, bool)), and
 * the local search may keep the result of its last cycle (the code's prefix
 * loop stops one short). Variant `dtfm-hybrid` swaps DT-FM's gain for the
 * classic edge-cut gain.
 *
 * Shape rule (D_PP x D_DP = all GPUs; DT-FM fixes it per job by hand): among
 * D_PP dividing the GPU count with D_PP <= layers and D_DP <= B/b, take the
 * first by (1) every uniform stage fits the smallest GPU under GPipe with all
 * of a pipeline's microbatches in flight (the search ignores memory, so the
 * shape must fit wherever a stage lands), (2) D_DP divides B/b (equal batch
 * shares), (3) D_PP divides the layers (truly uniform stages), (4) the most
 * square grid, (5) the larger D_PP. For 64 GPUs and GPT3-XL this gives
 * 8 x 8, the setting of DT-FM's runs. */
#include "dtfm.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "common.h"
#include "fit.h"
#include "sim/models/cost.h"
#include "sim/models/dp_sync.h"
#include "sim/models/memory.h"

#define GIB 1073741824.0

void dtfm_ga_defaults(dtfm_ga_opts *g)
{
    memset(g, 0, sizeof *g);
    g->population = 100;
    g->trials = 4900;
    g->crossover_points = 5;
    g->gain = DTFM_GAIN_DTFM;
}

/* --- crossover ------------------------------------------------------------ */

void dtfm_crossover(const dtfm_problem *pr, const int *p1, const int *p2, int points,
                    gsl_rng *rng, int *child)
{
    int n = pr->n, way = pr->dpp;
    memcpy(child, p2, sizeof *child * (size_t)n);
    int k = points < n ? points : n;
    int *all = malloc(sizeof *all * (size_t)n), *pick = malloc(sizeof *pick * (size_t)(k + 1));
    int *size = calloc((size_t)way, sizeof *size);
    if (!all || !pick || !size) {
        free(all);
        free(pick);
        free(size);
        return; /* child = p2: still a valid, balanced partition */
    }
    for (int i = 0; i < n; i++)
        all[i] = i;
    gsl_ran_choose(rng, pick, (size_t)k, all, (size_t)n, sizeof *all);
    for (int i = 0; i < k; i++)
        child[pick[i]] = p1[pick[i]];
    for (int v = 0; v < n; v++)
        size[child[v]]++;
    /* repair as the code does: an over-full group hands its next device (in
     * device order) to the first group that is short */
    for (int v = 0; v < n; v++) {
        if (size[child[v]] <= pr->ddp)
            continue;
        int to = 0;
        while (to < way - 1 && size[to] >= pr->ddp)
            to++;
        size[to]++;
        size[child[v]]--;
        child[v] = to;
    }
    free(all);
    free(pick);
    free(size);
}

/* --- cyclic partitioning local search --------------------------------------- */

typedef struct ls_ws {
    int n, way;
    double *gain;      /* n x way: DT-FM's "gain" table */
    double *sum;       /* n x way: summed link cost from each vertex to each group */
    double *minown;    /* n: fastest link from each vertex into its own group */
    double *gij;       /* way x way: best move gain from group i to group j */
    double *gi;        /* way: best move gain out of group i */
    int *tv, *tp;      /* way: the vertex and target of that move */
    int *size;
    unsigned char *locked_v, *locked_p;
    int *states;       /* (way+1) x n: the partition after each cycle */
    double *sums;      /* way+1: gain of each cycle */
    int *mv, *mfrom;   /* moves of the current cycle: vertex, group it left */
    double *eps, *tau; /* gain of each move, gain of closing the cycle there */
} ls_ws;

static void ws_free(ls_ws *w)
{
    free(w->gain);
    free(w->sum);
    free(w->minown);
    free(w->gij);
    free(w->gi);
    free(w->tv);
    free(w->tp);
    free(w->size);
    free(w->locked_v);
    free(w->locked_p);
    free(w->states);
    free(w->sums);
    free(w->mv);
    free(w->mfrom);
    free(w->eps);
    free(w->tau);
}

static int ws_alloc(ls_ws *w, int n, int way)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    w->way = way;
    size_t N = (size_t)n, W = (size_t)way;
    w->gain = malloc(sizeof *w->gain * N * W);
    w->sum = malloc(sizeof *w->sum * N * W);
    w->minown = malloc(sizeof *w->minown * N);
    w->gij = malloc(sizeof *w->gij * W * W);
    w->gi = malloc(sizeof *w->gi * W);
    w->tv = malloc(sizeof *w->tv * W);
    w->tp = malloc(sizeof *w->tp * W);
    w->size = malloc(sizeof *w->size * W);
    w->locked_v = calloc(N, 1);
    w->locked_p = calloc(W, 1);
    w->states = malloc(sizeof *w->states * N * (W + 1));
    w->sums = calloc(W + 1, sizeof *w->sums);
    w->mv = malloc(sizeof *w->mv * (N + 1));
    w->mfrom = malloc(sizeof *w->mfrom * (N + 1));
    w->eps = malloc(sizeof *w->eps * (N + 1));
    w->tau = malloc(sizeof *w->tau * (N + 1));
    if (!w->gain || !w->sum || !w->minown || !w->gij || !w->gi || !w->tv || !w->tp ||
        !w->size || !w->locked_v || !w->locked_p || !w->states || !w->sums || !w->mv ||
        !w->mfrom || !w->eps || !w->tau) {
        ws_free(w);
        return -1;
    }
    return 0;
}

/* Fastest link from v into group q (its own group: v excluded). */
static double min_link(const dtfm_problem *pr, const int *cur, int v, int q)
{
    const double *c = pr->pp + (size_t)v * (size_t)pr->n;
    double m = INFINITY;
    for (int u = 0; u < pr->n; u++)
        if (u != v && cur[u] == q && c[u] < m)
            m = c[u];
    return m;
}

/* Group sizes, summed link costs and fastest own-group links from scratch:
 * O(n^2), once per cycle; moves then update them in O(n) (apply_move). */
static void init_sums(const dtfm_problem *pr, const int *cur, ls_ws *w)
{
    int n = w->n, way = w->way;
    memset(w->size, 0, sizeof *w->size * (size_t)way);
    for (int v = 0; v < n; v++)
        w->size[cur[v]]++;
    for (int v = 0; v < n; v++) {
        double *sv = w->sum + (size_t)v * (size_t)way;
        const double *c = pr->pp + (size_t)v * (size_t)n;
        double m = INFINITY;
        for (int q = 0; q < way; q++)
            sv[q] = 0;
        for (int u = 0; u < n; u++) {
            sv[cur[u]] += c[u];
            if (u != v && cur[u] == cur[v] && c[u] < m)
                m = c[u];
        }
        w->minown[v] = m;
    }
}

/* Vertex x has just moved from group `from` to `to` (cur already says so). */
static void apply_move(const dtfm_problem *pr, const int *cur, ls_ws *w, int x, int from, int to)
{
    int n = w->n, way = w->way;
    w->size[from]--;
    w->size[to]++;
    for (int v = 0; v < n; v++) {
        double c = pr->pp[(size_t)v * (size_t)n + (size_t)x];
        w->sum[(size_t)v * (size_t)way + (size_t)from] -= c;
        w->sum[(size_t)v * (size_t)way + (size_t)to] += c;
        if (v == x)
            continue;
        if (cur[v] == from && c <= w->minown[v])
            w->minown[v] = min_link(pr, cur, v, from); /* x may have been its fastest */
        else if (cur[v] == to && c < w->minown[v])
            w->minown[v] = c;
    }
    w->minown[x] = min_link(pr, cur, x, to);
}

/* gain[v][q] for every unlocked v. DT-FM: own group = the fastest link
 * inside it, another group = the average pipeline link to it (0 for an
 * empty group, as the code's accumulation gives); edge-cut: the sums. */
static void vertex_gains(dtfm_gain kind, const int *cur, ls_ws *w)
{
    int n = w->n, way = w->way;
    for (int v = 0; v < n; v++) {
        if (w->locked_v[v])
            continue;
        double *g = w->gain + (size_t)v * (size_t)way;
        const double *sv = w->sum + (size_t)v * (size_t)way;
        for (int q = 0; q < way; q++)
            g[q] = kind == DTFM_GAIN_EDGECUT ? sv[q] : w->size[q] ? sv[q] / w->size[q] : 0;
        if (kind == DTFM_GAIN_DTFM)
            g[cur[v]] = w->minown[v];
    }
}

static void consider_move(ls_ws *w, int v, int from, int to, double gv)
{
    size_t at = (size_t)from * (size_t)w->way + (size_t)to;
    if (gv > w->gij[at])
        w->gij[at] = gv;
    if (gv > w->gi[from]) {
        w->gi[from] = gv;
        w->tv[from] = v;
        w->tp[from] = to;
    }
}

/* Best move out of every group. DT-FM picks per group the unlocked vertex
 * with the fastest link inside it (the smallest own-group gain; first in
 * device order on ties, as the code's strict-min scan) and then that
 * vertex's best target; the edge-cut variant scans every move. */
static void group_moves(dtfm_gain kind, const int *cur, ls_ws *w)
{
    int n = w->n, way = w->way;
    for (int q = 0; q < way * way; q++)
        w->gij[q] = -INFINITY;
    for (int q = 0; q < way; q++) {
        w->gi[q] = -INFINITY;
        w->tv[q] = w->tp[q] = -1;
    }
    if (kind == DTFM_GAIN_EDGECUT) {
        for (int v = 0; v < n; v++) {
            if (w->locked_v[v])
                continue;
            const double *g = w->gain + (size_t)v * (size_t)way;
            for (int q = 0; q < way; q++)
                if (q != cur[v])
                    consider_move(w, v, cur[v], q, g[q] - g[cur[v]]);
        }
        return;
    }
    int pick[way];
    double low[way];
    for (int q = 0; q < way; q++) {
        pick[q] = -1;
        low[q] = INFINITY;
    }
    for (int v = 0; v < n; v++)
        if (!w->locked_v[v] && w->gain[(size_t)v * (size_t)way + (size_t)cur[v]] < low[cur[v]]) {
            low[cur[v]] = w->gain[(size_t)v * (size_t)way + (size_t)cur[v]];
            pick[cur[v]] = v;
        }
    for (int p = 0; p < way; p++) {
        if (pick[p] < 0)
            continue;
        const double *g = w->gain + (size_t)pick[p] * (size_t)way;
        for (int q = 0; q < way; q++)
            if (q != p)
                consider_move(w, pick[p], p, q, g[q] - g[p]);
    }
}

static void gains(dtfm_gain kind, const int *cur, ls_ws *w)
{
    vertex_gains(kind, cur, w);
    group_moves(kind, cur, w);
}

static int argmax(const double *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

/* One cycle: move a vertex out of S0, then one out of the group it entered,
 * ... until a move lands in S0; keep the most profitable prefix and close it
 * back to S0 so that every group keeps its size. Returns the cycle's gain,
 * or -INFINITY when no vertex can move. */
static double one_cycle(const dtfm_problem *pr, dtfm_gain kind, int *cur, ls_ws *w)
{
    init_sums(pr, cur, w);
    gains(kind, cur, w);
    int s0 = argmax(w->gi, w->way);
    if (!(w->gi[s0] > -INFINITY))
        return -INFINITY;
    int si = s0, nm = 0;
    for (int step = 0; step < w->n; step++) {
        int v = w->tv[si], to = w->tp[si];
        if (v < 0 || to < 0) { /* nothing movable here: send the newcomer on to S0 */
            if (!nm)
                break;
            v = w->mv[nm - 1];
            to = s0;
        }
        w->mv[nm] = v;
        w->mfrom[nm] = si;
        w->eps[nm] = w->gi[si];
        w->tau[nm] = w->gij[(size_t)si * (size_t)w->way + (size_t)s0];
        nm++;
        cur[v] = to;
        w->locked_v[v] = 1;
        w->locked_p[to] = 1;
        si = to;
        if (si == s0)
            break;
        apply_move(pr, cur, w, v, w->mfrom[nm - 1], to);
        gains(kind, cur, w);
    }
    if (!nm)
        return -INFINITY;
    double best = 0, acc = 0;
    int l = 0;
    for (int i = 1; i < nm; i++) {
        acc += w->eps[i - 1];
        if (acc + w->tau[i] > best) {
            best = acc + w->tau[i];
            l = i;
        }
    }
    for (int i = nm - 1; i > l; i--)
        cur[w->mv[i]] = w->mfrom[i];
    cur[w->mv[l]] = s0;
    return best;
}

int dtfm_local_search(dtfm_problem *pr, dtfm_gain kind, int *part)
{
    ls_ws w;
    if (ws_alloc(&w, pr->n, pr->dpp))
        return -1;
    size_t n = (size_t)pr->n;
    memcpy(w.states, part, sizeof *part * n);
    int cycles = 0;
    for (int c = 0; c < pr->dpp; c++) {
        int *cur = w.states + (size_t)(c + 1) * n;
        memcpy(cur, w.states + (size_t)c * n, sizeof *cur * n);
        double g = one_cycle(pr, kind, cur, &w);
        if (!(g > -INFINITY))
            break;
        w.sums[++cycles] = g;
        int all = 1;
        for (int q = 0; q < pr->dpp; q++)
            all &= w.locked_p[q];
        if (all)
            break;
    }
    double best = 0, acc = 0;
    int m = 0;
    for (int k = 1; k <= cycles; k++) {
        acc += w.sums[k];
        if (acc > best) {
            best = acc;
            m = k;
        }
    }
    memcpy(part, w.states + (size_t)m * n, sizeof *part * n);
    ws_free(&w);
    return 0;
}

/* --- the genetic algorithm -------------------------------------------------- */

static void random_partition(const dtfm_problem *pr, gsl_rng *rng, int *perm, int *part)
{
    for (int i = 0; i < pr->n; i++)
        perm[i] = i;
    gsl_ran_shuffle(rng, perm, (size_t)pr->n, sizeof *perm);
    for (int i = 0; i < pr->n; i++)
        part[perm[i]] = i / pr->ddp;
}

typedef struct ga_state {
    int *pop;       /* population x n */
    double *score;
    int *child, *perm;
} ga_state;

static void ga_free(ga_state *s)
{
    free(s->pop);
    free(s->score);
    free(s->child);
    free(s->perm);
}

static int ga_alloc(ga_state *s, int pop, int n)
{
    s->pop = malloc(sizeof *s->pop * (size_t)pop * (size_t)n);
    s->score = malloc(sizeof *s->score * (size_t)pop);
    s->child = malloc(sizeof *s->child * (size_t)n);
    s->perm = malloc(sizeof *s->perm * (size_t)n);
    if (!s->pop || !s->score || !s->child || !s->perm) {
        ga_free(s);
        return -1;
    }
    return 0;
}

/* The steady-state step: the offspring replaces the worse parent unless it
 * is worse than both. */
static void replace(ga_state *s, int n, int p1, int p2, double score)
{
    double hi = s->score[p1] > s->score[p2] ? s->score[p1] : s->score[p2];
    if (score > hi)
        return;
    int worse = s->score[p1] > s->score[p2] ? p1 : p2;
    memcpy(s->pop + (size_t)worse * (size_t)n, s->child, sizeof *s->child * (size_t)n);
    s->score[worse] = score;
}

int dtfm_ga(dtfm_problem *pr, const dtfm_ga_opts *g, uint64_t seed, int *best,
            dtfm_ga_result *res, gt_err *e)
{
    int n = pr->n, P = g->population > 0 ? g->population : 1;
    ga_state s;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng || ga_alloc(&s, P, n)) {
        if (rng)
            gsl_rng_free(rng);
        return gt_fail(e, "out of memory (DT-FM population)");
    }
    gsl_rng_set(rng, (unsigned long)seed);
    memset(res, 0, sizeof *res);
    double best_cost = INFINITY;
    for (int i = 0; i < P; i++) {
        if (i > 0 && g->stop && bl_out_of_time(g->stop, g->t0)) {
            P = i; /* out of time while seeding: search what there is */
            break;
        }
        int *ind = s.pop + (size_t)i * (size_t)n;
        random_partition(pr, rng, s.perm, ind);
        s.score[i] = dtfm_total_cost(pr, ind, NULL, NULL);
        res->evaluations++;
        if (s.score[i] < best_cost) {
            best_cost = s.score[i];
            memcpy(best, ind, sizeof *best * (size_t)n);
        }
    }
    res->first_cost = best_cost;
    int rc = 0;
    for (int tr = 0; tr < g->trials; tr++) {
        if (g->stop && bl_out_of_time(g->stop, g->t0))
            break;
        int p1 = (int)gsl_rng_uniform_int(rng, (unsigned long)P);
        int p2 = (int)gsl_rng_uniform_int(rng, (unsigned long)P);
        dtfm_crossover(pr, s.pop + (size_t)p1 * (size_t)n, s.pop + (size_t)p2 * (size_t)n,
                       g->crossover_points, rng, s.child);
        if (dtfm_local_search(pr, g->gain, s.child)) {
            rc = gt_fail(e, "out of memory (DT-FM local search)");
            break;
        }
        double c = dtfm_total_cost(pr, s.child, NULL, NULL);
        res->evaluations++;
        res->trials_done++;
        replace(&s, n, p1, p2, c);
        if (c < best_cost) {
            best_cost = c;
            memcpy(best, s.child, sizeof *best * (size_t)n);
        }
    }
    res->cost = dtfm_total_cost(pr, best, &res->data_cost, &res->pipe_cost);
    ga_free(&s);
    gsl_rng_free(rng);
    return rc;
}

/* --- shape and volumes --------------------------------------------------- */

void dtfm_volumes(const job *j, int dpp, int ddp, double *c_pp, double *c_dp)
{
    int total = j->batch / j->microbatch;
    int per_pipe = (total + ddp - 1) / ddp;
    *c_pp = cost_activation_bytes(j, j->microbatch) * per_pipe;
    *c_dp = dp_grad_bytes(j, 0, j->model.layers - 1, 1) / dpp;
}

/* Largest memory any uniform GPipe stage needs for shape dpp x ddp. */
static double shape_memory(const job *j, int dpp, int ddp)
{
    int total = j->batch / j->microbatch, m = (total + ddp - 1) / ddp;
    double worst = 0;
    for (int k = 0; k < dpp; k++) {
        int f, l;
        bl_even_cut(j->model.layers, dpp, k, &f, &l);
        double need = cost_stage_memory(j, j->microbatch, f, l, 1, m);
        worst = need > worst ? need : worst;
    }
    return worst;
}

/* Lexicographic preference of a shape (larger is better). */
static void shape_score(const job *j, int dpp, int ddp, bool fits, double *score)
{
    int total = j->batch / j->microbatch;
    score[0] = fits;
    score[1] = total % ddp == 0;
    score[2] = j->model.layers % dpp == 0;
    score[3] = -fabs(log((double)dpp / ddp));
    score[4] = dpp;
}

static bool better(const double *a, const double *b)
{
    for (int i = 0; i < 5; i++)
        if (fabs(a[i] - b[i]) > 1e-12)
            return a[i] > b[i];
    return false;
}

int dtfm_choose_shape(const topology *t, const job *j, int *dpp, int *ddp, gt_err *e)
{
    int N = t->ngpus, L = j->model.layers, total = j->batch / j->microbatch;
    double minmem = INFINITY;
    int small = 0;
    for (int g = 0; g < N; g++)
        if (topo_gpu_type(t, g)->mem_bytes < minmem) {
            minmem = topo_gpu_type(t, g)->mem_bytes;
            small = g;
        }
    double best[5] = {-1, 0, 0, -INFINITY, 0}, closest = INFINITY;
    int cl_pp = 0;
    *dpp = *ddp = 0;
    for (int pp = 1; pp <= N && pp <= L; pp++) {
        if (N % pp || N / pp > total)
            continue;
        double need = shape_memory(j, pp, N / pp), sc[5];
        shape_score(j, pp, N / pp, need <= minmem, sc);
        if (better(sc, best)) {
            memcpy(best, sc, sizeof best);
            *dpp = pp;
            *ddp = N / pp;
        }
        if (need < closest) {
            closest = need;
            cl_pp = pp;
        }
    }
    if (!*dpp)
        return gt_fail(e, "no D_PP x D_DP grid of all %d GPUs (D_PP <= %d layers, D_DP "
                          "<= %d microbatches)", N, L, total);
    if (!best[0])
        return gt_fail(e, "no D_PP x D_DP grid of all %d GPUs fits memory with uniform "
                          "layers under GPipe; closest D_PP %d x D_DP %d needs %.2f GiB per GPU "
                          "(%d microbatches in flight), the smallest GPU (%s) has %.2f GiB",
                       N, cl_pp, N / cl_pp, closest / GIB, (total + N / cl_pp - 1) / (N / cl_pp),
                       topo_gpu_type(t, small)->id, minmem / GIB);
    return 0;
}

/* --- DT-FM's cost of any grid plan ------------------------------------------- */

int dtfm_plan_cost(const topology *t, const job *j, const plan *p, double *cost, gt_err *e)
{
    int D = p->npipes, S = p->pipes[0].nstages, mmax = 0;
    for (int r = 0; r < D; r++) {
        if (p->pipes[r].nstages != S)
            return gt_fail(e, "pipelines differ in stage count");
        for (int s = 0; s < S; s++)
            if (p->pipes[r].stages[s].ngpus != 1)
                return gt_fail(e, "tensor-parallel stages");
        mmax = p->pipes[r].microbatches > mmax ? p->pipes[r].microbatches : mmax;
    }
    int *gpus = malloc(sizeof *gpus * (size_t)D * (size_t)S);
    int *pipes = malloc(sizeof *pipes * (size_t)D * (size_t)S);
    if (!gpus || !pipes) {
        free(gpus);
        free(pipes);
        return gt_fail(e, "out of memory");
    }
    for (int r = 0; r < D; r++)
        for (int s = 0; s < S; s++) {
            gpus[r * S + s] = p->pipes[r].stages[s].gpus[0];
            pipes[r * S + s] = r * S + s;
        }
    double c_pp = cost_activation_bytes(j, p->microbatch_size) * mmax;
    double c_dp = dp_grad_bytes(j, 0, j->model.layers - 1, 1) / S;
    dtfm_problem pr;
    int rc = dtfm_problem_init(&pr, t, gpus, S, D, c_pp, c_dp, e);
    if (!rc) {
        *cost = dtfm_chain_cost(&pr, pipes, NULL, NULL);
        dtfm_problem_free(&pr);
    }
    free(gpus);
    free(pipes);
    return rc;
}

/* --- the planner ------------------------------------------------------------ */

/* Decode the best partition into a plan: D_DP pipelines of D_PP stages. */
static int build_plan(dtfm_problem *pr, const job *j, const char *name, const int *part,
                      plan *out, gt_err *e)
{
    size_t n = (size_t)pr->n;
    int *pipes = malloc(sizeof *pipes * n), *gpus = malloc(sizeof *gpus * n);
    int rc = 0;
    if (!pipes || !gpus)
        rc = gt_fail(e, "out of memory");
    else if (dtfm_decode(pr, part, pipes))
        rc = gt_fail(e, "%s: the best partition is not balanced (internal error)", name);
    else {
        for (size_t i = 0; i < n; i++)
            gpus[i] = pr->gpu[pipes[i]];
        rc = bl_uniform_plan(out, name, j, pr->ddp, pr->dpp, 1, gpus, SCHED_GPIPE, SYNC_PS, e);
    }
    free(pipes);
    free(gpus);
    return rc;
}

static int run_dtfm(const topology *t, const job *j, const planner_opts *o, plan *out,
                    planner_stats *st, gt_err *e, dtfm_gain gain, const char *name)
{
    double t0 = bl_now();
    int dpp, ddp;
    if (dtfm_choose_shape(t, j, &dpp, &ddp, e))
        return gt_prefix(e, "%s", name);
    int *gpus = malloc(sizeof *gpus * (size_t)t->ngpus);
    int *best = malloc(sizeof *best * (size_t)t->ngpus);
    if (!gpus || !best) {
        free(gpus);
        free(best);
        return gt_fail(e, "out of memory");
    }
    for (int g = 0; g < t->ngpus; g++)
        gpus[g] = g;
    double c_pp, c_dp;
    dtfm_volumes(j, dpp, ddp, &c_pp, &c_dp);
    dtfm_problem pr;
    dtfm_ga_opts g;
    dtfm_ga_defaults(&g);
    g.gain = gain;
    if (o->generations > 0)
        g.trials = o->generations;
    g.stop = o;
    g.t0 = t0;
    dtfm_ga_result res;
    int rc = dtfm_problem_init(&pr, t, gpus, dpp, ddp, c_pp, c_dp, e);
    if (!rc) {
        rc = dtfm_ga(&pr, &g, o->seed, best, &res, e);
        if (!rc)
            rc = build_plan(&pr, j, name, best, out, e);
        dtfm_problem_free(&pr);
    }
    free(gpus);
    free(best);
    if (rc)
        return -1;
    bl_eval ev;
    if (bl_estimate(t, j, out, &ev, e)) {
        plan_free(out);
        return gt_prefix(e, "%s: the decoded %d x %d plan", name, dpp, ddp);
    }
    snprintf(out->objective, sizeof out->objective, "%s",
             o->objective && *o->objective ? o->objective : "time");
    if (st) {
        memset(st, 0, sizeof *st);
        if (bl_objective(o->objective, &ev, &st->objective_value, NULL))
            st->objective_value = ev.iteration_s;
        st->evaluations = res.evaluations;
        st->plan_time_s = bl_now() - t0;
        snprintf(st->note, sizeof st->note,
                 "DT-FM cost %.4g s = DataP %.4g + 2 x PipelineP %.4g (D_PP %d x D_DP %d, "
                 "c_pp %.3g GB, c_dp %.3g GB, %d trials, best initial %.4g s)",
                 res.cost, res.data_cost, res.pipe_cost, dpp, ddp, c_pp / 1e9, c_dp / 1e9,
                 res.trials_done, res.first_cost);
    }
    return 0;
}

static int dtfm_once(const topology *t, const job *j, const planner_opts *o, plan *out,
                     planner_stats *st, gt_err *e)
{
    return run_dtfm(t, j, o, out, st, e, DTFM_GAIN_DTFM, "dtfm");
}

static int dtfm_hybrid_once(const topology *t, const job *j, const planner_opts *o, plan *out,
                            planner_stats *st, gt_err *e)
{
    return run_dtfm(t, j, o, out, st, e, DTFM_GAIN_EDGECUT, "dtfm-hybrid");
}

/* DT-FM runs GPipe, whose paper makes re-materialization part of the
 * method (Huang et al., "GPipe", NeurIPS 2019, section 2.3), and takes the
 * microbatch size as a setting; its optimizer is not configurable. The GCMA
 * search and the native cost are unchanged: they run on the job as fitted. */
static const bl_fit_opts DTFM_FIT = {"DT-FM/GPipe", true, true, false};

int planner_dtfm(const topology *t, const job *j, const planner_opts *o, plan *out,
                 planner_stats *st, gt_err *e)
{
    return bl_fit(dtfm_once, &DTFM_FIT, t, j, o, out, st, e);
}

int planner_dtfm_hybrid(const topology *t, const job *j, const planner_opts *o, plan *out,
                        planner_stats *st, gt_err *e)
{
    return bl_fit(dtfm_hybrid_once, &DTFM_FIT, t, j, o, out, st, e);
}
