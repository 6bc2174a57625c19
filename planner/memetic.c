/* memetic.c — the memetic planner: population, generations, phases and
 * finalists (memetic.h). Operators are in operators.c, local search in
 * local_search.c, the genome in encoding.c. */
#include "memetic.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "islands.h"
#include "local_search.h"
#include "seed_plans.h"
#include "tp_view.h"
#include "sim/estimator.h"
#include "sim/simulator.h"

#define MA_PC 0.7          /* crossover probability */
#define MA_PLAIN_SHARE 0.25 /* of the crossovers: plain order crossover (OX) */
#define MA_PLS 0.1         /* LS on a child that is not better than the median */
#define MA_LS_MOVES 12     /* LS3/LS4 candidates per call (x3 for the genes sweep) */
#define MA_STALL 40        /* generations without improvement before stopping */
#define MA_BIG_GPUS 256    /* above: a smaller population and lighter local search */
#define MA_RESTARTS 3      /* budget mode: restarts without improvement before stopping */
#define MA_SEARCH_SHARE 0.85 /* budget mode: the search's share; replays get the rest */
#define MA_DEFAULT_GENS 300
#define MA_PAR_MIN_GPUS 24 /* fewer GPUs: children are evaluated sequentially */
#define MA_REPLAY_WORK 2e6 /* ops + flows the finalists' replays may simulate in all */
#define MA_ELITE 48        /* best distinct genomes kept for the finalists */
#define MA_ARCHIVE 64

/* Estimates already made, keyed by the canonical genome's two hashes.
 * Only merged into between generations (in child order), so the parallel
 * children read it without locks and the run stays deterministic. */
typedef struct cache_entry {
    uint64_t k1, k2;          /* k2 is never 0: 0 marks an empty slot */
    obj_metrics m;
    signed char st;           /* 1 feasible, -1 the estimator refused it */
} cache_entry;

typedef struct eval_cache {
    cache_entry *tab;
    size_t cap, n;            /* cap: a power of two */
} eval_cache;

struct search;

/* One child's evaluation context: its new estimates wait here for the merge. */
typedef struct kid_ctx {
    struct search *s;
    cache_entry *fresh;
    int nfresh, capfresh;
} kid_ctx;

typedef struct search {
    const enc_problem *pr;
    const planner_opts *o;
    const memetic_cfg *cfg;
    objective obj;             /* estimate basis */
    int P, lambda, nth;
    bool par;                       /* parallel children (worth it on big instances) */
    int ls_moves;                   /* LS3/LS4 candidates per call */
    bool ls_light;                  /* big instances: LS only for new bests (and rarely) */
    genome *pop, *kids, *scratch;   /* P, lambda, 2 * lambda */
    gsl_rng **rng;                  /* lambda */
    kid_ctx *kc;                    /* lambda */
    eval_cache cache;
    genome *elite;                  /* MA_ELITE best distinct by estimate, sorted */
    int nelite;
    genome *seeds;                  /* the deterministic seeds, as evaluated (finalists too) */
    int nseeds;
    pareto_archive *arch;           /* pareto only */
    long evals;                     /* estimator calls */
    int gen;                        /* generations so far, all phases */
    double t0, deadline;            /* deadline 0 = none */
    double last_print;
    const char *stopped;            /* why the last phase ended */
} search;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- evaluation ------------------------------------------------------------------ */

static uint64_t key2(const genome *g)
{
    return g->hash2 | 1;
}

static const cache_entry *cache_find(const eval_cache *c, uint64_t k1, uint64_t k2)
{
    if (!c->cap)
        return NULL;
    for (size_t i = k1 & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        if (!c->tab[i].k2)
            return NULL;
        if (c->tab[i].k1 == k1 && c->tab[i].k2 == k2)
            return &c->tab[i];
    }
}

static int cache_put(eval_cache *c, const cache_entry *x)
{
    if (2 * (c->n + 1) > c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4096;
        cache_entry *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < c->cap; i++)
            if (c->tab[i].k2) {
                size_t k = c->tab[i].k1 & (cap - 1);
                while (t[k].k2)
                    k = (k + 1) & (cap - 1);
                t[k] = c->tab[i];
            }
        free(c->tab);
        c->tab = t;
        c->cap = cap;
    }
    size_t i = x->k1 & (c->cap - 1);
    while (c->tab[i].k2) {
        if (c->tab[i].k1 == x->k1 && c->tab[i].k2 == x->k2)
            return 0;
        i = (i + 1) & (c->cap - 1);
    }
    c->tab[i] = *x;
    c->n++;
    return 0;
}

static const cache_entry *fresh_find(const kid_ctx *k, uint64_t k1, uint64_t k2)
{
    for (int i = 0; i < k->nfresh; i++)
        if (k->fresh[i].k1 == k1 && k->fresh[i].k2 == k2)
            return &k->fresh[i];
    return NULL;
}

static void fresh_push(kid_ctx *k, const cache_entry *x)
{
    if (k->nfresh == k->capfresh) {
        int cap = k->capfresh ? 2 * k->capfresh : 64;
        cache_entry *f = realloc(k->fresh, sizeof *f * (size_t)cap);
        if (!f)
            return; /* not remembered: only costs a re-estimate */
        k->fresh = f;
        k->capfresh = cap;
    }
    k->fresh[k->nfresh++] = *x;
}

/* Decode, then estimate unless the canonical genome was estimated before. */
static void eval_genome(void *vctx, genome *g)
{
    kid_ctx *k = vctx;
    const search *s = k->s;
    g->status = -1;
    g->fit = INFINITY;
    if (enc_decode(s->pr, g, NULL))
        return;
    const cache_entry *c = cache_find(&s->cache, g->hash, key2(g));
    if (!c)
        c = fresh_find(k, g->hash, key2(g));
    cache_entry x = {g->hash, key2(g), {0, 0, 0, 0}, 0};
    if (c) {
        x = *c;
    } else {
        x.st = (signed char)enc_estimate(s->pr, g, &x.m);
        fresh_push(k, &x);
    }
    g->status = x.st;
    if (x.st == 1) {
        g->est = x.m;
        g->fit = objective_value(&s->obj, &g->est);
    }
}

/* After a parallel step: the children's new estimates join the cache in
 * child order and count as evaluations. */
static int merge_fresh(search *s, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        kid_ctx *k = &s->kc[i];
        for (int f = 0; f < k->nfresh; f++) {
            if (!cache_find(&s->cache, k->fresh[f].k1, k->fresh[f].k2))
                s->evals++;
            rc |= cache_put(&s->cache, &k->fresh[f]);
        }
        k->nfresh = 0;
    }
    return rc;
}

/* Objective changed (phases): re-score from the stored estimates. */
static void rescore(search *s, genome *g, int n)
{
    for (int i = 0; i < n; i++)
        if (g[i].status == 1)
            g[i].fit = objective_value(&s->obj, &g[i].est);
}

static void elite_rescore(search *s);

/* splitmix64: one independent stream per (seed, generation, child). */
static unsigned long stream_seed(uint64_t seed, int gen, int idx)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)gen * 0xBF58476D1CE4E5B9ULL +
                 (uint64_t)idx * 0x94D049BB133111EBULL + 0x2545F4914F6CDD1DULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (unsigned long)((z ^ (z >> 31)) & 0xffffffffUL);
}

/* --- the elite: finalists come from here ---------------------------------------------- */

/* Keep g if it is among the MA_ELITE best distinct genomes seen (stable:
 * an equal fitness goes after the ones already kept). */
static void elite_offer(search *s, const genome *g)
{
    if (g->status != 1 || !isfinite(g->fit))
        return;
    for (int i = 0; i < s->nelite; i++)
        if (genome_same(&s->elite[i], g))
            return;
    int pos = s->nelite;
    while (pos > 0 && g->fit < s->elite[pos - 1].fit)
        pos--;
    if (pos >= MA_ELITE)
        return;
    genome spare = s->elite[s->nelite < MA_ELITE ? s->nelite : MA_ELITE - 1];
    int last = s->nelite < MA_ELITE ? s->nelite : MA_ELITE - 1;
    memmove(&s->elite[pos + 1], &s->elite[pos], sizeof *s->elite * (size_t)(last - pos));
    s->elite[pos] = spare;
    genome_copy(&s->elite[pos], g, s->pr->N);
    if (s->nelite < MA_ELITE)
        s->nelite++;
}

/* The objective changed: re-score and re-sort (insertion sort, stable). */
static void elite_rescore(search *s)
{
    rescore(s, s->seeds, s->nseeds);
    for (int i = 0; i < s->nelite; i++)
        s->elite[i].fit = objective_value(&s->obj, &s->elite[i].est);
    for (int i = 1; i < s->nelite; i++)
        for (int k = i; k > 0 && s->elite[k].fit < s->elite[k - 1].fit; k--) {
            genome t = s->elite[k];
            s->elite[k] = s->elite[k - 1];
            s->elite[k - 1] = t;
        }
}

/* --- survival --------------------------------------------------------------------- */

static int by_fit(const genome *a, const genome *b)
{
    return a->fit < b->fit ? -1 : a->fit > b->fit ? 1 : 0;
}

/* Stable sort of idx[] by fitness (merge sort, index order on ties). */
static void sort_idx(const genome *all, int *idx, int *tmp, int n)
{
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int i = lo, k = mid, o = lo;
            while (i < mid && k < hi)
                tmp[o++] = by_fit(&all[idx[k]], &all[idx[i]]) < 0 ? idx[k++] : idx[i++];
            while (i < mid)
                tmp[o++] = idx[i++];
            while (k < hi)
                tmp[o++] = idx[k++];
        }
        memcpy(idx, tmp, sizeof(int) * (size_t)n);
    }
}

/* (mu + lambda): the P best distinct genomes of pop + kids become pop (the
 * structs move, their arrays are not copied); duplicates fill up only when
 * there are too few distinct ones. */
static int survive(search *s, int nkids)
{
    int P = s->P, n = P + nkids;
    genome *all = malloc(sizeof *all * (size_t)n);
    int *idx = malloc(sizeof(int) * (size_t)(3 * n));
    if (!all || !idx) {
        free(all);
        free(idx);
        return -1;
    }
    memcpy(all, s->pop, sizeof *all * (size_t)P);
    memcpy(all + P, s->kids, sizeof *all * (size_t)nkids);
    int *tmp = idx + n, *dup = tmp + n, kept = 0, o = 0;
    for (int i = 0; i < n; i++)
        idx[i] = i;
    sort_idx(all, idx, tmp, n);
    for (int i = 0; i < n; i++) {
        dup[i] = 0;
        for (int k = 0; k < kept && !dup[i]; k++)
            dup[i] = genome_same(&all[idx[i]], &s->pop[k]);
        if (!dup[i] && kept < P)
            s->pop[kept++] = all[idx[i]];
    }
    for (int i = 0; i < n && kept < P; i++)
        if (dup[i]) {
            s->pop[kept++] = all[idx[i]];
            dup[i] = 2; /* used */
        }
    /* whatever was not kept becomes kid storage */
    for (int i = 0; i < n; i++) {
        bool used = false;
        for (int k = 0; k < P && !used; k++)
            used = s->pop[k].perm == all[idx[i]].perm;
        if (!used)
            s->kids[o++] = all[idx[i]];
    }
    free(all);
    free(idx);
    return 0;
}

/* --- one child ------------------------------------------------------------------- */

static int tournament(const search *s, gsl_rng *rng)
{
    int a = (int)gsl_rng_uniform_int(rng, (unsigned long)s->P);
    int b = (int)gsl_rng_uniform_int(rng, (unsigned long)s->P);
    return a < b ? a : b; /* the population is sorted: lower index = fitter */
}

static void local_search(search *s, genome *k, int i, gsl_rng *rng)
{
    ls_env env = {s->pr, eval_genome, &s->kc[i], rng, &s->scratch[2 * i],
                  &s->scratch[2 * i + 1], s->ls_moves, 0};
    ls_genes(&env, k);
    ls_stage_order(&env, k);
    for (int r = 0; r < 3 && ls_critical(&env, k); r++)
        ;
    ls_prune(&env, k);
}

static void make_kid(search *s, int i)
{
    gsl_rng *rng = s->rng[i];
    genome *k = &s->kids[i];
    const genome *pa = &s->pop[tournament(s, rng)], *pb = &s->pop[tournament(s, rng)];
    bool crossed = pa != pb && gsl_rng_uniform(rng) < MA_PC;
    /* the full search also crosses over plainly now and then: the plain
     * ablation won where group-preserving crossover kept good orders apart */
    if (crossed)
        op_crossover(s->pr, pa, pb,
                     s->cfg->plain_crossover || gsl_rng_uniform(rng) < MA_PLAIN_SHARE, rng, k);
    else
        genome_copy(k, pa, s->pr->N);
    int muts = crossed ? gsl_rng_uniform(rng) < 0.5 : 1 + (gsl_rng_uniform(rng) < 0.3);
    for (int m = 0; m < muts; m++)
        op_mutate(s->pr, k, rng);
    eval_genome(&s->kc[i], k);
    if (!s->cfg->local_search || k->status != 1)
        return;
    const genome *bar = &s->pop[s->ls_light ? 0 : s->P / 2];
    if (k->fit < bar->fit || gsl_rng_uniform(rng) < (s->ls_light ? MA_PLS / 2 : MA_PLS))
        local_search(s, k, i, rng);
}

/* --- the loop ------------------------------------------------------------------------ */

static bool should_stop(const search *s)
{
    if (s->o->stop && *s->o->stop)
        return true;
    return s->deadline > 0 && now_s() >= s->deadline;
}

static void progress(search *s, int gen_limit, bool force)
{
    if (!s->o->progress)
        return;
    double t = now_s(), el = t - s->t0;
    if (!force && t - s->last_print < 0.25)
        return;
    s->last_print = t;
    double left = s->deadline > 0 ? s->deadline - t
                  : gen_limit > 0 && s->gen > 0 ? el / s->gen * (gen_limit - s->gen) : 0;
    fprintf(stderr, "\r  gen %5d  best %-12.6g %-5s %8.0f eval/s  elapsed %6.1f s  left %6.1f s ",
            s->gen, s->pop[0].fit, objective_unit(&s->obj), el > 0 ? s->evals / el : 0, el,
            left > 0 ? left : 0);
    fflush(stderr);
}

static void archive_kids(search *s, genome *g, int n)
{
    for (int i = 0; i < n; i++) {
        elite_offer(s, &g[i]);
        if (s->arch && g[i].status == 1)
            pareto_insert(s->arch, &g[i]);
    }
}

static int generation(search *s)
{
    for (int i = 0; i < s->lambda; i++)
        gsl_rng_set(s->rng[i], stream_seed(s->o->seed, s->gen + 1, i));
#pragma omp parallel for num_threads(s->nth) schedule(dynamic, 1) if (s->par)
    for (int i = 0; i < s->lambda; i++)
        make_kid(s, i);
    if (merge_fresh(s, s->lambda))
        return -1;
    s->gen++;
    archive_kids(s, s->kids, s->lambda);
    return survive(s, s->lambda);
}

/* Budget mode, stagnating: keep the best quarter, re-seed the rest at
 * random (streams of this generation) and go on. */
static int restart(search *s)
{
    for (int i = s->P / 4; i < s->P; i++) {
        gsl_rng *r = s->rng[i % s->lambda];
        gsl_rng_set(r, stream_seed(s->o->seed, s->gen, s->lambda + i));
        int bi = (int)gsl_rng_uniform_int(r, (unsigned long)s->pr->nb);
        enc_seed(s->pr, SEED_RANDOM, 0, 0, gsl_rng_uniform(r) < 0.5 ? SCHED_1F1B : SCHED_GPIPE,
                 (sync_kind)gsl_rng_uniform_int(r, ENC_NSYNC), bi, r, &s->pop[i]);
        if (!enc_shape_ok(s->pr, s->pop[i].S, s->pop[i].D, s->pop[i].bi))
            s->pop[i].bi = s->pop[0].bi;
    }
#pragma omp parallel for num_threads(s->nth) schedule(dynamic, 1) if (s->par)
    for (int i = s->P / 4; i < s->P; i++)
        eval_genome(&s->kc[i], &s->pop[i]);
    if (merge_fresh(s, s->P))
        return -1;
    archive_kids(s, s->pop, s->P);
    return survive(s, 0);
}

/* Would the next generation end after the deadline? (budget mode) */
static bool no_time_for(const search *s, double gen_s)
{
    return s->deadline > 0 && now_s() + 1.1 * gen_s > s->deadline;
}

/* Evolve for at most `gens` generations (0: unlimited) or until the phase
 * deadline, stagnation or a stop request. With a time budget, stagnation
 * first restarts the population (MA_RESTARTS times without improvement). */
/* Progress of the stagnation rule, kept across calls by the island model
 * (which evolves an island a few generations at a time). */
typedef struct stall_state {
    double best;
    int stall, restarts;
} stall_state;

static int evolve_from(search *s, int gens, double phase_deadline, stall_state *ss)
{
    double saved = s->deadline, gen_s = 0;
    if (phase_deadline > 0 && (saved <= 0 || phase_deadline < saved))
        s->deadline = phase_deadline;
    double best = ss->best;
    int stall = ss->stall, g0 = s->gen, rc = 0, restarts = ss->restarts;
    s->stopped = "generations";
    while (!gens || s->gen - g0 < gens) {
        if (should_stop(s) || no_time_for(s, gen_s)) {
            s->stopped = s->o->stop && *s->o->stop ? "interrupted" : "time budget";
            break;
        }
        double t0 = now_s();
        if ((rc = generation(s)))
            break;
        gen_s = now_s() - t0;
        if (s->pop[0].fit < best * (1 - 1e-12) || (isinf(best) && isfinite(s->pop[0].fit))) {
            best = s->pop[0].fit;
            stall = restarts = 0;
        } else if (++stall >= MA_STALL) {
            if (s->deadline <= 0 || restarts >= MA_RESTARTS) {
                s->stopped = "stagnation";
                break;
            }
            restarts++;
            stall = 0;
            if ((rc = restart(s)))
                break;
        }
        progress(s, gens ? g0 + gens : 0, false);
    }
    s->deadline = saved;
    *ss = (stall_state){best, stall, restarts};
    return rc;
}

static int evolve(search *s, int gens, double phase_deadline)
{
    stall_state ss = {s->pop[0].fit, 0, 0};
    return evolve_from(s, gens, phase_deadline, &ss);
}

/* --- population ------------------------------------------------------------------- */

/* The seeds stay finalists whatever the search does: where shared links make
 * the estimate optimistic, the evolved elite can all replay slower than a
 * plain seed (one site's fastest GPUs, say) that the estimate ranked lower. */
static int keep_seeds(search *s, int n)
{
    s->seeds = calloc((size_t)(n > 0 ? n : 1), sizeof *s->seeds);
    if (!s->seeds)
        return -1;
    for (int i = 0; i < n; i++) {
        if (genome_alloc(&s->seeds[i], s->pr->N))
            return -1;
        genome_copy(&s->seeds[i], &s->pop[i], s->pr->N);
        s->nseeds++;
    }
    return 0;
}

static int add_seed(search *s, int *n, seed_kind kind, int S, int D, sched_kind sc,
                    sync_kind sy, int bi)
{
    if (*n >= s->P)
        return 0;
    if (enc_seed(s->pr, kind, S, D, sc, sy, bi, NULL, &s->pop[*n]) == 0)
        (*n)++;
    return 0;
}

/* The plans of the fast baselines (memetic_run runs them once for every
 * tensor-parallel degree), where the search space holds them (same stage
 * count in every pipeline, one GPU or unit per stage): the search then
 * starts from what they know, and with the seeds among the finalists the
 * memetic planner replays them too. (An addition to DESIGN 8's seeds.) */
static void add_baseline_seeds(search *s, int *n)
{
    for (int i = 0; i < s->cfg->nseed_plans && *n < s->P; i++)
        if (enc_from_plan(s->pr, &s->cfg->seed_plans[i], &s->pop[*n]) == 0)
            (*n)++;
}

/* DESIGN 8's seeds in a few shapes, with the reference plan first. */
static int seed_population(search *s, const genome *ref)
{
    const enc_problem *pr = s->pr;
    int n = 0;
    genome_copy(&s->pop[n++], ref, pr->N);
    static const seed_kind orders[] = {SEED_FASTEST, SEED_FLOPS_PER_WATT, SEED_MEMORY};
    for (int o = 0; o < 3; o++) {
        int bi = ref->bi, S = enc_min_stages(pr, orders[o], bi);
        if (S <= 0)
            continue;
        int dmax = pr->N / S < pr->mtot[bi] ? pr->N / S : pr->mtot[bi];
        int D1 = pr->cells ? pr->cells / S : 1, D2 = pr->cells ? D1 : dmax;
        add_seed(s, &n, orders[o], S, D1, SCHED_1F1B, SYNC_RING, bi);
        add_seed(s, &n, orders[o], S, D2, SCHED_1F1B, SYNC_HIERARCHICAL, bi);
        if (2 * S <= pr->smax)
            add_seed(s, &n, orders[o], 2 * S, pr->cells ? pr->cells / (2 * S) : 1,
                     SCHED_1F1B, SYNC_RING, bi);
        add_seed(s, &n, orders[o], S, D1, SCHED_GPIPE, SYNC_RING, bi);
    }
    add_seed(s, &n, SEED_PIPE_PER_SITE, 0, 0, SCHED_1F1B, SYNC_HIERARCHICAL, ref->bi);
    add_seed(s, &n, SEED_DP_PER_SITE, 0, 0, SCHED_1F1B, SYNC_HIERARCHICAL, ref->bi);
    for (int r = 0; r < 3 && n < s->P; r++) /* the strongest sites, each on its own */
        if (enc_seed_site(pr, r, SCHED_1F1B, SYNC_RING, ref->bi, &s->pop[n]) == 0)
            n++;
    add_baseline_seeds(s, &n);
    int nseeds = n;
    for (int i = n; i < s->P; i++) {
        gsl_rng_set(s->rng[0], stream_seed(s->o->seed, 0, i));
        int bi = (int)gsl_rng_uniform_int(s->rng[0], (unsigned long)pr->nb);
        enc_seed(pr, SEED_RANDOM, 0, 0, gsl_rng_uniform(s->rng[0]) < 0.5 ? SCHED_1F1B : SCHED_GPIPE,
                 (sync_kind)gsl_rng_uniform_int(s->rng[0], ENC_NSYNC), bi, s->rng[0], &s->pop[i]);
        if (!enc_shape_ok(pr, s->pop[i].S, s->pop[i].D, s->pop[i].bi))
            s->pop[i].bi = ref->bi;
    }
    /* kid contexts are per slot: P = lambda */
#pragma omp parallel for num_threads(s->nth) schedule(dynamic, 1) if (s->par)
    for (int i = 0; i < s->P; i++)
        eval_genome(&s->kc[i], &s->pop[i]);
    if (merge_fresh(s, s->P) || keep_seeds(s, nseeds))
        return -1;
    archive_kids(s, s->pop, s->P);
    return survive(s, 0); /* sorts the initial population */
}

static void search_free(search *s)
{
    for (int i = 0; i < s->P && s->pop; i++)
        genome_free(&s->pop[i]);
    for (int i = 0; i < s->lambda && s->kids; i++)
        genome_free(&s->kids[i]);
    for (int i = 0; i < 2 * s->lambda && s->scratch; i++)
        genome_free(&s->scratch[i]);
    for (int i = 0; i < s->lambda && s->rng; i++)
        if (s->rng[i])
            gsl_rng_free(s->rng[i]);
    for (int i = 0; i < s->lambda && s->kc; i++)
        free(s->kc[i].fresh);
    free(s->kc);
    free(s->cache.tab);
    for (int i = 0; i < MA_ELITE && s->elite; i++)
        genome_free(&s->elite[i]);
    free(s->elite);
    for (int i = 0; i < s->nseeds; i++)
        genome_free(&s->seeds[i]);
    free(s->seeds);
    free(s->pop);
    free(s->kids);
    free(s->scratch);
    free(s->rng);
}

static int search_init(search *s, const enc_problem *pr, const planner_opts *o,
                       const memetic_cfg *cfg, const objective *obj)
{
    memset(s, 0, sizeof *s);
    s->pr = pr;
    s->o = o;
    s->cfg = cfg;
    s->obj = *obj;
    bool big = pr->N > MA_BIG_GPUS;
    /* evaluations of big plans take milliseconds: fewer, better-targeted ones */
    s->P = s->lambda = big ? 16 : 32 + pr->N / 32;
    s->ls_moves = big ? MA_LS_MOVES / 2 : MA_LS_MOVES;
    s->ls_light = big;
    s->nth = o->threads > 0 ? o->threads : omp_get_max_threads();
    /* children of small instances take microseconds: a parallel region costs
     * more than it saves (and much more on a busy machine) */
    s->par = s->nth > 1 && pr->N >= MA_PAR_MIN_GPUS;
    s->t0 = s->last_print = now_s();
    s->deadline = o->budget_s > 0 ? s->t0 + MA_SEARCH_SHARE * o->budget_s : 0;
    s->pop = calloc((size_t)s->P, sizeof *s->pop);
    s->kids = calloc((size_t)s->lambda, sizeof *s->kids);
    s->scratch = calloc((size_t)(2 * s->lambda), sizeof *s->scratch);
    s->rng = calloc((size_t)s->lambda, sizeof *s->rng);
    s->kc = calloc((size_t)s->lambda, sizeof *s->kc);
    s->elite = calloc(MA_ELITE, sizeof *s->elite);
    if (!s->pop || !s->kids || !s->scratch || !s->rng || !s->kc || !s->elite)
        return -1;
    for (int i = 0; i < s->lambda; i++)
        s->kc[i].s = s;
    int bad = 0;
    for (int i = 0; i < s->P; i++)
        bad |= genome_alloc(&s->pop[i], pr->N);
    for (int i = 0; i < MA_ELITE; i++)
        bad |= genome_alloc(&s->elite[i], pr->N);
    for (int i = 0; i < s->lambda; i++) {
        bad |= genome_alloc(&s->kids[i], pr->N);
        bad |= genome_alloc(&s->scratch[2 * i], pr->N);
        bad |= genome_alloc(&s->scratch[2 * i + 1], pr->N);
        s->rng[i] = gsl_rng_alloc(gsl_rng_mt19937);
        bad |= !s->rng[i];
    }
    return bad ? -1 : 0;
}

/* --- finalists ------------------------------------------------------------------------ */

/* What replaying a genome costs the simulator (enc_replay_work). */
static double replay_work(const enc_problem *pr, const genome *g)
{
    plan p;
    gt_err e;
    if (enc_to_plan(pr, g, "", "", &p, &e))
        return INFINITY;
    double w = enc_replay_work(&p);
    plan_free(&p);
    return w;
}

/* Seeds not in the elite whose estimate could still beat *best (estimates are
 * lower bounds of the replay), replayed in estimate order; a seed that wins
 * replaces *best. */
static int replay_seeds(const search *s, const objective *sobj, const enc_replay_limits *lim,
                        enc_final *best)
{
    const genome *cand[s->nseeds > 0 ? s->nseeds : 1];
    int n = 0;
    for (int i = 0; i < s->nseeds; i++) {
        const genome *g = &s->seeds[i];
        bool in_elite = false;
        for (int k = 0; k < s->nelite && !in_elite; k++)
            in_elite = genome_same(g, &s->elite[k]);
        if (!in_elite && g->status == 1 && objective_feasible(&s->obj, &g->est) &&
            g->fit < best->value)
            cand[n++] = g;
    }
    for (int i = 1; i < n; i++) /* insertion sort by estimate, stable */
        for (int k = i; k > 0 && cand[k]->fit < cand[k - 1]->fit; k--) {
            const genome *x = cand[k];
            cand[k] = cand[k - 1];
            cand[k - 1] = x;
        }
    if (n == 0 || (lim->stop && *lim->stop))
        return 0;
    enc_replay_limits sl = {n, lim->deadline, lim->stop};
    enc_final f;
    gt_err e;
    if (enc_pick_final(s->pr, cand, n, sobj, s->cfg->name, s->obj.text, &sl, &f, &e))
        return 0; /* no seed replays: the elite's winner stands */
    if (f.value < best->value) {
        int replayed = best->replayed + f.replayed;
        plan_free(&best->p);
        *best = f;
        best->index += s->nelite;
        best->replayed = replayed;
    } else {
        best->replayed += f.replayed;
        plan_free(&f.p);
    }
    return 0;
}

/* The best by the simulated objective `sobj` among the elite (sorted by
 * estimate), replayed until the estimates cannot win (enc_pick_final). */
static int pick_final(const search *s, const objective *sobj, enc_final *best, gt_err *e)
{
    const genome *cand[MA_ELITE];
    int n = 0;
    for (int i = 0; i < s->nelite; i++)
        if (objective_feasible(&s->obj, &s->elite[i].est))
            cand[n++] = &s->elite[i];
    if (n == 0)
        return gt_fail(e, "no feasible plan found");
    /* replays cost about their ops and flows: bound the sum (the first always) */
    int most = 1;
    for (double work = replay_work(s->pr, cand[0]); most < n; most++) {
        work += replay_work(s->pr, cand[most]);
        if (work > MA_REPLAY_WORK)
            break;
    }
    enc_replay_limits lim = {most, s->o->budget_s > 0 ? s->t0 + s->o->budget_s : 0, s->o->stop};
    if (enc_pick_final(s->pr, cand, n, sobj, s->cfg->name, s->obj.text, &lim, best, e))
        return -1;
    return replay_seeds(s, sobj, &lim, best);
}

/* --- the planner ------------------------------------------------------------------------ */

typedef struct budget {
    int gens;            /* 0 = unlimited (time-bound) */
    double secs;         /* 0 = none */
} budget;

static budget share(const planner_opts *o, double frac)
{
    budget b = {0, 0};
    if (o->generations > 0)
        b.gens = (int)ceil(o->generations * frac);
    else if (o->budget_s > 0)
        b.secs = o->budget_s * frac;
    else
        b.gens = (int)ceil(MA_DEFAULT_GENS * frac);
    return b;
}

static int run_phase(search *s, budget b)
{
    double dl = b.secs > 0 ? now_s() + b.secs : 0;
    return evolve(s, b.gens, dl);
}

static void fill_stats(const search *s, const enc_final *f, planner_stats *st)
{
    memset(st, 0, sizeof *st);
    st->objective_value = f->value;
    st->evaluations = s->evals;
    st->plan_time_s = now_s() - s->t0;
    /* no timings in the note: it is written into the plan, which must be the
     * same file on any machine unless a time budget made the search depend
     * on the machine's speed, which the note then says first */
    snprintf(st->note, sizeof st->note,
             "%s%d generations, %ld evaluations, stopped by %s; %d finalist%s replayed",
             s->o->budget_s > 0 ? "time budget: the plan may depend on machine speed; " : "",
             s->gen, s->evals, s->stopped ? s->stopped : "generations", f->replayed,
             f->replayed == 1 ? "" : "s");
}

/* Set up the problem, objective refs and the reference genome. */
static int prepare(const topology *t, const job *j, const memetic_cfg *cfg, const char *objtext,
                   enc_problem *pr, objective *obj, genome *ref, gt_err *e)
{
    if (objective_parse(objtext ? objtext : "time", obj, e))
        return -1;
    if (enc_problem_init(pr, t, j, &cfg->enc, e))
        return -1;
    if (genome_alloc(ref, pr->N)) {
        enc_problem_free(pr);
        return gt_fail(e, "out of memory");
    }
    if (enc_reference(pr, ref, e)) {
        genome_free(ref);
        enc_problem_free(pr);
        return -1;
    }
    ref->status = enc_estimate(pr, ref, &ref->est);
    if (ref->status != 1) {
        genome_free(ref);
        enc_problem_free(pr);
        return gt_fail(e, "the reference plan (fastest GPUs first) could not be estimated");
    }
    objective_set_refs(obj, &ref->est);
    ref->fit = objective_value(obj, &ref->est);
    return 0;
}

/* Time phase of energy-within: the fastest estimate and its simulated time. */
static int fastest_phase(search *s, objective *target, objective *sobj, gt_err *e)
{
    objective tobj;
    objective_parse("time", &tobj, e);
    s->obj = tobj;
    rescore(s, s->pop, s->P);
    elite_rescore(s);
    if (survive(s, 0) || run_phase(s, share(s->o, 1.0 / 3)))
        return gt_fail(e, "out of memory");
    enc_final f;
    if (pick_final(s, &tobj, &f, e))
        return -1;
    objective_set_fastest(target, s->elite[0].est.time_s);
    objective_set_fastest(sobj, f.sim.time_s);
    plan_free(&f.p);
    s->obj = *target;
    rescore(s, s->pop, s->P);
    elite_rescore(s);
    return survive(s, 0);
}

/* One search on topology t (the GPUs, or the units of cfg->enc.tp). */
static int run_view(const topology *t, const job *j, const planner_opts *o,
                    const memetic_cfg *cfg, plan *out, planner_stats *st, gt_err *e)
{
    enc_problem pr;
    objective obj;
    genome ref;
    e->msg[0] = '\0';
    if (prepare(t, j, cfg, o->objective, &pr, &obj, &ref, e))
        return -1;
    if (obj.kind == OBJ_PARETO) { /* single-plan interface: the fastest of the front */
        genome_free(&ref);
        enc_problem_free(&pr);
        pareto_front f;
        if (memetic_front(t, j, o, &f, st, e))
            return -1;
        *out = f.plans[0];
        f.plans[0] = (plan){0};
        pareto_front_free(&f);
        return 0;
    }
    search s;
    objective sobj = obj;
    int rc = search_init(&s, &pr, o, cfg, &obj) || seed_population(&s, &ref)
                 ? gt_fail(e, "out of memory")
                 : 0;
    if (!rc && objective_needs_fastest(&obj))
        rc = fastest_phase(&s, &obj, &sobj, e);
    if (!rc)
        rc = run_phase(&s, share(o, objective_needs_fastest(&obj) ? 2.0 / 3 : 1.0))
                 ? gt_fail(e, "out of memory")
                 : 0;
    progress(&s, 0, true);
    if (o->progress)
        fputc('\n', stderr);
    enc_final f;
    if (!rc && (rc = pick_final(&s, &sobj, &f, e)) == 0) {
        *out = f.p;
        fill_stats(&s, &f, st);
    }
    search_free(&s);
    genome_free(&ref);
    enc_problem_free(&pr);
    return rc;
}

/* --- tensor-parallel degrees (tp_view.h) ---------------------------------------------- */

typedef struct plain_ctx {
    const job *j;
    const memetic_cfg *cfg;
} plain_ctx;

static int plain_degree(void *vctx, const topology *t, const tp_view *v, const planner_opts *o,
                        plan *out, planner_stats *st, gt_err *e)
{
    const plain_ctx *x = vctx;
    memetic_cfg c = *x->cfg;
    c.enc.tp = v;
    return run_view(t, x->j, o, &c, out, st, e);
}

int memetic_run(const topology *t, const job *j, const planner_opts *o, const memetic_cfg *cfg,
                plan *out, planner_stats *st, gt_err *e)
{
    memset(out, 0, sizeof *out);
    if (cfg->enc.tp) /* already a unit view: search it as it is */
        return run_view(t, j, o, cfg, out, st, e);
    memetic_cfg c = *cfg;
    planner_opts od = *o;
    if (seed_plans_run(t, j, &c, &od))
        return gt_fail(e, "out of memory");
    plain_ctx ctx = {j, &c};
    int rc = tp_search(t, j, &od, false, plain_degree, &ctx, out, st, e);
    if (!rc && out->npipes > 0 && !strcmp(cfg->name, "memetic"))
        rc = seed_plans_final(t, j, o, &c, out, st) ? gt_fail(e, "out of memory") : 0;
    seed_plans_free(&c);
    if (rc)
        return -1;
    return out->npipes > 0 ? 0 : gt_fail(e, "no feasible plan found");
}

/* --- pareto -------------------------------------------------------------------------------- */

int memetic_front(const topology *t, const job *j, const planner_opts *o, pareto_front *out,
                  planner_stats *st, gt_err *e)
{
    static const double W[] = {1.0, 0.8, 0.6, 0.4, 0.2, 0.0};
    const int nw = (int)(sizeof W / sizeof *W);
    memetic_cfg cfg = {"memetic", {ENC_CUT_DP, false, NULL}, true, false, NULL, 0};
    enc_problem pr;
    objective obj;
    genome ref;
    pareto_archive arch;
    e->msg[0] = '\0';
    memset(out, 0, sizeof *out);
    if (prepare(t, j, &cfg, "weighted:1", &pr, &obj, &ref, e))
        return -1;
    search s;
    memset(&s, 0, sizeof s);
    int rc = pareto_init(&arch, MA_ARCHIVE, pr.N) || search_init(&s, &pr, o, &cfg, &obj)
                 ? gt_fail(e, "out of memory")
                 : 0;
    s.arch = &arch;
    if (!rc)
        rc = seed_population(&s, &ref) ? gt_fail(e, "out of memory") : 0;
    for (int w = 0; w < nw && !rc && !should_stop(&s); w++) {
        s.obj.param = W[w];
        snprintf(s.obj.text, sizeof s.obj.text, "pareto");
        rescore(&s, s.pop, s.P);
        elite_rescore(&s);
        rc = survive(&s, 0) || run_phase(&s, share(o, 1.0 / nw)) ? gt_fail(e, "out of memory")
                                                                   : 0;
    }
    if (o->progress)
        fputc('\n', stderr);
    if (!rc)
        rc = pareto_front_build(&pr, &arch, "memetic", out, e);
    if (!rc) {
        enc_final f = {.value = out->sim[0].time_s, .replayed = arch.n};
        fill_stats(&s, &f, st);
        snprintf(st->note + strlen(st->note), sizeof st->note - strlen(st->note),
                 "; %d plans on the front", out->n);
    }
    search_free(&s);
    pareto_free(&arch);
    genome_free(&ref);
    enc_problem_free(&pr);
    return rc;
}

/* --- registry entries ------------------------------------------------------------------------ */

static const memetic_cfg CONFIGS[] = {
    {"memetic", {ENC_CUT_DP, false, NULL}, true, false, NULL, 0},
    {"memetic-nols", {ENC_CUT_SPEED, false, NULL}, false, false, NULL, 0},
    {"memetic-all-gpus", {ENC_CUT_DP, true, NULL}, true, false, NULL, 0},
    {"memetic-uniform", {ENC_CUT_UNIFORM, false, NULL}, true, false, NULL, 0},
    {"memetic-plainx", {ENC_CUT_DP, false, NULL}, true, true, NULL, 0},
};

const memetic_cfg *memetic_config(const char *planner)
{
    for (size_t i = 0; i < sizeof CONFIGS / sizeof *CONFIGS; i++)
        if (!strcmp(CONFIGS[i].name, planner))
            return &CONFIGS[i];
    return NULL;
}

int planner_memetic(const topology *t, const job *j, const planner_opts *o, plan *out,
                    planner_stats *st, gt_err *e)
{
    return memetic_run(t, j, o, &CONFIGS[0], out, st, e);
}

int planner_memetic_nols(const topology *t, const job *j, const planner_opts *o, plan *out,
                         planner_stats *st, gt_err *e)
{
    return memetic_run(t, j, o, &CONFIGS[1], out, st, e);
}

int planner_memetic_all_gpus(const topology *t, const job *j, const planner_opts *o, plan *out,
                             planner_stats *st, gt_err *e)
{
    return memetic_run(t, j, o, &CONFIGS[2], out, st, e);
}

int planner_memetic_uniform(const topology *t, const job *j, const planner_opts *o, plan *out,
                            planner_stats *st, gt_err *e)
{
    return memetic_run(t, j, o, &CONFIGS[3], out, st, e);
}

int planner_memetic_plainx(const topology *t, const job *j, const planner_opts *o, plan *out,
                           planner_stats *st, gt_err *e)
{
    return memetic_run(t, j, o, &CONFIGS[4], out, st, e);
}

/* --- the island model (islands.h) ----------------------------------------------------- */

/* One island: a whole memetic search of its own, with its own seed. */
typedef struct ma_island {
    planner_opts o;
    enc_problem pr;
    objective obj;
    genome ref;
    search s;
    stall_state ss;
    bool have_pr, have_ref, have_s;
} ma_island;

typedef struct ma_island_ctx {
    const topology *t;
    const job *j;
    const planner_opts *o;
    const memetic_cfg *cfg;
} ma_island_ctx;

static void island_destroy(void *state)
{
    ma_island *x = state;
    if (!x)
        return;
    if (x->have_s)
        search_free(&x->s);
    if (x->have_ref)
        genome_free(&x->ref);
    if (x->have_pr)
        enc_problem_free(&x->pr);
    free(x);
}

static int island_create(void *vctx, int island, int nislands, void **state, gt_err *e)
{
    (void)nislands;
    const ma_island_ctx *c = vctx;
    ma_island *x = calloc(1, sizeof *x);
    if (!x)
        return gt_fail(e, "out of memory");
    x->o = *c->o;
    /* island 0 keeps the seed, so one island is the plain planner */
    x->o.seed = c->o->seed + 7919UL * (unsigned long)island;
    x->o.progress = false;
    if (prepare(c->t, c->j, c->cfg, c->o->objective, &x->pr, &x->obj, &x->ref, e)) {
        free(x);
        return -1;
    }
    x->have_pr = x->have_ref = true;
    if (objective_needs_fastest(&x->obj) || x->obj.kind == OBJ_PARETO) {
        island_destroy(x);
        return gt_fail(e, "--islands supports the objectives time, energy, weighted:W, carbon "
                          "and cost (not %s)", c->o->objective);
    }
    x->have_s = true;
    if (search_init(&x->s, &x->pr, &x->o, c->cfg, &x->obj) || seed_population(&x->s, &x->ref)) {
        island_destroy(x);
        return gt_fail(e, "out of memory");
    }
    x->ss = (stall_state){x->s.pop[0].fit, 0, 0};
    *state = x;
    return 0;
}

static int island_evolve(void *state, int gens, int *done, gt_err *e)
{
    ma_island *x = state;
    if (evolve_from(&x->s, gens, 0, &x->ss))
        return gt_fail(e, "out of memory");
    *done = strcmp(x->s.stopped, "generations") != 0;
    return 0;
}

static long island_emigrate(void *state, int k, unsigned char *buf, size_t cap)
{
    const ma_island *x = state;
    const genome *g[k > 0 ? k : 1];
    int n = 0;
    for (int i = 0; i < x->s.P && n < k; i++) /* pop is sorted and free of duplicates */
        if (x->s.pop[i].status == 1)
            g[n++] = &x->s.pop[i];
    return n ? islands_pack_genomes(g, n, x->pr.N, buf, cap) : 0;
}

/* Immigrants go through the children's slots: decoded, estimated, merged
 * into the cache and the elite, then (mu + lambda) survival drops the worst
 * and any duplicate. */
static int island_immigrate(void *state, const unsigned char *buf, size_t len, gt_err *e)
{
    ma_island *x = state;
    search *s = &x->s;
    int n;
    if (islands_unpack_genomes(buf, len, x->pr.N, s->kids, s->lambda, &n, e))
        return -1;
    for (int i = 0; i < n; i++)
        eval_genome(&s->kc[i], &s->kids[i]);
    if (merge_fresh(s, n))
        return gt_fail(e, "out of memory");
    archive_kids(s, s->kids, n);
    return survive(s, n) ? gt_fail(e, "out of memory") : 0;
}

static double island_best(const void *state)
{
    return ((const ma_island *)state)->s.pop[0].fit;
}

static long island_evaluations(const void *state)
{
    return ((const ma_island *)state)->s.evals;
}

static int island_finish(void *state, plan *out, planner_stats *st, gt_err *e)
{
    ma_island *x = state;
    enc_final f;
    objective sobj = x->obj;
    if (pick_final(&x->s, &sobj, &f, e))
        return -1;
    *out = f.p;
    fill_stats(&x->s, &f, st);
    return 0;
}

/* The island model for one degree (over_degrees' callback). */
typedef struct islands_ctx {
    const gt_par *par;
    const job *j;
    const memetic_cfg *cfg;
    const island_cfg *icfg;
    island_report *rep;
} islands_ctx;

static int islands_degree(void *vctx, const topology *t, const tp_view *v, const planner_opts *o,
                          plan *out, planner_stats *st, gt_err *e)
{
    islands_ctx *x = vctx;
    memetic_cfg c = *x->cfg;
    c.enc.tp = v;
    ma_island_ctx ctx = {t, x->j, o, &c};
    island_cfg ic = *x->icfg;
    if (ic.budget_s > 0)
        ic.budget_s = o->budget_s; /* the degree's share */
    int k = ic.migrants > ic.final_k ? ic.migrants : ic.final_k;
    if (k < ISLANDS_DEFAULT_FINAL)
        k = ISLANDS_DEFAULT_FINAL;
    island_ops ops = {&ctx,          island_create, island_evolve,       island_emigrate,
                      island_immigrate, island_best, island_evaluations, island_finish,
                      island_destroy, islands_packet_bytes(k, t->ngpus)};
    island_report r;
    out->npipes = 0;
    int rc = islands_run(x->par, &ops, &ic, out, st, &r, e);
    if (!rc && (!x->rep->islands || r.have_plan))
        *x->rep = r;
    return rc;
}

int memetic_islands(const gt_par *par, const topology *t, const job *j, const planner_opts *o,
                    const memetic_cfg *cfg, const island_cfg *icfg, plan *out,
                    planner_stats *st, island_report *rep, gt_err *e)
{
    memset(rep, 0, sizeof *rep);
    memset(out, 0, sizeof *out);
    memetic_cfg c = *cfg;
    planner_opts od = *o;
    if (icfg->budget_s > 0)
        od.budget_s = icfg->budget_s;
    if (seed_plans_run(t, j, &c, &od))
        return gt_fail(e, "out of memory");
    islands_ctx x = {par, j, &c, icfg, rep};
    int rc = tp_search(t, j, &od, false, islands_degree, &x, out, st, e);
    /* every rank has the same seeds and replays them alike: same decision */
    if (!rc && out->npipes > 0 && !strcmp(cfg->name, "memetic"))
        rc = seed_plans_final(t, j, o, &c, out, st) ? gt_fail(e, "out of memory") : 0;
    seed_plans_free(&c);
    if (rc)
        return -1;
    rep->have_plan = out->npipes > 0;
    return 0;
}
