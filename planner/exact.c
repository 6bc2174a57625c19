/* exact.c — the exact referee as a planner (exact.h): set-up per
 * tensor-parallel view, the searches of exact_search.c in turn, and what the
 * note says was proved. */
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- the planner ---------------------------------------------------------------------- */

typedef struct exact_run {
    enc_problem pr;
    objective obj, sobj;
    exact_space *sp;
    double t0;
    long examined, estimated;
    int replayed, above;
    bool proved, sim_proved;
    const char *why;           /* why the simulated optimum is not proved */
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
    int above = 0;
    int rc = exact_sim_search(x->sp, obj, sobj, &r->top[0], o->stop, EXACT_MAX_SIMS, f,
                              &x->replayed, &above, &x->sim_proved, e);
    x->above += above;
    if (!x->sim_proved)
        x->why = o->stop && *o->stop ? "interrupted while replaying"
                                     : "replay cap of " EXACT_MAX_SIMS_TEXT " plans reached";
    else if (above) { /* the proof's premise failed on a replayed plan */
        x->sim_proved = false;
        x->why = "the estimate exceeded the replay on a replayed plan: not a lower bound there";
    }
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
    /* what was proved comes first: the note is cut at 255 characters */
    char what[128];
    if (!x->proved)
        snprintf(what, sizeof what, "interrupted: nothing proved");
    else if (x->sim_proved)
        snprintf(what, sizeof what, "proved optimal for the simulator");
    else
        snprintf(what, sizeof what, "proved optimal for the estimate only (%s)",
                 x->why ? x->why : "not replayed");
    snprintf(st->note, sizeof st->note,
             "%s: %d placements (%ld opened), %ld plans examined (%ld estimated), %d "
             "replayed; %d classes, %d count vectors (%ld walked)", what, x->sp->nplace,
             x->sp->opened, x->examined, x->estimated, x->replayed, x->sp->ngroup, x->sp->nsel,
             x->sp->walked);
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

int planner_exact(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                  plan *out, planner_stats *st, gt_err *e)
{
    (void)cfg;
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
    x.why = "the front is exact for the estimate; its plans are replayed, not searched by "
            "the simulator";
    if (!rc)
        rc = pareto_front_build(&x.pr, &a, "exact", out, e);
    if (!rc)
        exact_stats(&x, out->sim[0].time_s, st);
    pareto_free(&a);
    teardown(&x);
    return rc;
}
