/* memetic_search.c — the memetic planner's search (memetic_search.h):
 * evaluation with the estimate caches (memetic_cache.c), the elite, survival, one child, the
 * generation loop with its stopping rules, the population and its seeds,
 * and the budgets of the phases. */
#include "memetic_search.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "islands.h"
#include "local_search.h"
#include "memetic_search.h"
#include "seed_plans.h"
#include "tp_view.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/simulator.h"


double ma_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}


/* --- evaluation ------------------------------------------------------------------ */

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

/* Keep g in best[0..*n) (sorted by fit, distinct, at most cap; stable: an
 * equal fitness goes after the ones already kept). The elite and each
 * child's best evaluated genomes are kept this way. */
void ma_keep_best(genome *best, int *n, int cap, const genome *g, int N)
{
    if (g->status != 1 || !isfinite(g->fit))
        return;
    for (int i = 0; i < *n; i++)
        if (genome_same(&best[i], g))
            return;
    int pos = *n;
    while (pos > 0 && g->fit < best[pos - 1].fit)
        pos--;
    if (pos >= cap)
        return;
    int last = *n < cap ? *n : cap - 1;
    genome spare = best[last];
    memmove(&best[pos + 1], &best[pos], sizeof *best * (size_t)(last - pos));
    best[pos] = spare;
    genome_copy(&best[pos], g, N);
    if (*n < cap)
        (*n)++;
}

/* Keep g among the child's MA_KID_BEST best distinct evaluated genomes. */
static void kid_keep(kid_ctx *k, const genome *g)
{
    ma_keep_best(k->best, &k->nbest, MA_KID_BEST, g, k->s->pr->N);
}

/* g as it was decoded when entry c was made: from the split kept with it
 * (in the kid's fresh pool or the store), else by the rule that won. */
static int redecode(const kid_ctx *k, const cache_entry *c, bool fresh, const cache_entry *h,
                    genome *g)
{
    const search *s = k->s;
    if ((fresh && ma_split_restore(&k->fpool, c, g)) || ma_split_restore(&s->store->pool, h, g))
        return 0;
    return enc_decode_rule(s->pr, g, (enc_cut_rule)c->split, NULL);
}

/* Decode and estimate, unless the canonical genome was estimated before, by
 * this search or by an earlier search of the same run on the same problem
 * (the store): then its split is restored, or decoded by the rule that won
 * (genome.split). A genome found only in the store still counts as this
 * search's evaluation, as it would without the store. */
void ma_eval_genome(void *vctx, genome *g)
{
    kid_ctx *k = vctx;
    const search *s = k->s;
    g->status = -1;
    g->fit = INFINITY;
    if (enc_canonical(s->pr, g))
        return;
    uint64_t k2 = ma_cache_key2(g);
    const cache_entry *c = ma_cache_find(&s->cache, g->hash, k2), *h;
    bool fresh = false, mine = c != NULL;
    if (!c && (c = fresh_find(k, g->hash, k2)) != NULL)
        fresh = mine = true;
    h = ma_cache_find(s->slot, g->hash, k2);
    if (!c)
        c = h;
    cache_entry x = {g->hash, k2, {0, 0, 0, 0}, 0, 0, 0, -1};
    if (c) { /* its split is known: no estimate */
        if (redecode(k, c, fresh, h, g))
            return;
        x = *c;
        if (!mine) {
            x.off = -1; /* the store has it */
            x.reused = 1;
            fresh_push(k, &x);
        }
    } else {
        if (enc_decode_memo(s->pr, g, k->smemo))
            return;
        const cache_entry *same = g->est_ok ? NULL : ma_store_same_plan(s->store, s->pr, g);
        if (same) { /* another cut rule's search estimated this very plan */
            x.st = same->st;
            x.m = same->m;
            x.reused = 1;
        } else {
            x.st = g->est_ok ? 1 : (signed char)enc_estimate(s->pr, g, &x.m);
        }
        if (g->est_ok)
            x.m = g->est;
        x.split = g->split;
        x.off = ma_split_save(&k->fpool, g);
        fresh_push(k, &x);
    }
    g->status = x.st;
    if (x.st == 1) {
        g->est = x.m;
        g->fit = objective_value(&s->obj, &g->est);
        kid_keep(k, g);
    }
}

static void elite_offer(search *s, const genome *g);

/* After a parallel step: the children's new estimates join the cache (and
 * the store, with their splits) in child order and count as evaluations, and the best genomes each child
 * evaluated are offered to the elite (in child order: deterministic). */
int ma_merge_fresh(search *s, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        kid_ctx *k = &s->kc[i];
        for (int b = 0; b < k->nbest; b++)
            elite_offer(s, &k->best[b]);
        k->nbest = 0;
        for (int f = 0; f < k->nfresh; f++) {
            const cache_entry *x = &k->fresh[f];
            if (!ma_cache_find(&s->cache, x->k1, x->k2)) {
                s->evals++;
                s->store->reused += x->reused;
            }
            rc |= ma_cache_put(&s->cache, x);
            rc |= ma_store_put(s->store, s->slot, x, &k->fpool);
        }
        k->nfresh = 0;
        k->fpool.n = 0;
    }
    return rc;
}

/* Objective changed (phases): re-score from the stored estimates. */
void ma_rescore(search *s, genome *g, int n)
{
    for (int i = 0; i < n; i++)
        if (g[i].status == 1)
            g[i].fit = objective_value(&s->obj, &g[i].est);
}

void ma_elite_rescore(search *s);

/* splitmix64: one independent stream per (seed, generation, child). */
unsigned long ma_stream_seed(uint64_t seed, int gen, int idx)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)gen * 0xBF58476D1CE4E5B9ULL +
                 (uint64_t)idx * 0x94D049BB133111EBULL + 0x2545F4914F6CDD1DULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (unsigned long)((z ^ (z >> 31)) & 0xffffffffUL);
}

/* --- the elite: finalists come from here ---------------------------------------------- */

/* Keep g if it is among the MA_ELITE best distinct genomes seen. */
static void elite_offer(search *s, const genome *g)
{
    ma_keep_best(s->elite, &s->nelite, MA_ELITE, g, s->pr->N);
    ma_niche_offer(s, g);
}

void ma_sort_by_fit(genome *g, int n)
{
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && g[k].fit < g[k - 1].fit; k--) {
            genome t = g[k];
            g[k] = g[k - 1];
            g[k - 1] = t;
        }
}

void ma_sort_ptrs_by_fit(const genome **g, int n)
{
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && g[k]->fit < g[k - 1]->fit; k--) {
            const genome *t = g[k];
            g[k] = g[k - 1];
            g[k - 1] = t;
        }
}

/* The objective changed: re-score and re-sort. */
void ma_elite_rescore(search *s)
{
    ma_rescore(s, s->seeds, s->nseeds);
    ma_niches_rescore(s);
    for (int i = 0; i < s->nelite; i++)
        s->elite[i].fit = objective_value(&s->obj, &s->elite[i].est);
    ma_sort_by_fit(s->elite, s->nelite);
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
int ma_survive(search *s, int nkids)
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
    ls_env env = {s->pr, ma_eval_genome, &s->kc[i], rng, &s->scratch[2 * i],
                  &s->scratch[2 * i + 1], s->ls_moves, 0, s->keep_d};
    ls_genes(&env, k);
    ls_stage_order(&env, k);
    for (int r = 0; r < 3 && ls_critical(&env, k); r++)
        ;
    ls_prune(&env, k);
    ls_grow(&env, k);
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
        op_mutate(s->pr, k, rng, s->keep_d);
    ma_eval_genome(&s->kc[i], k);
    if (!s->cfg->local_search || k->status != 1)
        return;
    const genome *bar = &s->pop[s->ls_light ? 0 : s->P / 2];
    if (k->fit < bar->fit || gsl_rng_uniform(rng) < (s->ls_light ? MA_PLS / 2 : MA_PLS))
        local_search(s, k, i, rng);
}

/* --- the loop ------------------------------------------------------------------------ */

bool ma_should_stop(const search *s)
{
    if (s->o->stop && *s->o->stop)
        return true;
    return s->deadline > 0 && ma_now_s() >= s->deadline;
}

void ma_progress(search *s, int gen_limit, bool force)
{
    if (!s->o->progress)
        return;
    double t = ma_now_s(), el = t - s->t0;
    if (!force && t - s->last_print < 0.25)
        return;
    bool lines = !isatty(STDERR_FILENO);   /* a log file: a plain line every 5 s */
    if (lines && !force && t - s->last_print < 5.0)
        return;
    s->last_print = t;
    double left = s->deadline > 0 ? s->deadline - t
                  : gen_limit > 0 && s->gen > 0 ? el / s->gen * (gen_limit - s->gen) : 0;
    fprintf(stderr, "%s  gen %5d  best %-12.6g %-5s %8.0f eval/s  elapsed %6.1f s  left %6.1f s%s",
            lines ? "memetic:" : "\r", s->gen, s->pop[0].fit, objective_unit(&s->obj),
            el > 0 ? s->evals / el : 0, el, left > 0 ? left : 0, lines ? "\n" : " ");
    fflush(stderr);
}

void ma_archive_kids(search *s, genome *g, int n)
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
        gsl_rng_set(s->rng[i], ma_stream_seed(s->o->seed, s->gen + 1, i));
#pragma omp parallel for num_threads(s->nth) schedule(dynamic, 1) if (s->par)
    for (int i = 0; i < s->lambda; i++)
        make_kid(s, i);
    if (ma_merge_fresh(s, s->lambda))
        return -1;
    s->gen++;
    ma_archive_kids(s, s->kids, s->lambda);
    return ma_survive(s, s->lambda);
}

/* Budget mode, stagnating: keep the best quarter, re-seed the rest at
 * random (streams of this generation) and go on. */
static int restart(search *s)
{
    for (int i = s->P / 4; i < s->P; i++) {
        gsl_rng *r = s->rng[i % s->lambda];
        gsl_rng_set(r, ma_stream_seed(s->o->seed, s->gen, s->lambda + i));
        int bi = (int)gsl_rng_uniform_int(r, (unsigned long)s->pr->nb);
        enc_seed_random(s->pr, 0, 0, bi, r, &s->pop[i]);
        if (!enc_shape_ok(s->pr, s->pop[i].S, s->pop[i].D, s->pop[i].bi))
            s->pop[i].bi = s->pop[0].bi;
    }
#pragma omp parallel for num_threads(s->nth) schedule(dynamic, 1) if (s->par)
    for (int i = s->P / 4; i < s->P; i++)
        ma_eval_genome(&s->kc[i], &s->pop[i]);
    if (ma_merge_fresh(s, s->P))
        return -1;
    ma_archive_kids(s, s->pop, s->P);
    return ma_survive(s, 0);
}

/* Would the next generation end after the deadline? (budget mode) */
static bool no_time_for(const search *s, double gen_s)
{
    return s->deadline > 0 && ma_now_s() + 1.1 * gen_s > s->deadline;
}

/* Evolve for at most `gens` generations (0: unlimited) or until the phase
 * deadline, stagnation or a stop request. With a time budget, stagnation
 * first restarts the population (MA_RESTARTS times without improvement). */

int ma_evolve_from(search *s, int gens, double phase_deadline, stall_state *ss)
{
    double saved = s->deadline, gen_s = 0;
    if (phase_deadline > 0 && (saved <= 0 || phase_deadline < saved))
        s->deadline = phase_deadline;
    double best = ss->best;
    int stall = ss->stall, g0 = s->gen, rc = 0, restarts = ss->restarts;
    s->stopped = "generations";
    while (!gens || s->gen - g0 < gens) {
        if (ma_should_stop(s) || no_time_for(s, gen_s)) {
            s->stopped = s->o->stop && *s->o->stop ? "interrupted" : "time budget";
            break;
        }
        double t0 = ma_now_s();
        if ((rc = generation(s)))
            break;
        gen_s = ma_now_s() - t0;
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
        ma_progress(s, gens ? g0 + gens : 0, false);
    }
    s->deadline = saved;
    *ss = (stall_state){best, stall, restarts};
    return rc;
}

int ma_evolve(search *s, int gens, double phase_deadline)
{
    stall_state ss = {s->pop[0].fit, 0, 0};
    return ma_evolve_from(s, gens, phase_deadline, &ss);
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
int ma_seed_population(search *s, const genome *ref)
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
        gsl_rng_set(s->rng[0], ma_stream_seed(s->o->seed, 0, i));
        int bi = (int)gsl_rng_uniform_int(s->rng[0], (unsigned long)pr->nb);
        enc_seed_random(pr, 0, 0, bi, s->rng[0], &s->pop[i]);
        if (!enc_shape_ok(pr, s->pop[i].S, s->pop[i].D, s->pop[i].bi))
            s->pop[i].bi = ref->bi;
    }
    /* kid contexts are per slot: P = lambda */
#pragma omp parallel for num_threads(s->nth) schedule(dynamic, 1) if (s->par)
    for (int i = 0; i < s->P; i++)
        ma_eval_genome(&s->kc[i], &s->pop[i]);
    if (ma_merge_fresh(s, s->P) || keep_seeds(s, nseeds))
        return -1;
    ma_archive_kids(s, s->pop, s->P);
    return ma_survive(s, 0); /* sorts the initial population */
}

void ma_search_free(search *s)
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
    for (int i = 0; i < s->lambda && s->kc; i++) {
        free(s->kc[i].fresh);
        free(s->kc[i].fpool.v);
        enc_split_memo_free(s->kc[i].smemo);
        for (int b = 0; b < MA_KID_BEST; b++)
            genome_free(&s->kc[i].best[b]);
    }
    free(s->kc);
    free(s->cache.tab);
    ma_store_free(&s->own_store);
    for (int i = 0; i < MA_ELITE && s->elite; i++)
        genome_free(&s->elite[i]);
    free(s->elite);
    for (int i = 0; i < s->nseeds; i++)
        genome_free(&s->seeds[i]);
    free(s->seeds);
    ma_niches_free(s);
    free(s->pop);
    free(s->kids);
    free(s->scratch);
    free(s->rng);
}

int ma_search_init(search *s, const enc_problem *pr, const planner_opts *o,
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
    s->t0 = s->last_print = ma_now_s();
    s->deadline = o->budget_s > 0 ? s->t0 + MA_SEARCH_SHARE * o->budget_s : 0;
    s->pop = calloc((size_t)s->P, sizeof *s->pop);
    s->kids = calloc((size_t)s->lambda, sizeof *s->kids);
    s->scratch = calloc((size_t)(2 * s->lambda), sizeof *s->scratch);
    s->rng = calloc((size_t)s->lambda, sizeof *s->rng);
    s->kc = calloc((size_t)s->lambda, sizeof *s->kc);
    s->elite = calloc(MA_ELITE, sizeof *s->elite);
    if (!s->pop || !s->kids || !s->scratch || !s->rng || !s->kc || !s->elite)
        return -1;
    /* the store of the run's searches, or the search's own */
    ma_store_init(&s->own_store);
    s->store = cfg->shared ? cfg->shared : &s->own_store;
    s->slot = ma_store_slot_of(s->store, pr);
    for (int i = 0; i < s->lambda; i++) {
        s->kc[i].s = s;
        s->kc[i].fpool.limit = MA_STORE_INTS;
    }
    int bad = 0;
    for (int i = 0; i < s->P; i++)
        bad |= genome_alloc(&s->pop[i], pr->N);
    for (int i = 0; i < MA_ELITE; i++)
        bad |= genome_alloc(&s->elite[i], pr->N);
    for (int i = 0; i < s->lambda; i++) {
        bad |= genome_alloc(&s->kids[i], pr->N);
        bad |= genome_alloc(&s->scratch[2 * i], pr->N);
        bad |= genome_alloc(&s->scratch[2 * i + 1], pr->N);
        for (int b = 0; b < MA_KID_BEST; b++)
            bad |= genome_alloc(&s->kc[i].best[b], pr->N);
        bad |= !(s->kc[i].smemo = enc_split_memo_new(pr));
        s->rng[i] = gsl_rng_alloc(gsl_rng_mt19937);
        bad |= !s->rng[i];
    }
    return bad ? -1 : 0;
}

/* --- budgets ---------------------------------------------------------------- */


budget ma_share(const planner_opts *o, double frac)
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

int ma_run_phase(search *s, budget b)
{
    double dl = b.secs > 0 ? ma_now_s() + b.secs : 0;
    return ma_evolve(s, b.gens, dl);
}

