/* est_plan.c — one planner evaluation (estimate_plan) and the workspace it
 * reuses (estimator.h): check, build, estimate on the per-stage path where
 * it is exact or on the op path, account, memory. */
#include "sim/models/plan_check.h"
#include "sim/estimator/estimator.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim/estimator/coll_cache.h"
#include "sim/estimator/load_bound.h"
#include "sim/estimator/stage_path.h"

struct est_workspace {
    est_path path;
    int fast;              /* the last evaluation ran the per-stage path */
    workload w;
    timing tm;
    int tm_cap[3];         /* ops, lanes, groups the timing has room for */
    lane_account *la;
    int cap_la;
    stage_path sp;
    coll_cache cc;         /* sync groups' collectives (fast path) */
    stage_costs sc;        /* stage times (fast path) */
    plan_check_buf pc;     /* the check's view and per-GPU memory */
    lb_work lw;            /* the load bounds' arrays */
    path_memo pm;          /* GPU pairs' paths (fast path): reset with the collective cache */
};

est_workspace *est_workspace_new(void)
{
    return calloc(1, sizeof(est_workspace));
}

void est_workspace_free(est_workspace *ws)
{
    if (!ws)
        return;
    workload_free(&ws->w);
    timing_free(&ws->tm);
    free(ws->la);
    stage_path_free(&ws->sp);
    coll_cache_free(&ws->cc);
    stage_costs_free(&ws->sc);
    plan_check_buf_free(&ws->pc);
    lb_work_free(&ws->lw);
    path_memo_free(&ws->pm);
    free(ws);
}

void est_workspace_set_path(est_workspace *ws, est_path path)
{
    ws->path = path;
}

void est_workspace_set_every_subset(est_workspace *ws, int on)
{
    ws->lw.every_subset = on;
}

const workload *est_workspace_workload(const est_workspace *ws) { return &ws->w; }
const timing *est_workspace_timing(const est_workspace *ws) { return &ws->tm; }
const lane_account *est_workspace_accounts(const est_workspace *ws) { return ws->la; }
int est_workspace_fast(const est_workspace *ws) { return ws->fast; }
long est_workspace_skipped(const est_workspace *ws) { return ws->fast ? ws->sp.skipped : 0; }
int est_workspace_reused(const est_workspace *ws) { return ws->fast ? ws->sp.reused : 0; }
int est_workspace_recalled(const est_workspace *ws) { return ws->fast ? ws->sp.recalled : 0; }
int est_workspace_xfer_taken(const est_workspace *ws)
{
    return ws->fast ? xfer_kept_taken(ws->lw.kept) : 0;
}
long est_workspace_coll_renamed(const est_workspace *ws) { return ws->cc.renamed; }

/* The plan check, with its view resolved into the workload's (the build
 * reads the same view: it is not resolved twice). */
static int check(est_workspace *ws, const topology *t, const job *j, const plan *p, gt_err *e)
{
    plan_view own = ws->pc.v;
    ws->pc.v = ws->w.view;
    int rc = plan_check_into(p, t, j, &ws->pc, e);
    ws->w.view = ws->pc.v;
    ws->pc.v = own;
    return rc;
}

/* Builds the workload (no op list on the fast path) into the buffers of the
 * last one, on the check's view, and readies its timing. */
static int build(est_workspace *ws, const topology *t, const job *j, const plan *p, int fast,
                 gt_err *e)
{
    if (workload_rebuild_viewed(&ws->w, t, j, p, !fast, e))
        return -1;
    return timing_reuse(&ws->tm, ws->tm_cap, &ws->w, e);
}

/* The recurrence: per stage when it applies (falling back to the op path
 * when its times near the cap), else op by op. */
static int run(est_workspace *ws, const topology *t, const job *j, const plan *p, gt_err *e)
{
    int fast = 0;
    ws->lw.pm = ws->cc.pw.pm = NULL; /* the op path reads path.h itself */
    if (ws->path == EST_PATH_AUTO) { /* the caches hold for this topology and job only */
        int kept = coll_cache_begin(&ws->cc, t), job_kept = 0;
        if (kept == 0) {
            stage_costs_clear(&ws->sc);
            if (path_memo_reset(&ws->pm, t))
                return gt_fail(e, "out of memory");
        }
        if (kept >= 0) /* the memo holds for this topology's content (reset when it differs) */
            ws->lw.pm = ws->cc.pw.pm = &ws->pm;
        if (kept >= 0 && (job_kept = stage_costs_begin(&ws->sc, j)) >= 0 && !(kept && job_kept))
            stage_path_forget(&ws->sp); /* its stored stages hold for one topology and job */
        if (kept < 0 || job_kept < 0 || (fast = stage_path_prepare(&ws->sp, &ws->sc, t, j, p)) < 0)
            return gt_fail(e, "out of memory");
    }
    if (build(ws, t, j, p, fast, e))
        return -1;
    int rc = fast ? stage_path_run(&ws->sp, p, &ws->w, &ws->tm) : 1;
    if (rc < 0)
        return gt_fail(e, "out of memory");
    if (rc == 0) {
        ws->fast = 1;
        ws->tm.wan_bytes = ws->sp.wan_bytes;
        return estimate_finish(t, &ws->w, p->sync, &ws->tm, &ws->sp, &ws->cc, &ws->lw, e);
    }
    if (fast && build(ws, t, j, p, 0, e))
        return -1;
    return estimate_run_ws(t, &ws->w, p->sync, &ws->tm, &ws->lw, e);
}

static int account(est_workspace *ws, const topology *t)
{
    const workload *w = &ws->w;
    if (w->nlanes > ws->cap_la) {
        lane_account *x = realloc(ws->la, sizeof *x * (size_t)w->nlanes);
        if (!x)
            return -1;
        ws->la = x;
        ws->cap_la = w->nlanes;
    }
    if (!ws->fast) {
        account_lanes(t, w, &ws->tm, ws->la);
        return 0;
    }
    /* every op at the maximum clock: compute = optimizer + ops, no slow ops */
    for (int l = 0; l < w->nlanes; l++)
        account_lane_finish(t, w, &ws->tm, l, w->lanes[l].opt_ns + ws->sp.lanes[l].ops_ns, 0,
                            0.0, ws->tm.lanes[l].sync_comm_ns + ws->sp.lanes[l].xfer_comm_ns,
                            &ws->la[l]);
    return 0;
}

int estimate_plan_ws(est_workspace *ws, const topology *t, const job *j, const plan *p,
                     est_summary *out, gt_err *e)
{
    job jb;
    j = plan_job(p, j, &jb);
    memset(out, 0, sizeof *out);
    ws->fast = 0;
    if (check(ws, t, j, p, e) || run(ws, t, j, p, e))
        return -1;
    if (account(ws, t))
        return gt_fail(e, "out of memory");
    run_totals tot;
    account_totals(t, &ws->w, &ws->tm, ws->la, 0, &tot);
    out->iteration_s = ws->tm.iteration_ns * 1e-9;
    out->energy_j = tot.energy_j;
    out->carbon_g = tot.carbon_g;
    out->usd = tot.usd;
    out->tokens_per_s = ws->w.tokens / out->iteration_s;
    out->gpus_used = plan_gpus_used(p);
    const double *mem = ws->pc.mem; /* the check's: plan_memory_all's figures */
    for (int g = 0; g < t->ngpus; g++) {
        double need = mem[g] / topo_gpu_type(t, g)->mem_bytes;
        out->peak_mem_frac = need > out->peak_mem_frac ? need : out->peak_mem_frac;
    }
    return 0;
}

/* One workspace per thread, freed when the thread ends (the planners call
 * estimate_plan from their OpenMP workers). */
static pthread_key_t ws_key;
static pthread_once_t ws_once = PTHREAD_ONCE_INIT;

static void ws_destroy(void *ws)
{
    est_workspace_free(ws);
}

static void ws_key_make(void)
{
    pthread_key_create(&ws_key, ws_destroy);
}

int estimate_plan(const topology *t, const job *j, const plan *p, est_summary *out, gt_err *e)
{
    pthread_once(&ws_once, ws_key_make);
    est_workspace *ws = pthread_getspecific(ws_key);
    if (!ws) {
        ws = est_workspace_new();
        if (!ws || pthread_setspecific(ws_key, ws)) {
            est_workspace_free(ws);
            memset(out, 0, sizeof *out);
            return gt_fail(e, "out of memory");
        }
    }
    return estimate_plan_ws(ws, t, j, p, out, e);
}
