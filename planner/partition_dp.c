/* partition_dp.c — min-max then min-sum contiguous layer partition
 * (partition_dp.h). */
#include "partition_dp.h"

#include <stdlib.h>
#include <string.h>

static bool ok(const pdp_problem *p, int k, int a, int e, int64_t tau)
{
    if (p->fits && !p->fits(p->ctx, k, a, e))
        return false;
    return tau == INT64_MAX || p->cost(p->ctx, k, a, e) <= tau;
}

/* What one pdp_solve has learnt of its callbacks, which its phases ask again
 * and again (the binary search's ~30 greedy passes, then the min-sum DP): the
 * memory test and the stage costs are the costly part of a solve. Row (k, a)
 * of a stage before the last (k < S - 1) holds `end`, the last layer e such
 * that fits(k, a, a..e) all hold, scanning e up to the last end stage k can
 * have (L - S + k) as the greedy scans, and the cost of every range [a, e]
 * up to it; filled when first asked (end UNKNOWN until then). The last
 * stage always ends at L - 1: its test and cost per start a. Every answer is
 * the callback's own, so the splits are those of the uncached solve. */
enum { UNKNOWN = -2 };

typedef struct memo {
    int W;                 /* L - S + 1: the most layers a stage can hold */
    int *end;              /* [S * L]: row (k, a), k < S - 1 */
    int64_t *cost;         /* [(S - 1) * W * W]: row (k, a) at (k * W + a - k) * W */
    signed char *last;     /* [L]: the last stage from a fits (-1 unknown) */
    int64_t *last_cost;    /* [L] */
} memo;

static int memo_init(memo *m, const pdp_problem *p)
{
    size_t L = (size_t)p->L, S = (size_t)p->S, W = L - S + 1;
    m->W = (int)W;
    m->end = malloc(sizeof *m->end * S * L);
    m->cost = malloc(sizeof *m->cost * ((S - 1) * W * W + L));
    m->last = malloc(L);
    if (!m->end || !m->cost || !m->last) {
        free(m->end);
        free(m->cost);
        free(m->last);
        return -1;
    }
    m->last_cost = m->cost + (S - 1) * W * W;
    for (size_t i = 0; i < S * L; i++)
        m->end[i] = UNKNOWN;
    memset(m->last, -1, L);
    return 0;
}

static void memo_free(memo *m)
{
    free(m->end);
    free(m->cost);
    free(m->last);
}

/* Row (k, a), k < S - 1, filled if new: its costs (index e - a), *end set. */
static const int64_t *row(const pdp_problem *p, memo *m, int k, int a, int *end)
{
    int lim = p->L - p->S + k;
    int *x = &m->end[(size_t)k * (size_t)p->L + (size_t)a];
    int64_t *c = &m->cost[((size_t)k * (size_t)m->W + (size_t)(a - k)) * (size_t)m->W];
    if (*x == UNKNOWN) {
        int e = a - 1;
        while (e < lim && (!p->fits || p->fits(p->ctx, k, a, e + 1))) {
            e++;
            c[e - a] = p->cost(p->ctx, k, a, e);
        }
        *x = e;
    }
    *end = *x;
    return c;
}

/* The last stage from a (ending at L - 1): fits, and *cost when it does. */
static bool last_fits(const pdp_problem *p, memo *m, int a, int64_t *cost)
{
    if (m->last[a] < 0) {
        bool f = !p->fits || p->fits(p->ctx, p->S - 1, a, p->L - 1);
        m->last[a] = f;
        if (f)
            m->last_cost[a] = p->cost(p->ctx, p->S - 1, a, p->L - 1);
    }
    if (m->last[a] != 1)
        return false;
    *cost = m->last_cost[a];
    return true;
}

/* ok() from m, with the cost in *cost when it is ok. */
static bool ok_memo(const pdp_problem *p, memo *m, int k, int a, int e, int64_t tau,
                    int64_t *cost)
{
    int S = p->S, L = p->L;
    bool fit;
    if (k == S - 1 && e == L - 1) {
        fit = last_fits(p, m, a, cost);
    } else if (k < S - 1 && e <= L - S + k) {
        int end;
        const int64_t *c = row(p, m, k, a, &end);
        if (e <= end) {
            fit = true;
            *cost = c[e - a];
        } else if (e == end + 1) {
            fit = false;
        } else { /* beyond the first failure the row says nothing (a callback
                  * need not be monotone for the answer to be its own) */
            fit = !p->fits || p->fits(p->ctx, k, a, e);
            if (fit)
                *cost = p->cost(p->ctx, k, a, e);
        }
    } else {
        fit = !p->fits || p->fits(p->ctx, k, a, e);
        if (fit)
            *cost = p->cost(p->ctx, k, a, e);
    }
    return fit && (tau == INT64_MAX || *cost <= tau);
}

/* Greedy: every stage but the last takes the longest range that is ok and
 * leaves one layer for each later stage; the last takes the rest. Because
 * ranges only get harder as they grow, greedy ends are never earlier than
 * those of any feasible split, so greedy fails only if nothing works. With
 * `first` non-NULL the greedy split is stored. */
static bool greedy(const pdp_problem *p, memo *m, int64_t tau, int *first)
{
    int L = p->L, S = p->S, a = 0;
    if (S < 1 || S > L)
        return false;
    for (int k = 0; k < S - 1; k++) {
        int lim = L - (S - 1 - k) - 1, e = a - 1;
        if (m) { /* the row's first misfit ends the walk as ok() would */
            int end;
            const int64_t *c = row(p, m, k, a, &end);
            while (e < end && (tau == INT64_MAX || c[e + 1 - a] <= tau))
                e++;
        } else {
            while (e < lim && ok(p, k, a, e + 1, tau))
                e++;
        }
        if (e < a)
            return false;
        if (first)
            first[k] = a;
        a = e + 1;
    }
    if (first)
        first[S - 1] = a;
    int64_t c;
    return m ? ok_memo(p, m, S - 1, a, L - 1, tau, &c) : ok(p, S - 1, a, L - 1, tau);
}

/* Phase 1 for arbitrary monotone costs: f[k][e] = least bottleneck of
 * stages 0..k covering layers 0..e. Returns INT64_MAX when nothing fits. */
static int64_t minmax_dp(const pdp_problem *p)
{
    int L = p->L, S = p->S;
    if (S < 1 || S > L)
        return INT64_MAX;
    int64_t *f = malloc(sizeof *f * (size_t)L * (size_t)S), res = INT64_MAX;
    if (!f)
        return INT64_MAX;
    for (size_t i = 0; i < (size_t)L * (size_t)S; i++)
        f[i] = INT64_MAX;
    for (int e = 0; e <= L - S && ok(p, 0, 0, e, INT64_MAX); e++)
        f[e] = p->cost(p->ctx, 0, 0, e);
    for (int k = 1; k < S; k++)
        for (int e = k; e <= L - S + k; e++) {
            int64_t best = INT64_MAX;
            for (int a = e; a >= k && ok(p, k, a, e, INT64_MAX); a--) {
                int64_t prev = f[(size_t)(k - 1) * L + (size_t)(a - 1)], c;
                if (prev == INT64_MAX)
                    continue;
                c = p->cost(p->ctx, k, a, e);
                c = c > prev ? c : prev;
                best = c < best ? c : best;
            }
            f[(size_t)k * L + (size_t)e] = best;
        }
    res = f[(size_t)(S - 1) * L + (size_t)(L - 1)];
    free(f);
    return res;
}

bool pdp_feasible(const pdp_problem *p, int64_t tau)
{
    if (p->uniform)
        return greedy(p, NULL, tau, NULL);
    int64_t m = minmax_dp(p);
    return m != INT64_MAX && m <= tau;
}

static int64_t split_max(const pdp_problem *p, const int *first)
{
    int64_t m = 0;
    for (int k = 0; k < p->S; k++) {
        int e = k + 1 < p->S ? first[k + 1] - 1 : p->L - 1;
        int64_t c = p->cost(p->ctx, k, first[k], e);
        m = c > m ? c : m;
    }
    return m;
}

/* Phase 1: the least tau for which the greedy succeeds. */
static int64_t min_bottleneck(const pdp_problem *p, memo *m, int *first)
{
    greedy(p, m, INT64_MAX, first);
    int64_t hi = split_max(p, first), lo = -1; /* lo infeasible, hi feasible */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (greedy(p, m, mid, NULL))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* Phase 2: least sum of costs with every stage ok under tau.
 * f[k*L + e] = best sum of stages 0..k covering layers 0..e. */
static int min_sum(const pdp_problem *p, memo *m, int64_t tau, int *first, int64_t *sum)
{
    int L = p->L, S = p->S;
    size_t n = (size_t)L * (size_t)S;
    int64_t *f = malloc(sizeof *f * n);
    int *from = malloc(sizeof *from * n);
    if (!f || !from) {
        free(f);
        free(from);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        f[i] = INT64_MAX;
    for (int e = 0; e <= L - S; e++) {
        int64_t c;
        if (!ok_memo(p, m, 0, 0, e, tau, &c))
            break;
        f[e] = c;
        from[e] = 0;
    }
    for (int k = 1; k < S; k++)
        /* the last stage ends at L - 1: its other ends are never read */
        for (int e = k < S - 1 ? k : L - 1; e <= L - S + k; e++) {
            int64_t best = INT64_MAX;
            int arg = -1;
            /* a runs down from e: ranges grow, so stop at the first failure */
            int64_t c;
            for (int a = e; a >= k && ok_memo(p, m, k, a, e, tau, &c); a--) {
                int64_t prev = f[(size_t)(k - 1) * L + (size_t)(a - 1)];
                if (prev == INT64_MAX)
                    continue;
                int64_t v = prev + c;
                if (v < best) {
                    best = v;
                    arg = a;
                }
            }
            f[(size_t)k * L + (size_t)e] = best;
            from[(size_t)k * L + (size_t)e] = arg;
        }
    int rc = -1;
    if (f[(size_t)(S - 1) * L + (size_t)(L - 1)] != INT64_MAX) {
        *sum = f[(size_t)(S - 1) * L + (size_t)(L - 1)];
        for (int k = S - 1, e = L - 1; k >= 0; k--) {
            first[k] = from[(size_t)k * L + (size_t)e];
            e = first[k] - 1;
        }
        rc = 0;
    }
    free(f);
    free(from);
    return rc;
}

int pdp_solve(const pdp_problem *p, int *first, pdp_result *r)
{
    int64_t tau, sum = 0;
    if (p->S < 1 || p->S > p->L)
        return -1;
    memo m;
    if (memo_init(&m, p))
        return -1;
    int rc = -1;
    if (p->uniform) {
        if (!greedy(p, &m, INT64_MAX, first))
            goto out;
        tau = min_bottleneck(p, &m, first);
    } else if ((tau = minmax_dp(p)) == INT64_MAX) {
        goto out;
    }
    if (min_sum(p, &m, tau, first, &sum))
        goto out;
    r->max_cost = tau;
    r->sum_cost = sum;
    rc = 0;
out:
    memo_free(&m);
    return rc;
}
