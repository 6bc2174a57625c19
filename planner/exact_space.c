/* exact_space.c — the exact referee's search space (exact.h): the size of
 * the instance and the refusal, the placements enumerated modulo symmetry,
 * their bounds, and the opening of placements into points. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exact_space.h"
#include "sim/cost.h"
#include "sim/estimator.h"
#include "tp_view.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int max_mtot(const enc_problem *pr)
{
    int m = 0;
    for (int bi = 0; bi < pr->nb; bi++)
        m = pr->mtot[bi] > m ? pr->mtot[bi] : m;
    return m;
}

int exact_grow(void **p, long *cap, long need, size_t elem)
{
    if (need <= *cap)
        return 0;
    long c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, elem * (size_t)c);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* --- the size of the instance --------------------------------------------------- */

/* Sequences of n cells over the classes within their sizes:
 * n! [x^n] prod_c sum_{i <= size_c} x^i / i!  (exponential generating function). */
static void egf_words(const enc_problem *pr, double *words, int nmax)
{
    double *poly = calloc((size_t)nmax + 1, sizeof *poly), *next = calloc((size_t)nmax + 1, sizeof *next);
    if (!poly || !next) {
        free(poly);
        free(next);
        for (int n = 0; n <= nmax; n++)
            words[n] = INFINITY;
        return;
    }
    poly[0] = 1;
    for (int c = 0; c < pr->nclass; c++) {
        memset(next, 0, sizeof *next * ((size_t)nmax + 1));
        for (int a = 0; a <= nmax; a++) {
            double f = 1; /* 1 / i! */
            for (int i = 0; i <= pr->class_size[c] && a + i <= nmax; i++) {
                next[a + i] += poly[a] * f;
                f /= i + 1;
            }
        }
        memcpy(poly, next, sizeof *poly * ((size_t)nmax + 1));
    }
    double fact = 1;
    for (int n = 0; n <= nmax; n++) {
        if (n > 0)
            fact *= n;
        words[n] = poly[n] * fact;
    }
    free(poly);
    free(next);
}

/* Placements (rows unordered): about words(D*S) / D! per shape. */
static double count_placements(const enc_problem *pr)
{
    if (pr->N > 160)
        return INFINITY;
    double *words = malloc(sizeof *words * ((size_t)pr->N + 1)), total = 0;
    if (!words)
        return INFINITY;
    egf_words(pr, words, pr->N);
    int mmax = max_mtot(pr);
    for (int S = 1; S <= pr->smax; S++) {
        double dfact = 1;
        for (int D = 1; D * S <= pr->N && D <= mmax; D++) {
            dfact *= D;
            total += words[D * S] / dfact;
        }
    }
    free(words);
    return total;
}

/* Seconds per decoded and bounded point: a few random genomes. */
static double point_cost(const enc_problem *pr)
{
    genome g;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng || genome_alloc(&g, pr->N)) {
        if (rng)
            gsl_rng_free(rng);
        return 1e-4;
    }
    gsl_rng_set(rng, 12345);
    double t0 = now_s();
    int n = 24;
    for (int i = 0; i < n; i++) {
        enc_seed(pr, SEED_RANDOM, 0, 0, (sched_kind)(i & 1), SYNC_RING, 0, rng, &g);
        if (enc_decode(pr, &g, NULL) == 0)
            enc_bound(pr, &g);
    }
    double t = (now_s() - t0) / n;
    genome_free(&g);
    gsl_rng_free(rng);
    return t > 1e-7 ? t : 1e-7;
}

/* Seconds per point on the reference machine (2 cores, the project's
 * development machine): measured 2.8e-6 s at 6-8 GPUs and 1.5e-5 s at 32,
 * about this much per GPU. Used when no --budget-s is given, so that whether
 * an instance is refused does not depend on the machine (deterministic). */
#define EXACT_REF_POINT_S_PER_GPU 5e-7

static double cost_with(const enc_problem *pr, double pl, double point_s)
{
    return pl * (1e-6 + EXACT_OPEN_SHARE * pr->nb * ENC_NSCHED * point_s);
}

double exact_cost_estimate(const enc_problem *pr, double *placements)
{
    double pl = count_placements(pr);
    if (placements)
        *placements = pl;
    return cost_with(pr, pl, point_cost(pr));
}

/* The reference machine's figure (no timing: deterministic). */
static double reference_cost(const enc_problem *pr, double *placements)
{
    double pl = count_placements(pr);
    *placements = pl;
    return cost_with(pr, pl, fmax(1e-6, EXACT_REF_POINT_S_PER_GPU * pr->N));
}

static int refuse(const enc_problem *pr, double pl, double secs, double limit, gt_err *e)
{
    char when[64];
    if (!isfinite(secs) || secs > 86400 * 365.0 * 100)
        snprintf(when, sizeof when, "longer than a century");
    else if (secs > 86400)
        snprintf(when, sizeof when, "about %.3g days", secs / 86400);
    else if (secs > 3600)
        snprintf(when, sizeof when, "about %.3g hours", secs / 3600);
    else
        snprintf(when, sizeof when, "about %.3g s", secs);
    return gt_fail(e, "exact: the instance is beyond the exact solver's reach: %d GPUs in %d "
                      "interchangeable classes give about %.3g placements (x %d microbatch "
                      "sizes x 2 schedules x 3 syncs), which would take %s (limit %.3g s, at "
                      "most %.0e placements; raise the limit with --budget-s, or use "
                      "--planner memetic)",
                   pr->N, pr->nclass, pl, pr->nb, when, limit, (double)EXACT_MAX_PLACEMENTS);
}

/* --- enumeration ------------------------------------------------------------------ */

typedef struct dfs {
    exact_space *sp;
    int S, D;
    int *row, *left;
} dfs;

static int store_placement(dfs *d)
{
    exact_space *sp = d->sp;
    long cells = (long)d->S * d->D, cap = sp->capplace;
    if (sp->nplace >= EXACT_MAX_PLACEMENTS)
        return -2;
    if (sp->nplace == sp->capplace) {
        long c1 = cap, c2 = cap, c3 = cap;
        if (exact_grow((void **)&sp->pS, &c1, cap + 1, sizeof(int)) ||
            exact_grow((void **)&sp->pD, &c2, cap + 1, sizeof(int)) ||
            exact_grow((void **)&sp->poff, &c3, cap + 1, sizeof(long)))
            return -1;
        sp->capplace = (int)c1;
    }
    if (exact_grow((void **)&sp->cls, &sp->capcls, sp->ncls + cells, sizeof(int)))
        return -1;
    sp->pS[sp->nplace] = d->S;
    sp->pD[sp->nplace] = d->D;
    sp->poff[sp->nplace++] = sp->ncls;
    memcpy(&sp->cls[sp->ncls], d->row, sizeof(int) * (size_t)cells);
    sp->ncls += cells;
    return 0;
}

/* Cell by cell, row-major; each row is >= the previous one (lexicographic),
 * which enumerates every multiset of rows exactly once. */
static int dfs_cell(dfs *d, int cell, bool tight)
{
    int S = d->S;
    if (cell == S * d->D)
        return store_placement(d);
    if (cell % S == 0)
        tight = cell > 0;
    int lo = tight ? d->row[cell - S] : 0;
    for (int c = lo; c < d->sp->pr->nclass; c++) {
        if (!d->left[c])
            continue;
        d->left[c]--;
        d->row[cell] = c;
        int rc = dfs_cell(d, cell + 1, tight && c == d->row[cell - S]);
        d->left[c]++;
        if (rc)
            return rc;
    }
    return 0;
}

static int enumerate_placements(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    dfs d = {sp, 0, 0, malloc(sizeof(int) * (size_t)pr->N), malloc(sizeof(int) * (size_t)pr->nclass)};
    int rc = d.row && d.left ? 0 : -1, mmax = max_mtot(pr);
    for (int S = 1; S <= pr->smax && !rc; S++)
        for (int D = 1; D * S <= pr->N && D <= mmax && !rc; D++) {
            d.S = S;
            d.D = D;
            memcpy(d.left, pr->class_size, sizeof(int) * (size_t)pr->nclass);
            rc = dfs_cell(&d, 0, false);
        }
    free(d.row);
    free(d.left);
    return rc;
}

/* --- placement bounds ---------------------------------------------------------------- */

typedef struct lb_terms {
    double idle, idle_c, idle_u;     /* sum of PUE x idle W (x carbon, x price per J) */
    double marg, marg_c, marg_u;     /* least marginal J (gCO2e, USD) per FLOP */
    double speed;                    /* summed FLOP/s */
} lb_terms;

static void add_gpu(const enc_problem *pr, int gpu, lb_terms *t)
{
    const topo_site *site = &pr->t->sites[pr->t->gpus[gpu].site];
    const gpu_type *ty = topo_gpu_type(pr->t, gpu);
    double idle = site->pue * ty->idle_w, marg = site->pue * (ty->tdp_w - ty->idle_w) / pr->speed[gpu];
    double c = site->carbon_g_per_kwh / 3.6e6, u = site->price_kwh / 3.6e6;
    t->idle += idle;
    t->idle_c += idle * c;
    t->idle_u += idle * u;
    t->marg = fmin(t->marg, marg);
    t->marg_c = fmin(t->marg_c, marg * c);
    t->marg_u = fmin(t->marg_u, marg * u);
    t->speed += pr->speed[gpu];
}

/* The bound of a placement for every microbatch size, schedule, cut and
 * split (see exact.h). */
static obj_metrics placement_bound(const exact_space *sp, int p, const int *gpus)
{
    const enc_problem *pr = sp->pr;
    const job *j = pr->j;
    int S = sp->pS[p], D = sp->pD[p], L = pr->L, b0 = pr->bval[0];
    double fseq = cost_stage_fwd_flops(j, 1, 0, L - 1) + cost_stage_bwd_flops(j, 1, 0, L - 1);
    double W = fseq * j->batch;
    lb_terms t = {0, 0, 0, INFINITY, INFINITY, INFINITY, 0};
    double T = 0;
    for (int r = 0; r < D; r++) {
        double vmax = 0, x = 0;
        for (int k = 0; k < S; k++) {
            int g = gpus[r * S + k];
            add_gpu(pr, g, &t);
            vmax = fmax(vmax, pr->speed[g]);
            if (k + 1 < S)
                x += 1e-9 * (double)(enc_xfer_ns(pr, 0, g, gpus[r * S + k + 1]) +
                                     enc_xfer_ns(pr, 0, gpus[r * S + k + 1], g));
        }
        T = fmax(T, b0 * fseq / vmax + x);
    }
    T = fmax(T, W / t.speed);
    /* the estimator rounds every op to whole ns: allow half a ns per op */
    T = fmax(0, T - 1e-9 * (double)(j->batch * S + 16)) * (1 - 1e-9);
    obj_metrics m = {T, T * t.idle + W * t.marg, T * t.idle_c + W * t.marg_c,
                     T * t.idle_u + W * t.marg_u};
    m.energy_j *= 1 - 1e-9;
    m.carbon_g *= 1 - 1e-9;
    m.usd *= 1 - 1e-9;
    return m;
}

/* The genome of a placement: classes -> GPUs in index order per class. */
void exact_placement_genome(const exact_space *sp, int place, int bi, int sched,
                            int sync, genome *g, int *used)
{
    const enc_problem *pr = sp->pr;
    int S = sp->pS[place], D = sp->pD[place];
    const int *cls = &sp->cls[sp->poff[place]];
    memset(used, 0, sizeof(int) * (size_t)pr->nclass);
    for (int x = 0; x < S * D; x++)
        g->perm[x] = pr->class_first[cls[x]] + used[cls[x]]++;
    enc_set_grid(pr, g, g->perm, S, D);
    g->bi = bi;
    g->sched = (sched_kind)sched;
    g->sync = (sync_kind)sync;
}

static int bound_placements(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    sp->plb = malloc(sizeof *sp->plb * (size_t)(sp->nplace + 1));
    sp->pfirst = malloc(sizeof *sp->pfirst * (size_t)(sp->nplace + 1));
    sp->pnpts = calloc((size_t)(sp->nplace + 1), 1);
    int *gpus = malloc(sizeof(int) * (size_t)pr->N), *used = malloc(sizeof(int) * (size_t)pr->nclass);
    if (!sp->plb || !sp->pfirst || !sp->pnpts || !gpus || !used) {
        free(gpus);
        free(used);
        return -1;
    }
    for (int p = 0; p < sp->nplace; p++) {
        const int *cls = &sp->cls[sp->poff[p]];
        memset(used, 0, sizeof(int) * (size_t)pr->nclass);
        for (int x = 0; x < sp->pS[p] * sp->pD[p]; x++)
            gpus[x] = pr->class_first[cls[x]] + used[cls[x]]++;
        sp->plb[p] = placement_bound(sp, p, gpus);
        sp->pfirst[p] = -1;
    }
    free(gpus);
    free(used);
    return 0;
}

int exact_enumerate(const enc_problem *pr, double limit_s, int threads, exact_space **out,
                    gt_err *e)
{
    double pl, secs = limit_s > 0 ? exact_cost_estimate(pr, &pl) : reference_cost(pr, &pl);
    int nth = threads > 0 ? threads : omp_get_max_threads();
    if (limit_s <= 0) { /* no budget: one thread's figure, whatever the machine has */
        limit_s = EXACT_DEFAULT_LIMIT_S;
        secs *= nth;
    }
    if (secs / nth > limit_s || pl > EXACT_MAX_PLACEMENTS)
        return refuse(pr, pl, secs / nth, limit_s, e);
    exact_space *sp = calloc(1, sizeof *sp);
    if (!sp)
        return gt_fail(e, "out of memory");
    sp->pr = pr;
    sp->threads = nth;
    sp->par = nth > 1 && pr->N >= 10;
    int rc = enumerate_placements(sp);
    if (rc == -2) {
        exact_space_free(sp);
        return refuse(pr, pl, secs / nth, limit_s, e);
    }
    if (rc || bound_placements(sp)) {
        exact_space_free(sp);
        return gt_fail(e, "out of memory enumerating placements");
    }
    *out = sp;
    return 0;
}

void exact_space_free(exact_space *s)
{
    if (!s)
        return;
    free(s->pS);
    free(s->pD);
    free(s->poff);
    free(s->cls);
    free(s->plb);
    free(s->pfirst);
    free(s->pnpts);
    free(s->pts);
    free(s->res);
    free(s->res_ok);
    free(s);
}

long exact_space_placements(const exact_space *s)
{
    return s->nplace;
}

long exact_space_opened(const exact_space *s)
{
    return s->opened;
}

/* --- opening placements ------------------------------------------------------------- */

/* Decode every (microbatch size, schedule) of the placements list[0..n) not
 * opened yet (in parallel into fixed slots), then append their feasible
 * points in list order. */
int exact_open_placements(exact_space *sp, const int *list, int n)
{
    const enc_problem *pr = sp->pr;
    int per = pr->nb * ENC_NSCHED;
    xpoint *tmp = malloc(sizeof *tmp * (size_t)(n * per));
    char *ok = calloc((size_t)(n * per), 1);
    if (!tmp || !ok) {
        free(tmp);
        free(ok);
        return -1;
    }
    int bad = 0;
#pragma omp parallel num_threads(sp->threads) if (sp->par)
    {
        genome g;
        int *used = malloc(sizeof(int) * (size_t)pr->nclass);
        int mine = genome_alloc(&g, pr->N) || !used;
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < n; i++) {
            int p = list[i];
            if (mine || sp->pfirst[p] >= 0)
                continue;
            for (int bi = 0; bi < pr->nb; bi++)
                for (int sc = 0; sc < ENC_NSCHED; sc++) {
                    if (sp->pD[p] > pr->mtot[bi])
                        continue;
                    exact_placement_genome(sp, p, bi, sc, SYNC_RING, &g, used);
                    if (enc_decode(pr, &g, NULL))
                        continue;
                    int x = i * per + bi * ENC_NSCHED + sc;
                    tmp[x] = (xpoint){p, (signed char)bi, (signed char)sc, {-1, -1, -1},
                                      enc_bound(pr, &g)};
                    ok[x] = 1;
                }
        }
        genome_free(&g);
        free(used);
#pragma omp atomic
        bad |= mine;
    }
    for (int i = 0; i < n && !bad; i++) {
        int p = list[i];
        if (sp->pfirst[p] >= 0)
            continue;
        if (exact_grow((void **)&sp->pts, &sp->cappts, sp->npts + per, sizeof *sp->pts)) {
            bad = 1;
            break;
        }
        sp->pfirst[p] = sp->npts;
        for (int x = i * per; x < (i + 1) * per; x++)
            if (ok[x])
                sp->pts[sp->npts++] = tmp[x];
        sp->pnpts[p] = (signed char)(sp->npts - sp->pfirst[p]);
        sp->opened++;
    }
    free(tmp);
    free(ok);
    return bad ? -1 : 0;
}

