/* simulate.c — run the estimator and N simulated iterations of a plan and
 * keep what reports need (simulate.h); simulate_plan() for planners. */
#include "sim/engine/simulate.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/estimator/estimator.h"
#include "sim/engine/sim_state.h"
#include "sim/models/plan_check.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds of the calling thread (the replay runs in it). */
static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The estimate and its lane accounts. The replay reads the estimated op
 * times only as the priorities of flows on a temporal link; where there is
 * none and the caller did not ask for them (est_op_times), the estimator's
 * evaluation gives the rest: on its per-stage path, without an op list,
 * the op path's figures to the last bit (tests/test_estimator_fast.c), and
 * by the op path itself where that path does not apply. Else the op-by-op
 * recurrence on the replay's workload, keeping every op's time. */
static int run_estimator(const topology *t, const job *j, const plan *p, const sim_options *o,
                         sim_detail *d, gt_err *e)
{
    d->est_acc = malloc(sizeof *d->est_acc * (size_t)(d->w.nlanes > 0 ? d->w.nlanes : 1));
    d->acc = calloc((size_t)(d->w.nlanes > 0 ? d->w.nlanes : 1), sizeof *d->acc);
    if (!d->est_acc || !d->acc)
        return gt_fail(e, "out of memory");
    if (o->est_op_times || net_any_temporal(t, o->wan_policy)) {
        if (timing_alloc(&d->est, &d->w, e) || estimate_run(t, &d->w, p->sync, &d->est, e))
            return -1;
        account_lanes(t, &d->w, &d->est, d->est_acc);
        return 0;
    }
    est_workspace *ws = est_workspace_new();
    if (!ws)
        return gt_fail(e, "out of memory");
    est_summary sum;
    int rc = estimate_plan_ws(ws, t, j, p, &sum, e);
    if (!rc && est_workspace_workload(ws)->nlanes != d->w.nlanes)
        rc = gt_fail(e, "internal error: the estimate has %d lanes, the replay %d",
                     est_workspace_workload(ws)->nlanes, d->w.nlanes);
    if (!rc)
        rc = timing_copy(&d->est, est_workspace_timing(ws), &d->w, false, e);
    if (!rc) {
        memcpy(d->est_acc, est_workspace_accounts(ws), sizeof *d->est_acc * (size_t)d->w.nlanes);
        d->est_per_stage = est_workspace_fast(ws);
    }
    est_workspace_free(ws);
    return rc;
}

/* Keep the first iteration's flows and WAN link bytes for the timeline.
 * When no iteration follows (last), the network's own records are taken
 * over instead of copied: a second copy of them was a large replay's peak. */
static int keep_first(const topology *t, sim_state *s, sim_detail *d, int last, gt_err *e)
{
    d->nflows = s->net.nflows;
    if (last) {
        d->flows = s->net.flows; /* the network frees what it still holds, not these */
        s->net.flows = NULL;
    } else {
        d->flows = malloc(sizeof *d->flows * (size_t)(d->nflows > 0 ? d->nflows : 1));
        if (d->flows)
            memcpy(d->flows, s->net.flows, sizeof *d->flows * (size_t)d->nflows);
    }
    d->wan_link_bytes = calloc((size_t)t->nsites * t->nsites, sizeof(double));
    if (!d->flows || !d->wan_link_bytes)
        return gt_fail(e, "out of memory");
    for (int f = 0; f < d->nflows; f++)
        if (d->flows[f].wan_a >= 0)
            d->wan_link_bytes[d->flows[f].wan_a * t->nsites + d->flows[f].wan_b] +=
                d->flows[f].bytes;
    return 0;
}

static void add_accounts(sim_detail *d, const lane_account *la, int n)
{
    for (int l = 0; l < n; l++) {
        d->acc[l].compute_ns += la[l].compute_ns;
        d->acc[l].comm_ns += la[l].comm_ns;
        d->acc[l].idle_ns += la[l].idle_ns;
        d->acc[l].energy_j += la[l].energy_j;
    }
}

static int run_iterations(const topology *t, const plan *p, const sim_options *o,
                          sim_detail *d, gt_err *e)
{
    timing tm;
    sim_state s;
    lane_account *la = malloc(sizeof *la * (size_t)d->w.nlanes);
    if (!la || timing_alloc(&tm, &d->w, e)) {
        free(la);
        return e->msg[0] ? -1 : gt_fail(e, "out of memory");
    }
    int rc = sim_state_init(&s, t, &d->w, p->sync, o, &d->est, &tm, e);
    double total_ns = 0, wan = 0;
    for (int it = 0; !rc && it < o->iterations; it++) {
        rc = sim_run_iteration(&s);
        if (rc || s.preempted)
            break;
        account_lanes(t, &d->w, &tm, la);
        add_accounts(d, la, d->w.nlanes);
        total_ns += (double)tm.iteration_ns;
        wan += tm.wan_bytes;
        d->events += s.events;
        d->stale_events += s.net.stale_events;
        d->solves += s.net.solves;
        d->solved_flows += s.net.solved_flows;
        d->moved_events += s.net.moved_events;
        int last = it + 1 == o->iterations;
        int64_t iter_ns = tm.iteration_ns;
        if (it == 0 && last) { /* taken over, not copied (a large replay's peak) */
            d->tm = tm;
            tm = (timing){0};
            rc = keep_first(t, &s, d, last, e);
        } else if (it == 0) {
            rc = timing_copy(&d->tm, &tm, &d->w, true, e) || keep_first(t, &s, d, last, e);
        }
        s.t0 += iter_ns;
        d->iterations_done++;
    }
    if (!rc && s.preempted) {
        d->res.preempted = true;
        memcpy(d->res.preempt_msg, s.preempt_msg, sizeof d->res.preempt_msg);
    }
    if (!rc && d->iterations_done > 0) {
        int n = d->iterations_done;
        for (int l = 0; l < d->w.nlanes; l++) {
            d->acc[l].compute_ns /= n;
            d->acc[l].comm_ns /= n;
            d->acc[l].idle_ns /= n;
            d->acc[l].energy_j /= n;
        }
        d->mean_iteration_ns = total_ns / n;
        /* totals use the mean iteration and mean WAN bytes */
        timing avg = d->tm;
        avg.iteration_ns = (int64_t)(total_ns / n + 0.5);
        avg.wan_bytes = wan / n;
        account_totals(t, &d->w, &avg, d->acc, o->charge_unselected, &d->tot);
    }
    sim_state_free(&s);
    timing_free(&tm);
    free(la);
    return rc;
}

static void fill_result(const plan *p, sim_detail *d)
{
    sim_result *r = &d->res;
    r->iteration_s = d->mean_iteration_ns * 1e-9;
    r->energy_j = d->tot.energy_j;
    r->est_iteration_s = d->est.iteration_ns * 1e-9;
    r->est_energy_j = d->est_tot.energy_j;
    r->carbon_g = d->tot.carbon_g;
    r->usd = d->tot.usd;
    r->tokens_per_s = r->iteration_s > 0 ? d->w.tokens / r->iteration_s : 0;
    r->gpus_used = plan_gpus_used(p);
    double gpu_ns = 0, busy = 0, idle = 0;
    for (int l = 0; l < d->w.nlanes; l++) {
        int tp = d->w.lanes[l].tp;
        gpu_ns += tp * (double)(d->acc[l].compute_ns + d->acc[l].comm_ns + d->acc[l].idle_ns);
        busy += tp * (double)d->acc[l].compute_ns;
        idle += tp * (double)d->acc[l].idle_ns;
    }
    r->utilization = gpu_ns > 0 ? busy / gpu_ns : 0;
    r->bubble_fraction = gpu_ns > 0 ? idle / gpu_ns : 0;
}

int sim_detail_run(const topology *t, const job *j, const plan *p, const sim_options *o,
                   sim_detail *d, gt_err *e)
{
    memset(d, 0, sizeof *d);
    e->msg[0] = '\0';
    double t0 = now_s();
    job jb;
    j = plan_job(p, j, &jb);
    if (plan_check(p, t, j, e) || workload_build(&d->w, t, j, p, e))
        return -1;
    if (run_estimator(t, j, p, o, d, e)) {
        sim_detail_free(d);
        return -1;
    }
    account_totals(t, &d->w, &d->est, d->est_acc, o->charge_unselected, &d->est_tot);
    double c0 = thread_cpu_s();
    int rc = run_iterations(t, p, o, d, e);
    d->replay_cpu_s = thread_cpu_s() - c0;
    if (rc) {
        sim_detail_free(d);
        return -1;
    }
    if (d->iterations_done == 0) {
        gt_fail(e, "preempted before the first iteration finished: %s", d->res.preempt_msg);
        sim_detail_free(d);
        return -1;
    }
    fill_result(p, d);
    d->wall_s = now_s() - t0;
    return 0;
}

void sim_detail_free(sim_detail *d)
{
    workload_free(&d->w);
    timing_free(&d->est);
    timing_free(&d->tm);
    free(d->flows);
    free(d->wan_link_bytes);
    free(d->acc);
    free(d->est_acc);
    memset(d, 0, sizeof *d);
}

int simulate_plan(const topology *t, const job *j, const plan *p, const sim_options *o,
                  sim_result *out, gt_err *e)
{
    sim_detail d;
    if (sim_detail_run(t, j, p, o, &d, e))
        return -1;
    *out = d.res;
    sim_detail_free(&d);
    return 0;
}
