/* exact_sync.c — the exact referee's bound from data-parallel sync
 * (exact_space.h): per GPU pair the path's latency, rate and activation
 * transfer (tables, so that generating placements does not walk the
 * topology), and a lower bound of the iteration that every plan of a
 * placement with two or more pipelines pays for its gradient sync.
 *
 * Why it holds (sim/models/syncgroup.c, sim/models/collective.c, sim/estimator/estimator.c): the
 * planners' plans sync unsharded, after the backward (enc_to_plan leaves
 * dp_shard and grad_sync at their defaults). A sync group is a run of
 * layers held by the same D GPUs, one per pipeline; its collective starts
 * once all members' last backward op has ended, and the iteration ends
 * after it. Every kind the search tries runs at least two steps, each
 * holding a flow of at least bytes / D between two members (so two GPUs of
 * different pipelines), and a step lasts as long as its slowest flow:
 *   ring: 2(D-1) steps, each member sends bytes/D to the next;
 *   hierarchical: over one site the same ring; over several, a ring of the
 *     site leaders (2(n_sites-1) steps of bytes/n_sites) among others;
 *   parameter server: two rounds, every member sends bytes/D to every other.
 * A ring's members are ordered by site, then GPU, so when they span several
 * sites (nodes) some edge of the ring crosses a site (node); a parameter
 * server's rounds hold every pair; hierarchical's leader ring crosses sites.
 * So when no site (node) holds a GPU of every row, every group spans
 * several, and a group of B bytes takes at least 2 (lat + B / (D rate)),
 * lat the least latency and rate the highest rate between GPUs of two
 * different rows and sites (nodes); otherwise the same over any two GPUs of
 * different rows (whole ns per term, so 1 ns less per term). The group holding layer
 * 0 (its embedding included) starts after stage 0's last backward, which
 * is the last op of its pipeline (both schedules end every stage on the
 * last microbatch's backward, fed by the next stage's): the caller's bound
 * of the rows (round trip, throughput, FLOPs) holds for it. Some group holds at least the model's gradients over the most
 * groups a placement can have (D(S-1)+1 runs of layers, at most L), and at
 * least the last layer's (the head's gradients included).
 * Tensor-parallel views are left out (their groups run over the real GPUs,
 * not the view's units): the bound is 0 there. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "exact_space.h"
#include "sim/models/path.h"
#include "sim/models/cost.h"
#include "sim/models/dp_sync.h"
#include "tp_view.h"

#define EXACT_TABLE_GPUS 512   /* larger pools are refused long before (count vectors) */

static int gpair_init(exact_space *sp);

int64_t exact_xfer_ns(const exact_space *sp, int bi, int a, int b)
{
    int N = sp->pr->N;
    if (!sp->xns)
        return enc_xfer_ns(sp->pr, bi, a, b);
    return sp->xns[((long)bi * N + a) * N + b];
}

int exact_sync_init(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    const job *j = pr->j;
    int N = pr->N, L = pr->L;
    sp->grad_total = 0;
    sp->layer_grad = malloc(sizeof *sp->layer_grad * (size_t)L);
    if (!sp->layer_grad)
        return -1;
    for (int x = 0; x < L; x++) { /* per layer, as the sync groups add them up */
        sp->layer_grad[x] = dp_grad_bytes(j, x, x, 1);
        sp->grad_total += sp->layer_grad[x];
    }
    sp->grad_first = dp_grad_bytes(j, 0, 0, 1);
    /* per site the least round trip (smallest microbatch) out of it and
     * into it, per node class into it (partial rows, exact_space.c) */
    int ns = pr->t->nsites;
    sp->leave_s = malloc(sizeof *sp->leave_s * (size_t)(2 * ns + pr->nclass));
    if (!sp->leave_s)
        return -1;
    sp->enter_s = sp->leave_s + ns;
    sp->enter_n = sp->enter_s + ns;
    for (int x = 0; x < 2 * ns + pr->nclass; x++)
        sp->leave_s[x] = INFINITY; /* a lone site (node): never left nor entered */
    for (int c = 0; c < pr->nclass; c++)
        for (int b = pr->class_first[c]; b < pr->class_first[c] + pr->class_size[c]; b++)
            for (int a = 0; a < N; a++) {
                if (pr->t->gpus[a].node == pr->t->gpus[b].node)
                    continue;
                double x = 1e-9 * (double)(enc_xfer_ns(pr, 0, a, b) + enc_xfer_ns(pr, 0, b, a));
                int sa = pr->t->gpus[a].site, sb = pr->t->gpus[b].site;
                sp->enter_n[c] = fmin(sp->enter_n[c], x);
                if (sa != sb) {
                    sp->leave_s[sa] = fmin(sp->leave_s[sa], x);
                    sp->enter_s[sb] = fmin(sp->enter_s[sb], x);
                }
            }
    if (N > EXACT_TABLE_GPUS)
        return 0;
    long nn = (long)N * N;
    sp->lat = malloc(sizeof *sp->lat * (size_t)nn);
    sp->rate = malloc(sizeof *sp->rate * (size_t)nn);
    sp->xns = malloc(sizeof *sp->xns * (size_t)(nn * pr->nb));
    if (!sp->lat || !sp->rate || !sp->xns)
        return -1;
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            if (a == b) {
                sp->lat[a * N + b] = INFINITY;
                sp->rate[a * N + b] = 0;
            } else {
                path_lone(pr->t, a, b, &sp->lat[a * N + b], &sp->rate[a * N + b]);
            }
            for (int bi = 0; bi < pr->nb; bi++)
                sp->xns[((long)bi * N + a) * N + b] = a == b ? 0 : enc_xfer_ns(pr, bi, a, b);
        }
    return gpair_init(sp);
}

/* One group of B bytes over D members whose pairs have latency >= lat and
 * rate <= rate: two steps of a flow of B / D at least. */
static double group_s(double B, int D, double lat, double rate)
{
    double step = lat + B / D / rate - 2e-9; /* each term rounded to whole ns */
    return step > 0 ? 2 * step : 0;
}

/* The bound from the groups' bytes, for members whose pairs have latency
 * >= lat and rate <= rate. */
static double groups_s(const exact_space *sp, int S, int D, double lat, double rate,
                       double ready)
{
    const enc_problem *pr = sp->pr;
    if (!(rate > 0) || !isfinite(lat))
        return 0;
    int groups = D * (S - 1) + 1;
    groups = groups < pr->L ? groups : pr->L;
    double last = dp_grad_bytes(pr->j, pr->L - 1, pr->L - 1, 1);
    double big = fmax(sp->grad_total / groups, S == 1 ? sp->grad_total : last);
    double first = S == 1 ? sp->grad_total : sp->grad_first;
    double T = fmax(group_s(big, D, lat, rate), ready + group_s(first, D, lat, rate));
    return T * (1 - 1e-9);
}

/* Whether a site (node) that holds a GPU of every one of the `rows` full
 * rows has `need` GPUs left to give the others (left[g] per group; room[c]
 * free GPUs per node class; both unused when need is 0). */
static bool place_can_span(const exact_space *sp, int S, int rows, const int *gpus,
                           const int *left, const int *room, int need, bool by_node)
{
    const enc_problem *pr = sp->pr;
    const topology *t = pr->t;
    for (int x = 0; x < S; x++) {
        const topo_gpu *g0 = &t->gpus[gpus[x]];
        bool every = true;
        for (int r = 1; r < rows && every; r++) {
            bool in = false;
            for (int k = 0; k < S && !in; k++) {
                const topo_gpu *g = &t->gpus[gpus[r * S + k]];
                in = by_node ? g->node == g0->node : g->site == g0->site;
            }
            every = in;
        }
        if (!every)
            continue;
        if (need == 0)
            return true;
        int have = 0;
        for (int g = 0; g < sp->ngroup; g++)
            for (int i = 0; i < sp->gcount[g]; i++) {
                int c = sp->gnode[sp->gfirst[g] + i], gpu = pr->class_first[c];
                if (by_node ? t->gpus[gpu].node == g0->node : t->gpus[gpu].site == g0->site)
                    have += room[c] < left[g] ? room[c] : left[g];
            }
        if (have >= need)
            return true;
    }
    return false;
}

/* Least latency and highest rate between cells [0, n) of different rows at
 * `level` (0 any, 1 other nodes, 2 other sites). */
static void cross_rows(const exact_space *sp, int S, int n, const int *gpus, int level,
                       double *lat, double *rate)
{
    const topology *t = sp->pr->t;
    int N = sp->pr->N;
    for (int x = 0; x < n; x++)
        for (int y = 0; y < n; y++) {
            const topo_gpu *a = &t->gpus[gpus[x]], *b = &t->gpus[gpus[y]];
            if (x / S == y / S || (level >= 1 && a->node == b->node) ||
                (level == 2 && a->site == b->site))
                continue;
            long k = (long)gpus[x] * N + gpus[y];
            *lat = exact_min(*lat, sp->lat[k]);
            *rate = exact_max(*rate, sp->rate[k]);
        }
}

void exact_cross_row(const exact_space *sp, int S, int r, const int *gpus, double *lat3,
                     double *rate3)
{
    const topology *t = sp->pr->t;
    int N = sp->pr->N;
    if (!sp->lat)
        return;
    for (int x = r * S; x < (r + 1) * S; x++)
        for (int y = 0; y < r * S; y++) {
            const topo_gpu *a = &t->gpus[gpus[x]], *b = &t->gpus[gpus[y]];
            long k1 = (long)gpus[x] * N + gpus[y], k2 = (long)gpus[y] * N + gpus[x];
            double lat = exact_min(sp->lat[k1], sp->lat[k2]);
            double rate = exact_max(sp->rate[k1], sp->rate[k2]);
            int top = a->site != b->site ? 2 : a->node != b->node ? 1 : 0;
            for (int l = 0; l <= top; l++) {
                lat3[l] = exact_min(lat3[l], lat);
                rate3[l] = exact_max(rate3[l], rate);
            }
        }
}

double exact_sync_bound(const exact_space *sp, int S, int D, const int *gpus, double ready)
{
    return exact_sync_bound_x(sp, S, D, gpus, ready, NULL, NULL);
}

double exact_sync_bound_x(const exact_space *sp, int S, int D, const int *gpus, double ready,
                          const double *lat3, const double *rate3)
{
    const enc_problem *pr = sp->pr;
    if (D < 2 || pr->cfg.tp || !sp->lat)
        return 0;
    /* the coarsest level every group's members must span: several sites
     * when no site holds a GPU of every row, several nodes when no node
     * does; a step of any kind then holds a flow across that level */
    int level = place_can_span(sp, S, D, gpus, NULL, NULL, 0, false)
                    ? place_can_span(sp, S, D, gpus, NULL, NULL, 0, true) ? 0 : 1
                    : 2;
    double lat = INFINITY, rate = 0;
    if (lat3) {
        lat = lat3[level];
        rate = rate3[level];
    } else {
        cross_rows(sp, S, S * D, gpus, level, &lat, &rate);
    }
    return groups_s(sp, S, D, lat, rate, ready);
}

/* A node of group g: its k-th GPU (k < its size) of node i of the group. */
static int group_gpu(const exact_space *sp, int g, int i, int k)
{
    return sp->pr->class_first[sp->gnode[sp->gfirst[g] + i]] + k;
}

/* Least latency and highest rate over the pairs at `level` (0 any, 1
 * other nodes, 2 other sites) between a GPU the placement holds in the end
 * (all[g] per group) and one still to be placed (fut[g]): pairs of groups
 * (other nodes), two nodes of one group, or two GPUs of one node; per pair
 * of groups from the table gpair_init made. */
static void group_pairs(const exact_space *sp, const int *all, const int *fut, int level,
                        double *lat, double *rate)
{
    int G = sp->ngroup;
    const double *gl = sp->glat + (long)level * G * G, *gr = sp->grate + (long)level * G * G;
    for (int g = 0; g < G; g++) {
        if (!all[g])
            continue;
        for (int h = 0; h < G; h++) {
            if (!fut[h] || (g == h && all[g] < 2))
                continue;
            *lat = exact_min(*lat, gl[g * G + h]);
            *rate = exact_max(*rate, gr[g * G + h]);
        }
    }
}

void exact_group_pairs(const exact_space *sp, int g, int h, int level, int pairs[2][2])
{
    const enc_problem *pr = sp->pr;
    const topology *t = pr->t;
    int a = group_gpu(sp, g, 0, 0);
    pairs[0][0] = pairs[0][1] = pairs[1][0] = pairs[1][1] = -1;
    if (g != h) {
        pairs[0][0] = a;
        pairs[0][1] = group_gpu(sp, h, 0, 0);
    } else {
        if (sp->gcount[g] > 1) {
            pairs[0][0] = a;
            pairs[0][1] = group_gpu(sp, g, 1, 0);
        }
        if (pr->class_size[sp->gnode[sp->gfirst[g]]] > 1) {
            pairs[1][0] = a;
            pairs[1][1] = group_gpu(sp, g, 0, 1);
        }
    }
    for (int q = 0; q < 2; q++) { /* not at that level: no pair */
        int x = pairs[q][0], y = pairs[q][1];
        if (x >= 0 && ((level >= 1 && t->gpus[x].node == t->gpus[y].node) ||
                       (level == 2 && t->gpus[x].site == t->gpus[y].site)))
            pairs[q][0] = pairs[q][1] = -1;
    }
}

/* Per level and pair of groups (g, h), the least latency and highest rate
 * (both directions) of the pairs group_pairs considers: a GPU of each
 * group's first node when g != h; when g == h two nodes of the group, or
 * two GPUs of one node (identical nodes: one pair stands for them all). */
static int gpair_init(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    int G = sp->ngroup, N = pr->N;
    sp->glat = malloc(sizeof *sp->glat * (size_t)(3 * G * G));
    sp->grate = malloc(sizeof *sp->grate * (size_t)(3 * G * G));
    if (!sp->glat || !sp->grate)
        return -1;
    for (int level = 0; level < 3; level++)
        for (int g = 0; g < G; g++)
            for (int h = 0; h < G; h++) {
                double lat = INFINITY, rate = 0;
                int pairs[2][2];
                exact_group_pairs(sp, g, h, level, pairs);
                for (int q = 0; q < 2; q++) {
                    int x = pairs[q][0], y = pairs[q][1];
                    if (x < 0)
                        continue;
                    lat = fmin(lat, fmin(sp->lat[(long)x * N + y], sp->lat[(long)y * N + x]));
                    rate = fmax(rate, fmax(sp->rate[(long)x * N + y], sp->rate[(long)y * N + x]));
                }
                sp->glat[(long)level * G * G + g * G + h] = lat;
                sp->grate[(long)level * G * G + g * G + h] = rate;
            }
    return 0;
}

double exact_sel_sync_bound(const exact_space *sp, int S, int D, const int *cnt, double ready)
{
    const enc_problem *pr = sp->pr;
    if (D < 2 || pr->cfg.tp || !sp->lat)
        return 0;
    const topology *t = pr->t;
    int G = sp->ngroup;
    /* the level, as for a placement: a site (node) can hold a GPU of every
     * row only if it holds D of the selected GPUs */
    bool site_all = false, node_all = false;
    for (int g = 0; g < G; g++) {
        int size = pr->class_size[sp->gnode[sp->gfirst[g]]];
        node_all |= (cnt[g] < size ? cnt[g] : size) >= D;
        int at_site = 0, site = t->gpus[group_gpu(sp, g, 0, 0)].site;
        for (int h = 0; h < G; h++)
            at_site += t->gpus[group_gpu(sp, h, 0, 0)].site == site ? cnt[h] : 0;
        site_all |= at_site >= D;
    }
    return exact_sel_sync_level(sp, S, D, cnt, site_all ? node_all ? 0 : 1 : 2, ready);
}

double exact_sel_sync_level(const exact_space *sp, int S, int D, const int *cnt, int level,
                            double ready)
{
    if (D < 2 || sp->pr->cfg.tp || !sp->lat)
        return 0;
    double lat = INFINITY, rate = 0;
    group_pairs(sp, cnt, cnt, level, &lat, &rate);
    return groups_s(sp, S, D, lat, rate, ready);
}

double exact_partial_sync_bound(const exact_space *sp, int S, int D, int rows, const int *gpus,
                                const int *cnt, const int *left, const int *room, double ready)
{
    return exact_partial_sync_bound_x(sp, S, D, rows, gpus, cnt, left, room, ready, NULL, NULL);
}

double exact_partial_sync_bound_x(const exact_space *sp, int S, int D, int rows,
                                  const int *gpus, const int *cnt, const int *left,
                                  const int *room, double ready, const double *lat3,
                                  const double *rate3)
{
    const enc_problem *pr = sp->pr;
    if (D < 2 || rows < 1 || pr->cfg.tp || !sp->lat)
        return 0;
    int need = D - rows;
    int level = place_can_span(sp, S, rows, gpus, left, room, need, false)
                    ? place_can_span(sp, S, rows, gpus, left, room, need, true) ? 0 : 1
                    : 2;
    double lat = INFINITY, rate = 0;
    group_pairs(sp, cnt, left, level, &lat, &rate);
    if (lat3) { /* the placed GPUs */
        lat = exact_min(lat, lat3[level]);
        rate = exact_max(rate, rate3[level]);
    } else {
        cross_rows(sp, S, S * rows, gpus, level, &lat, &rate);
    }
    return groups_s(sp, S, D, lat, rate, ready);
}
