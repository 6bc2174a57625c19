/* encoding.c — genome, canonical form, decoding, bounds and seeds
 * (encoding.h). */
#include "encoding.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition_dp.h"
#include "tp_view.h"
#include "sim/cost.h"
#include "sim/res_table.h"
#include "sim/estimator.h"
#include "sim/simulator.h"

#define GIB 1073741824.0

/* --- problem ---------------------------------------------------------------- */

static int64_t fb_ns(const gpu_type *g, double fwd_flops, recompute_kind rc)
{
    /* backward = 2x forward; full recomputation adds a forward (not of the head,
     * which the callers pass with rc = NONE) */
    return cost_compute_ns(g, fwd_flops * (rc == RECOMPUTE_FULL ? 4.0 : 3.0), 1, 0, 1.0);
}

static void init_costs(enc_problem *pr)
{
    const job *j = pr->j;
    const model_spec *m = &j->model;
    int L = pr->L;
    /* state bytes of the pieces cost_stage_params() adds up */
    pr->mem_layer = j->opt_bytes_per_param * cost_layer_params(m);
    pr->mem_emb = j->opt_bytes_per_param * (cost_stage_params(m, 0, L - 1) -
                                            cost_stage_params(m, 1 < L ? 1 : 0, L - 1));
    pr->mem_head = j->opt_bytes_per_param * (cost_stage_params(m, 0, L - 1) -
                                             cost_stage_params(m, 0, L - 2 >= 0 ? L - 2 : 0));
    if (L == 1) { /* one layer: split the extras by their definitions */
        pr->mem_emb = j->opt_bytes_per_param * cost_embedding_params(m);
        pr->mem_head = j->opt_bytes_per_param * (cost_stage_params(m, 0, 0) - cost_layer_params(m)) -
                       pr->mem_emb;
    } else {
        pr->mem_emb -= pr->mem_layer;
        pr->mem_head -= pr->mem_layer;
    }
    for (int bi = 0; bi < pr->nb; bi++)
        pr->act_layer[bi] = cost_stage_activation_bytes(j, pr->bval[bi], 0, 0);
    for (int bi = 0; bi < pr->nb; bi++)
        for (int ty = 0; ty < pr->ntypes; ty++) {
            const gpu_type *g = &pr->t->types[ty];
            int b = pr->bval[bi];
            size_t x = (size_t)bi * (size_t)pr->ntypes + (size_t)ty;
            pr->lay_ns[x] = fb_ns(g, cost_layer_fwd_flops(&j->model, b, j->seq), j->recompute);
            pr->head_ns[x] = fb_ns(g, cost_head_fwd_flops(&j->model, b, j->seq), RECOMPUTE_NONE);
            pr->emb_ns[x] = 0; /* the embedding is a lookup: no FLOPs in the cost model */
        }
}

static int init_classes(enc_problem *pr, gt_err *e)
{
    const topology *t = pr->t;
    pr->cls = malloc(sizeof *pr->cls * (size_t)pr->N);
    pr->class_first = malloc(sizeof(int) * (size_t)t->nnodes);
    pr->class_size = malloc(sizeof(int) * (size_t)t->nnodes);
    pr->speed = malloc(sizeof *pr->speed * (size_t)pr->N);
    if (!pr->cls || !pr->class_first || !pr->class_size || !pr->speed)
        return gt_fail(e, "out of memory");
    pr->nclass = 0;
    for (int n = 0; n < t->nnodes; n++) {
        if (t->nodes[n].ngpus <= 0)
            continue;
        int c = pr->nclass++;
        pr->class_first[c] = t->nodes[n].first_gpu;
        pr->class_size[c] = t->nodes[n].ngpus;
        for (int x = 0; x < t->nodes[n].ngpus; x++)
            pr->cls[t->nodes[n].first_gpu + x] = c;
    }
    for (int g = 0; g < pr->N; g++) {
        const gpu_type *ty = topo_gpu_type(t, g);
        pr->speed[g] = ty->peak_flops * ty->efficiency;
    }
    return 0;
}

static void init_bvals(enc_problem *pr)
{
    int B = pr->j->batch, b = pr->j->microbatch > 0 ? pr->j->microbatch : 1;
    pr->nb = 0;
    for (int i = 0; i < ENC_MAX_B && b <= B; i++, b *= 2)
        if (B % b == 0) {
            pr->bval[pr->nb] = b;
            pr->mtot[pr->nb++] = B / b;
        }
}

/* all_gpus ablation: the largest D*S <= N some allowed shape reaches */
static int widest_cells(const enc_problem *pr)
{
    int best = 0;
    for (int S = 1; S <= pr->smax; S++)
        for (int D = 1; D * S <= pr->N && D <= pr->mtot[0]; D++)
            best = D * S > best ? D * S : best;
    return best;
}

int enc_problem_init(enc_problem *pr, const topology *t, const job *j, const enc_cfg *cfg,
                     gt_err *e)
{
    memset(pr, 0, sizeof *pr);
    pr->t = t;
    pr->j = j;
    if (cfg)
        pr->cfg = *cfg;
    pr->real = pr->cfg.tp ? pr->cfg.tp->real : t;
    pr->N = t->ngpus;
    pr->L = j->model.layers;
    pr->ntypes = t->ntypes;
    pr->smax = pr->N < pr->L ? pr->N : pr->L;
    if (pr->N < 1 || pr->L < 1)
        return gt_fail(e, "nothing to plan (%d GPUs, %d layers)", pr->N, pr->L);
    init_bvals(pr);
    if (pr->nb == 0)
        return gt_fail(e, "batch %d is not a multiple of microbatch %d", j->batch,
                       j->microbatch);
    size_t nt = (size_t)pr->nb * (size_t)pr->ntypes;
    pr->lay_ns = malloc(sizeof(int64_t) * nt);
    pr->emb_ns = malloc(sizeof(int64_t) * nt);
    pr->head_ns = malloc(sizeof(int64_t) * nt);
    if (!pr->lay_ns || !pr->emb_ns || !pr->head_ns || init_classes(pr, e)) {
        enc_problem_free(pr);
        return gt_fail(e, "out of memory");
    }
    init_costs(pr);
    pr->cells = pr->cfg.all_gpus ? widest_cells(pr) : 0;
    return 0;
}

void enc_problem_free(enc_problem *pr)
{
    free(pr->cls);
    free(pr->class_first);
    free(pr->class_size);
    free(pr->speed);
    free(pr->lay_ns);
    free(pr->emb_ns);
    free(pr->head_ns);
    memset(pr, 0, sizeof *pr);
}

bool enc_shape_ok(const enc_problem *pr, int S, int D, int bi)
{
    if (S < 1 || D < 1 || S > pr->smax || bi < 0 || bi >= pr->nb)
        return false;
    if ((long)S * D > pr->N || D > pr->mtot[bi])
        return false;
    return !pr->cells || S * D == pr->cells;
}

/* --- genome ----------------------------------------------------------------- */

int genome_alloc(genome *g, int N)
{
    memset(g, 0, sizeof *g);
    g->perm = malloc(sizeof(int) * (size_t)N);
    g->first = malloc(sizeof(int) * (size_t)N);
    g->mb = malloc(sizeof(int) * (size_t)N);
    if (!g->perm || !g->first || !g->mb) {
        genome_free(g);
        return -1;
    }
    g->fit = INFINITY;
    return 0;
}

void genome_free(genome *g)
{
    free(g->perm);
    free(g->first);
    free(g->mb);
    memset(g, 0, sizeof *g);
}

void genome_copy(genome *dst, const genome *src, int N)
{
    int *perm = dst->perm, *first = dst->first, *mb = dst->mb;
    *dst = *src;
    dst->perm = perm;
    dst->first = first;
    dst->mb = mb;
    memcpy(perm, src->perm, sizeof(int) * (size_t)N);
    memcpy(first, src->first, sizeof(int) * (size_t)N);
    memcpy(mb, src->mb, sizeof(int) * (size_t)N);
}

bool genome_same(const genome *a, const genome *b)
{
    if (a->hash != b->hash || a->hash2 != b->hash2 || a->S != b->S || a->D != b->D || a->bi != b->bi ||
        a->sched != b->sched || a->sync != b->sync)
        return false;
    return !memcmp(a->perm, b->perm, sizeof(int) * (size_t)(a->S * a->D));
}

int enc_set_grid(const enc_problem *pr, genome *g, const int *grid, int S, int D)
{
    char *mark = calloc((size_t)pr->N, 1);
    if (!mark)
        return -1;
    int cells = S * D;
    if (grid != g->perm)
        memmove(g->perm, grid, sizeof(int) * (size_t)cells);
    for (int x = 0; x < cells; x++)
        mark[g->perm[x]] = 1;
    for (int x = 0, o = cells; x < pr->N; x++)
        if (!mark[x])
            g->perm[o++] = x;
    g->S = S;
    g->D = D;
    g->status = 0;
    free(mark);
    return 0;
}

/* The search-space index of a plan stage's GPUs: the GPU itself, or under a
 * tp_view the unit whose tp GPUs these are, in order; -1 if neither. */
static int stage_cell(const enc_problem *pr, const plan_stage *st)
{
    const tp_view *v = pr->cfg.tp;
    if (!v)
        return st->ngpus == 1 ? st->gpus[0] : -1;
    if (st->ngpus != v->tp)
        return -1;
    for (int u = 0; u < pr->N; u++)
        if (v->unit_gpu[u] == st->gpus[0]) {
            for (int x = 1; x < v->tp; x++)
                if (st->gpus[x] != st->gpus[0] + x)
                    return -1;
            return u;
        }
    return -1;
}

int enc_from_plan(const enc_problem *pr, const plan *p, genome *g)
{
    int D = p->npipes, S = D > 0 ? p->pipes[0].nstages : 0, bi = -1;
    for (int i = 0; i < pr->nb; i++)
        if (pr->bval[i] == p->microbatch_size)
            bi = i;
    if (D < 1 || S < 1 || bi < 0 || p->schedule == SCHED_INTERLEAVED ||
        !enc_shape_ok(pr, S, D, bi))
        return -1;
    int *grid = malloc(sizeof(int) * (size_t)(S * D));
    char *seen = calloc((size_t)pr->N, 1);
    int rc = grid && seen ? 0 : -1;
    for (int d = 0; d < D && !rc; d++) {
        if (p->pipes[d].nstages != S) {
            rc = -1;
            break;
        }
        for (int k = 0; k < S && !rc; k++) {
            int c = stage_cell(pr, &p->pipes[d].stages[k]);
            rc = c < 0 || seen[c] ? -1 : 0;
            if (!rc) {
                seen[c] = 1;
                grid[d * S + k] = c;
            }
        }
    }
    if (!rc) {
        g->bi = bi;
        g->sched = p->schedule;
        g->sync = p->sync;
        rc = enc_set_grid(pr, g, grid, S, D);
    }
    free(grid);
    free(seen);
    return rc;
}

int enc_reshape(const enc_problem *pr, genome *g, int S2, int D2, bool by_stage)
{
    int S = g->S, D = g->D, n = S2 * D2;
    if (n > S * D)
        return -1;
    int *grid = malloc(sizeof(int) * (size_t)(S * D + n));
    if (!grid)
        return -1;
    int *out = grid + S * D;
    for (int x = 0; x < S * D; x++) /* the old grid in reading order */
        grid[x] = by_stage ? g->perm[(x % D) * S + x / D] : g->perm[x];
    for (int x = 0; x < n; x++)
        out[by_stage ? (x % D2) * S2 + x / D2 : x] = grid[x];
    int rc = enc_set_grid(pr, g, out, S2, D2);
    free(grid);
    return rc;
}

/* --- canonical form ---------------------------------------------------------- */

static int row_cmp(const enc_problem *pr, const genome *g, int r1, int r2)
{
    const int *a = &g->perm[r1 * g->S], *b = &g->perm[r2 * g->S];
    for (int k = 0; k < g->S; k++) {
        int c1 = pr->cls[a[k]], c2 = pr->cls[b[k]];
        if (c1 != c2)
            return c1 < c2 ? -1 : 1;
    }
    return 0;
}

/* Stable merge sort of row indices (no qsort: the comparison needs context). */
static void sort_rows(const enc_problem *pr, const genome *g, int *rows, int *tmp, int n)
{
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int i = lo, k = mid, o = lo;
            while (i < mid && k < hi)
                tmp[o++] = row_cmp(pr, g, rows[k], rows[i]) < 0 ? rows[k++] : rows[i++];
            while (i < mid)
                tmp[o++] = rows[i++];
            while (k < hi)
                tmp[o++] = rows[k++];
        }
        memcpy(rows, tmp, sizeof(int) * (size_t)n);
    }
}

static uint64_t fnv(uint64_t h, int v)
{
    return (h ^ (uint64_t)(uint32_t)v) * 1099511628211ULL;
}

static int canon_form(const enc_problem *pr, genome *g)
{
    int N = pr->N, D = g->D, S = g->S, cells = D * S;
    int *buf = malloc(sizeof(int) * (size_t)(2 * D + N + pr->nclass + N));
    if (!buf)
        return -1;
    int *rows = buf, *tmp = buf + D, *np = tmp + D, *used = np + N, *mark = used + pr->nclass;
    for (int r = 0; r < D; r++)
        rows[r] = r;
    sort_rows(pr, g, rows, tmp, D);
    memset(used, 0, sizeof(int) * (size_t)pr->nclass);
    memset(mark, 0, sizeof(int) * (size_t)N);
    for (int r = 0; r < D; r++)
        for (int k = 0; k < S; k++) {
            int c = pr->cls[g->perm[rows[r] * S + k]];
            int gpu = pr->class_first[c] + used[c]++;
            np[r * S + k] = gpu;
            mark[gpu] = 1;
        }
    for (int x = 0, o = cells; x < N; x++)
        if (!mark[x])
            np[o++] = x;
    memcpy(g->perm, np, sizeof(int) * (size_t)N);
    uint64_t h = 1469598103934665603ULL, h2 = 0x9E3779B97F4A7C15ULL;
    h = fnv(fnv(fnv(fnv(fnv(h, S), D), g->bi), (int)g->sched), (int)g->sync);
    h2 = h2 * 31 + (uint64_t)(((S * 131 + D) * 17 + g->bi) * 7 + (int)g->sched * 3 + (int)g->sync);
    for (int x = 0; x < cells; x++) {
        h = fnv(h, pr->cls[g->perm[x]]);
        h2 = (h2 ^ (uint64_t)(pr->cls[g->perm[x]] + 1)) * 0xff51afd7ed558ccdULL;
        h2 ^= h2 >> 29;
    }
    g->hash = h;
    g->hash2 = h2;
    free(buf);
    return 0;
}

/* --- one pipeline's layers ------------------------------------------------- */

typedef struct pipe_ctx {
    const enc_problem *pr;
    const int *gpus;   /* S */
    int S, bi, m;
    sched_kind sched;
} pipe_ctx;

static int in_flight(sched_kind sched, int S, int k, int m)
{
    if (sched == SCHED_GPIPE)
        return m;
    return S - k < m ? S - k : m;
}

static int64_t stage_cost(const void *vc, int k, int a, int e)
{
    const pipe_ctx *c = vc;
    const enc_problem *pr = c->pr;
    size_t x = (size_t)c->bi * (size_t)pr->ntypes + (size_t)pr->t->gpus[c->gpus[k]].type;
    return pr->lay_ns[x] * (e - a + 1) + (a == 0 ? pr->emb_ns[x] : 0) +
           (e == pr->L - 1 ? pr->head_ns[x] : 0);
}

/* cost_stage_memory() from precomputed pieces (the hot path of the DP).
 * Rounding may differ from plan_check() in the last bit; a plan it then
 * rejects is merely lost as a candidate. */
static double stage_need(const enc_problem *pr, int bi, int a, int e, int inflight)
{
    int n = e - a + 1;
    return n * (pr->mem_layer + pr->act_layer[bi] * inflight) + (a == 0 ? pr->mem_emb : 0) +
           (e == pr->L - 1 ? pr->mem_head : 0) + COST_RUNTIME_OVERHEAD_BYTES;
}

static bool stage_fits(const void *vc, int k, int a, int e)
{
    const pipe_ctx *c = vc;
    double need = stage_need(c->pr, c->bi, a, e, in_flight(c->sched, c->S, k, c->m));
    return need <= c->pr->t->types[c->pr->t->gpus[c->gpus[k]].type].mem_bytes;
}

static pdp_problem pipe_problem(const pipe_ctx *c)
{
    return (pdp_problem){c->pr->L, c->S, stage_cost, stage_fits, c, true};
}

/* Largest microbatch count in [1, mmax] this pipeline holds; 0 if none. */
static int pipe_cap(pipe_ctx *c, int mmax)
{
    pdp_problem p = pipe_problem(c);
    int hi = c->sched == SCHED_1F1B && c->S < mmax ? c->S : mmax;
    c->m = hi;
    if (pdp_feasible(&p, INT64_MAX))
        return mmax;
    int lo = 0; /* feasible(lo) (0 = sentinel), !feasible(hi) */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        c->m = mid;
        if (pdp_feasible(&p, INT64_MAX))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void even_cuts(int L, int S, int *first)
{
    for (int k = 0, a = 0; k < S; k++) {
        first[k] = a;
        a += L / S + (k < L % S ? 1 : 0);
    }
}

/* Layers in proportion to speed (largest remainder), each stage >= 1. */
static void speed_cuts(const enc_problem *pr, const int *gpus, int S, int *first)
{
    double tot = 0;
    for (int k = 0; k < S; k++)
        tot += pr->speed[gpus[k]];
    int n[S], left = pr->L - S;
    double rem[S];
    for (int k = 0; k < S; k++) {
        double share = left * pr->speed[gpus[k]] / tot;
        n[k] = 1 + (int)share;
        rem[k] = share - (int)share;
    }
    int given = 0;
    for (int k = 0; k < S; k++)
        given += n[k] - 1;
    for (; given < left; given++) {
        int best = 0;
        for (int k = 1; k < S; k++)
            if (rem[k] > rem[best])
                best = k;
        n[best]++;
        rem[best] = -1;
    }
    for (int k = 0, a = 0; k < S; k++) {
        first[k] = a;
        a += n[k];
    }
}

static bool cuts_fit(const pipe_ctx *c, const int *first)
{
    for (int k = 0; k < c->S; k++) {
        int e = k + 1 < c->S ? first[k + 1] - 1 : c->pr->L - 1;
        if (!stage_fits(c, k, first[k], e))
            return false;
    }
    return true;
}

/* Cut one pipeline for c->m microbatches; bottleneck and sum (surrogate ns). */
static int cut_pipe(const pipe_ctx *c, int *first, int64_t *tau, int64_t *sum)
{
    pdp_problem p = pipe_problem(c);
    if (c->pr->cfg.cuts == ENC_CUT_DP) {
        pdp_result r;
        if (pdp_solve(&p, first, &r))
            return -1;
        *tau = r.max_cost;
        *sum = r.sum_cost;
        return 0;
    }
    if (c->pr->cfg.cuts == ENC_CUT_UNIFORM)
        even_cuts(c->pr->L, c->S, first);
    else
        speed_cuts(c->pr, c->gpus, c->S, first);
    if (!cuts_fit(c, first))
        return -1;
    *tau = *sum = 0;
    for (int k = 0; k < c->S; k++) {
        int64_t v = stage_cost(c, k, first[k], k + 1 < c->S ? first[k + 1] - 1 : c->pr->L - 1);
        *tau = v > *tau ? v : *tau;
        *sum += v;
    }
    return 0;
}

static int64_t xfer_ns(const enc_problem *pr, int b, int from, int to)
{
    double lat, rate;
    topo_path(pr->t, from, to, &lat, &rate);
    return cost_transfer_ns(cost_activation_bytes(pr->j, b), lat, rate);
}

int64_t enc_xfer_ns(const enc_problem *pr, int bi, int from, int to)
{
    return xfer_ns(pr, pr->bval[bi], from, to);
}

/* One microbatch's round trip through the pipeline: all stages' work plus
 * the activation and gradient transfers. */
static int64_t round_trip(const enc_problem *pr, const int *gpus, int S, int b, int64_t sum)
{
    int64_t r = sum;
    for (int k = 0; k + 1 < S; k++)
        r += xfer_ns(pr, b, gpus[k], gpus[k + 1]) + xfer_ns(pr, b, gpus[k + 1], gpus[k]);
    return r;
}

/* --- decoding ---------------------------------------------------------------- */

typedef struct pipe_info {
    int cap;
    int64_t R, tau;
} pipe_info;

/* Water-filling: each next microbatch goes to the pipeline that would then
 * finish first (ties: lower index). */
static int split_microbatches(const genome *g, const pipe_info *pi, int M, int *mb)
{
    int D = g->D, left = M - D;
    for (int p = 0; p < D; p++)
        mb[p] = 1;
    for (; left > 0; left--) {
        int best = -1;
        int64_t bt = INT64_MAX;
        for (int p = 0; p < D; p++) {
            if (mb[p] >= pi[p].cap)
                continue;
            int64_t v = pi[p].R + (int64_t)mb[p] * pi[p].tau;
            if (v < bt) {
                bt = v;
                best = p;
            }
        }
        if (best < 0)
            return -1;
        mb[best]++;
    }
    return 0;
}

static int decode_fail(gt_err *e, const char *what)
{
    if (e)
        gt_fail(e, "%s", what);
    return -1;
}

int enc_decode(const enc_problem *pr, genome *g, gt_err *e)
{
    g->status = 0;
    g->fit = INFINITY;
    if (!enc_shape_ok(pr, g->S, g->D, g->bi))
        return decode_fail(e, "invalid shape");
    if (g->D == 1)
        g->sync = SYNC_RING; /* nothing to synchronise: one canonical value */
    if (canon_form(pr, g))
        return decode_fail(e, "out of memory");
    int S = g->S, D = g->D, M = pr->mtot[g->bi], b = pr->bval[g->bi];
    pipe_info *pi = malloc(sizeof *pi * (size_t)D);
    if (!pi)
        return decode_fail(e, "out of memory");
    int rc = 0;
    for (int p = 0; p < D && !rc; p++) {
        pipe_ctx c = {pr, &g->perm[p * S], S, g->bi, 0, g->sched};
        pi[p].cap = pipe_cap(&c, M - D + 1);
        c.m = pi[p].cap;
        int64_t tau, sum;
        if (pi[p].cap < 1 || cut_pipe(&c, &g->first[p * S], &tau, &sum)) {
            rc = decode_fail(e, "a pipeline does not fit in memory");
            break;
        }
        pi[p].R = round_trip(pr, c.gpus, S, b, sum);
        pi[p].tau = tau;
        if (g->sched == SCHED_1F1B && (pi[p].R + S - 1) / S > tau)
            pi[p].tau = (pi[p].R + S - 1) / S; /* in-flight limit: S per round trip */
    }
    if (!rc && split_microbatches(g, pi, M, g->mb))
        rc = decode_fail(e, "the microbatches do not fit in the pipelines' memory");
    /* re-cut the pipelines whose in-flight microbatches changed */
    for (int p = 0; p < D && !rc; p++) {
        if (g->mb[p] == pi[p].cap || (g->sched == SCHED_1F1B && g->mb[p] >= S))
            continue;
        pipe_ctx c = {pr, &g->perm[p * S], S, g->bi, g->mb[p], g->sched};
        int64_t tau, sum;
        if (cut_pipe(&c, &g->first[p * S], &tau, &sum))
            rc = decode_fail(e, "a pipeline does not fit in memory");
    }
    free(pi);
    return rc;
}

int enc_to_plan(const enc_problem *pr, const genome *g, const char *planner,
                const char *objective, plan *p, gt_err *e)
{
    if (plan_init(p, g->D))
        return gt_fail(e, "out of memory");
    snprintf(p->planner, sizeof p->planner, "%s", planner);
    snprintf(p->objective, sizeof p->objective, "%s", objective);
    p->schedule = g->sched;
    p->sync = g->sync;
    p->microbatch_size = pr->bval[g->bi];
    for (int d = 0; d < g->D; d++) {
        if (plan_pipe_alloc(p, d, g->S)) {
            plan_free(p);
            return gt_fail(e, "out of memory");
        }
        p->pipes[d].microbatches = g->mb[d];
        for (int k = 0; k < g->S; k++) {
            plan_stage *s = &p->pipes[d].stages[k];
            s->ngpus = 1;
            s->gpus[0] = g->perm[d * g->S + k];
            s->first = g->first[d * g->S + k];
            s->last = k + 1 < g->S ? g->first[d * g->S + k + 1] - 1 : pr->L - 1;
            if (pr->cfg.tp) /* the plan runs on the real GPUs of each unit */
                tp_view_expand_stage(pr->cfg.tp, s);
        }
    }
    return 0;
}

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
    if (D > 1) { /* a sync group per stage: ring 2(D-1) steps of D flows */
        double f = 2 * (D - 1) * D;
        if (p->sync == SYNC_PS)
            f *= D * D;
        w += smax * f;
    }
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

/* Bytes per shared resource, laid out as the simulator's network: GPU link
 * out/in (2 per GPU), NIC out/in (2 per node), WAN (site x site) in one
 * dense array; per-pair resources (keys from nres on) through a hash, as
 * there can be ngpus^2 of them. */
typedef struct traffic {
    const enc_problem *pr;
    double *bytes;
    int nres, node0, wan0;
    res_table pairs;
    double *pair_bytes, *pair_cap;
    int npairs;
} traffic;

/* The shared resources are those of topo_path_resources, whose keys below
 * nres are exactly this layout. */
static void flow_bytes(traffic *tr, int a, int b, double bytes)
{
    topo_res r[3];
    int k = topo_path_resources(tr->pr->t, a, b, r);
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

static int by_site_gpu(const void *x, const void *y, const topology *t)
{
    int a = *(const int *)x, b = *(const int *)y;
    if (t->gpus[a].site != t->gpus[b].site)
        return t->gpus[a].site - t->gpus[b].site;
    return a - b;
}

/* Insertion sort of members by (site, GPU), as collective_build orders them. */
static void sort_members(const topology *t, int *m, int n)
{
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && by_site_gpu(&m[k], &m[k - 1], t) < 0; k--) {
            int x = m[k];
            m[k] = m[k - 1];
            m[k - 1] = x;
        }
}

static void ring_bytes(traffic *tr, const int *m, int n, double g)
{
    for (int i = 0; i < n && n > 1; i++)
        flow_bytes(tr, m[i], m[(i + 1) % n], 2.0 * (n - 1) * g / n);
}

/* One layer's gradient sync over members m[0..n) (sorted), per algorithm. */
static void sync_bytes(traffic *tr, sync_kind kind, int *m, int n, double g)
{
    const topology *t = tr->pr->t;
    if (kind == SYNC_RING) {
        ring_bytes(tr, m, n, g);
    } else if (kind == SYNC_PS) {
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (a != b)
                    flow_bytes(tr, m[a], m[b], 2.0 * g / n);
    } else { /* hierarchical: rings inside sites, a ring of leaders, broadcast back */
        int lead[n], start[n + 1], nl = 0;
        for (int i = 0; i < n; i++)
            if (i == 0 || t->gpus[m[i]].site != t->gpus[m[i - 1]].site) {
                start[nl] = i;
                lead[nl++] = m[i];
            }
        start[nl] = n;
        for (int s = 0; s < nl; s++)
            ring_bytes(tr, &m[start[s]], start[s + 1] - start[s], g);
        if (nl > 1) {
            ring_bytes(tr, lead, nl, g);
            for (int s = 0; s < nl; s++)
                for (int k = start[s] + 1; k < start[s + 1]; k++)
                    flow_bytes(tr, lead[s], m[k], g);
        }
    }
}

/* Room for the distinct per-pair resources the floor can meet: one per
 * flow_bytes call (pipeline transfers, then each layer's sync flows). */
static int traffic_alloc(traffic *tr, const genome *g, int L)
{
    const topology *t = tr->pr->t;
    tr->bytes = calloc((size_t)tr->nres, sizeof(double));
    if (!tr->bytes)
        return -1;
    bool any_pair = false;
    for (int i = 0; i < t->nsites * t->nsites; i++)
        any_pair |= t->wan[i].present && t->wan[i].per_pair;
    if (!any_pair)
        return 0;
    long D = g->D, per_layer = g->sync == SYNC_PS ? D * (D - 1) : 2 * D;
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
    const topology *t = tr->pr->t;
    double worst = 0;
    for (int r = 0; r < tr->nres; r++) {
        if (tr->bytes[r] <= 0)
            continue;
        double cap;
        if (r < tr->node0)
            cap = topo_gpu_type(t, r / 2)->link_bw;
        else if (r < tr->wan0)
            cap = t->nodes[(r - tr->node0) / 2].nic_bw;
        else
            cap = t->wan[r - tr->wan0].bw;
        worst = fmax(worst, tr->bytes[r] / cap);
    }
    for (int i = 0; i < tr->npairs; i++)
        worst = fmax(worst, tr->pair_bytes[i] / tr->pair_cap[i]);
    return worst;
}

double enc_traffic_floor(const enc_problem *pr, const genome *g)
{
    const topology *t = pr->t;
    traffic tr = {pr, NULL, 2 * t->ngpus + 2 * t->nnodes + t->nsites * t->nsites,
                  2 * t->ngpus, 2 * t->ngpus + 2 * t->nnodes, {0}, NULL, NULL, 0};
    int S = g->S, D = g->D, *mem = malloc(sizeof(int) * (size_t)(D + 1));
    if (!mem || traffic_alloc(&tr, g, pr->L)) {
        traffic_free(&tr);
        free(mem);
        return 0;
    }
    double act = cost_activation_bytes(pr->j, pr->bval[g->bi]);
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
            mem[p] = g->perm[p * S + k];
        }
        sort_members(t, mem, D);
        sync_bytes(&tr, g->sync, mem, D, cost_grad_bytes(&pr->j->model, l, l));
    }
    double worst = traffic_worst(&tr);
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
        st->xf = xfer_ns(pr, b, gpu, g->perm[p * S + k + 1]);
        st->xb = xfer_ns(pr, b, g->perm[p * S + k + 1], gpu);
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
    for (int k = 0; k < S; k++) {
        busy[k] = m * (st[k].f + st[k].b) + st[k].opt;
        int64_t end_k = arrive + m * (st[k].f + st[k].b);
        int64_t v = end_k + back + st[0].opt;      /* the gradient's way down to stage 0 */
        int64_t w = end_k + st[k].opt;
        v = v > w ? v : w;
        best = v > best ? v : best;
        arrive += st[k].f + st[k].xf;
        back += st[k].b + st[k].xb;
        rt += st[k].f + st[k].b + st[k].xf + st[k].xb;
    }
    if (g->sched == SCHED_1F1B) {
        /* stage 0 runs F(j+S) after B(j), which ends a round trip after F(j) */
        int64_t v = ((m + S - 1) / S) * rt + st[0].opt;
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

/* --- seeds ------------------------------------------------------------------- */

static double order_key(const enc_problem *pr, seed_kind kind, int g)
{
    const gpu_type *ty = topo_gpu_type(pr->t, g);
    if (kind == SEED_FLOPS_PER_WATT)
        return pr->speed[g] / ty->tdp_w;
    if (kind == SEED_MEMORY)
        return ty->mem_bytes;
    return pr->speed[g];
}

/* GPUs in decreasing key order, ties by index (insertion into a merge sort). */
static void gpu_order(const enc_problem *pr, seed_kind kind, int *out, int *tmp)
{
    int n = pr->N;
    for (int x = 0; x < n; x++)
        out[x] = x;
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int i = lo, k = mid, o = lo;
            while (i < mid && k < hi)
                tmp[o++] = order_key(pr, kind, out[k]) > order_key(pr, kind, out[i]) ? out[k++]
                                                                                    : out[i++];
            while (i < mid)
                tmp[o++] = out[i++];
            while (k < hi)
                tmp[o++] = out[k++];
        }
        memcpy(out, tmp, sizeof(int) * (size_t)n);
    }
}

static bool one_pipe_fits(const enc_problem *pr, const int *gpus, int S, int bi)
{
    pipe_ctx c = {pr, gpus, S, bi, pr->mtot[bi], SCHED_1F1B};
    pdp_problem p = pipe_problem(&c);
    return pdp_feasible(&p, INT64_MAX);
}

int enc_min_stages(const enc_problem *pr, seed_kind kind, int bi)
{
    int *ord = malloc(sizeof(int) * (size_t)(2 * pr->N)), res = -1;
    if (!ord)
        return -1;
    gpu_order(pr, kind, ord, ord + pr->N);
    for (int S = 1; S <= pr->smax && res < 0; S++)
        if (one_pipe_fits(pr, ord, S, bi))
            res = S;
    free(ord);
    return res;
}

static void fill_tail(const enc_problem *pr, genome *g, int cells)
{
    char *mark = calloc((size_t)pr->N, 1);
    if (!mark)
        return;
    for (int x = 0; x < cells; x++)
        mark[g->perm[x]] = 1;
    for (int x = 0, o = cells; x < pr->N; x++)
        if (!mark[x])
            g->perm[o++] = x;
    free(mark);
}

/* Sites' GPUs, each site's list sorted fastest first. */
static int site_lists(const enc_problem *pr, int *ord, int *start, int *count)
{
    int *tmp = malloc(sizeof(int) * (size_t)pr->N);
    if (!tmp)
        return -1;
    gpu_order(pr, SEED_FASTEST, tmp, ord);
    int ns = pr->t->nsites, o = 0;
    for (int s = 0; s < ns; s++) {
        start[s] = o;
        for (int x = 0; x < pr->N; x++)
            if (pr->t->gpus[tmp[x]].site == s)
                ord[o++] = tmp[x];
        count[s] = o - start[s];
    }
    free(tmp);
    return 0;
}

static int seed_sites(const enc_problem *pr, seed_kind kind, int S, int D, genome *g)
{
    int ns = pr->t->nsites;
    int *ord = malloc(sizeof(int) * (size_t)(pr->N + 2 * ns)), rc = -1;
    if (!ord || site_lists(pr, ord, ord + pr->N, ord + pr->N + ns)) {
        free(ord);
        return -1;
    }
    int *start = ord + pr->N, *count = start + ns, used = 0;
    int *pick = malloc(sizeof(int) * (size_t)ns);
    if (!pick) {
        free(ord);
        return -1;
    }
    /* sites able to hold a pipeline of S (or a stage group of D) */
    int need = kind == SEED_PIPE_PER_SITE ? S : D;
    for (int s = 0; s < ns; s++)
        if (count[s] >= need)
            pick[used++] = s;
    int groups = kind == SEED_PIPE_PER_SITE ? D : S;
    if (used >= groups && groups >= 1) {
        for (int x = 0; x < groups; x++)
            for (int y = 0; y < need; y++) {
                int gpu = ord[start[pick[x]] + y];
                if (kind == SEED_PIPE_PER_SITE)
                    g->perm[x * S + y] = gpu;
                else
                    g->perm[y * S + x] = gpu;
            }
        rc = 0;
    }
    free(pick);
    free(ord);
    return rc;
}

/* Default shape of the site seeds: as many groups as sites allow. */
static void site_shape(const enc_problem *pr, seed_kind kind, int *S, int *D, int bi)
{
    int ns = pr->t->nsites, *cnt = calloc((size_t)ns, sizeof(int));
    if (!cnt)
        return;
    for (int x = 0; x < pr->N; x++)
        cnt[pr->t->gpus[x].site]++;
    int minc = pr->N;
    for (int s = 0; s < ns; s++)
        if (cnt[s] > 0 && cnt[s] < minc)
            minc = cnt[s];
    int nonempty = 0;
    for (int s = 0; s < ns; s++)
        nonempty += cnt[s] > 0;
    if (kind == SEED_PIPE_PER_SITE) {
        if (*S <= 0)
            *S = minc < pr->smax ? minc : pr->smax;
        if (*D <= 0)
            *D = nonempty < pr->mtot[bi] ? nonempty : pr->mtot[bi];
    } else {
        if (*S <= 0)
            *S = nonempty < pr->smax ? nonempty : pr->smax;
        if (*D <= 0)
            *D = minc < pr->mtot[bi] ? minc : pr->mtot[bi];
    }
    free(cnt);
}

static void random_shape(const enc_problem *pr, gsl_rng *rng, genome *g)
{
    for (int tries = 0; tries < 64; tries++) {
        int S = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)pr->smax);
        int dmax = pr->N / S < pr->mtot[g->bi] ? pr->N / S : pr->mtot[g->bi];
        int D = pr->cells ? pr->cells / S : 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)dmax);
        if (enc_shape_ok(pr, S, D, g->bi)) {
            g->S = S;
            g->D = D;
            return;
        }
    }
    g->S = pr->smax;
    g->D = 1;
}

static void shuffle(gsl_rng *rng, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int k = (int)gsl_rng_uniform_int(rng, (unsigned long)(i + 1)), t = a[i];
        a[i] = a[k];
        a[k] = t;
    }
}

int enc_seed(const enc_problem *pr, seed_kind kind, int S, int D, sched_kind sched,
             sync_kind sync, int bi, gsl_rng *rng, genome *g)
{
    g->sched = sched;
    g->sync = sync;
    g->bi = bi;
    g->status = 0;
    if (kind == SEED_RANDOM) {
        for (int x = 0; x < pr->N; x++)
            g->perm[x] = x;
        shuffle(rng, g->perm, pr->N);
        random_shape(pr, rng, g);
        if (S > 0 && D > 0 && enc_shape_ok(pr, S, D, bi)) {
            g->S = S;
            g->D = D;
        }
        return 0;
    }
    if (kind == SEED_PIPE_PER_SITE || kind == SEED_DP_PER_SITE) {
        site_shape(pr, kind, &S, &D, bi);
        if (!enc_shape_ok(pr, S, D, bi) || seed_sites(pr, kind, S, D, g))
            return -1;
        g->S = S;
        g->D = D;
        fill_tail(pr, g, S * D);
        return 0;
    }
    int *tmp = malloc(sizeof(int) * (size_t)pr->N);
    if (!tmp)
        return -1;
    gpu_order(pr, kind, g->perm, tmp);
    free(tmp);
    if (S <= 0)
        S = enc_min_stages(pr, kind, bi);
    if (S <= 0)
        return -1;
    if (D <= 0)
        D = 1;
    if (!enc_shape_ok(pr, S, D, bi))
        return -1;
    g->S = S;
    g->D = D;
    return 0;
}

/* The index of the site ranked `rank` by summed FLOP/s (ties: lower index). */
static int site_by_rank(const enc_problem *pr, int rank)
{
    int ns = pr->t->nsites, pick = -1;
    double *f = calloc((size_t)ns, sizeof *f);
    char *taken = calloc((size_t)ns, 1);
    if (!f || !taken) {
        free(f);
        free(taken);
        return -1;
    }
    for (int g = 0; g < pr->N; g++)
        f[pr->t->gpus[g].site] += pr->speed[g];
    for (int r = 0; r <= rank && r < ns; r++) {
        pick = -1;
        for (int x = 0; x < ns; x++)
            if (!taken[x] && f[x] > 0 && (pick < 0 || f[x] > f[pick]))
                pick = x;
        if (pick < 0)
            break;
        taken[pick] = 1;
    }
    free(f);
    free(taken);
    return pick;
}

int enc_seed_site(const enc_problem *pr, int rank, sched_kind sched, sync_kind sync, int bi,
                  genome *g)
{
    int site = site_by_rank(pr, rank), n = 0, rc = -1;
    int *ord = malloc(sizeof(int) * (size_t)(2 * pr->N));
    if (site < 0 || !ord) {
        free(ord);
        return -1;
    }
    gpu_order(pr, SEED_FASTEST, ord, ord + pr->N);
    for (int x = 0; x < pr->N; x++) /* the site's GPUs, fastest first */
        if (pr->t->gpus[ord[x]].site == site)
            ord[n++] = ord[x];
    int smax = n < pr->smax ? n : pr->smax;
    for (int S = 1; S <= smax && rc; S++)
        if (one_pipe_fits(pr, ord, S, bi)) {
            int D = n / S < pr->mtot[bi] ? n / S : pr->mtot[bi];
            if (pr->cells || !enc_shape_ok(pr, S, D, bi))
                break;
            memcpy(g->perm, ord, sizeof(int) * (size_t)(S * D));
            fill_tail(pr, g, S * D);
            *g = (genome){S, D, bi, sched, D > 1 ? sync : SYNC_RING, g->perm, g->first, g->mb,
                          0, 0, 0, INFINITY, {0, 0, 0, 0}};
            rc = 0;
        }
    free(ord);
    return rc;
}

/* --- the reference plan and the memory shortfall ------------------------------ */

/* Memory overflow of a stage in bytes (0 when it fits): monotone in the range. */
static int64_t overflow_cost(const void *vc, int k, int a, int e)
{
    const pipe_ctx *c = vc;
    double need = stage_need(c->pr, c->bi, a, e, in_flight(c->sched, c->S, k, c->m));
    double have = topo_gpu_type(c->pr->t, c->gpus[k])->mem_bytes;
    return need > have ? (int64_t)ceil(need - have) : 0;
}

/* Smallest largest-overflow over S, for one pipeline of the GPUs with the most
 * memory (1F1B, smallest microbatch): the closest the job gets to fitting. */
static int shortfall(const enc_problem *pr, gt_err *e)
{
    int *ord = malloc(sizeof(int) * (size_t)(2 * pr->N)), *first = malloc(sizeof(int) * (size_t)pr->L);
    if (!ord || !first) {
        free(ord);
        free(first);
        return gt_fail(e, "out of memory");
    }
    gpu_order(pr, SEED_MEMORY, ord, ord + pr->N);
    int64_t best = INT64_MAX;
    int bestS = 1, bk = 0, ba = 0, be = 0;
    for (int S = 1; S <= pr->smax; S++) {
        pipe_ctx c = {pr, ord, S, 0, pr->mtot[0], SCHED_1F1B};
        pdp_problem p = {pr->L, S, overflow_cost, NULL, &c, true};
        pdp_result r;
        if (pdp_solve(&p, first, &r) || r.max_cost >= best)
            continue;
        best = r.max_cost;
        bestS = S;
        for (int k = 0; k < S; k++) {
            int last = k + 1 < S ? first[k + 1] - 1 : pr->L - 1;
            if (overflow_cost(&c, k, first[k], last) == best) {
                bk = k;
                ba = first[k];
                be = last;
                break;
            }
        }
    }
    char name[160];
    topo_gpu_name(pr->t, ord[bk], name, sizeof name);
    const gpu_type *ty = topo_gpu_type(pr->t, ord[bk]);
    /* MiB below 1 GiB so that a shortfall of a few bytes does not print as 0.00 GiB */
    bool small = (double)best < GIB;
    double unit = small ? GIB / 1024 : GIB;
    if (best <= 0)
        gt_fail(e, "no plan decodes although %d stage%s of the GPUs with the most memory fit "
                   "(1f1b, microbatch %d): every shape the planner may use was rejected",
                bestS, bestS > 1 ? "s" : "", pr->bval[0]);
    else
        gt_fail(e, "the job fits on no subset of the %d GPUs: the closest arrangement (%d stage%s "
                   "on the GPUs with the most memory, 1f1b, microbatch %d) still lacks %.2f %s "
                   "on %s (%s, stage %d, layers [%d, %d], needs %.2f GiB of %.2f GiB)",
                pr->N, bestS, bestS > 1 ? "s" : "", pr->bval[0], (double)best / unit,
                small ? "MiB" : "GiB", name, ty->id, bk, ba, be,
                (ty->mem_bytes + (double)best) / GIB, ty->mem_bytes / GIB);
    free(ord);
    free(first);
    return -1;
}

/* A seed of shape S x D that decodes (fits memory), or -1. */
static int try_reference(const enc_problem *pr, seed_kind kind, int S, int D, int bi, genome *g)
{
    if (enc_seed(pr, kind, S, D, SCHED_1F1B, SYNC_RING, bi, NULL, g) == 0 &&
        enc_decode(pr, g, NULL) == 0)
        return 0;
    return -1;
}

int enc_reference(const enc_problem *pr, genome *g, gt_err *e)
{
    static const seed_kind kinds[] = {SEED_FASTEST, SEED_MEMORY};
    for (int x = 0; x < 2; x++)
        for (int bi = 0; bi < pr->nb; bi++) {
            if (pr->cells) { /* all-GPUs ablation: every S x D grid of exactly that many cells */
                for (int S = 1; S <= pr->smax; S++)
                    if (pr->cells % S == 0 && enc_shape_ok(pr, S, pr->cells / S, bi) &&
                        try_reference(pr, kinds[x], S, pr->cells / S, bi, g) == 0)
                        return 0;
                continue;
            }
            /* the fewest stages that fit the memory-sorted GPUs, or more when the
             * seed's own cuts (uniform, or not re-partitioned) need them */
            int S0 = enc_min_stages(pr, kinds[x], bi);
            for (int S = S0; S > 0 && S <= pr->smax; S++)
                if (try_reference(pr, kinds[x], S, 1, bi, g) == 0)
                    return 0;
        }
    if (pr->cells)
        return gt_fail(e, "no grid of %d GPUs (the all-GPUs ablation's cell count) fits memory "
                          "with any stage count and microbatch size",
                       pr->cells);
    return shortfall(pr, e);
}
