/* bench_freq.c — the frequency goals of issue 19, measured and printed,
 * never asserted (`make bench`; docs/energy-model.md).
 *
 * Job as in E13: gpt3-xl, batch 1024, full recomputation.
 *
 *   imbalanced pipelines (the shipped rank-order plans of Yuan cases 1 and
 *     5 and world-hetero): the time-energy front over clocks (freq_front at
 *     slowdown budgets of 0 to 1 %), every point replayed; the most energy
 *     saved at a replayed slowdown of at most 1 % against the same plan at
 *     maximum clocks. Goal: >= 20 % (Perseus / EnvPipe publish 25-30 %).
 *   against the best baseline (Yuan case 1, case 5, the us-hetero pool):
 *     the baselines dtfm, megatron, metis, atlas and greedy plan for energy
 *     and are replayed; the memetic planner (energy-within:0.1 as in E13, a
 *     few generations) gets clocks at no estimated slowdown (planner_run_freq)
 *     and is compared with the least-energy baseline at maximum clocks (the
 *     paper's comparison, whose claim is -11.7 %) and with clocks too (the
 *     fair one: `compare --freq`).
 * Takes about 10 s on the project machine. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/freq_assign.h"
#include "planner/planner.h"
#include "planner/planner_run.h"
#include "sim/inputs/model.h"
#include "sim/engine/simulator.h"

#define MAX_POINTS 8

static int make_job(job *j)
{
    model_spec m;
    gt_err e;
    if (model_resolve("gpt3-xl", &m, &e)) {
        fprintf(stderr, "model: %s\n", e.msg);
        return -1;
    }
    job_defaults(j, &m);
    j->batch = 1024;
    j->recompute = RECOMPUTE_FULL;
    return 0;
}

static int replay(const topology *t, const job *j, const plan *p, sim_result *r, gt_err *e)
{
    sim_options so;
    sim_options_default(&so);
    so.iterations = j->iterations;
    so.seed = 1;
    return simulate_plan(t, j, p, &so, r, e);
}

/* The best replayed point of the front within 1 % slowdown; -1 on error. */
static int imbalanced_one(const char *topo_path, const char *plan_path, const job *job0)
{
    topology t;
    plan p, pts[MAX_POINTS];
    est_summary est[MAX_POINTS];
    gt_err e = {{0}};
    static const double budgets[] = {0, 0.0025, 0.005, 0.01};
    const int nb = (int)(sizeof budgets / sizeof budgets[0]);
    if (topo_load(&t, topo_path, NULL, &e)) {
        printf("  %-40s skipped: %s\n", plan_path, e.msg);
        return -1;
    }
    int rc = -1;
    sim_result base, r;
    job jb = *job0, *j = &jb;
    if (!plan_load(&p, plan_path, &t, &e)) { /* the batch the hand-made plan was cut for */
        jb.batch = 0;
        for (int i = 0; i < p.npipes; i++)
            jb.batch += p.pipes[i].microbatches * p.microbatch_size;
    }
    if (e.msg[0] || replay(&t, j, &p, &base, &e)) {
        printf("  %-40s skipped: %s\n", plan_path, e.msg);
        topo_free(&t);
        return -1;
    }
    int n = freq_front(&t, j, &p, budgets, nb, pts, est, &e);
    if (n < 0) {
        printf("  %-40s front failed: %s\n", plan_path, e.msg);
    } else {
        double best_saved = 0, best_slow = 0;
        for (int i = 0; i < n; i++) {
            if (!replay(&t, j, &pts[i], &r, &e)) {
                double slow = 100 * (r.iteration_s / base.iteration_s - 1);
                double saved = 100 * (1 - r.energy_j / base.energy_j);
                if (slow <= 1 && saved > best_saved) {
                    best_saved = saved;
                    best_slow = slow;
                }
            }
            plan_free(&pts[i]);
        }
        printf("  %-40s %8.2f %% saved at %+.3f %% time (replayed)  goal >= 20 %%: %s\n",
               plan_path, best_saved, best_slow, best_saved >= 20 ? "met" : "not met");
        rc = 0;
    }
    plan_free(&p);
    topo_free(&t);
    return rc;
}

/* Least-energy baseline (without and with clocks) against memetic + clocks. */
static void baseline_one(const char *topo_path, const job *j)
{
    static const char *const base[] = {"dtfm", "megatron", "metis", "atlas", "greedy"};
    topology t;
    gt_err e;
    if (topo_load(&t, topo_path, NULL, &e)) {
        printf("  %-28s skipped: %s\n", topo_path, e.msg);
        return;
    }
    planner_opts po = {.objective = "energy", .seed = 1, .generations = 5, .threads = 2};
    double btime = 0;
    double bmax = INFINITY, bfreq = INFINITY;
    const char *bname = "-", *bfname = "-";
    for (size_t k = 0; k < sizeof base / sizeof base[0]; k++) {
        planner_run r;
        sim_result fmax;
        plan p;
        const planner_def *d = planner_find(base[k]);
        if (!d) {
            printf("  no planner %s\n", base[k]);
            continue;
        }
        planner_run_replay(d, &t, j, &po, -1, &r, &p);
        planner_run_freq(&t, j, &p, po.seed, -1, &r, &fmax);
        if (r.status == PLANNER_RUN_OK) {
            if (fmax.energy_j < bmax) {
                bmax = fmax.energy_j;
                btime = fmax.iteration_s;
                bname = base[k];
            }
            if (r.sim.energy_j < bfreq) {
                bfreq = r.sim.energy_j;
                bfname = base[k];
            }
        }
        plan_free(&p);
    }
    planner_run r;
    sim_result fmax;
    plan p;
    po.objective = "energy-within:0.1"; /* as E13: within 10 % of its fastest plan */
    const planner_def *mem = planner_find("memetic");
    if (!mem) {
        printf("  no memetic planner\n");
        topo_free(&t);
        return;
    }
    planner_run_replay(mem, &t, j, &po, -1, &r, &p);
    planner_run_freq(&t, j, &p, po.seed, -1, &r, &fmax);
    if (r.status != PLANNER_RUN_OK || !isfinite(bmax)) {
        printf("  %-28s no comparison: %s\n", topo_path, r.status ? r.err : "no baseline plan");
    } else {
        double vs = 100 * (r.sim.energy_j / bmax - 1), vsf = 100 * (r.sim.energy_j / bfreq - 1);
        printf("  %-28s memetic+clocks %+7.2f %% energy vs %s at f_max (goal < -11.7 %%: %s), "
               "%+7.2f %% vs %s with clocks; iteration %.3g s vs %.3g s, %+.3f %% from clocks\n",
               topo_path, vs, bname, vs < -11.7 ? "met" : "not met", vsf, bfname,
               r.sim.iteration_s, btime, 100 * (r.sim.iteration_s / fmax.iteration_s - 1));
    }
    plan_free(&p);
    topo_free(&t);
}

int main(void)
{
    job j;
    if (make_job(&j))
        return 1;
    printf("frequency (issue 19 goals; gpt3-xl, batch 1024, full recompute; printed, not asserted)\n");
    printf(" imbalanced pipelines: energy saved vs the same plan at max clocks, slowdown <= 1 %%\n");
    imbalanced_one("topologies/yuan2022/case1.json", "topologies/plans/case1-rank-order.plan.json", &j);
    imbalanced_one("topologies/yuan2022/case5.json", "topologies/plans/case5-rank-order.plan.json", &j);
    imbalanced_one("topologies/pools/world-hetero.json",
                   "topologies/plans/world-hetero-rank-order.plan.json", &j);
    printf(" against the least-energy baseline (baselines: objective energy; memetic: "
           "energy-within:0.1, 5 generations)\n");
    baseline_one("topologies/yuan2022/case1.json", &j);
    baseline_one("topologies/yuan2022/case5.json", &j);
    baseline_one("topologies/pools/us-hetero.json", &j);
    return 0;
}
