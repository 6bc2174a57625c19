/* planner.c — running a registry row (planner.h): the planners its row
 * names as seeds first, their plans handed to it in planner_opts.seeds,
 * then the planner itself with the row's configuration. This is the one
 * place where one planner's plans reach another: the memetic planner gets
 * the baselines' plans without knowing their names (registry.c lists
 * them). */
#include "planner.h"

#include <math.h>
#include <stdlib.h>

#include "planner_run.h"

/* Most of a time budget the seed planners may take: the rest is the
 * seeded planner's own search. */
#define SEED_SHARE 0.25

/* The seed planners of d, in order, within SEED_SHARE of o's budget; *n
 * plans in *out (malloc'd, room for every seed planner). A seed planner's
 * own seeds are not run: seeds are plain planners. */
static int seed_plans(const planner_def *d, const topology *t, const job *j,
                      const planner_opts *o, plan **out, int *n)
{
    int nn = 0;
    while (d->seeds[nn])
        nn++;
    *n = 0;
    *out = calloc((size_t)(nn > 0 ? nn : 1), sizeof **out);
    if (!*out)
        return -1;
    planner_opts bo = *o;
    bo.progress = false;
    bo.budget_s = 0;
    bo.generations = 0;
    bo.seeds = NULL;
    bo.nseeds = 0;
    double t0 = planner_run_clock();
    for (int i = 0; i < nn; i++) {
        if ((o->stop && *o->stop) ||
            (o->budget_s > 0 && planner_run_clock() - t0 > SEED_SHARE * o->budget_s))
            break;
        const planner_def *s = planner_find(d->seeds[i]);
        planner_stats st;
        gt_err e;
        if (s && s->run(s->cfg, t, j, &bo, &(*out)[*n], &st, &e) == 0)
            (*n)++;
    }
    return 0;
}

int planner_seeds_run(const planner_def *d, const topology *t, const job *j, planner_opts *o)
{
    o->seeds = NULL;
    o->nseeds = 0;
    if (!d->seeds)
        return 0;
    plan *seeds = NULL;
    int n = 0;
    double t0 = planner_run_clock();
    if (seed_plans(d, t, j, o, &seeds, &n))
        return -1;
    o->seeds = seeds;
    o->nseeds = n;
    if (o->budget_s > 0)
        o->budget_s =
            fmax(o->budget_s - (planner_run_clock() - t0), (1 - SEED_SHARE) * o->budget_s);
    return 0;
}

void planner_seeds_free(planner_opts *o)
{
    plan *seeds = (plan *)o->seeds; /* planner_seeds_run's own allocation */
    for (int i = 0; i < o->nseeds; i++)
        plan_free(&seeds[i]);
    free(seeds);
    o->seeds = NULL;
    o->nseeds = 0;
}

int planner_plan(const planner_def *d, const topology *t, const job *j, const planner_opts *o,
                 plan *out, planner_stats *st, gt_err *e)
{
    planner_opts so = *o;
    if (planner_seeds_run(d, t, j, &so))
        return gt_fail(e, "out of memory");
    int rc = d->run(d->cfg, t, j, &so, out, st, e);
    planner_seeds_free(&so);
    return rc;
}
