/* dtfm_cost.c — DT-FM's native, communication-only cost model (Yuan et al.,
 * NeurIPS 2022, Eq. 2-4; scheduler.py of github.com/DS3Lab/DT-FM):
 * DataPCost, the bottleneck perfect matching between two stage groups, the
 * open-loop TSP path over the groups, and the decoding of a partition into
 * pipelines. Units: seconds and bytes/s (the code's ms, GB and Gbps scaled).
 *
 * What it ignores, as the paper does: compute time, memory, pipeline
 * bubbles, contention between transfers, and which stage holds the embedding
 * and the head (all stages are alike). */
#include "dtfm.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim/inputs/topology.h"
#include "sim/models/path.h"

static int alloc_scratch(dtfm_problem *pr, gt_err *e)
{
    size_t n = (size_t)pr->n, w = (size_t)pr->dpp, k = (size_t)pr->ddp;
    pr->pp = calloc(n * n, sizeof *pr->pp);
    pr->dp = calloc(n * n, sizeof *pr->dp);
    pr->w_group = calloc(w * w, sizeof *pr->w_group);
    pr->members = calloc(w * k, sizeof *pr->members);
    pr->edges = calloc(k * k, sizeof *pr->edges);
    pr->mt = calloc(k, sizeof *pr->mt);
    pr->ml = calloc(k, sizeof *pr->ml);
    pr->mt_lo = calloc(k, sizeof *pr->mt_lo);
    pr->ml_lo = calloc(k, sizeof *pr->ml_lo);
    pr->seen = calloc(k, sizeof *pr->seen);
    if (pr->dpp <= DTFM_EXACT_PATH) {
        pr->hk = calloc(((size_t)1 << w) * w, sizeof *pr->hk);
        pr->hk_from = calloc(((size_t)1 << w) * w, sizeof *pr->hk_from);
    }
    bool hk_missing = pr->dpp <= DTFM_EXACT_PATH && (!pr->hk || !pr->hk_from);
    if (!pr->pp || !pr->dp || !pr->w_group || !pr->members || !pr->edges || !pr->mt ||
        !pr->ml || !pr->mt_lo || !pr->ml_lo || !pr->seen || hk_missing) {
        dtfm_problem_free(pr);
        return gt_fail(e, "out of memory (DT-FM problem of %d devices)", pr->n);
    }
    return 0;
}

static int check_shape(dtfm_problem *pr, int dpp, int ddp, double c_pp, double c_dp, gt_err *e)
{
    memset(pr, 0, sizeof *pr);
    if (dpp < 1 || ddp < 1 || (long)dpp * ddp > 1000000)
        return gt_fail(e, "dtfm: bad shape D_PP %d x D_DP %d", dpp, ddp);
    pr->n = dpp * ddp;
    pr->dpp = dpp;
    pr->ddp = ddp;
    pr->c_pp = c_pp;
    pr->c_dp = c_dp;
    return 0;
}

/* Fill the two cost matrices from per-direction latency and bandwidth. */
static void fill_costs(dtfm_problem *pr, const double *lat, const double *bw)
{
    int n = pr->n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            size_t ij = (size_t)i * (size_t)n + (size_t)j, ji = (size_t)j * (size_t)n + (size_t)i;
            if (i == j)
                continue;
            /* activations go one way and their gradients come back: the
             * symmetric edge weight is the mean of both directions */
            pr->pp[ij] = 0.5 * ((lat[ij] + pr->c_pp / bw[ij]) + (lat[ji] + pr->c_pp / bw[ji]));
            pr->dp[ij] = 2.0 * (lat[ij] + pr->c_dp / (pr->ddp * bw[ij]));
        }
}

int dtfm_problem_from_matrices(dtfm_problem *pr, int dpp, int ddp, const double *lat,
                               const double *bw, double c_pp, double c_dp, gt_err *e)
{
    if (check_shape(pr, dpp, ddp, c_pp, c_dp, e) || alloc_scratch(pr, e))
        return -1;
    fill_costs(pr, lat, bw);
    return 0;
}

int dtfm_problem_init(dtfm_problem *pr, const topology *t, const int *gpus, int dpp, int ddp,
                      double c_pp, double c_dp, gt_err *e)
{
    if (check_shape(pr, dpp, ddp, c_pp, c_dp, e))
        return -1;
    size_t n = (size_t)pr->n;
    double *lat = malloc(sizeof *lat * n * n), *bw = malloc(sizeof *bw * n * n);
    pr->gpu = malloc(sizeof *pr->gpu * n);
    if (!lat || !bw || !pr->gpu) {
        free(lat);
        free(bw);
        free(pr->gpu);
        pr->gpu = NULL;
        return gt_fail(e, "out of memory");
    }
    memcpy(pr->gpu, gpus, sizeof *pr->gpu * n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            lat[i * n + j] = 0;
            bw[i * n + j] = 1;
            if (i != j)
                path_lone(t, gpus[i], gpus[j], &lat[i * n + j], &bw[i * n + j]);
        }
    int *keep = pr->gpu;
    pr->gpu = NULL; /* alloc_scratch frees on failure: keep ownership here */
    int rc = alloc_scratch(pr, e);
    if (!rc) {
        pr->gpu = keep;
        fill_costs(pr, lat, bw);
    } else {
        free(keep);
    }
    free(lat);
    free(bw);
    return rc;
}

void dtfm_problem_free(dtfm_problem *pr)
{
    free(pr->gpu);
    free(pr->pp);
    free(pr->dp);
    free(pr->w_group);
    free(pr->members);
    free(pr->edges);
    free(pr->mt);
    free(pr->ml);
    free(pr->mt_lo);
    free(pr->ml_lo);
    free(pr->seen);
    free(pr->hk);
    free(pr->hk_from);
    memset(pr, 0, sizeof *pr);
}

/* --- bottleneck perfect matching ------------------------------------------- */

/* Place the (k - lo)-th smallest of x[lo..hi] at x[k], smaller-or-equal
 * values before it and greater-or-equal after (Hoare's selection with a
 * median-of-three pivot; expected linear time). */
static void select_kth(double *x, int lo, int hi, int k)
{
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        double a = x[lo], b = x[mid], c = x[hi];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        int i = lo, j = hi;
        while (i <= j) {
            while (x[i] < pivot)
                i++;
            while (x[j] > pivot)
                j--;
            if (i <= j) {
                double t = x[i];
                x[i] = x[j];
                x[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* Kuhn's augmenting path from left vertex i over edges of weight <= thr.
 * mt: right -> left, ml: left -> right. */
static int augment(dtfm_problem *pr, const double *w, const int *a, const int *b, int k,
                   double thr, int i)
{
    size_t n = (size_t)pr->n;
    const double *row = w + (size_t)a[i] * n;
    for (int j = 0; j < k; j++) {
        if (pr->seen[j] || row[b[j]] > thr)
            continue;
        pr->seen[j] = 1;
        if (pr->mt[j] < 0 || augment(pr, w, a, b, k, thr, pr->mt[j])) {
            pr->mt[j] = i;
            pr->ml[i] = j;
            return 1;
        }
    }
    return 0;
}

/* Grow the (partial) matching in mt/ml to a maximum one under thr: a greedy
 * pass, then augmenting paths. A failed search leaves its visited vertices
 * marked (they cannot reach a free vertex until the matching changes), so
 * the marks are cleared only after a success. Returns the matching's size. */
static int grow_matching(dtfm_problem *pr, const double *w, const int *a, const int *b, int k,
                         double thr)
{
    size_t n = (size_t)pr->n;
    int size = 0;
    for (int i = 0; i < k; i++) {
        if (pr->ml[i] >= 0) {
            size++;
            continue;
        }
        const double *row = w + (size_t)a[i] * n;
        for (int j = 0; j < k; j++)
            if (pr->mt[j] < 0 && row[b[j]] <= thr) {
                pr->mt[j] = i;
                pr->ml[i] = j;
                size++;
                break;
            }
    }
    memset(pr->seen, 0, sizeof *pr->seen * (size_t)k);
    for (int i = 0; i < k && size < k; i++)
        if (pr->ml[i] < 0 && augment(pr, w, a, b, k, thr, i)) {
            size++;
            memset(pr->seen, 0, sizeof *pr->seen * (size_t)k);
        }
    return size;
}

static void save_matching(dtfm_problem *pr, int k, bool to_saved)
{
    size_t bytes = sizeof(int) * (size_t)k;
    if (to_saved) {
        memcpy(pr->mt_lo, pr->mt, bytes);
        memcpy(pr->ml_lo, pr->ml, bytes);
    } else {
        memcpy(pr->mt, pr->mt_lo, bytes);
        memcpy(pr->ml, pr->ml_lo, bytes);
    }
}

/* No perfect matching has a bottleneck below the largest row or column
 * minimum: every vertex needs one of its edges. */
static double matching_lower_bound(const dtfm_problem *pr, const double *w, const int *a,
                                   const int *b, int k)
{
    size_t n = (size_t)pr->n;
    double lb = 0;
    for (int i = 0; i < k; i++) {
        double rmin = INFINITY, cmin = INFINITY;
        for (int j = 0; j < k; j++) {
            rmin = fmin(rmin, w[(size_t)a[i] * n + (size_t)b[j]]);
            cmin = fmin(cmin, w[(size_t)a[j] * n + (size_t)b[i]]);
        }
        lb = fmax(lb, fmax(rmin, cmin));
    }
    return lb;
}

double dtfm_bottleneck_matching(dtfm_problem *pr, const double *w, const int *a, const int *b,
                                int k, int *match)
{
    if (k < 1 || k > pr->ddp)
        return INFINITY;
    size_t n = (size_t)pr->n;
    double lb = matching_lower_bound(pr, w, a, b, k);
    int m = 0;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            double x = w[(size_t)a[i] * n + (size_t)b[j]];
            if (x >= lb)
                pr->edges[m++] = x;
        }
    /* the answer is one of these weights: search the smallest that admits
     * a perfect matching (the largest always does) by selection rather than
     * a full sort — each probe splits the candidates at their median. The
     * matching found under an infeasible threshold stays valid above it, so
     * every probe starts from the last infeasible one (warm start). */
    for (int j = 0; j < k; j++)
        pr->mt_lo[j] = pr->ml_lo[j] = -1;
    int lo = 0, hi = m - 1;
    select_kth(pr->edges, lo, hi, lo); /* the smallest: the lower bound itself */
    save_matching(pr, k, false);
    if (grow_matching(pr, w, a, b, k, pr->edges[lo]) == k)
        hi = lo;
    else {
        save_matching(pr, k, true);
        lo++;
    }
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        select_kth(pr->edges, lo, hi, mid);
        save_matching(pr, k, false);
        if (grow_matching(pr, w, a, b, k, pr->edges[mid]) == k) {
            hi = mid;
        } else {
            lo = mid + 1;
            save_matching(pr, k, true);
        }
    }
    double best = pr->edges[lo];
    if (match) {
        save_matching(pr, k, false);
        grow_matching(pr, w, a, b, k, best);
        memcpy(match, pr->ml, sizeof *match * (size_t)k);
    }
    return best;
}

/* --- open-loop TSP path ----------------------------------------------------- */

static double path_len(const double *d, int m, const int *order)
{
    double s = 0;
    for (int i = 0; i + 1 < m; i++)
        s += d[(size_t)order[i] * (size_t)m + (size_t)order[i + 1]];
    return s;
}

/* Held-Karp: f[mask][last] = shortest path visiting mask, ending at last. */
static double held_karp(const double *d, int m, int *order, double *f, int *from)
{
    size_t full = ((size_t)1 << m) - 1, M = (size_t)m;
    for (size_t s = 0; s <= full; s++)
        for (size_t v = 0; v < M; v++)
            f[s * M + v] = INFINITY;
    for (size_t v = 0; v < M; v++)
        f[((size_t)1 << v) * M + v] = 0;
    for (size_t s = 1; s <= full; s++)
        for (size_t v = 0; v < M; v++) {
            double cur = f[s * M + v];
            if (!(s >> v & 1) || !isfinite(cur))
                continue;
            for (size_t u = 0; u < M; u++) {
                if (s >> u & 1)
                    continue;
                size_t t = s | (size_t)1 << u;
                double c = cur + d[v * M + u];
                if (c < f[t * M + u]) {
                    f[t * M + u] = c;
                    from[t * M + u] = (int)v;
                }
            }
        }
    size_t last = 0;
    for (size_t v = 1; v < M; v++)
        if (f[full * M + v] < f[full * M + last])
            last = v;
    double best = f[full * M + last];
    size_t s = full;
    for (int i = m - 1; i >= 0; i--) {
        order[i] = (int)last;
        size_t prev = i > 0 ? (size_t)from[s * M + last] : 0;
        s &= ~((size_t)1 << last);
        last = prev;
    }
    return best;
}

static void nearest_neighbour(const double *d, int m, int start, int *order, char *used)
{
    memset(used, 0, (size_t)m);
    order[0] = start;
    used[start] = 1;
    for (int i = 1; i < m; i++) {
        int best = -1, at = order[i - 1];
        for (int u = 0; u < m; u++)
            if (!used[u] && (best < 0 || d[(size_t)at * (size_t)m + (size_t)u] <
                                             d[(size_t)at * (size_t)m + (size_t)best]))
                best = u;
        order[i] = best;
        used[best] = 1;
    }
}

/* 2-opt on an open path: reversing order[i..j] swaps edges (i-1,i), (j,j+1). */
static void two_opt(const double *d, int m, int *order)
{
    size_t M = (size_t)m;
    for (int improved = 1; improved;) {
        improved = 0;
        for (int i = 0; i < m - 1; i++)
            for (int j = i + 1; j < m; j++) {
                double before = 0, after = 0;
                if (i > 0) {
                    before += d[(size_t)order[i - 1] * M + (size_t)order[i]];
                    after += d[(size_t)order[i - 1] * M + (size_t)order[j]];
                }
                if (j < m - 1) {
                    before += d[(size_t)order[j] * M + (size_t)order[j + 1]];
                    after += d[(size_t)order[i] * M + (size_t)order[j + 1]];
                }
                if (after < before - 1e-12) {
                    for (int x = i, y = j; x < y; x++, y--) {
                        int tmp = order[x];
                        order[x] = order[y];
                        order[y] = tmp;
                    }
                    improved = 1;
                }
            }
    }
}

static double heuristic_path(const double *d, int m, int *order)
{
    int *cur = malloc(sizeof *cur * (size_t)m);
    char *used = malloc((size_t)m);
    if (!cur || !used) {
        free(cur);
        free(used);
        for (int i = 0; i < m; i++)
            order[i] = i;
        return path_len(d, m, order);
    }
    double best = INFINITY;
    for (int s = 0; s < m; s++) {
        nearest_neighbour(d, m, s, cur, used);
        two_opt(d, m, cur);
        double len = path_len(d, m, cur);
        if (len < best) {
            best = len;
            memcpy(order, cur, sizeof *cur * (size_t)m);
        }
    }
    free(cur);
    free(used);
    return best;
}

double dtfm_open_path(dtfm_problem *pr, const double *dist, int m, int *order)
{
    if (m <= 0)
        return 0;
    if (m == 1) {
        order[0] = 0;
        return 0;
    }
    if (m > DTFM_EXACT_PATH)
        return heuristic_path(dist, m, order);
    if (pr && pr->hk && m <= pr->dpp)
        return held_karp(dist, m, order, pr->hk, pr->hk_from);
    size_t cells = ((size_t)1 << m) * (size_t)m;
    double *f = malloc(sizeof *f * cells);
    int *from = malloc(sizeof *from * cells);
    double best = INFINITY;
    if (f && from)
        best = held_karp(dist, m, order, f, from);
    else
        best = heuristic_path(dist, m, order);
    free(f);
    free(from);
    return best;
}

/* --- the two costs ------------------------------------------------------------ */

/* members[g*ddp ..] from a balanced partition, increasing device order. */
static int fill_members(dtfm_problem *pr, const int *part)
{
    int cnt[pr->dpp];
    memset(cnt, 0, sizeof cnt);
    for (int v = 0; v < pr->n; v++) {
        int g = part[v];
        if (g < 0 || g >= pr->dpp || cnt[g] >= pr->ddp)
            return -1;
        pr->members[(size_t)g * (size_t)pr->ddp + (size_t)cnt[g]++] = v;
    }
    return 0;
}

static double data_cost_members(const dtfm_problem *pr, const int *members)
{
    double worst = 0;
    size_t n = (size_t)pr->n;
    for (int g = 0; g < pr->dpp; g++) {
        const int *m = members + (size_t)g * (size_t)pr->ddp;
        for (int i = 0; i < pr->ddp; i++) {
            double s = 0;
            for (int j = 0; j < pr->ddp; j++)
                if (j != i)
                    s += pr->dp[(size_t)m[i] * n + (size_t)m[j]];
            worst = s > worst ? s : worst;
        }
    }
    return worst;
}

double dtfm_data_cost(dtfm_problem *pr, const int *part)
{
    if (fill_members(pr, part))
        return INFINITY;
    return data_cost_members(pr, pr->members);
}

/* Bottleneck weights between every pair of groups (members filled). */
static void group_weights(dtfm_problem *pr)
{
    int w = pr->dpp, k = pr->ddp;
    for (int a = 0; a < w; a++) {
        pr->w_group[(size_t)a * (size_t)w + (size_t)a] = 0;
        for (int b = a + 1; b < w; b++) {
            double c = dtfm_bottleneck_matching(pr, pr->pp, pr->members + (size_t)a * (size_t)k,
                                                pr->members + (size_t)b * (size_t)k, k, NULL);
            pr->w_group[(size_t)a * (size_t)w + (size_t)b] = c;
            pr->w_group[(size_t)b * (size_t)w + (size_t)a] = c;
        }
    }
}

double dtfm_pipeline_cost(dtfm_problem *pr, const int *part, int *path)
{
    if (fill_members(pr, part))
        return INFINITY;
    group_weights(pr);
    int tmp[pr->dpp];
    return dtfm_open_path(pr, pr->w_group, pr->dpp, path ? path : tmp);
}

double dtfm_total_cost(dtfm_problem *pr, const int *part, double *data, double *pipe)
{
    double pc = dtfm_pipeline_cost(pr, part, NULL);
    double dc = data_cost_members(pr, pr->members); /* members filled by the call above */
    if (!isfinite(pc))
        dc = INFINITY;
    if (data)
        *data = dc;
    if (pipe)
        *pipe = pc;
    return dc + 2 * pc;
}

double dtfm_chain_cost(dtfm_problem *pr, const int *pipes, double *data, double *pipe)
{
    int w = pr->dpp, k = pr->ddp;
    size_t n = (size_t)pr->n;
    for (int s = 0; s < w; s++)
        for (int r = 0; r < k; r++)
            pr->members[(size_t)s * (size_t)k + (size_t)r] =
                pipes[(size_t)r * (size_t)w + (size_t)s];
    double dc = data_cost_members(pr, pr->members), pc = 0;
    for (int s = 0; s + 1 < w; s++) {
        double worst = 0;
        for (int r = 0; r < k; r++) {
            const int *row = pipes + (size_t)r * (size_t)w;
            double c = pr->pp[(size_t)row[s] * n + (size_t)row[s + 1]];
            worst = c > worst ? c : worst;
        }
        pc += worst;
    }
    if (data)
        *data = dc;
    if (pipe)
        *pipe = pc;
    return dc + 2 * pc;
}

int dtfm_decode(dtfm_problem *pr, const int *part, int *pipes)
{
    int w = pr->dpp, k = pr->ddp;
    int path[w], idx[k], match[k];
    if (!isfinite(dtfm_pipeline_cost(pr, part, path)))
        return -1;
    for (int r = 0; r < k; r++) {
        idx[r] = r;
        pipes[(size_t)r * (size_t)w] = pr->members[(size_t)path[0] * (size_t)k + (size_t)r];
    }
    for (int s = 1; s < w; s++) {
        const int *a = pr->members + (size_t)path[s - 1] * (size_t)k;
        const int *b = pr->members + (size_t)path[s] * (size_t)k;
        dtfm_bottleneck_matching(pr, pr->pp, a, b, k, match);
        for (int r = 0; r < k; r++) {
            idx[r] = match[idx[r]];
            pipes[(size_t)r * (size_t)w + (size_t)s] = b[idx[r]];
        }
    }
    return 0;
}
