/* dtfm.c — the DT-FM baseline: Yuan et al., "Decentralized Training of
 * Foundation Models in Heterogeneous Environments", NeurIPS 2022, and its
 * scheduler code (github.com/DS3Lab/DT-FM, commit 69f05e50,
 * scheduler/heuristic_evolutionary_solver/scheduler.py, function GCMA).
 *
 * What it decides: the partition of ALL GPUs into D_PP stage groups of D_DP
 * GPUs (a balanced graph partition), the order of the groups along the
 * pipeline (open-loop TSP path) and which replicas form each pipeline
 * (bottleneck matchings between consecutive groups) — all by its own
 * communication-only cost DataPCost + 2 * PipelinePCost (dtfm_cost.c).
 * What it ignores: compute speed and memory of individual GPUs (it assumes
 * identical devices), energy, contention, bubbles. Layers are uniform (D_PP
 * equal stages), every pipeline takes the same share of the batch, the
 * schedule is GPipe (--pp-mode gpipe in its run scripts) and gradients are
 * synchronised by the sharded parameter server (central_ps), as in its code.
 *
 * The search (DT-FM's hybrid genetic algorithm, GCMA) is in dtfm_search.c,
 * the communication cost it minimises in dtfm_cost.c; this file holds the
 * planner: the shape rule, DT-FM's volumes, its native cost of any grid
 * plan, and the decoded plan.
 *
 * Shape rule (D_PP x D_DP = all GPUs; DT-FM fixes it per job by hand): among
 * D_PP dividing the GPU count with D_PP <= layers and D_DP <= B/b, take the
 * first by (1) every uniform stage fits the smallest GPU under GPipe with all
 * of a pipeline's microbatches in flight (the search ignores memory, so the
 * shape must fit wherever a stage lands), (2) D_DP divides B/b (equal batch
 * shares), (3) D_PP divides the layers (truly uniform stages), (4) the most
 * square grid, (5) the larger D_PP. For 64 GPUs and GPT3-XL this gives
 * 8 x 8, the setting of DT-FM's runs. */
#include "dtfm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines.h"
#include "common.h"
#include "fit.h"
#include "sim/models/attn_choice.h"
#include "sim/models/cost.h"
#include "sim/models/dp_sync.h"
#include "sim/models/memory.h"

#define GIB 1073741824.0

/* --- shape and volumes --------------------------------------------------- */

void dtfm_volumes(const job *j, int dpp, int ddp, double *c_pp, double *c_dp)
{
    int total = j->batch / j->microbatch;
    int per_pipe = (total + ddp - 1) / ddp;
    *c_pp = cost_activation_bytes(j, j->microbatch) * per_pipe;
    *c_dp = dp_grad_bytes(j, 0, j->model.layers - 1, 1) / dpp;
}

/* Largest memory any uniform GPipe stage needs for shape dpp x ddp. */
static double shape_memory(const job *j, int dpp, int ddp)
{
    int total = j->batch / j->microbatch, m = (total + ddp - 1) / ddp;
    double worst = 0;
    for (int k = 0; k < dpp; k++) {
        int f, l;
        bl_even_cut(j->model.layers, dpp, k, &f, &l);
        double need = cost_stage_memory(j, j->microbatch, f, l, 1, m);
        worst = need > worst ? need : worst;
    }
    return worst;
}

/* Lexicographic preference of a shape (larger is better). */
static void shape_score(const job *j, int dpp, int ddp, bool fits, double *score)
{
    int total = j->batch / j->microbatch;
    score[0] = fits;
    score[1] = total % ddp == 0;
    score[2] = j->model.layers % dpp == 0;
    score[3] = -fabs(log((double)dpp / ddp));
    score[4] = dpp;
}

static bool better(const double *a, const double *b)
{
    for (int i = 0; i < 5; i++)
        if (fabs(a[i] - b[i]) > 1e-12)
            return a[i] > b[i];
    return false;
}

int dtfm_choose_shape(const topology *t, const job *j, int *dpp, int *ddp, gt_err *e)
{
    int N = t->ngpus, L = j->model.layers, total = j->batch / j->microbatch;
    double minmem = INFINITY;
    int small = 0;
    for (int g = 0; g < N; g++)
        if (topo_gpu_type(t, g)->mem_bytes < minmem) {
            minmem = topo_gpu_type(t, g)->mem_bytes;
            small = g;
        }
    /* uniform stages run one attention kernel: the fused one only when every
     * GPU can (attn_choice.h) */
    job jb = *j;
    if (j->attention == ATTN_AUTO) {
        jb.attention = ATTN_FUSED;
        for (int g = 0; g < N; g++)
            if (!attn_fused_on(j, topo_gpu_type(t, g)))
                jb.attention = ATTN_UNFUSED;
    }
    double best[5] = {-1, 0, 0, -INFINITY, 0}, closest = INFINITY;
    int cl_pp = 0;
    *dpp = *ddp = 0;
    for (int pp = 1; pp <= N && pp <= L; pp++) {
        if (N % pp || N / pp > total)
            continue;
        double need = shape_memory(&jb, pp, N / pp), sc[5];
        shape_score(j, pp, N / pp, need <= minmem, sc);
        if (better(sc, best)) {
            memcpy(best, sc, sizeof best);
            *dpp = pp;
            *ddp = N / pp;
        }
        if (need < closest) {
            closest = need;
            cl_pp = pp;
        }
    }
    if (!*dpp)
        return gt_fail(e, "no D_PP x D_DP grid of all %d GPUs (D_PP <= %d layers, D_DP "
                          "<= %d microbatches)", N, L, total);
    if (!best[0])
        return gt_fail(e, "no D_PP x D_DP grid of all %d GPUs fits memory with uniform "
                          "layers under GPipe; closest D_PP %d x D_DP %d needs %.2f GiB per GPU "
                          "(%d microbatches in flight), the smallest GPU (%s) has %.2f GiB",
                       N, cl_pp, N / cl_pp, closest / GIB, (total + N / cl_pp - 1) / (N / cl_pp),
                       topo_gpu_type(t, small)->id, minmem / GIB);
    return 0;
}

/* --- DT-FM's cost of any grid plan ------------------------------------------- */

int dtfm_plan_cost(const topology *t, const job *j, const plan *p, double *cost, gt_err *e)
{
    int D = p->npipes, S = p->pipes[0].nstages, mmax = 0;
    for (int r = 0; r < D; r++) {
        if (p->pipes[r].nstages != S)
            return gt_fail(e, "pipelines differ in stage count");
        for (int s = 0; s < S; s++)
            if (p->pipes[r].stages[s].ngpus != 1)
                return gt_fail(e, "tensor-parallel stages");
        mmax = p->pipes[r].microbatches > mmax ? p->pipes[r].microbatches : mmax;
    }
    int *gpus = malloc(sizeof *gpus * (size_t)D * (size_t)S);
    int *pipes = malloc(sizeof *pipes * (size_t)D * (size_t)S);
    if (!gpus || !pipes) {
        free(gpus);
        free(pipes);
        return gt_fail(e, "out of memory");
    }
    for (int r = 0; r < D; r++)
        for (int s = 0; s < S; s++) {
            gpus[r * S + s] = p->pipes[r].stages[s].gpus[0];
            pipes[r * S + s] = r * S + s;
        }
    double c_pp = cost_activation_bytes(j, p->microbatch_size) * mmax;
    double c_dp = dp_grad_bytes(j, 0, j->model.layers - 1, 1) / S;
    dtfm_problem pr;
    int rc = dtfm_problem_init(&pr, t, gpus, S, D, c_pp, c_dp, e);
    if (!rc) {
        *cost = dtfm_chain_cost(&pr, pipes, NULL, NULL);
        dtfm_problem_free(&pr);
    }
    free(gpus);
    free(pipes);
    return rc;
}

/* --- the planner ------------------------------------------------------------ */

/* Decode the best partition into a plan: D_DP pipelines of D_PP stages. */
static int build_plan(dtfm_problem *pr, const job *j, const char *name, const int *part,
                      plan *out, gt_err *e)
{
    size_t n = (size_t)pr->n;
    int *pipes = malloc(sizeof *pipes * n), *gpus = malloc(sizeof *gpus * n);
    int rc = 0;
    if (!pipes || !gpus)
        rc = gt_fail(e, "out of memory");
    else if (dtfm_decode(pr, part, pipes))
        rc = gt_fail(e, "%s: the best partition is not balanced (internal error)", name);
    else {
        for (size_t i = 0; i < n; i++)
            gpus[i] = pr->gpu[pipes[i]];
        rc = bl_uniform_plan(out, name, j, pr->ddp, pr->dpp, 1, gpus, SCHED_GPIPE, SYNC_PS, e);
    }
    free(pipes);
    free(gpus);
    return rc;
}

/* The variants (rows of planner/registry.c): DT-FM's gain or the classic
 * edge-cut gain in the local search. */
struct dtfm_cfg {
    const char *name;    /* written into the plan */
    dtfm_gain gain;
};
const dtfm_cfg DTFM_CFG = {"dtfm", DTFM_GAIN_DTFM};
const dtfm_cfg DTFM_HYBRID_CFG = {"dtfm-hybrid", DTFM_GAIN_EDGECUT};

/* One GCMA search with configuration vcfg (a dtfm_cfg), for bl_fit. */
static int run_dtfm(const void *vcfg, const topology *t, const job *j, const planner_opts *o,
                    plan *out, planner_stats *st, gt_err *e)
{
    const dtfm_cfg *cfg = vcfg;
    dtfm_gain gain = cfg->gain;
    const char *name = cfg->name;
    double t0 = bl_now();
    int dpp, ddp;
    if (dtfm_choose_shape(t, j, &dpp, &ddp, e))
        return gt_prefix(e, "%s", name);
    int *gpus = malloc(sizeof *gpus * (size_t)t->ngpus);
    int *best = malloc(sizeof *best * (size_t)t->ngpus);
    if (!gpus || !best) {
        free(gpus);
        free(best);
        return gt_fail(e, "out of memory");
    }
    for (int g = 0; g < t->ngpus; g++)
        gpus[g] = g;
    double c_pp, c_dp;
    dtfm_volumes(j, dpp, ddp, &c_pp, &c_dp);
    dtfm_problem pr;
    dtfm_ga_opts g;
    dtfm_ga_defaults(&g);
    g.gain = gain;
    if (o->generations > 0)
        g.trials = o->generations;
    g.stop = o;
    g.t0 = t0;
    dtfm_ga_result res;
    int rc = dtfm_problem_init(&pr, t, gpus, dpp, ddp, c_pp, c_dp, e);
    if (!rc) {
        rc = dtfm_ga(&pr, &g, o->seed, best, &res, e);
        if (!rc)
            rc = build_plan(&pr, j, name, best, out, e);
        dtfm_problem_free(&pr);
    }
    free(gpus);
    free(best);
    if (rc)
        return -1;
    bl_eval ev;
    if (bl_estimate(t, j, out, &ev, e)) {
        plan_free(out);
        return gt_prefix(e, "%s: the decoded %d x %d plan", name, dpp, ddp);
    }
    snprintf(out->objective, sizeof out->objective, "%s",
             o->objective && *o->objective ? o->objective : "time");
    if (st) {
        memset(st, 0, sizeof *st);
        if (bl_objective(o->objective, &ev, &st->objective_value, NULL))
            st->objective_value = ev.iteration_s;
        st->evaluations = res.evaluations;
        st->plan_time_s = bl_now() - t0;
        snprintf(st->note, sizeof st->note,
                 "DT-FM cost %.4g s = DataP %.4g + 2 x PipelineP %.4g (D_PP %d x D_DP %d, "
                 "c_pp %.3g GB, c_dp %.3g GB, %d trials, best initial %.4g s)",
                 res.cost, res.data_cost, res.pipe_cost, dpp, ddp, c_pp / 1e9, c_dp / 1e9,
                 res.trials_done, res.first_cost);
    }
    return 0;
}

/* DT-FM runs GPipe, whose paper makes re-materialization part of the
 * method (Huang et al., "GPipe", NeurIPS 2019, section 2.3), and takes the
 * microbatch size as a setting; its optimizer is not configurable. The GCMA
 * search and the native cost are unchanged: they run on the job as fitted. */
static const bl_fit_opts DTFM_FIT = {"DT-FM/GPipe", true, true, false};

int planner_dtfm(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                 plan *out, planner_stats *st, gt_err *e)
{
    return bl_fit(run_dtfm, cfg, &DTFM_FIT, t, j, o, out, st, e);
}
