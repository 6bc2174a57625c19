/* exact.c — the exact referee: enumeration modulo symmetry, two-level
 * bounds and best-first branch and bound (exact.h). */
#include "exact.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/cost.h"
#include "sim/estimator.h"
#include "tp_view.h"

#define EXACT_BATCH 16      /* points estimated per parallel batch (fixed: determinism) */
#define EXACT_OPEN 64       /* placements opened per batch */
#define EXACT_ARCHIVE 4096  /* pareto: large enough never to thin on small instances */
#define EXACT_OPEN_SHARE 0.05 /* share of placements expected to be opened (estimate) */

typedef struct xpoint {
    int place;
    signed char bi, sched;
    int res[ENC_NSYNC];     /* index into the results, -1 = not estimated yet */
    obj_metrics lb;
} xpoint;

struct exact_space {
    const enc_problem *pr;
    int threads;
    bool par;               /* parallel work: only worth it on the larger instances */
    int nplace, capplace;
    int *pS, *pD;
    long *poff;             /* placement -> offset of its classes in cls */
    int *cls;
    long ncls, capcls;
    obj_metrics *plb;       /* placement bounds */
    long *pfirst;           /* first point of an opened placement, -1 = not opened */
    signed char *pnpts;     /* its number of points */
    long opened;
    xpoint *pts;
    long npts, cappts;
    obj_metrics *res;
    signed char *res_ok;
    long nres, capres;
};

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

static int grow(void **p, long *cap, long need, size_t elem)
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
        if (grow((void **)&sp->pS, &c1, cap + 1, sizeof(int)) ||
            grow((void **)&sp->pD, &c2, cap + 1, sizeof(int)) ||
            grow((void **)&sp->poff, &c3, cap + 1, sizeof(long)))
            return -1;
        sp->capplace = (int)c1;
    }
    if (grow((void **)&sp->cls, &sp->capcls, sp->ncls + cells, sizeof(int)))
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
static void placement_genome(const exact_space *sp, int place, int bi, int sched, int sync,
                             genome *g, int *used)
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
static int open_placements(exact_space *sp, const int *list, int n)
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
                    placement_genome(sp, p, bi, sc, SYNC_RING, &g, used);
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
        if (grow((void **)&sp->pts, &sp->cappts, sp->npts + per, sizeof *sp->pts)) {
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

/* --- the best-first stream of points ---------------------------------------------------- */

typedef struct keyed {
    double key;
    long idx;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static bool keyed_less(const keyed *x, const keyed *y)
{
    return x->key < y->key || (x->key == y->key && x->idx < y->idx);
}

/* Placements in order of their bound, merged with a heap of the opened
 * placements' points; `skip` (pareto) drops covered bounds on both levels. */
typedef struct stream {
    exact_space *sp;
    const objective *obj;    /* NULL: order by time */
    const pareto_archive *skip;
    keyed *pk;
    long pp;
    keyed *h;
    long nh, caph;
} stream;

static double key_of(const stream *st, const obj_metrics *m)
{
    return st->obj ? objective_value(st->obj, m) : m->time_s;
}

static bool skipped(const stream *st, const obj_metrics *m)
{
    return st->skip && pareto_covered(st->skip, m->time_s, m->energy_j);
}

static int heap_push(stream *st, keyed k)
{
    if (grow((void **)&st->h, &st->caph, st->nh + 1, sizeof *st->h))
        return -1;
    long i = st->nh++;
    while (i > 0 && keyed_less(&k, &st->h[(i - 1) / 2])) {
        st->h[i] = st->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    st->h[i] = k;
    return 0;
}

static keyed heap_pop(stream *st)
{
    keyed top = st->h[0], last = st->h[--st->nh];
    long i = 0;
    for (;;) {
        long c = 2 * i + 1;
        if (c >= st->nh)
            break;
        if (c + 1 < st->nh && keyed_less(&st->h[c + 1], &st->h[c]))
            c++;
        if (!keyed_less(&st->h[c], &last))
            break;
        st->h[i] = st->h[c];
        i = c;
    }
    if (st->nh > 0)
        st->h[i] = last;
    return top;
}

static int stream_init(stream *st, exact_space *sp, const objective *obj,
                       const pareto_archive *skip)
{
    memset(st, 0, sizeof *st);
    st->sp = sp;
    st->obj = obj;
    st->skip = skip;
    st->pk = malloc(sizeof *st->pk * (size_t)(sp->nplace + 1));
    if (!st->pk)
        return -1;
    for (int p = 0; p < sp->nplace; p++)
        st->pk[p] = (keyed){key_of(st, &sp->plb[p]), p};
    qsort(st->pk, (size_t)sp->nplace, sizeof *st->pk, keyed_cmp);
    return 0;
}

static void stream_free(stream *st)
{
    free(st->pk);
    free(st->h);
}

/* Open the next placements (bound < thr) and push their points. */
static int stream_open(stream *st, double thr)
{
    exact_space *sp = st->sp;
    int list[EXACT_OPEN], n = 0;
    long from = st->pp;
    while (st->pp < sp->nplace && n < EXACT_OPEN && st->pk[st->pp].key < thr) {
        int p = (int)st->pk[st->pp++].idx;
        if (!skipped(st, &sp->plb[p]))
            list[n++] = p;
    }
    if (st->pp == from)
        return 0;
    if (open_placements(sp, list, n))
        return -1;
    for (int i = 0; i < n; i++)
        for (long x = sp->pfirst[list[i]]; x < sp->pfirst[list[i]] + sp->pnpts[list[i]]; x++)
            if (heap_push(st, (keyed){key_of(st, &sp->pts[x].lb), x}))
                return -1;
    return 0;
}

/* Up to `max` points with bound < thr, best first. Returns the count or -1. */
static int stream_next(stream *st, double thr, long *out, int max)
{
    exact_space *sp = st->sp;
    int n = 0;
    while (n < max) {
        double ptop = st->pp < sp->nplace ? st->pk[st->pp].key : INFINITY;
        double htop = st->nh ? st->h[0].key : INFINITY;
        if (!(fmin(ptop, htop) < thr))
            break;
        if (ptop <= htop) {
            if (stream_open(st, thr))
                return -1;
            continue;
        }
        keyed k = heap_pop(st);
        if (!skipped(st, &sp->pts[k.idx].lb))
            out[n++] = k.idx;
    }
    return n;
}

/* --- estimates (cached) --------------------------------------------------------- */

typedef struct pair {
    long pt;
    int sync;
} pair;

static int nsync(const exact_space *sp, long pt)
{
    return sp->pD[sp->pts[pt].place] > 1 ? ENC_NSYNC : 1;
}

static void estimate_pair(const exact_space *sp, pair q, genome *g, int *used, obj_metrics *m,
                          signed char *ok)
{
    const xpoint *x = &sp->pts[q.pt];
    *ok = -1;
    placement_genome(sp, x->place, x->bi, x->sched, q.sync, g, used);
    if (enc_decode(sp->pr, g, NULL) == 0)
        *ok = (signed char)enc_estimate(sp->pr, g, m);
}

typedef struct workspace {
    genome *gs;
    int **used;
    int n;
} workspace;

static void ws_free(workspace *w)
{
    for (int i = 0; i < w->n; i++) {
        genome_free(&w->gs[i]);
        free(w->used[i]);
    }
    free(w->gs);
    free(w->used);
    memset(w, 0, sizeof *w);
}

static int ws_init(workspace *w, const exact_space *sp)
{
    w->n = sp->threads;
    w->gs = calloc((size_t)w->n, sizeof *w->gs);
    w->used = calloc((size_t)w->n, sizeof *w->used);
    if (!w->gs || !w->used)
        return -1;
    for (int i = 0; i < w->n; i++) {
        w->used[i] = malloc(sizeof(int) * (size_t)sp->pr->nclass);
        if (genome_alloc(&w->gs[i], sp->pr->N) || !w->used[i])
            return -1;
    }
    return 0;
}

/* The pairs (point, sync) of pts[0..n), estimated unless cached (in
 * parallel, into result slots reserved in order). Returns the pair count,
 * new estimates added to *fresh, or -1. */
static int estimate_points(exact_space *sp, const long *pts, int n, workspace *ws, pair *q,
                           long *fresh)
{
    int nq = 0;
    for (int i = 0; i < n; i++)
        for (int s = 0; s < nsync(sp, pts[i]); s++)
            q[nq++] = (pair){pts[i], s};
    long cap = sp->capres;
    if (grow((void **)&sp->res, &sp->capres, sp->nres + nq, sizeof *sp->res))
        return -1;
    if (sp->capres != cap || !sp->res_ok) { /* res_ok follows res's capacity */
        signed char *ok = realloc(sp->res_ok, (size_t)sp->capres);
        if (!ok)
            return -1;
        sp->res_ok = ok;
    }
    int todo[EXACT_BATCH * ENC_NSYNC], nt = 0;
    for (int i = 0; i < nq; i++) {
        xpoint *x = &sp->pts[q[i].pt];
        if (x->res[q[i].sync] < 0) {
            x->res[q[i].sync] = (int)sp->nres++;
            todo[nt++] = i;
        }
    }
#pragma omp parallel for num_threads(sp->threads) schedule(dynamic, 1) if (sp->par)
    for (int k = 0; k < nt; k++) {
        const pair *p = &q[todo[k]];
        int r = sp->pts[p->pt].res[p->sync], th = omp_get_thread_num();
        estimate_pair(sp, *p, &ws->gs[th], ws->used[th], &sp->res[r], &sp->res_ok[r]);
    }
    *fresh += nt;
    return nq;
}

/* The decoded genome of a pair with its cached estimate. */
static void pair_genome(const exact_space *sp, pair q, genome *g, int *used, double fit)
{
    const xpoint *x = &sp->pts[q.pt];
    placement_genome(sp, x->place, x->bi, x->sched, q.sync, g, used);
    enc_decode(sp->pr, g, NULL);
    g->est = sp->res[x->res[q.sync]];
    g->status = 1;
    g->fit = fit;
}

/* --- branch and bound on the estimate -------------------------------------------------- */

int exact_search(exact_space *sp, const objective *obj, const volatile int *stop,
                 exact_result *r, gt_err *e)
{
    memset(r, 0, sizeof *r);
    stream st;
    workspace ws = {0};
    if (stream_init(&st, sp, obj, NULL) || ws_init(&ws, sp)) {
        stream_free(&st);
        ws_free(&ws);
        return gt_fail(e, "out of memory");
    }
    long pts[EXACT_BATCH];
    pair q[EXACT_BATCH * ENC_NSYNC], best = {-1, 0};
    double bv = INFINITY;
    int rc = 0;
    r->proved = true;
    for (;;) {
        if (stop && *stop) {
            r->proved = false;
            break;
        }
        int n = stream_next(&st, bv, pts, EXACT_BATCH), nq;
        if (n < 0 || (n > 0 && (nq = estimate_points(sp, pts, n, &ws, q, &r->estimated)) < 0)) {
            rc = gt_fail(e, "out of memory");
            break;
        }
        if (n == 0)
            break;
        r->examined += nq;
        for (int i = 0; i < nq; i++) { /* in stream order: deterministic */
            int res = sp->pts[q[i].pt].res[q[i].sync];
            double v = sp->res_ok[res] == 1 ? objective_value(obj, &sp->res[res]) : INFINITY;
            if (v < bv) {
                bv = v;
                best = q[i];
            }
        }
    }
    if (!rc && best.pt < 0)
        rc = gt_fail(e, "no feasible plan in the search space");
    if (!rc) {
        if (genome_alloc(&r->top[0], sp->pr->N))
            rc = gt_fail(e, "out of memory");
        else {
            r->ntop = 1;
            pair_genome(sp, best, &r->top[0], ws.used[0], bv);
        }
    }
    stream_free(&st);
    ws_free(&ws);
    return rc;
}

void exact_result_free(exact_result *r)
{
    for (int i = 0; i < r->ntop; i++)
        genome_free(&r->top[i]);
    r->ntop = 0;
}

/* --- the simulated optimum --------------------------------------------------------- */

typedef struct sim_best {
    enc_final f;
    bool have;
    int replayed;
} sim_best;

static void offer_sim(const exact_space *sp, const genome *g, const objective *sobj,
                      const char *objtext, sim_best *b)
{
    plan p;
    obj_metrics sim;
    gt_err e;
    b->replayed++;
    if (enc_simulate(sp->pr, g, "exact", objtext, &p, &sim, &e))
        return; /* the simulator refused it: not a candidate */
    double v = objective_value(sobj, &sim);
    if (b->have && !(v < b->f.value)) {
        plan_free(&p);
        return;
    }
    if (b->have)
        plan_free(&b->f.p);
    b->f = (enc_final){p, g->est, sim, v, 0, 0};
    b->have = true;
}

int exact_sim_search(exact_space *sp, const objective *obj, const objective *sobj,
                     const genome *start, const volatile int *stop, int max_sims,
                     enc_final *f, int *replayed, bool *proved, gt_err *e)
{
    stream st;
    workspace ws = {0};
    genome g;
    if (stream_init(&st, sp, obj, NULL) || ws_init(&ws, sp) || genome_alloc(&g, sp->pr->N)) {
        stream_free(&st);
        ws_free(&ws);
        return gt_fail(e, "out of memory");
    }
    sim_best b = {.have = false};
    if (start)
        offer_sim(sp, start, sobj, obj->text, &b);
    long pts[EXACT_BATCH], fresh = 0;
    pair q[EXACT_BATCH * ENC_NSYNC];
    *proved = true;
    for (;;) {
        if ((stop && *stop) || b.replayed >= max_sims) {
            *proved = false;
            break;
        }
        int n = stream_next(&st, b.have ? b.f.value : INFINITY, pts, EXACT_BATCH), nq = 0;
        if (n <= 0 || (nq = estimate_points(sp, pts, n, &ws, q, &fresh)) < 0)
            break;
        for (int i = 0; i < nq && b.replayed < max_sims; i++) {
            int res = sp->pts[q[i].pt].res[q[i].sync];
            if (sp->res_ok[res] != 1 || !objective_feasible(obj, &sp->res[res]))
                continue;
            double v = objective_value(obj, &sp->res[res]);
            if (b.have && !(v < b.f.value))
                continue;
            pair_genome(sp, q[i], &g, ws.used[0], v);
            if (!(start && genome_same(&g, start)))
                offer_sim(sp, &g, sobj, obj->text, &b);
        }
    }
    genome_free(&g);
    stream_free(&st);
    ws_free(&ws);
    *replayed = b.replayed;
    if (!b.have)
        return gt_fail(e, "no feasible plan could be simulated");
    *f = b.f;
    return 0;
}

/* --- pareto -------------------------------------------------------------------------- */

int exact_pareto(exact_space *sp, const volatile int *stop, pareto_archive *a, long *examined,
                 gt_err *e)
{
    stream st;
    workspace ws = {0};
    genome g;
    if (stream_init(&st, sp, NULL, a) || ws_init(&ws, sp) || genome_alloc(&g, sp->pr->N)) {
        stream_free(&st);
        ws_free(&ws);
        return gt_fail(e, "out of memory");
    }
    long pts[EXACT_BATCH], fresh = 0;
    pair q[EXACT_BATCH * ENC_NSYNC];
    int rc = 0;
    *examined = 0;
    while (!(stop && *stop)) {
        int n = stream_next(&st, INFINITY, pts, EXACT_BATCH), nq = 0;
        if (n < 0 || (n > 0 && (nq = estimate_points(sp, pts, n, &ws, q, &fresh)) < 0)) {
            rc = gt_fail(e, "out of memory");
            break;
        }
        if (n == 0)
            break;
        *examined += nq;
        for (int i = 0; i < nq; i++) {
            int res = sp->pts[q[i].pt].res[q[i].sync];
            if (sp->res_ok[res] != 1)
                continue;
            pair_genome(sp, q[i], &g, ws.used[0], sp->res[res].time_s);
            pareto_insert(a, &g);
        }
    }
    genome_free(&g);
    stream_free(&st);
    ws_free(&ws);
    return rc;
}

/* --- the planner ---------------------------------------------------------------------- */

typedef struct exact_run {
    enc_problem pr;
    objective obj, sobj;
    exact_space *sp;
    double t0;
    long examined, estimated;
    int replayed;
    bool proved, sim_proved;
} exact_run;

static int setup(exact_run *x, const topology *t, const tp_view *v, const job *j,
                 const planner_opts *o, const char *objtext, gt_err *e)
{
    memset(x, 0, sizeof *x);
    x->t0 = now_s();
    enc_cfg c = {ENC_CUT_DP, false, v};
    if (objective_parse(objtext, &x->obj, e) || enc_problem_init(&x->pr, t, j, &c, e))
        return -1;
    genome ref;
    if (genome_alloc(&ref, x->pr.N))
        return gt_fail(e, "out of memory");
    if (enc_reference(&x->pr, &ref, e)) {
        genome_free(&ref);
        return 1; /* nothing fits: no plan in this view (e says why) */
    }
    int rc = 0;
    obj_metrics m;
    if (!rc && enc_estimate(&x->pr, &ref, &m) != 1)
        rc = gt_fail(e, "the reference plan (fastest GPUs first) could not be estimated");
    genome_free(&ref);
    if (rc)
        return -1;
    objective_set_refs(&x->obj, &m);
    x->sobj = x->obj;
    return exact_enumerate(&x->pr, o->budget_s, o->threads, &x->sp, e);
}

static void teardown(exact_run *x)
{
    exact_space_free(x->sp);
    enc_problem_free(&x->pr);
}

/* Branch and bound for `obj` (estimates), then the simulated optimum by `sobj`. */
static int solve(exact_run *x, const planner_opts *o, const objective *obj,
                 const objective *sobj, enc_final *f, exact_result *r, gt_err *e)
{
    if (exact_search(x->sp, obj, o->stop, r, e))
        return -1;
    x->examined += r->examined;
    x->estimated += r->estimated;
    x->proved = r->proved;
    int rc = exact_sim_search(x->sp, obj, sobj, &r->top[0], o->stop, EXACT_MAX_SIMS, f,
                              &x->replayed, &x->sim_proved, e);
    if (rc)
        exact_result_free(r);
    return rc;
}

static void exact_stats(const exact_run *x, double value, planner_stats *st)
{
    memset(st, 0, sizeof *st);
    st->objective_value = value;
    st->evaluations = x->estimated;
    st->plan_time_s = now_s() - x->t0;
    snprintf(st->note, sizeof st->note,
             "%s: %d placements (%ld opened), %ld plans examined (%ld estimated), %d "
             "replayed%s", x->proved ? "proved optimal" : "interrupted, not proved",
             x->sp->nplace, x->sp->opened, x->examined, x->estimated, x->replayed,
             x->sim_proved ? "" : " (simulated optimum not proved)");
}

/* energy-within: the exact fastest time first (estimate and simulated). */
static int fastest(exact_run *x, const planner_opts *o, gt_err *e)
{
    objective tobj;
    objective_parse("time", &tobj, e);
    enc_final f;
    exact_result r;
    if (solve(x, o, &tobj, &tobj, &f, &r, e))
        return -1;
    objective_set_fastest(&x->obj, r.top[0].est.time_s);
    objective_set_fastest(&x->sobj, f.sim.time_s);
    plan_free(&f.p);
    exact_result_free(&r);
    return 0;
}

/* The exact optimum over the GPUs, or over the units of one tensor-parallel
 * degree (tp_search's callback; ctx is the job). */
typedef struct exact_ctx {
    const job *j;
    gt_err infeasible;   /* why the first view without a feasible plan had none */
} exact_ctx;

static int exact_degree(void *vctx, const topology *t, const tp_view *v, const planner_opts *o,
                        plan *out, planner_stats *st, gt_err *e)
{
    exact_ctx *c = vctx;
    exact_run x;
    int s = setup(&x, t, v, c->j, o, o->objective ? o->objective : "time", e);
    if (s) {
        teardown(&x);
        if (s < 0)
            return -1;
        if (!c->infeasible.msg[0])
            c->infeasible = *e;
        out->npipes = 0;
        return 0;
    }
    int rc = objective_needs_fastest(&x.obj) ? fastest(&x, o, e) : 0;
    enc_final f;
    exact_result r;
    if (!rc && !(rc = solve(&x, o, &x.obj, &x.sobj, &f, &r, e))) {
        *out = f.p;
        exact_stats(&x, f.value, st);
        exact_result_free(&r);
    }
    teardown(&x);
    return rc;
}

int planner_exact(const topology *t, const job *j, const planner_opts *o, plan *out,
                  planner_stats *st, gt_err *e)
{
    const char *objtext = o->objective ? o->objective : "time";
    if (!strcmp(objtext, "pareto")) { /* single-plan interface: the fastest of the front */
        pareto_front f;
        if (exact_front(t, j, o, &f, st, e))
            return -1;
        *out = f.plans[0];
        f.plans[0] = (plan){0};
        pareto_front_free(&f);
        return 0;
    }
    /* strict: a degree the solver refuses or cannot finish means no proof */
    exact_ctx c = {j, {""}};
    if (tp_search(t, j, o, true, exact_degree, &c, out, st, e))
        return -1;
    if (out->npipes == 0) {
        *e = c.infeasible;
        return -1;
    }
    return 0;
}

int exact_front(const topology *t, const job *j, const planner_opts *o, pareto_front *out,
                planner_stats *st, gt_err *e)
{
    exact_run x;
    pareto_archive a;
    memset(out, 0, sizeof *out);
    if (setup(&x, t, NULL, j, o, "pareto", e)) {
        teardown(&x);
        return -1;
    }
    int rc = pareto_init(&a, EXACT_ARCHIVE, x.pr.N) ? gt_fail(e, "out of memory") : 0;
    long ex = 0;
    if (!rc)
        rc = exact_pareto(x.sp, o->stop, &a, &ex, e);
    x.examined = ex;
    x.estimated = ex;
    x.proved = !(o->stop && *o->stop);
    if (!rc)
        rc = pareto_front_build(&x.pr, &a, "exact", out, e);
    if (!rc)
        exact_stats(&x, out->sim[0].time_s, st);
    pareto_free(&a);
    teardown(&x);
    return rc;
}
