/* exact_search.c — the exact referee's searches over its space (exact.h):
 * the best-first stream (selections, placements, units, points), the opening
 * of units into points, cached estimates, branch and bound on the estimate,
 * the simulated optimum and the exact pareto front. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exact_space.h"
#include "sim/models/cost.h"
#include "sim/estimator/estimator.h"
#include "tp_view.h"

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

/* Selections in order of their bound, a heap of the placements generated
 * from the expanded ones, and a heap of the opened placements' points; `skip`
 * (pareto) drops covered bounds on every level. */
typedef struct stream {
    exact_space *sp;
    xprune x;
    keyed *sk;               /* heap of selections by key (the lower end of their window) */
    long nsk;
    double *slo;             /* per selection: keys below were generated (-inf: none) */
    signed char *sround;     /* per selection: windows generated so far */
    keyed *ph;               /* generated placements */
    long nph, capph;
    keyed *h;                /* points */
    long nh, caph;
    int *list;               /* expansion buffer */
    long nlist, caplist;
} stream;

static double key_of(const stream *st, const obj_metrics *m)
{
    return exact_key(&st->x, m);
}

static bool skipped(const stream *st, const obj_metrics *m)
{
    return st->x.skip && pareto_covered(st->x.skip, m->time_s, m->energy_j);
}

static int heap_push(keyed **h, long *n, long *cap, keyed k)
{
    if (exact_grow((void **)h, cap, *n + 1, sizeof **h))
        return -1;
    long i = (*n)++;
    while (i > 0 && keyed_less(&k, &(*h)[(i - 1) / 2])) {
        (*h)[i] = (*h)[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    (*h)[i] = k;
    return 0;
}

static keyed heap_pop(keyed *h, long *n)
{
    keyed top = h[0], last = h[--*n];
    long i = 0;
    for (;;) {
        long c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && keyed_less(&h[c + 1], &h[c]))
            c++;
        if (!keyed_less(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

static int stream_init(stream *st, exact_space *sp, const objective *obj,
                       const pareto_archive *skip)
{
    memset(st, 0, sizeof *st);
    st->sp = sp;
    st->x = (xprune){obj, skip, -INFINITY, INFINITY};
    st->sk = malloc(sizeof *st->sk * (size_t)(sp->nsel + 1));
    st->slo = malloc(sizeof *st->slo * (size_t)(sp->nsel + 1));
    st->sround = calloc((size_t)sp->nsel + 1, 1);
    if (!st->sk || !st->slo || !st->sround)
        return -1;
    for (int s = 0; s < sp->nsel; s++) {
        st->sk[s] = (keyed){key_of(st, &sp->sel[s].lb), s};
        st->slo[s] = -INFINITY;
    }
    qsort(st->sk, (size_t)sp->nsel, sizeof *st->sk, keyed_cmp); /* sorted: a heap */
    st->nsk = sp->nsel;
    return 0;
}

static void stream_free(stream *st)
{
    free(st->sk);
    free(st->slo);
    free(st->sround);
    free(st->ph);
    free(st->h);
    free(st->list);
}

/* Generate the next selection's placements into the heap, one window of
 * keys at a time: [the lower end, a little above it), the selection going
 * back to the heap at the upper end until the window reaches thr. So a
 * selection's placements are generated only once the search's best value
 * is known to be above them, not all at once under a loose threshold (the
 * window doubles each time, so the re-walks of the tree stay few, and the
 * next one starts at the least key the last walk cut, so empty stretches
 * of keys cost no walk). */
#define EXACT_WINDOW 0.01

/* Record the walk just made of selection s (its list, up to x.thr). */
static int record_walk(stream *st, int s, double next)
{
    exact_space *sp = st->sp;
    if (!sp->walks_rec.recording || !st->nlist)
        return exact_walks_record(sp, s, st->list, 0, NULL, st->x.thr, next);
    double *keys = malloc(sizeof *keys * (size_t)st->nlist);
    if (!keys)
        return -1;
    for (long i = 0; i < st->nlist; i++)
        keys[i] = key_of(st, &sp->plb[st->list[i]]);
    int rc = exact_walks_record(sp, s, st->list, st->nlist, keys, st->x.thr, next);
    free(keys);
    return rc;
}

static int stream_expand(stream *st, double thr)
{
    exact_space *sp = st->sp;
    keyed k = heap_pop(st->sk, &st->nsk);
    int s = (int)k.idx;
    if (skipped(st, &sp->sel[s].lb))
        return 0;
    double w = EXACT_WINDOW * (double)(1L << st->sround[s]);
    double hi = k.key + fmax(fabs(k.key) * w, 1e-12);
    bool last = !(hi < thr) || !isfinite(k.key) || !isfinite(thr) || st->sround[s] >= 30;
    st->x.lo = st->slo[s];
    st->x.thr = last ? thr : hi;
    st->nlist = 0;
    double next;
    if (!sp->seen[s]) { /* a count vector whose placements the searches generate */
        sp->seen[s] = 1;
        sp->walked++;
    }
    /* the simulated search takes the windows the first search walked from
     * its record (exact_walks.c) */
    int rec = st->x.skip ? 1
                         : exact_walks_take(sp, st->x.obj, s, st->x.lo, st->x.thr, &st->list,
                                            &st->nlist, &st->caplist, &next);
    if (rec < 0)
        return -1;
    int rc = rec ? exact_expand(sp, s, &st->x, &st->list, &st->nlist, &st->caplist, &next) : 0;
    if (rc)
        return rc;
    if (rec && !st->x.skip && record_walk(st, s, next))
        return -1;
    for (long i = 0; i < st->nlist; i++) {
        int p = st->list[i];
        if (heap_push(&st->ph, &st->nph, &st->capph, (keyed){key_of(st, &sp->plb[p]), 2L * p}))
            return -1;
    }
    if (!last && isfinite(next)) { /* the next window starts at the least key cut */
        st->slo[s] = hi;
        st->sround[s]++;
        long cap = sp->nsel + 1;
        if (heap_push(&st->sk, &st->nsk, &cap, (keyed){fmax(hi, next), s}))
            return -1;
    }
    return 0;
}

/* The placement heap holds placements (idx 2p: split into their units on
 * the way out) and units (idx 2u + 1: decoded on the way out). Take the next
 * items below thr, then decode the units not opened yet and push their
 * points. */
static int stream_open(stream *st, double thr)
{
    exact_space *sp = st->sp;
    long list[EXACT_OPEN], ready[2 * EXACT_OPEN];
    int n = 0, nr = 0;
    while (st->nph && n < EXACT_OPEN && nr < EXACT_OPEN && st->ph[0].key < thr) {
        long idx = heap_pop(st->ph, &st->nph).idx;
        if (idx % 2 == 0) {
            int p = (int)(idx / 2);
            if (skipped(st, &sp->plb[p]))
                continue;
            /* a unit whose bound reaches thr is never taken (thr only
             * falls): its bound need not be exact, nor pushed */
            xprune cut = {st->x.obj, st->x.skip, -INFINITY, thr};
            for (int bi = 0; bi < sp->pr->nb; bi++) {
                obj_metrics lb = exact_unit_bound_cut(sp, p, bi, &cut);
                long u = (long)p * ENC_MAX_B + bi;
                if (isfinite(lb.time_s) && !exact_pruned(&cut, &lb) &&
                    heap_push(&st->ph, &st->nph, &st->capph, (keyed){key_of(st, &lb), 2 * u + 1}))
                    return -1;
            }
            continue;
        }
        long u = idx / 2;
        if (sp->pfirst[u] >= 0)
            ready[nr++] = u;
        else
            list[n++] = u;
    }
    if (n && exact_open_units(sp, list, n))
        return -1;
    for (int i = 0; i < n; i++)
        ready[nr++] = list[i];
    for (int i = 0; i < nr; i++)
        for (long x = sp->pfirst[ready[i]]; x < sp->pfirst[ready[i]] + sp->pnpts[ready[i]]; x++)
            if (heap_push(&st->h, &st->nh, &st->caph, (keyed){key_of(st, &sp->pts[x].lb), x}))
                return -1;
    return 0;
}

/* Up to `max` points with bound < thr, best first. Returns the count, -1
 * (out of memory) or -2 (beyond the work cap or the deadline). */
static int stream_next(stream *st, double thr, long *out, int max)
{
    exact_space *sp = st->sp;
    int n = 0;
    while (n < max) {
        double stop = st->nsk ? st->sk[0].key : INFINITY;
        double ptop = st->nph ? st->ph[0].key : INFINITY;
        double htop = st->nh ? st->h[0].key : INFINITY;
        if (!(fmin(stop, fmin(ptop, htop)) < thr))
            break;
        int rc = 0;
        if (stop <= ptop && stop <= htop)
            rc = stream_expand(st, thr);
        else if (ptop <= htop)
            rc = stream_open(st, thr);
        else {
            keyed k = heap_pop(st->h, &st->nh);
            if (!skipped(st, &sp->pts[k.idx].lb))
                out[n++] = k.idx;
        }
        if (rc)
            return rc;
    }
    return n;
}

/* --- opening units --------------------------------------------------------------- */

/* The bound of a point over every split its decoding may choose: with one
 * pipeline LS1's; with more, the decoder (enc_split.c) keeps whichever of
 * the min-max, uniform and speed-proportional splits (each under the same
 * memory caps) the estimate ranks first, and which one depends on the sync,
 * so the least of their bounds (enc_bound) holds for every sync. No
 * estimate is made here: a point is estimated only once its bound is the
 * best left. Returns -1 when the point does not fit (min-max, exact under
 * the caps, fails). */
static int split_bound(const exact_space *sp, int p, int bi, int sc, genome *g, int *used,
                       obj_metrics *lb)
{
    static const enc_cut_rule rules[] = {ENC_CUT_MINMAX, ENC_CUT_UNIFORM, ENC_CUT_SPEED};
    int nr = sp->pD[p] > 1 ? 3 : 1;
    for (int r = 0; r < nr; r++) {
        exact_placement_genome(sp, p, bi, sc, SYNC_RING, g, used);
        if (enc_decode_rule(sp->pr, g, rules[r], NULL)) {
            if (r == 0)
                return -1;
            continue;
        }
        obj_metrics b = enc_bound(sp->pr, g);
        if (r == 0)
            *lb = b;
        lb->time_s = fmin(lb->time_s, b.time_s);
        lb->energy_j = fmin(lb->energy_j, b.energy_j);
        lb->carbon_g = fmin(lb->carbon_g, b.carbon_g);
        lb->usd = fmin(lb->usd, b.usd);
    }
    return 0;
}

/* Decode both schedules of the units list[0..n) not opened yet (in
 * parallel into fixed slots), then append their feasible points in list
 * order. */
int exact_open_units(exact_space *sp, const long *list, int n)
{
    const enc_problem *pr = sp->pr;
    int per = ENC_NSCHED;
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
            int p = (int)(list[i] / ENC_MAX_B), bi = (int)(list[i] % ENC_MAX_B);
            if (mine || sp->pfirst[list[i]] >= 0 || sp->pD[p] > pr->mtot[bi])
                continue;
            for (int sc = 0; sc < ENC_NSCHED; sc++) {
                obj_metrics lb;
                if (split_bound(sp, p, bi, sc, &g, used, &lb))
                    continue;
                int x = i * per + sc;
                tmp[x] = (xpoint){p, (signed char)bi, (signed char)sc, {-1, -1, -1}, lb};
                ok[x] = 1;
            }
        }
        genome_free(&g);
        free(used);
#pragma omp atomic
        bad |= mine;
    }
    for (int i = 0; i < n && !bad; i++) {
        long un = list[i];
        if (sp->pfirst[un] >= 0)
            continue;
        if (exact_grow((void **)&sp->pts, &sp->cappts, sp->npts + per, sizeof *sp->pts)) {
            bad = 1;
            break;
        }
        sp->pfirst[un] = sp->npts;
        for (int x = i * per; x < (i + 1) * per; x++)
            if (ok[x])
                sp->pts[sp->npts++] = tmp[x];
        sp->pnpts[un] = (signed char)(sp->npts - sp->pfirst[un]);
        sp->opened++;
    }
    free(tmp);
    free(ok);
    return bad ? -1 : 0;
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
    exact_placement_genome(sp, x->place, x->bi, x->sched, q.sync, g, used);
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
    if (exact_grow((void **)&sp->res, &sp->capres, sp->nres + nq, sizeof *sp->res))
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
    /* an estimate that ran out of memory (-2, enc_estimate) is an error, not an
     * infeasible plan: skipping it could skip the optimum */
    for (int k = 0; k < nt; k++)
        if (sp->res_ok[sp->pts[q[todo[k]].pt].res[q[todo[k]].sync]] == -2)
            return -1;
    *fresh += nt;
    return nq;
}

/* The decoded genome of a pair with its cached estimate. */
static void pair_genome(const exact_space *sp, pair q, genome *g, int *used, double fit)
{
    const xpoint *x = &sp->pts[q.pt];
    exact_placement_genome(sp, x->place, x->bi, x->sched, q.sync, g, used);
    enc_decode(sp->pr, g, NULL);
    g->est = sp->res[x->res[q.sync]];
    g->status = 1;
    g->fit = fit;
}

/* --- branch and bound on the estimate -------------------------------------------------- */

/* A value the optimum cannot exceed, from the reference plan (fastest GPUs
 * first), so that even the first selections expanded generate only the
 * placements that can beat it; a little above it, so that the reference
 * plan itself stays in the search. */
static double incumbent(const exact_space *sp, const objective *obj)
{
    genome g;
    gt_err e;
    obj_metrics m;
    double ub = INFINITY;
    if (genome_alloc(&g, sp->pr->N))
        return ub;
    if (enc_reference(sp->pr, &g, &e) == 0 && enc_estimate(sp->pr, &g, &m) == 1 &&
        objective_feasible(obj, &m))
        ub = objective_value(obj, &m) + fabs(objective_value(obj, &m)) * 1e-6;
    genome_free(&g);
    return ub;
}

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
    if (exact_walks_reset(sp, obj)) {
        stream_free(&st);
        ws_free(&ws);
        return gt_fail(e, "out of memory");
    }
    long pts[EXACT_BATCH];
    pair q[EXACT_BATCH * ENC_NSYNC], best = {-1, 0};
    double bv = INFINITY, ub = incumbent(sp, obj);
    int rc = 0;
    r->proved = true;
    for (;;) {
        if (stop && *stop) {
            r->proved = false;
            break;
        }
        int n = stream_next(&st, fmin(bv, ub), pts, EXACT_BATCH), nq;
        if (n < 0 || (n > 0 && (nq = estimate_points(sp, pts, n, &ws, q, &r->estimated)) < 0)) {
            rc = n == -2 ? exact_refuse(sp, e) : gt_fail(e, "out of memory");
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
    /* the record serves the next search only if this one ran to its end */
    sp->walks_rec.recording = false;
    if (rc || !r->proved)
        exact_walks_free(&sp->walks_rec);
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
    double fit;       /* the best plan's estimated value (ties of the replay) */
    bool have;
    int replayed;
    int above;        /* replayed plans whose estimate exceeded the replay */
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
    /* the proof needs estimate <= replay (g->fit is the estimate's value) */
    if (g->fit > v * (1 + 1e-9) + 1e-12)
        b->above++;
    /* equal replays: the lower estimate, so that which of them wins does not
     * depend on the order the bounds replay them in */
    if (b->have && !(v < b->f.value || (v == b->f.value && g->fit < b->fit))) {
        plan_free(&p);
        return;
    }
    if (b->have)
        plan_free(&b->f.p);
    b->f = (enc_final){p, g->est, sim, v, 0, 0};
    b->fit = g->fit;
    b->have = true;
}

int exact_sim_search(exact_space *sp, const objective *obj, const objective *sobj,
                     const genome *start, const volatile int *stop, int max_sims,
                     enc_final *f, int *replayed, int *above, bool *proved, gt_err *e)
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
    int rc = 0;
    for (;;) {
        if ((stop && *stop) || b.replayed >= max_sims) {
            *proved = false;
            break;
        }
        int n = stream_next(&st, b.have ? b.f.value : INFINITY, pts, EXACT_BATCH), nq = 0;
        if (n == 0)
            break;
        if (n < 0 || (nq = estimate_points(sp, pts, n, &ws, q, &fresh)) < 0) {
            rc = n == -2 ? exact_refuse(sp, e) : gt_fail(e, "out of memory");
            break;
        }
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
    *above = b.above;
    if (rc || !b.have) {
        if (b.have)
            plan_free(&b.f.p);
        return rc ? rc : gt_fail(e, "no feasible plan could be simulated");
    }
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
            rc = n == -2 ? exact_refuse(sp, e) : gt_fail(e, "out of memory");
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

