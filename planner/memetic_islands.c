/* memetic_islands.c — the memetic planner as islands.h's island model
 * (memetic_islands in memetic.h): one search per island, emigration and
 * immigration of genomes, and the final pick. */
#include "memetic.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "islands.h"
#include "local_search.h"
#include "memetic_search.h"
#include "seed_plans.h"
#include "tp_view.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/simulator.h"

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
        ma_search_free(&x->s);
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
    if (ma_prepare(c->t, c->j, c->cfg, c->o->objective, &x->pr, &x->obj, &x->ref, e)) {
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
    if (ma_search_init(&x->s, &x->pr, &x->o, c->cfg, &x->obj) || ma_seed_population(&x->s, &x->ref)) {
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
    if (ma_evolve_from(&x->s, gens, 0, &x->ss))
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
        ma_eval_genome(&s->kc[i], &s->kids[i]);
    if (ma_merge_fresh(s, n))
        return gt_fail(e, "out of memory");
    ma_archive_kids(s, s->kids, n);
    return ma_survive(s, n) ? gt_fail(e, "out of memory") : 0;
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
    if (ma_niche_searches(&x->s)) /* as the plain planner does: one island is it */
        return gt_fail(e, "out of memory");
    if (ma_pick_final(&x->s, &sobj, &f, e))
        return -1;
    *out = f.p;
    ma_fill_stats(&x->s, &f, st);
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
    c.seed_plans = o->seeds;
    c.nseed_plans = o->nseeds;
    planner_opts od = *o;
    if (icfg->budget_s > 0)
        od.budget_s = icfg->budget_s;
    islands_ctx x = {par, j, &c, icfg, rep};
    planner_opts om = od;
    if (ma_runs_ablations(cfg, o) && od.budget_s > 0)
        om.budget_s = od.budget_s * MA_MAIN_SHARE;
    if (tp_search(t, j, &om, false, islands_degree, &x, out, st, e))
        return -1;
    /* the ablations as plain searches (one island is the plain planner) and
     * the seeds, on the rank that holds the result: every rank has the same
     * seeds and replays them alike, so the decision is the same */
    if (ma_finalists(t, j, &od, &c, out, st))
        return gt_fail(e, "out of memory");
    rep->have_plan = out->npipes > 0;
    return 0;
}
