/* dtfm_search.c — DT-FM's search (dtfm.h): the hybrid genetic algorithm of
 * its scheduler (github.com/DS3Lab/DT-FM, commit 69f05e50,
 * scheduler/heuristic_evolutionary_solver/scheduler.py, function GCMA) over
 * balanced partitions of the devices into stage groups, on the cost of
 * dtfm_cost.c. The planner around it is dtfm.c.
 *
 * The algorithm: 100 random permutations, 4,900 steady-state trials
 * (planner_opts.generations overrides), each a five-point crossover of two
 * random parents with balance repair, one pass of cyclic partitioning local
 * search, and replacement of the worse parent unless the offspring is worse
 * than both. Two deliberate departures from
 * the code, both fixing evident slips: the replacement test is the intended
 * "worse than both parents" (the code compares with max(score, bool)), and
 * the local search may keep the result of its last cycle (the code's prefix
 * loop stops one short). Variant `dtfm-hybrid` swaps DT-FM's gain for the
 * classic edge-cut gain. */
#include "dtfm.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

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
