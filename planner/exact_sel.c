/* exact_sel.c — the exact referee's bound of a selection (exact_space.h):
 * a shape S x D and counts per class, bounded for every placement of those
 * GPUs, at every microbatch size, from the counts alone (no placement is
 * generated), so that most count vectors are cut before the walk.
 *
 * Why it holds, per microbatch size (the least over the sizes is taken):
 *   - the rows: each of the D rows holds S distinct selected GPUs, so its
 *     k-th fastest GPU is at most the selection's k-th fastest (speeds, and
 *     per-layer times, sorted). The pipeline-fill bound (exact_fill.c) only
 *     falls when a stage gets faster (s_i = max(s_{i+1}, s_{i+1} (1 - 1/m)
 *     + v_i / m), the sum of its dual solution from stage i on, grows with
 *     v_i and with s_{i+1}) or its transfers shrink (taken as 0 here), and
 *     over the orders of a row's speeds it is least with the fastest first:
 *     each stage maps s to f_v(s) = s + max(0, v - s) / m, and for a >= b,
 *     f_a(f_b(s)) >= f_b(f_a(s)) (equal when s >= b; when s < b the
 *     difference is (1 - 1/m)(f_b(s) - s) >= 0 if f_a(s) >= b, else
 *     (a - b) / m^2), so moving a faster stage ahead of a slower one never
 *     lowers s_0 (tests/test_exact_fill.c checks it against every order).
 *     So every row's bound is at least the one of the selection's S
 *     fastest GPUs, fastest first. Some row passes ceil(M / D) of the M
 *     microbatches (the table is non-decreasing in m). A row's round trip is at least
 *     a microbatch on the fastest GPU or by layer granularity on the S
 *     least per-layer times (exact_grain.c), plus S - 1 of the least round
 *     trips between two selected GPUs; and the rows hold every selected
 *     GPU, so one of them holds at least 1/D of the selection's summed
 *     per-layer times, and its granularity bound (that share plus L - S
 *     layers at the least) raises that row's round trip (exact_rows_fill
 *     is symmetric in its rows and grows with each one's round trip, so it
 *     may be row 0); its last stage at least the least time per
 *     layer of a selected type, and its bottleneck (exact_rows.c) at least
 *     that of the S least per-layer times under the largest layer cap of a
 *     selected type (the bottleneck falls with either); exact_rows_fill
 *     shares M microbatches between D such rows.
 *   - the sites: when the selected GPUs lie in two sites or more, either
 *     some row has two consecutive stages in different sites (its round trip
 *     pays the least round trip between two selected GPUs of different
 *     sites), or every row lies in one site; that is possible only if every
 *     site's count is a multiple of S, and then every sync group has a
 *     member in each row, so in two sites at least: the sync bound at the
 *     cross-site level (exact_sync.c). The least of the two cases holds.
 *   - the nodes, likewise: unless the selection fits in one node (one
 *     class, at most a node's GPUs), either some row crosses a node (the
 *     least cross-node round trip) or every row lies in one node, which
 *     needs every class's count to be a multiple of S that its nodes can
 *     hold in whole rows, and then every sync group crosses a node.
 * The sync options are 0 on tensor-parallel views (exact_sync.c). */
#include <math.h>
#include <stdlib.h>

#include "exact_space.h"

/* A GPU of group g: the k-th of node i of the group. */
static int sel_gpu(const exact_space *sp, int g, int i, int k)
{
    return sp->pr->class_first[sp->gnode[sp->gfirst[g] + i]] + k;
}

/* The round trip (both ways) of microbatch bval[bi] between GPUs a and b. */
static double trip_s(const exact_space *sp, int bi, int a, int b)
{
    return 1e-9 * (double)(exact_xfer_ns(sp, bi, a, b) + exact_xfer_ns(sp, bi, b, a));
}

int exact_sel_init(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    int G = sp->ngroup;
    long n = (long)pr->nb * 3 * G * G;
    sp->gtrip = malloc(sizeof *sp->gtrip * (size_t)n);
    if (!sp->gtrip)
        return -1;
    for (int bi = 0; bi < pr->nb; bi++)
        for (int level = 0; level < 3; level++)
            for (int g = 0; g < G; g++)
                for (int h = 0; h < G; h++) {
                    int pairs[2][2];
                    exact_group_pairs(sp, g, h, level, pairs);
                    double best = INFINITY;
                    for (int q = 0; q < 2; q++)
                        if (pairs[q][0] >= 0)
                            best = fmin(best, trip_s(sp, bi, pairs[q][0], pairs[q][1]));
                    sp->gtrip[(((long)bi * 3 + level) * G + g) * G + h] = best;
                }
    return 0;
}

/* The least round trip at microbatch size bi between two distinct selected
 * GPUs at `level` (0 any, 1 other nodes, 2 other sites). */
static double least_trip(const exact_space *sp, const int *cnt, int bi, int level)
{
    int G = sp->ngroup;
    const double *tr = sp->gtrip + ((long)bi * 3 + level) * G * G;
    double best = INFINITY;
    for (int g = 0; g < G; g++)
        for (int h = 0; h < G && cnt[g]; h++)
            if (cnt[h] && !(g == h && cnt[g] < 2))
                best = fmin(best, tr[g * G + h]);
    return best;
}

static int desc_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The selected GPUs' speeds (per type, the bounds' speed), descending, and
 * their per-layer times at bi, ascending, into v[] and c[] (n of each). */
static int sel_sorted(const exact_space *sp, const int *cnt, int bi, double *v, double *c)
{
    const enc_problem *pr = sp->pr;
    int n = 0;
    for (int g = 0; g < sp->ngroup; g++)
        for (int k = 0; k < cnt[g]; k++) {
            int ty = pr->t->gpus[sel_gpu(sp, g, 0, 0)].type;
            v[n] = sp->type_speed[ty];
            c[n++] = -sp->layer_s[bi * pr->ntypes + ty]; /* sorted descending: negated */
        }
    qsort(v, (size_t)n, sizeof *v, desc_cmp);
    qsort(c, (size_t)n, sizeof *c, desc_cmp);
    for (int k = 0; k < n; k++)
        c[k] = -c[k];
    return n;
}

/* The rows' bound at size bi (see the header), a bound of stage 0's last
 * backward: the fill of the S fastest GPUs, fastest first, passing
 * ceil(M / D) microbatches, and D rows of the least round trip, last stage
 * and bottleneck sharing M. INFINITY when no row can hold the model. */
static double rows_bound(const exact_space *sp, int S, int D, const int *cnt, int bi,
                         double *v, double *c, double *lb)
{
    const enc_problem *pr = sp->pr;
    int M = pr->mtot[bi];
    int n = sel_sorted(sp, cnt, bi, v, c); /* S x D GPUs */
    exact_fill_table(v, NULL, S, M, sp->mb_flops[bi], lb);
    double T = lb[(M + D - 1) / D - 1];
    int capmax = 0;
    for (int g = 0; g < sp->ngroup; g++)
        if (cnt[g]) {
            int ty = pr->t->gpus[sel_gpu(sp, g, 0, 0)].type, m = sp->layer_cap[bi * pr->ntypes + ty];
            capmax = m > capmax ? m : capmax;
        }
    int *caps = malloc(sizeof *caps * (size_t)S);
    double *row = malloc(sizeof *row * (size_t)(3 * D));
    if (!caps || !row) { /* out of memory: the fill bound still holds */
        free(caps);
        free(row);
        return T;
    }
    for (int k = 0; k < S; k++)
        caps[k] = capmax;
    double bn = exact_least_bottleneck(c, caps, S, pr->L);
    double hop = S > 1 ? least_trip(sp, cnt, bi, 0) : 0;
    /* one microbatch through a row: on the fastest GPU, or by layer
     * granularity (exact_grain.c) on the S least per-layer times; and one
     * row holds at least 1/D of the selection's summed per-layer times */
    double sum_s = 0, sum_all = 0;
    for (int k = 0; k < n; k++) {
        sum_s += k < S ? c[k] : 0;
        sum_all += c[k];
    }
    double xs = (S - 1) * (isfinite(hop) ? hop : 0);
    double rt = exact_max(pr->bval[bi] * sp->seq_f / v[0], exact_grain_split(sum_s, c[0], S, pr->L)) + xs;
    double rt_slow = exact_max(rt, exact_grain_split(sum_all / D, c[0], S, pr->L) + xs);
    for (int r = 0; r < D; r++) {
        row[r] = r == 0 ? rt_slow : rt; /* (exact_rows_fill is symmetric in its rows) */
        row[D + r] = c[0];
        row[2 * D + r] = bn;
    }
    if (isinf(bn))
        T = INFINITY;
    else
        T = fmax(T, exact_rows_fill(row, row + D, row + 2 * D, D, M));
    free(caps);
    free(row);
    return T;
}

/* Whether every row can lie within one unit (site or node) of the
 * selection: per site, the count is a multiple of S; per group of nodes,
 * the count is a multiple of S its nodes hold in whole rows. */
static bool rows_pure(const exact_space *sp, int S, const int *cnt, bool by_node)
{
    const enc_problem *pr = sp->pr;
    const topology *t = pr->t;
    if (by_node) {
        for (int g = 0; g < sp->ngroup; g++) {
            int size = pr->class_size[sp->gnode[sp->gfirst[g]]];
            if (cnt[g] % S || cnt[g] > sp->gcount[g] * (size / S) * S)
                return false;
        }
        return true;
    }
    for (int x = 0; x < t->nsites; x++) {
        int n = 0;
        for (int g = 0; g < sp->ngroup; g++)
            n += t->gpus[sel_gpu(sp, g, 0, 0)].site == x ? cnt[g] : 0;
        if (n % S)
            return false;
    }
    return true;
}

/* Whether the selection must span two units (sites, or nodes) or more. */
static bool must_span(const exact_space *sp, const int *cnt, bool by_node)
{
    const enc_problem *pr = sp->pr;
    const topology *t = pr->t;
    int first = -1, used = 0, g1 = -1;
    for (int g = 0; g < sp->ngroup; g++) {
        if (!cnt[g])
            continue;
        used++;
        g1 = g;
        int x = t->gpus[sel_gpu(sp, g, 0, 0)].site;
        if (first >= 0 && x != first)
            return true;
        first = x;
    }
    if (!by_node)
        return false;
    return used > 1 || cnt[g1] > pr->class_size[sp->gnode[sp->gfirst[g1]]];
}

/* The bound of one level (1 nodes, 2 sites) at size bi: when the selection
 * must span that level, the least of a row crossing it and every row within
 * one unit (then the sync crosses it); 0 otherwise. */
static double span_bound(const exact_space *sp, int S, int D, const int *cnt, int bi, int level,
                         double vmax, double ready)
{
    bool by_node = level == 1;
    if (!must_span(sp, cnt, by_node))
        return 0;
    double cross = sp->pr->bval[bi] * sp->seq_f / vmax + least_trip(sp, cnt, bi, level);
    if (!rows_pure(sp, S, cnt, by_node))
        return cross;
    return fmin(cross, exact_sel_sync_level(sp, S, D, cnt, level, ready));
}

double exact_sel_time(const exact_space *sp, int S, int D, const int *cnt, double flops_T,
                      double *ready)
{
    const enc_problem *pr = sp->pr;
    int n = 0, M = 1;
    for (int g = 0; g < sp->ngroup; g++)
        n += cnt[g];
    for (int bi = 0; bi < pr->nb; bi++)
        M = pr->mtot[bi] > M ? pr->mtot[bi] : M;
    double *v = malloc(sizeof *v * (size_t)(2 * n + M));
    *ready = flops_T;
    if (!v)
        return flops_T; /* out of memory: the FLOPs still hold */
    double *c = v + n, *lb = c + n, best = INFINITY, best_ready = INFINITY;
    for (int bi = 0; bi < pr->nb; bi++) {
        if (D > pr->mtot[bi] || !enc_shape_ok(pr, S, D, bi))
            continue;
        double rdy = fmax(flops_T, rows_bound(sp, S, D, cnt, bi, v, c, lb));
        if (!isfinite(rdy))
            continue;
        double T = rdy;
        for (int level = 1; level <= 2; level++)
            T = fmax(T, span_bound(sp, S, D, cnt, bi, level, v[0], rdy));
        best = fmin(best, T);
        best_ready = fmin(best_ready, rdy);
    }
    free(v);
    *ready = best_ready;
    return best;
}
