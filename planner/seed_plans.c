/* seed_plans.c — other planners' plans as the memetic planner's
 * finalists (seed_plans.h). */
#include "seed_plans.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "encoding.h"
#include "objective.h"
#include "sim/engine/simulator.h"

/* The simulated objective of p, or INFINITY when it does not replay. */
static double replayed_value(const topology *t, const job *j, const objective *obj,
                             const plan *p)
{
    if (enc_replay_work(p) > ENC_REPLAY_MAX_WORK)
        return INFINITY;
    sim_options so;
    sim_options_default(&so);
    sim_result r;
    gt_err e;
    if (simulate_plan(t, j, p, &so, &r, &e))
        return INFINITY;
    obj_metrics m = obj_from_sim(&r);
    return objective_feasible(obj, &m) ? objective_value(obj, &m) : INFINITY;
}

int seed_plans_final(const topology *t, const job *j, const planner_opts *o,
                     const memetic_cfg *c, plan *out, planner_stats *st)
{
    objective obj;
    gt_err e;
    if (objective_parse(o->objective ? o->objective : "time", &obj, &e) ||
        objective_needs_refs(&obj) || objective_needs_fastest(&obj) || obj.kind == OBJ_PARETO ||
        enc_replay_work(out) > ENC_REPLAY_MAX_WORK)
        return 0;
    int best = -1;
    double bv = st->objective_value;
    for (int i = 0; i < c->nseed_plans && !(o->stop && *o->stop); i++) {
        const plan *p = &c->seed_plans[i];
        if (p->recompute_full || p->opt_bytes_per_param > 0)
            continue; /* options the job did not ask for */
        double v = replayed_value(t, j, &obj, p);
        if (v < bv * (1 - 1e-12)) {
            bv = v;
            best = i;
        }
    }
    if (best < 0)
        return 0;
    plan q;
    if (plan_copy(&q, &c->seed_plans[best]))
        return -1;
    char from[48];
    snprintf(from, sizeof from, "%s", q.planner);
    snprintf(q.planner, sizeof q.planner, "%s", c->name);
    snprintf(q.objective, sizeof q.objective, "%s", obj.text);
    plan_free(out);
    *out = q;
    st->objective_value = bv;
    char note[sizeof st->note]; /* first: the note is cut at 255 characters */
    snprintf(note, sizeof note, "%s's plan (a seed, as it is) replayed best; %s", from,
             st->note);
    memcpy(st->note, note, sizeof note);
    return 0;
}
