/* enc_seeds.c — the seeds of DESIGN 8 and the reference plan with its
 * memory shortfall (encoding.h). */
#include "encoding.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "enc_pipe.h"
#include "partition_dp.h"
#include "tp_view.h"
#include "sim/models/cost.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/simulator.h"

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
    pdp_problem p = enc_pipe_problem(&c);
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
                          0, 0, 0, INFINITY, {0, 0, 0, 0}, 0, false};
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
    int ty = c->pr->t->gpus[c->gpus[k]].type;
    double need = enc_stage_need(c->pr, c->bi, ty, a, e, enc_in_flight(c->sched, c->S, k, c->m));
    double have = c->pr->t->types[ty].mem_bytes;
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
    bool small = (double)best < ENC_GIB;
    double unit = small ? ENC_GIB / 1024 : ENC_GIB;
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
                (ty->mem_bytes + (double)best) / ENC_GIB, ty->mem_bytes / ENC_GIB);
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

int enc_seed_random(const enc_problem *pr, int S, int D, int bi, gsl_rng *rng, genome *g)
{
    sync_kind sync = (sync_kind)gsl_rng_uniform_int(rng, ENC_NSYNC);
    sched_kind sched = gsl_rng_uniform(rng) < 0.5 ? SCHED_1F1B : SCHED_GPIPE;
    return enc_seed(pr, SEED_RANDOM, S, D, sched, sync, bi, rng, g);
}
