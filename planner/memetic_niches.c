/* memetic_niches.c — the memetic planner's shape niches (memetic_search.h):
 * per shape (stages x pipelines), the best genomes evaluated, whatever the
 * population kept; a niche search for the best pipeline counts other than
 * the main search's; and each shape's best genomes as finalists.
 *
 * Why: the main search can converge on one shape (E2's n8-s5: one 5-stage
 * pipeline) while the simulated optimum has another (two 3-stage pipelines)
 * whose neighbourhood the population left early; the estimate ranks the
 * two wrongly, so only a finalist of the other shape can show it. A niche
 * search starts from the pipeline count's best genomes and the fastest-first
 * plan of every stage count, and evolves with that pipeline count fixed. */
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "memetic_search.h"

/* --- the niches ----------------------------------------------------------------------- */

static niche *niche_of(search *s, int S, int D)
{
    for (int i = 0; i < s->nniches; i++)
        if (s->niches[i].S == S && s->niches[i].D == D)
            return &s->niches[i];
    if (s->nniches >= MA_NICHE_MAX)
        return NULL;
    if (s->nniches == s->capniches) {
        int cap = s->capniches ? 2 * s->capniches : 16;
        niche *n = realloc(s->niches, sizeof *n * (size_t)cap);
        if (!n)
            return NULL; /* out of memory: the shape only loses its finalists */
        s->niches = n;
        s->capniches = cap;
    }
    niche *n = &s->niches[s->nniches];
    memset(n, 0, sizeof *n);
    for (int k = 0; k < MA_NICHE_KEEP; k++)
        if (genome_alloc(&n->best[k], s->pr->N)) {
            for (int x = 0; x < k; x++)
                genome_free(&n->best[x]);
            return NULL;
        }
    n->S = S;
    n->D = D;
    s->nniches++;
    return n;
}

void ma_niche_offer(search *s, const genome *g)
{
    if (g->status != 1 || !isfinite(g->fit))
        return;
    niche *n = niche_of(s, g->S, g->D);
    if (n)
        ma_keep_best(n->best, &n->n, MA_NICHE_KEEP, g, s->pr->N);
}

void ma_niches_rescore(search *s)
{
    for (int i = 0; i < s->nniches; i++) {
        niche *x = &s->niches[i];
        for (int k = 0; k < x->n; k++)
            x->best[k].fit = objective_value(&s->obj, &x->best[k].est);
        ma_sort_by_fit(x->best, x->n);
    }
}

void ma_niches_free(search *s)
{
    for (int i = 0; i < s->nniches; i++)
        for (int k = 0; k < MA_NICHE_KEEP; k++)
            genome_free(&s->niches[i].best[k]);
    free(s->niches);
    s->niches = NULL;
    s->nniches = s->capniches = 0;
}

/* --- finalists ------------------------------------------------------------------------ */

int ma_niche_finalists(const search *s, const genome **out, int max)
{
    int n = 0;
    for (int i = 0; i < s->nniches; i++)
        for (int k = 0; k < s->niches[i].n && k < MA_NICHE_REPLAYS; k++)
            out[n++] = &s->niches[i].best[k];
    ma_sort_ptrs_by_fit(out, n);
    return n < max ? n : max;
}

/* --- the niche searches --------------------------------------------------------------- */

/* The population of keep_d's niche search: that pipeline count's best
 * genomes (up to half), the fastest-first plan of every stage count, then
 * random genomes of that pipeline count (streams of this generation). */
static void niche_population(search *s, int d, const genome *best)
{
    const enc_problem *pr = s->pr;
    int P = s->P, n = 0, nb = 0;
    const genome **b = malloc(sizeof *b * (size_t)(s->nniches * MA_NICHE_KEEP + 1));
    if (b) {
        for (int i = 0; i < s->nniches; i++)
            for (int k = 0; s->niches[i].D == d && k < s->niches[i].n; k++)
                b[nb++] = &s->niches[i].best[k];
        ma_sort_ptrs_by_fit(b, nb);
        for (; n < nb && n < P / 2; n++)
            genome_copy(&s->pop[n], b[n], pr->N);
        free(b);
    }
    for (int S = 1; S <= pr->smax && n < 3 * P / 4; S++)
        if (S * d <= pr->N && enc_shape_ok(pr, S, d, best->bi) &&
            enc_seed(pr, SEED_FASTEST, S, d, best->sched, best->sync, best->bi, NULL,
                     &s->pop[n]) == 0)
            n++;
    for (int i = n; i < P; i++) {
        gsl_rng *r = s->rng[i % s->lambda];
        gsl_rng_set(r, ma_stream_seed(s->o->seed, s->gen, 2 * s->lambda + P + i));
        int S = 1 + (int)gsl_rng_uniform_int(r, (unsigned long)pr->smax);
        while (S > 1 && !(S * d <= pr->N && enc_shape_ok(pr, S, d, best->bi)))
            S--;
        enc_seed_random(pr, S, d, best->bi, r, &s->pop[i]);
        if (s->pop[i].D != d && n > 0) /* no shape of d pipelines: a copy of one that has */
            genome_copy(&s->pop[i], &s->pop[i % n], pr->N);
    }
}

/* Evolve the population of pipeline count d (every member has d pipelines
 * when niche_population could make one), with d fixed. */
static int niche_search(search *s, int d, const genome *best, int gens)
{
    niche_population(s, d, best);
    for (int i = 0; i < s->P; i++)
        if (s->pop[i].D != d)
            return 0; /* no genome of d pipelines to start from */
#pragma omp parallel for num_threads(s->nth) schedule(dynamic, 1) if (s->par)
    for (int i = 0; i < s->P; i++)
        ma_eval_genome(&s->kc[i], &s->pop[i]);
    if (ma_merge_fresh(s, s->P))
        return -1;
    ma_archive_kids(s, s->pop, s->P);
    if (ma_survive(s, 0))
        return -1;
    s->keep_d = d;
    int rc = ma_evolve(s, gens, 0);
    s->keep_d = 0;
    return rc;
}

/* The MA_NICHES pipeline counts other than best_d whose best shapes have
 * the best estimates, best first (ties: the count met first), into d[];
 * how many. */
static int niche_counts(const search *s, int best_d, int *d)
{
    int n = 0;
    for (int pick = 0; pick < MA_NICHES; pick++) {
        const niche *top = NULL;
        for (int i = 0; i < s->nniches; i++) {
            const niche *x = &s->niches[i];
            bool taken = x->D == best_d || x->n == 0;
            for (int k = 0; k < n && !taken; k++)
                taken = d[k] == x->D;
            if (!taken && (!top || x->best[0].fit < top->best[0].fit))
                top = x;
        }
        if (!top)
            break;
        d[n++] = top->D;
    }
    return n;
}

/* After the main search, without a time budget (a count of generations:
 * the same plan on any machine), the full planner's only. */
int ma_niche_searches(search *s)
{
    if (!s->cfg->full || !s->cfg->local_search || s->o->budget_s > 0 || s->nelite == 0 ||
        s->pr->cells)
        return 0;
    genome best;
    if (genome_alloc(&best, s->pr->N))
        return -1;
    genome_copy(&best, &s->elite[0], s->pr->N);
    int d[MA_NICHES], nd = niche_counts(s, best.D, d), rc = 0;
    int limit = s->o->generations > 0 ? s->o->generations : MA_DEFAULT_GENS;
    int gens = (int)ceil(limit * MA_NICHE_SHARE);
    for (int i = 0; i < nd && !rc && !ma_should_stop(s); i++)
        rc = niche_search(s, d[i], &best, gens);
    genome_free(&best);
    return rc;
}
