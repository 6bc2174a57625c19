/* encoding.c — the problem, the genome's canonical form, one pipeline's
 * layers and decoding (encoding.h); the genome itself is in enc_genome.c,
 * fitness, bounds and finalists in enc_fitness.c, seeds and the reference
 * plan in enc_seeds.c. */
#include "encoding.h"
#include "sim/base/word_hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "enc_pipe.h"
#include "partition_dp.h"
#include "tp_view.h"
#include "sim/models/attn_choice.h"
#include "sim/models/cost.h"
#include "sim/models/dp_sync.h"
#include "sim/models/memory.h"
#include "sim/models/plan_view.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/simulator.h"
#include "sim/models/path.h"


/* --- problem ---------------------------------------------------------------- */

static void init_costs(enc_problem *pr)
{
    const job *j = pr->j;
    const model_spec *m = &j->model;
    int L = pr->L;
    /* state bytes of the pieces cost_stage_params() adds up */
    double sb = memory_state_bytes_per_param(j);
    pr->mem_layer = sb * cost_layer_params(m);
    pr->mem_emb = sb * (cost_stage_params(m, 0, L - 1) -
                                            cost_stage_params(m, 1 < L ? 1 : 0, L - 1));
    pr->mem_head = sb * (cost_stage_params(m, 0, L - 1) -
                                             cost_stage_params(m, 0, L - 2 >= 0 ? L - 2 : 0));
    if (L == 1) { /* one layer: split the extras by their definitions */
        pr->mem_emb = sb * cost_embedding_params(m);
        pr->mem_head = sb * (cost_stage_params(m, 0, 0) - cost_layer_params(m)) -
                       pr->mem_emb;
    } else {
        pr->mem_emb -= pr->mem_layer;
        pr->mem_head -= pr->mem_layer;
    }
    /* a unit of tp GPUs (tp_view.h) holds tp x what each of its GPUs holds
     * (memory.h: activations per GPU are not simply 1/tp of one GPU's) */
    int tp = pr->cfg.tp ? pr->cfg.tp->tp : 1;
    for (int f = 0; f < 2; f++) {
        job jf = *j;
        jf.attention = f ? ATTN_FUSED : ATTN_UNFUSED;
        const job *jj = j->attention == ATTN_AUTO ? &jf : j;
        for (int bi = 0; bi < pr->nb; bi++) {
            int b = pr->bval[bi];
            pr->act_layer[bi][f] = tp * memory_layer_activation_bytes(jj, b, tp);
            /* memory_stage_temporary() depends on the stage only through
             * whether it holds the last layer */
            pr->tmp_mid[bi][f] = tp * memory_stage_temporary(jj, b, 0, tp, SHARD_NONE, 1);
            pr->tmp_last[bi][f] = tp * memory_stage_temporary(jj, b, L - 1, tp, SHARD_NONE, 1);
        }
    }
    for (int ty = 0; ty < pr->ntypes; ty++)
        pr->ty_fused[ty] = (unsigned char)attn_fused_on(j, &pr->t->types[ty]);
    for (int bi = 0; bi < pr->nb; bi++)
        for (int ty = 0; ty < pr->ntypes; ty++) {
            const gpu_type *g = &pr->t->types[ty];
            int b = pr->bval[bi];
            size_t x = (size_t)bi * (size_t)pr->ntypes + (size_t)ty;
            pr->lay_ns[x] = cost_layer_pass_ns(j, g, b);
            pr->head_ns[x] = cost_head_pass_ns(j, g, b);
            pr->emb_ns[x] = cost_embedding_pass_ns(j, g, b);
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
    /* the fastest counted-FLOP rate of each type under the cost model (an
     * upper bound, so W / speed stays a lower bound of time) */
    double *rate = malloc(sizeof *rate * (size_t)(t->ntypes > 0 ? t->ntypes : 1));
    if (!rate)
        return gt_fail(e, "out of memory");
    for (int ty = 0; ty < t->ntypes; ty++)
        rate[ty] = cost_max_rate(pr->j, &t->types[ty], pr->bval, pr->nb);
    for (int g = 0; g < pr->N; g++)
        pr->speed[g] = rate[t->gpus[g].type];
    free(rate);
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
    pr->ty_fused = malloc((size_t)(pr->ntypes > 0 ? pr->ntypes : 1));
    if (!pr->lay_ns || !pr->emb_ns || !pr->head_ns || !pr->ty_fused || init_classes(pr, e)) {
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
    free(pr->ty_fused);
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
    return word_hash_fnv(h, (uint32_t)v);
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
    uint64_t h = WORD_HASH_FNV_BASIS, h2 = 0x9E3779B97F4A7C15ULL;
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

int enc_in_flight(sched_kind sched, int S, int k, int m)
{
    return plan_in_flight_rule(sched, S, 1, k, m); /* the simulator's rule */
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
double enc_stage_need(const enc_problem *pr, int bi, int ty, int a, int e, int inflight)
{
    int n = e - a + 1, f = pr->ty_fused[ty];
    return n * (pr->mem_layer + pr->act_layer[bi][f] * inflight) + (a == 0 ? pr->mem_emb : 0) +
           (e == pr->L - 1 ? pr->mem_head + pr->tmp_last[bi][f] : pr->tmp_mid[bi][f]) +
           COST_RUNTIME_OVERHEAD_BYTES;
}

static bool stage_fits(const void *vc, int k, int a, int e)
{
    const pipe_ctx *c = vc;
    int ty = c->pr->t->gpus[c->gpus[k]].type;
    double need = enc_stage_need(c->pr, c->bi, ty, a, e, enc_in_flight(c->sched, c->S, k, c->m));
    return need <= c->pr->t->types[ty].mem_bytes;
}

pdp_problem enc_pipe_problem(const pipe_ctx *c)
{
    return (pdp_problem){c->pr->L, c->S, stage_cost, stage_fits, c, true};
}

/* Largest microbatch count in [1, mmax] this pipeline holds; 0 if none. */
static int pipe_cap(pipe_ctx *c, int mmax)
{
    pdp_problem p = enc_pipe_problem(c);
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
static int cut_pipe(const pipe_ctx *c, enc_cut_rule rule, int *first, int64_t *tau,
                    int64_t *sum)
{
    pdp_problem p = enc_pipe_problem(c);
    if (rule == ENC_CUT_DP || rule == ENC_CUT_MINMAX) {
        pdp_result r;
        if (pdp_solve(&p, first, &r))
            return -1;
        *tau = r.max_cost;
        *sum = r.sum_cost;
        return 0;
    }
    if (rule == ENC_CUT_UNIFORM)
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

int enc_cut_row(const enc_problem *pr, const int *gpus, int S, int bi, int m, sched_kind sched,
                enc_cut_rule rule, int *first)
{
    pipe_ctx c = {pr, gpus, S, bi, m, sched};
    int64_t tau, sum;
    return cut_pipe(&c, rule, first, &tau, &sum);
}

static int64_t xfer_ns(const enc_problem *pr, int b, int from, int to)
{
    double lat, rate;
    path_lone(pr->t, from, to, &lat, &rate);
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
        r = t_add(r, t_add(xfer_ns(pr, b, gpus[k], gpus[k + 1]), xfer_ns(pr, b, gpus[k + 1], gpus[k])));
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
            int64_t v = t_add(pi[p].R, t_mul(mb[p], pi[p].tau));
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
    return enc_decode_rule(pr, g, pr->cfg.cuts, e);
}

int enc_canonical(const enc_problem *pr, genome *g)
{
    if (!enc_shape_ok(pr, g->S, g->D, g->bi))
        return -1;
    if (g->D == 1)
        g->sync = SYNC_RING; /* nothing to synchronise: one canonical value */
    return canon_form(pr, g);
}

static int decode(const enc_problem *pr, genome *g, enc_cut_rule rule, gt_err *e,
                  enc_split_memo *m)
{
    g->status = 0;
    g->fit = INFINITY;
    g->est_ok = false;
    if (!enc_shape_ok(pr, g->S, g->D, g->bi))
        return decode_fail(e, "invalid shape");
    if (enc_canonical(pr, g))
        return decode_fail(e, "out of memory");
    if (rule == ENC_CUT_DP)
        return enc_joint_split_memo(pr, g, e, m);
    return enc_decode_cuts(pr, g, rule, NULL, e);
}

int enc_decode_rule(const enc_problem *pr, genome *g, enc_cut_rule rule, gt_err *e)
{
    return decode(pr, g, rule, e, NULL);
}

int enc_decode_memo(const enc_problem *pr, genome *g, enc_split_memo *m)
{
    return decode(pr, g, pr->cfg.cuts, NULL, m);
}

void enc_pipe_caps(const enc_problem *pr, const genome *g, int *cap)
{
    for (int p = 0; p < g->D; p++) {
        pipe_ctx c = {pr, &g->perm[p * g->S], g->S, g->bi, 0, g->sched};
        cap[p] = pipe_cap(&c, pr->mtot[g->bi] - g->D + 1);
    }
}

int enc_decode_cuts(const enc_problem *pr, genome *g, enc_cut_rule rule, const int *caps,
                    gt_err *e)
{
    int S = g->S, D = g->D, M = pr->mtot[g->bi], b = pr->bval[g->bi];
    g->split = (signed char)rule;
    g->est_ok = false;
    pipe_info *pi = malloc(sizeof *pi * (size_t)D);
    if (!pi)
        return decode_fail(e, "out of memory");
    int rc = 0;
    for (int p = 0; p < D && !rc; p++) {
        pipe_ctx c = {pr, &g->perm[p * S], S, g->bi, 0, g->sched};
        pi[p].cap = caps ? caps[p] : pipe_cap(&c, M - D + 1);
        c.m = pi[p].cap;
        int64_t tau, sum;
        if (pi[p].cap < 1 || cut_pipe(&c, rule, &g->first[p * S], &tau, &sum)) {
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
        if (cut_pipe(&c, rule, &g->first[p * S], &tau, &sum))
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

