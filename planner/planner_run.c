/* planner_run.c — one planner run plus its replay, shared by `compare` and
 * `study` (see planner_run.h). */
#include "planner_run.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "freq_assign.h"
#include "sim/models/plan_check.h"

double planner_run_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void plan_shape(const plan *p, planner_run *r)
{
    r->pipes = p->npipes;
    plan_view v;
    gt_err e;
    r->smin = r->smax = 0;
    if (plan_view_build(&v, p, 0, &e) == 0 && v.npipes)
        r->smin = r->smax = v.S[0];
    for (int i = 1; i < v.npipes; i++) {
        int s = v.S[i];
        r->smin = s < r->smin ? s : r->smin;
        r->smax = s > r->smax ? s : r->smax;
    }
    plan_view_free(&v);
    r->gpus = plan_gpus_used(p);
}

static void replay(const topology *t, const job *j, const plan *p, uint64_t seed,
                   int wan_policy, planner_run *r)
{
    sim_options so;
    sim_options_default(&so);
    so.iterations = j->iterations;
    so.seed = seed;
    so.wan_policy = wan_policy;
    gt_err e = {{0}};
    if (simulate_plan(t, j, p, &so, &r->sim, &e)) {
        r->status = PLANNER_RUN_REPLAY_FAILED;
        snprintf(r->err, sizeof r->err, "the plan does not replay: %s", e.msg);
    } else {
        r->status = PLANNER_RUN_OK;
    }
}

void planner_run_replay(const planner_def *d, const topology *t, const job *j,
                        const planner_opts *o, int wan_policy, planner_run *r, plan *keep)
{
    memset(r, 0, sizeof *r);
    plan p;
    memset(&p, 0, sizeof p);
    gt_err e = {{0}};
    double t0 = planner_run_clock();
    int rc = planner_plan(d, t, j, o, &p, &r->st, &e);
    r->plan_s = planner_run_clock() - t0;
    /* read now: a stop that comes during the replay leaves the plan whole */
    r->stopped = o->stop && *o->stop;
    if (rc) {
        r->status = PLANNER_RUN_INFEASIBLE;
        snprintf(r->err, sizeof r->err, "%s", e.msg[0] ? e.msg : "no plan");
    } else {
        plan_shape(&p, r);
        replay(t, j, &p, o->seed, wan_policy, r);
    }
    if (keep)
        *keep = p;
    else
        plan_free(&p);
}

void planner_run_freq(const topology *t, const job *j, plan *p, uint64_t seed, int wan_policy,
                      planner_run *r, sim_result *fmax)
{
    if (r->status != PLANNER_RUN_OK)
        return;
    sim_result at_max = r->sim;
    if (fmax)
        *fmax = at_max;
    gt_err e = {{0}};
    if (freq_assign(t, j, p, 0, NULL, NULL, NULL, &e)) {
        r->status = PLANNER_RUN_REPLAY_FAILED;
        snprintf(r->err, sizeof r->err, "SM clocks: %s", e.msg);
        return;
    }
    replay(t, j, p, seed, wan_policy, r);
    if (r->status != PLANNER_RUN_OK || at_max.energy_j <= 0 || at_max.iteration_s <= 0)
        return;
    size_t n = strlen(r->st.note);
    snprintf(r->st.note + n, sizeof r->st.note - n,
             "%sSM clocks (replayed): %+.2f %% energy, %+.3f %% time", n ? "; " : "",
             100 * (r->sim.energy_j / at_max.energy_j - 1),
             100 * (r->sim.iteration_s / at_max.iteration_s - 1));
}

void planner_run_names(char *buf, size_t cap, int per_line, int indent)
{
    int n;
    const planner_def *all = planner_all(&n);
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at < cap; i++) {
        int k = i % per_line ? snprintf(buf + at, cap - at, " %s", all[i].name)
                             : snprintf(buf + at, cap - at, "\n%*s%s", indent, "", all[i].name);
        at += k > 0 ? (size_t)k : 0;
    }
}
