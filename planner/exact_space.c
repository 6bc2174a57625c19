/* exact_space.c — the exact referee's search space (exact.h): classes of
 * interchangeable GPUs and count vectors (selections) with their bounds,
 * the work cap and the refusal (the placements of a selection are
 * generated on demand by exact_expand.c). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exact_space.h"
#include "sim/models/cost.h"
#include "sim/estimator/estimator.h"
#include "sim/base/timecap.h"
#include "tp_view.h"

double exact_now_s(void)
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


/* --- groups of identical nodes and selections ------------------------------------- */

static bool same_node(const topology *t, int a, int b)
{
    const topo_node *x = &t->nodes[a], *y = &t->nodes[b];
    return x->site == y->site && x->type == y->type && x->ngpus == y->ngpus &&
           x->nic_bw == y->nic_bw;
}

/* Node classes (the enc_problem's) of the same site, type, size and NIC are
 * interchangeable: one group. */
static int make_groups(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    int n = pr->nclass;
    sp->gfirst = malloc(sizeof(int) * (size_t)n);
    sp->gcount = calloc((size_t)n, sizeof(int));
    sp->gnode = malloc(sizeof(int) * (size_t)n);
    sp->group_of = malloc(sizeof(int) * (size_t)n);
    int *node = malloc(sizeof(int) * (size_t)n);
    if (!sp->gfirst || !sp->gcount || !sp->gnode || !sp->group_of || !node) {
        free(node);
        return -1;
    }
    for (int c = 0; c < n; c++)
        node[c] = pr->t->gpus[pr->class_first[c]].node;
    sp->ngroup = 0;
    for (int c = 0; c < n; c++) { /* gfirst[g] holds a node of group g for now */
        int g = 0;
        while (g < sp->ngroup && !same_node(pr->t, node[sp->gfirst[g]], node[c]))
            g++;
        sp->group_of[c] = g;
        if (g == sp->ngroup)
            sp->gfirst[sp->ngroup++] = c;
    }
    int at = 0;
    for (int g = 0; g < sp->ngroup; g++) {
        sp->gfirst[g] = at;
        for (int c = 0; c < n; c++)
            if (sp->group_of[c] == g) {
                sp->gnode[at++] = c;
                sp->gcount[g]++;
            }
    }
    free(node);
    return 0;
}

static int gsize(const exact_space *sp, int g)   /* GPUs per node of group g */
{
    return sp->pr->class_size[sp->gnode[sp->gfirst[g]]];
}

/* The bounds' speed of GPU g: the most FLOPs per second the cost model
 * gives any stage on its type (exact_layer_times), so they hold for profiles too. */
double exact_gspeed(const exact_space *sp, int g)
{
    return sp->type_speed[sp->pr->t->gpus[g].type];
}

void exact_add_gpus(const exact_space *sp, int gpu, int k, exact_terms *t)
{
    const enc_problem *pr = sp->pr;
    const topo_site *site = &pr->t->sites[pr->t->gpus[gpu].site];
    const gpu_type *ty = topo_gpu_type(pr->t, gpu);
    double idle = site->pue * ty->idle_w, marg = site->pue * (ty->tdp_w - ty->idle_w) / exact_gspeed(sp, gpu);
    double c = site->carbon_g_per_kwh / 3.6e6, u = site->price_kwh / 3.6e6;
    t->idle += k * idle;
    t->idle_c += k * idle * c;
    t->idle_u += k * idle * u;
    t->marg = fmin(t->marg, marg);
    t->marg_c = fmin(t->marg_c, marg * c);
    t->marg_u = fmin(t->marg_u, marg * u);
    t->speed += k * exact_gspeed(sp, gpu);
}

static int desc_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* FLOPs of one sequence through the model (fwd + bwd), computed once: the
 * walk's bounds read it at every visit. */
static double seq_flops(const exact_space *sp)
{
    return sp->seq_f;
}

/* The metrics bound from a time bound T (rows so far, see exact.h) for the
 * selection's GPUs: every placement, microbatch size, schedule, cut, split. */
obj_metrics exact_bound_from(const exact_space *sp, const exact_terms *t, int S, double T)
{
    const job *j = sp->pr->j;
    double W = seq_flops(sp) * j->batch;
    T = exact_max(T, W / t->speed);
    /* the estimator rounds every op to whole ns: allow half a ns per op */
    T = exact_max(0, T - 1e-9 * (double)(j->batch * S + 16)) * (1 - 1e-9);
    obj_metrics m = {T, T * t->idle + W * t->marg, T * t->idle_c + W * t->marg_c,
                     T * t->idle_u + W * t->marg_u};
    m.energy_j *= 1 - 1e-9;
    m.carbon_g *= 1 - 1e-9;
    m.usd *= 1 - 1e-9;
    return m;
}

void exact_sel_terms(const exact_space *sp, const int *cnt, exact_terms *t)
{
    *t = (exact_terms){0, 0, 0, INFINITY, INFINITY, INFINITY, 0};
    for (int g = 0; g < sp->ngroup; g++)
        if (cnt[g])
            exact_add_gpus(sp, exact_group_gpu(sp, g), cnt[g], t);
}

/* Each of the D rows has a fastest GPU, all distinct: the slowest of them is
 * at most the D-th fastest selected speed. */
static double sel_row_floor(const exact_space *sp, const int *cnt, int D)
{
    double *v = malloc(sizeof *v * (size_t)sp->pr->N);
    int n = 0;
    if (!v)
        return 0;
    for (int g = 0; g < sp->ngroup; g++)
        for (int k = 0; k < cnt[g]; k++)
            v[n++] = exact_gspeed(sp, exact_group_gpu(sp, g));
    qsort(v, (size_t)n, sizeof *v, desc_cmp);
    double f = D <= n ? sp->pr->bval[0] * seq_flops(sp) / v[D - 1] : 0;
    free(v);
    return f;
}

static int add_selection(exact_space *sp, int S, int D, const int *cnt, long *capsel,
                         long *capcnt)
{
    long ncnt = (long)sp->nsel * sp->ngroup;
    if (sp->nsel >= EXACT_MAX_SELECTIONS)
        return -2;
    if (exact_grow((void **)&sp->sel, capsel, sp->nsel + 1, sizeof *sp->sel) ||
        exact_grow((void **)&sp->sel_cnt, capcnt, ncnt + sp->ngroup, sizeof(int)))
        return -1;
    memcpy(&sp->sel_cnt[ncnt], cnt, sizeof(int) * (size_t)sp->ngroup);
    exact_terms t;
    exact_sel_terms(sp, cnt, &t);
    /* stage 0's last backward ends after the rows and the FLOPs (exact_sync.c) */
    double T = fmax(sel_row_floor(sp, cnt, D), seq_flops(sp) * sp->pr->j->batch / t.speed);
    double ready, Ts = exact_sel_time(sp, S, D, cnt, T, &ready);
    ready = fmax(T, ready);
    T = fmax(ready, exact_sel_sync_bound(sp, S, D, cnt, ready));
    T = fmax(T, Ts);
    T = fmax(T, exact_nic_sel(sp, S, D, cnt)); /* the sync's bytes through the NICs */
    sp->sel[sp->nsel++] = (xsel){S, D, ncnt, exact_bound_from(sp, &t, S, T), T, ready};
    return 0;
}

/* Every count vector (per group, within its GPUs) summing to S x D. */
static int count_vectors(exact_space *sp, int S, int D, int g, int left, int *cnt,
                         long *capsel, long *capcnt)
{
    if (g == sp->ngroup)
        return left ? 0 : add_selection(sp, S, D, cnt, capsel, capcnt);
    int have = sp->gcount[g] * gsize(sp, g);
    for (int k = 0; k <= have && k <= left; k++) {
        cnt[g] = k;
        int rc = count_vectors(sp, S, D, g + 1, left - k, cnt, capsel, capcnt);
        if (rc)
            return rc;
    }
    cnt[g] = 0;
    return 0;
}

static int make_selections(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    int *cnt = calloc((size_t)sp->ngroup, sizeof(int)), mmax = max_mtot(pr), rc = cnt ? 0 : -1;
    long capsel = 0, capcnt = 0;
    for (int S = 1; S <= pr->smax && !rc; S++)
        for (int D = 1; D * S <= pr->N && D <= mmax && !rc; D++)
            rc = count_vectors(sp, S, D, 0, S * D, cnt, &capsel, &capcnt);
    free(cnt);
    return rc;
}


int exact_refuse(const exact_space *sp, gt_err *e)
{
    char why[160];
    if (sp->nsel >= EXACT_MAX_SELECTIONS)
        snprintf(why, sizeof why, "has more than %.0e count vectors", (double)EXACT_MAX_SELECTIONS);
    else if (sp->nplace >= EXACT_MAX_PLACEMENTS)
        snprintf(why, sizeof why, "generated more than %.0e placements", (double)EXACT_MAX_PLACEMENTS);
    else if (sp->cells_full)
        snprintf(why, sizeof why, "generated placements of more than %.0e cells in all",
                 (double)EXACT_MAX_CELLS);
    else if (sp->deadline > 0)
        snprintf(why, sizeof why, "ran past the limit of %.3g s", sp->limit_s);
    else
        snprintf(why, sizeof why, "visited more than %.3g partial placements (the cap without "
                                  "--budget-s, about %.3g s on the reference machine)",
                 (double)sp->max_visits, EXACT_DEFAULT_LIMIT_S);
    return gt_fail(e, "exact: the instance is beyond the exact solver's reach: %d GPUs in %d "
                      "classes of interchangeable GPUs (%d count vectors x shapes) %s without "
                      "a proof, so it would take longer (%d placements generated, %ld count "
                      "vectors walked; raise the limit with --budget-s, or use --planner "
                      "memetic)",
                   sp->pr->N, sp->ngroup, sp->nsel, why, sp->nplace, sp->walked);
}

/* The genome of a placement: classes -> GPUs in index order per class. */
void exact_placement_genome(const exact_space *sp, int place, int bi, int sched,
                            int sync, genome *g, int *used)
{
    int S = sp->pS[place], D = sp->pD[place];
    exact_cells_gpus(sp, &sp->cls[sp->poff[place]], S * D, used, g->perm);
    enc_set_grid(sp->pr, g, g->perm, S, D);
    g->bi = bi;
    g->sched = (sched_kind)sched;
    g->sync = (sync_kind)sync;
}

/* Visits per second assumed for the cap without --budget-s (this times
 * EXACT_DEFAULT_LIMIT_S: 8.7e7), a count, so whether an instance is refused
 * does not depend on the machine (deterministic). Measured on the 16-GPU
 * bench pool (docs/planner.md): 18.8e6 visits in 13.0 s CPU of the whole
 * run, decoding and estimates included (1.45e6 per second; the simulated
 * search no longer walks again, so a visit stands for more of the run). */
#define EXACT_REF_VISITS_PER_S 1.45e6

int exact_enumerate(const enc_problem *pr, double limit_s, int threads, exact_space **out,
                    gt_err *e)
{
    int nth = threads > 0 ? threads : omp_get_max_threads();
    exact_space *sp = calloc(1, sizeof *sp);
    if (!sp)
        return gt_fail(e, "out of memory");
    sp->pr = pr;
    sp->seq_f = cost_stage_fwd_flops(pr->j, 1, 0, pr->L - 1) +
                cost_stage_bwd_flops(pr->j, 1, 0, pr->L - 1);
    sp->threads = nth;
    sp->par = nth > 1 && pr->N >= 10;
    sp->limit_s = limit_s > 0 ? limit_s : EXACT_DEFAULT_LIMIT_S;
    if (limit_s > 0)
        sp->deadline = exact_now_s() + limit_s;
    else
        sp->max_visits = (long)(EXACT_REF_VISITS_PER_S * EXACT_DEFAULT_LIMIT_S);
    int rc = make_groups(sp) || exact_layer_times(sp) || exact_grain_init(sp) ||
                     exact_rows_init(sp) || exact_sync_init(sp) || exact_sel_init(sp) ||
                     exact_cut_init(sp)
                 ? -1
                 : make_selections(sp);
    if (!rc && !(sp->seen = calloc((size_t)sp->nsel + 1, 1)))
        rc = -1;
    if (rc == -2) {
        rc = exact_refuse(sp, e);
        exact_space_free(sp);
        return rc;
    }
    if (rc) {
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
    free(s->gfirst);
    free(s->gcount);
    free(s->gnode);
    free(s->group_of);
    free(s->sel);
    free(s->sel_cnt);
    free(s->hash);
    free(s->layer_s);
    free(s->grain_c);
    free(s->layer_cap);
    free(s->type_speed);
    free(s->mb_flops);
    free(s->lat);
    free(s->rate);
    free(s->xns);
    free(s->leave_s);
    free(s->glat);
    free(s->gtrip);
    free(s->seen);
    exact_walks_free(&s->walks_rec);
    exact_cut_free(s->cuts);
    free(s->layer_grad);
    free(s->grate);
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
