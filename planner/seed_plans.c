/* seed_plans.c — baseline plans as the memetic planner's seeds and
 * finalists (seed_plans.h). */
#include "seed_plans.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "encoding.h"
#include "objective.h"
#include "sim/engine/simulator.h"

#define SEED_SHARE 0.25 /* most of a time budget the baseline seeds may take */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs the baselines whose plans seed the search (on the real topology),
 * within a quarter of the time budget; *n plans in *out (malloc'd). */
static int baseline_plans(const topology *t, const job *j, const planner_opts *o, plan **out,
                          int *n)
{
    /* the fast ones; dtfm's GA and random's 5,000 draws would multiply a
     * small instance's planning time by about four */
    static const char *const names[] = {"metis", "greedy", "megatron", "atlas",
                                        "megatron-random"};
    const int nn = (int)(sizeof names / sizeof *names);
    *n = 0;
    *out = calloc((size_t)nn, sizeof **out);
    if (!*out)
        return -1;
    planner_opts bo = *o;
    bo.progress = false;
    bo.budget_s = 0;
    bo.generations = 0;
    double t0 = now_s();
    for (int i = 0; i < nn; i++) {
        if ((o->stop && *o->stop) ||
            (o->budget_s > 0 && now_s() - t0 > SEED_SHARE * o->budget_s))
            break;
        const planner_def *d = planner_find(names[i]);
        planner_stats st;
        gt_err e;
        if (d && d->run(t, j, &bo, &(*out)[*n], &st, &e) == 0)
            (*n)++;
    }
    return 0;
}

int seed_plans_run(const topology *t, const job *j, memetic_cfg *c, planner_opts *o)
{
    plan *seeds = NULL;
    double t0 = now_s();
    c->nseed_plans = 0;
    if (!c->enc.all_gpus && baseline_plans(t, j, o, &seeds, &c->nseed_plans))
        return -1;
    c->seed_plans = seeds;
    if (o->budget_s > 0)
        o->budget_s = fmax(o->budget_s - (now_s() - t0), (1 - SEED_SHARE) * o->budget_s);
    return 0;
}

void seed_plans_free(memetic_cfg *c)
{
    for (int i = 0; i < c->nseed_plans; i++)
        plan_free((plan *)&c->seed_plans[i]);
    free((plan *)c->seed_plans);
    c->seed_plans = NULL;
    c->nseed_plans = 0;
}

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
