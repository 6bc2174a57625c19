/* local_search.c — LS2 (stage order + replica matching), LS3 (critical
 * stage) and LS4 (prune) of the memetic planner (local_search.h). */
#include "local_search.h"

#include "sim/base/timecap.h"

#include <stdlib.h>
#include <string.h>

/* Evaluate env->tmp and keep it in env->best when better than both the best
 * candidate so far and `cur`. */
static void try_candidate(ls_env *env, double cur, bool *have)
{
    env->eval(env->ctx, env->tmp);
    env->evals++;
    if (env->tmp->status != 1 || !(env->tmp->fit < cur))
        return;
    if (*have && !(env->tmp->fit < env->best->fit))
        return;
    genome_copy(env->best, env->tmp, env->pr->N);
    *have = true;
}

static bool adopt(ls_env *env, genome *g, bool have)
{
    if (have)
        genome_copy(g, env->best, env->pr->N);
    return have;
}

/* --- LS2: stage order -------------------------------------------------------- */

static int64_t link_w(const enc_problem *pr, int bi, int u, int v)
{
    return t_add(enc_xfer_ns(pr, bi, u, v), enc_xfer_ns(pr, bi, v, u));
}

/* Shortest Hamiltonian path over the S GPUs in row (any start), Held-Karp. */
static int held_karp(const enc_problem *pr, int bi, int *row, int S)
{
    size_t n = (size_t)1 << S;
    int64_t *f = malloc(sizeof *f * n * (size_t)S);
    int64_t *w = malloc(sizeof *w * (size_t)(S * S));
    signed char *from = malloc(n * (size_t)S);
    if (!f || !w || !from) {
        free(f);
        free(w);
        free(from);
        return -1;
    }
    for (int a = 0; a < S; a++)
        for (int b = 0; b < S; b++)
            w[a * S + b] = a == b ? 0 : link_w(pr, bi, row[a], row[b]);
    for (size_t i = 0; i < n * (size_t)S; i++)
        f[i] = INT64_MAX;
    for (int a = 0; a < S; a++) {
        f[((size_t)1 << a) * (size_t)S + (size_t)a] = 0;
        from[((size_t)1 << a) * (size_t)S + (size_t)a] = -1;
    }
    for (size_t m = 1; m < n; m++)
        for (int a = 0; a < S; a++) {
            int64_t v = f[m * (size_t)S + (size_t)a];
            if (v == INT64_MAX || !(m >> a & 1))
                continue;
            for (int b = 0; b < S; b++) {
                if (m >> b & 1)
                    continue;
                size_t x = (m | (size_t)1 << b) * (size_t)S + (size_t)b;
                if (v + w[a * S + b] < f[x]) {
                    f[x] = v + w[a * S + b];
                    from[x] = (signed char)a;
                }
            }
        }
    int end = 0;
    for (int a = 1; a < S; a++)
        if (f[(n - 1) * (size_t)S + (size_t)a] < f[(n - 1) * (size_t)S + (size_t)end])
            end = a;
    int path[S];
    size_t m = n - 1;
    for (int k = S - 1, a = end; k >= 0; k--) {
        path[k] = row[a];
        int prev = from[m * (size_t)S + (size_t)a];
        m &= ~((size_t)1 << a);
        a = prev;
    }
    memcpy(row, path, sizeof(int) * (size_t)S);
    free(f);
    free(w);
    free(from);
    return 0;
}

/* 2-opt on an open path: reverse row[i..k] while that shortens it. */
static void two_opt(const enc_problem *pr, int bi, int *row, int S)
{
    for (int pass = 0, improved = 1; improved && pass < 8; pass++) {
        improved = 0;
        for (int i = 0; i + 1 < S; i++)
            for (int k = i + 1; k < S; k++) {
                int64_t before = 0, after = 0;
                if (i > 0) {
                    before += link_w(pr, bi, row[i - 1], row[i]);
                    after += link_w(pr, bi, row[i - 1], row[k]);
                }
                if (k + 1 < S) {
                    before += link_w(pr, bi, row[k], row[k + 1]);
                    after += link_w(pr, bi, row[i], row[k + 1]);
                }
                if (after < before) {
                    for (int a = i, b = k; a < b; a++, b--) {
                        int t = row[a];
                        row[a] = row[b];
                        row[b] = t;
                    }
                    improved = 1;
                }
            }
    }
}

/* Kuhn's augmenting path for the bipartite graph c[p][q] <= thr. */
static bool augment(const int64_t *c, int D, int64_t thr, int p, int *match_q, char *seen)
{
    for (int q = 0; q < D; q++) {
        if (seen[q] || c[p * D + q] > thr)
            continue;
        seen[q] = 1;
        if (match_q[q] < 0 || augment(c, D, thr, match_q[q], match_q, seen)) {
            match_q[q] = p;
            return true;
        }
    }
    return false;
}

static bool perfect(const int64_t *c, int D, int64_t thr, int *match_q, char *seen)
{
    for (int q = 0; q < D; q++)
        match_q[q] = -1;
    for (int p = 0; p < D; p++) {
        memset(seen, 0, (size_t)D);
        if (!augment(c, D, thr, p, match_q, seen))
            return false;
    }
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Re-assign column k+1's GPUs to pipelines so that the slowest link between
 * stage k and k+1 is as fast as possible (bottleneck assignment). */
static int match_column(const enc_problem *pr, int bi, int *grid, int S, int D, int k)
{
    int64_t *c = malloc(sizeof *c * (size_t)(2 * D * D));
    int *mq = malloc(sizeof(int) * (size_t)(2 * D));
    char *seen = malloc((size_t)D);
    if (!c || !mq || !seen) {
        free(c);
        free(mq);
        free(seen);
        return -1;
    }
    int64_t *vals = c + D * D;
    for (int p = 0; p < D; p++)
        for (int q = 0; q < D; q++)
            vals[p * D + q] = c[p * D + q] = link_w(pr, bi, grid[p * S + k], grid[q * S + k + 1]);
    qsort(vals, (size_t)(D * D), sizeof *vals, cmp_i64);
    int lo = -1, hi = D * D - 1; /* vals[hi] always admits a perfect matching */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (perfect(c, D, vals[mid], mq, seen))
            hi = mid;
        else
            lo = mid;
    }
    perfect(c, D, vals[hi], mq, seen);
    int *col = mq + D;
    for (int q = 0; q < D; q++)
        col[mq[q]] = grid[q * S + k + 1];
    for (int p = 0; p < D; p++)
        grid[p * S + k + 1] = col[p];
    free(c);
    free(mq);
    free(seen);
    return 0;
}

#define LS_MATCH_MAX_D 64

/* Candidate: every pipeline on its shortest path (reversed if asked), then
 * replicas matched column by column. */
static int order_candidate(ls_env *env, const genome *g, bool reverse)
{
    const enc_problem *pr = env->pr;
    int S = g->S, D = g->D;
    genome *c = env->tmp;
    genome_copy(c, g, pr->N);
    for (int p = 0; p < D; p++) {
        int *row = &c->perm[p * S];
        if (S <= LS_HK_MAX) {
            if (held_karp(pr, g->bi, row, S))
                return -1;
        } else {
            two_opt(pr, g->bi, row, S);
        }
        for (int a = 0, b = S - 1; reverse && a < b; a++, b--) {
            int t = row[a];
            row[a] = row[b];
            row[b] = t;
        }
    }
    if (D >= 2 && D <= LS_MATCH_MAX_D)
        for (int k = 0; k + 1 < S; k++)
            if (match_column(pr, g->bi, c->perm, S, D, k))
                return -1;
    c->status = 0;
    return 0;
}

/* Candidates: the critical stage's GPU moved to every other position of its
 * pipeline (the others keep their order), then other GPUs of that pipeline
 * moved, at random, up to max_moves candidates. The shortest transfer path above
 * ignores compute: with a slow GPU in the middle, 4/4/1/3 layers can beat
 * 4/1/4/3, and only decoding each order (its split re-optimised, enc_split.c)
 * and evaluating it tells; so order and split are searched together. */
static void relocate_critical(ls_env *env, const genome *g, bool *have)
{
    const enc_problem *pr = env->pr;
    int S = g->S, crit = enc_critical_cell(pr, g), p = crit / S, kc = crit % S;
    /* the critical GPU to every position first, then other GPUs of its
     * pipeline at random, max_moves candidates in all */
    int n = S * (S - 1), take = n < env->max_moves ? n : env->max_moves;
    int *cand = malloc(sizeof(int) * (size_t)n);
    if (!cand)
        return;
    int m = 0;
    for (int to = 0; to < S; to++)
        if (to != kc)
            cand[m++] = kc * S + to;
    int first_other = m;
    for (int k = 0; k < S; k++)
        for (int to = 0; to < S && k != kc; to++)
            if (to != k)
                cand[m++] = k * S + to;
    for (int i = first_other; i < take; i++) {
        int j = i + (int)gsl_rng_uniform_int(env->rng, (unsigned long)(n - i));
        int t = cand[i];
        cand[i] = cand[j];
        cand[j] = t;
    }
    for (int i = 0; i < take; i++) {
        int k = cand[i] / S, to = cand[i] % S;
        genome_copy(env->tmp, g, pr->N);
        int *row = &env->tmp->perm[p * S], gpu = row[k];
        if (to < k)
            memmove(&row[to + 1], &row[to], sizeof(int) * (size_t)(k - to));
        else
            memmove(&row[k], &row[k + 1], sizeof(int) * (size_t)(to - k));
        row[to] = gpu;
        env->tmp->status = 0;
        try_candidate(env, g->fit, have);
    }
    free(cand);
}

bool ls_stage_order(ls_env *env, genome *g)
{
    if (g->S < 2 || g->status != 1)
        return false;
    bool have = false;
    for (int rev = 0; rev < 2; rev++)
        if (order_candidate(env, g, rev == 1) == 0)
            try_candidate(env, g->fit, &have);
    relocate_critical(env, g, &have);
    return adopt(env, g, have);
}

/* --- LS3: critical stage ------------------------------------------------------ */

static void swap_cells(genome *g, int x, int y)
{
    int t = g->perm[x];
    g->perm[x] = g->perm[y];
    g->perm[y] = t;
}

bool ls_critical(ls_env *env, genome *g)
{
    const enc_problem *pr = env->pr;
    if (g->status != 1)
        return false;
    int cells = g->S * g->D, crit = enc_critical_cell(pr, g), cc = pr->cls[g->perm[crit]];
    /* one candidate position per other class: placed first, then unselected */
    int *cand = malloc(sizeof(int) * (size_t)(2 * pr->nclass));
    char *seen = calloc((size_t)(2 * pr->nclass), 1);
    if (!cand || !seen) {
        free(cand);
        free(seen);
        return false;
    }
    int n = 0;
    for (int x = 0; x < pr->N; x++) {
        int c = pr->cls[g->perm[x]], slot = c * 2 + (x >= cells);
        if (c == cc || seen[slot])
            continue;
        seen[slot] = 1;
        cand[n++] = x;
    }
    /* too many classes: a random subset (partial Fisher-Yates) */
    int take = n < env->max_moves ? n : env->max_moves;
    for (int i = 0; i < take; i++) {
        int k = i + (int)gsl_rng_uniform_int(env->rng, (unsigned long)(n - i));
        int t = cand[i];
        cand[i] = cand[k];
        cand[k] = t;
    }
    bool have = false;
    for (int i = 0; i < take; i++) {
        genome_copy(env->tmp, g, pr->N);
        swap_cells(env->tmp, crit, cand[i]);
        env->tmp->status = 0;
        try_candidate(env, g->fit, &have);
    }
    free(cand);
    free(seen);
    return adopt(env, g, have);
}

/* --- LS4: prune a pipeline or a stage ----------------------------------------- */

static int drop(ls_env *env, const genome *g, int row, int col)
{
    const enc_problem *pr = env->pr;
    int S = g->S, D = g->D, S2 = S - (col >= 0), D2 = D - (row >= 0), o = 0;
    int *grid = malloc(sizeof(int) * (size_t)(S * D));
    if (!grid)
        return -1;
    for (int p = 0; p < D; p++)
        for (int k = 0; k < S; k++)
            if (p != row && k != col)
                grid[o++] = g->perm[p * S + k];
    genome_copy(env->tmp, g, pr->N);
    int rc = enc_set_grid(pr, env->tmp, grid, S2, D2);
    free(grid);
    return rc;
}

/* Candidates of LS4, coded: p >= 0 drop pipeline p; -1-k drop stage k;
 * <= RESHAPE: re-slice into shape number RESHAPE - c (see reshape_of). */
#define RESHAPE (-1000000)

/* The i-th other shape with S*D cells or one fewer (by_stage for odd i). */
static bool reshape_of(const enc_problem *pr, const genome *g, int i, int *S2, int *D2,
                       bool *by_stage)
{
    int cells = g->S * g->D, k = 0;
    for (int n = cells; n >= cells - 1 && n >= 1; n--)
        for (int S = 1; S <= pr->smax; S++) {
            if (n % S || (S == g->S && n / S == g->D) || !enc_shape_ok(pr, S, n / S, g->bi))
                continue;
            for (int bs = 0; bs < 2; bs++, k++)
                if (k == i) {
                    *S2 = S;
                    *D2 = n / S;
                    *by_stage = bs;
                    return true;
                }
        }
    return false;
}

bool ls_prune(ls_env *env, genome *g)
{
    const enc_problem *pr = env->pr;
    if (g->status != 1)
        return false;
    int n = 0, S = g->S, D = g->D, S2, D2, nres = 0;
    bool bs;
    while (reshape_of(pr, g, nres, &S2, &D2, &bs))
        nres++;
    int *cand = malloc(sizeof(int) * (size_t)(S + D + nres));
    if (!cand)
        return false;
    for (int p = 0; p < D && !env->keep_d; p++)
        if (enc_shape_ok(pr, S, D - 1, g->bi))
            cand[n++] = p;            /* drop pipeline p */
    for (int k = 0; k < S; k++)
        if (enc_shape_ok(pr, S - 1, D, g->bi))
            cand[n++] = -1 - k;       /* drop stage k */
    for (int i = 0; i < nres; i++)
        if (!env->keep_d || (reshape_of(pr, g, i, &S2, &D2, &bs) && D2 == env->keep_d))
            cand[n++] = RESHAPE - i;  /* the same GPUs in another shape */
    int take = n < env->max_moves ? n : env->max_moves;
    for (int i = 0; i < take; i++) {
        int k = i + (int)gsl_rng_uniform_int(env->rng, (unsigned long)(n - i));
        int t = cand[i];
        cand[i] = cand[k];
        cand[k] = t;
    }
    bool have = false;
    for (int i = 0; i < take; i++) {
        int c = cand[i], rc;
        if (c <= RESHAPE) {
            reshape_of(pr, g, RESHAPE - c, &S2, &D2, &bs);
            genome_copy(env->tmp, g, pr->N);
            rc = enc_reshape(pr, env->tmp, S2, D2, bs);
        } else {
            rc = drop(env, g, c >= 0 ? c : -1, c < 0 ? -1 - c : -1);
        }
        if (rc == 0)
            try_candidate(env, g->fit, &have);
    }
    free(cand);
    return adopt(env, g, have);
}

/* --- LS4b: grow -------------------------------------------------------------------- */

int ls_grow_to(const enc_problem *pr, const genome *g, int D2, genome *out)
{
    int S = g->S, cells = S * g->D, n = S * D2;
    if (D2 <= g->D || n > pr->N || !enc_shape_ok(pr, S, D2, g->bi))
        return -1;
    int *grid = malloc(sizeof(int) * (size_t)pr->N);
    if (!grid)
        return -1;
    memcpy(grid, g->perm, sizeof(int) * (size_t)pr->N);
    /* the unselected GPUs fastest first (insertion sort: stable, by index on ties) */
    for (int i = cells + 1; i < pr->N; i++)
        for (int k = i; k > cells && pr->speed[grid[k]] > pr->speed[grid[k - 1]]; k--) {
            int t = grid[k];
            grid[k] = grid[k - 1];
            grid[k - 1] = t;
        }
    genome_copy(out, g, pr->N);
    int rc = enc_set_grid(pr, out, grid, S, D2);
    free(grid);
    out->status = 0;
    return rc;
}

/* The largest pipeline count the shape allows with S stages. */
static int widest_d(const enc_problem *pr, const genome *g)
{
    int D = pr->N / g->S;
    while (D > g->D && !enc_shape_ok(pr, g->S, D, g->bi))
        D--;
    return D;
}

int ls_widest(const enc_problem *pr, const genome *g, genome *out)
{
    return ls_grow_to(pr, g, widest_d(pr, g), out);
}

bool ls_grow(ls_env *env, genome *g)
{
    const enc_problem *pr = env->pr;
    if (g->status != 1 || env->keep_d)
        return false;
    bool have = false;
    int Dw = widest_d(pr, g);
    if (ls_grow_to(pr, g, g->D + 1, env->tmp) == 0)
        try_candidate(env, g->fit, &have);
    if (Dw > g->D + 1 && ls_grow_to(pr, g, Dw, env->tmp) == 0)
        try_candidate(env, g->fit, &have);
    return adopt(env, g, have);
}

/* --- schedule, sync and microbatch size ------------------------------------------ */

bool ls_genes(ls_env *env, genome *g)
{
    const enc_problem *pr = env->pr;
    if (g->status != 1)
        return false;
    int cand[ENC_NSCHED * ENC_NSYNC * ENC_MAX_B], n = 0, nsync = g->D > 1 ? ENC_NSYNC : 1;
    for (int sc = 0; sc < ENC_NSCHED; sc++)
        for (int sy = 0; sy < nsync; sy++)
            for (int bi = 0; bi < pr->nb; bi++)
                if (!((sched_kind)sc == g->sched && (sync_kind)sy == g->sync && bi == g->bi) &&
                    enc_shape_ok(pr, g->S, g->D, bi))
                    cand[n++] = (sc * ENC_NSYNC + sy) * ENC_MAX_B + bi;
    int take = n < 3 * env->max_moves ? n : 3 * env->max_moves;
    if (take < n) /* a random subset (partial Fisher-Yates) */
        for (int i = 0; i < take; i++) {
            int k = i + (int)gsl_rng_uniform_int(env->rng, (unsigned long)(n - i)), t = cand[i];
            cand[i] = cand[k];
            cand[k] = t;
        }
    bool have = false;
    for (int i = 0; i < take; i++) {
        genome_copy(env->tmp, g, pr->N);
        env->tmp->sched = (sched_kind)(cand[i] / (ENC_NSYNC * ENC_MAX_B));
        env->tmp->sync = (sync_kind)(cand[i] / ENC_MAX_B % ENC_NSYNC);
        env->tmp->bi = cand[i] % ENC_MAX_B;
        env->tmp->status = 0;
        try_candidate(env, g->fit, &have);
    }
    return adopt(env, g, have);
}
