/* dtfm.h — DT-FM's scheduler (Yuan et al., "Decentralized Training of
 * Foundation Models in Heterogeneous Environments", NeurIPS 2022; code
 * github.com/DS3Lab/DT-FM, scheduler/heuristic_evolutionary_solver/).
 *
 * N = D_PP x D_DP devices are partitioned into D_PP "stage groups" of D_DP
 * devices each (the devices of a group hold the same layers: data
 * parallelism). The communication-only cost of a partition is
 *
 *   DataPCost + 2 * PipelinePCost
 *
 * DataPCost     = max over groups, max over devices i of the group, of
 *                 sum over peers j of 2 * (latency(i,j) + c_dp / (D_DP * bw(i,j)))
 *                 (Eq. 2, sharded parameter server)
 * PipelinePCost = the open-loop travelling-salesman path over the groups
 *                 whose edge weight is the bottleneck perfect matching of
 *                 latency + c_pp / bw between the two groups (Eq. 3-4)
 *
 * and a hybrid genetic algorithm (Bui & Moon style, with the cyclic
 * partitioning local search of Kim & Moon) searches partitions. The cost
 * model lives in dtfm_cost.c, the search in dtfm_search.c and the planner
 * (shape rule, volumes, the decoded plan) in dtfm.c. */
#ifndef GT_BL_DTFM_H
#define GT_BL_DTFM_H

#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "planner/planner.h"

/* One instance of DT-FM's problem: devices 0..n-1 and their link costs. */
typedef struct dtfm_problem {
    int n;            /* devices, = dpp * ddp */
    int dpp;          /* D_PP: stage groups ("way" in the code) */
    int ddp;          /* D_DP: devices per group ("partition_size") */
    int *gpu;         /* device -> topology GPU (NULL for matrix instances) */
    double c_pp;      /* activation bytes per macro-batch (one pipeline's batch) */
    double c_dp;      /* gradient bytes per stage */
    double *pp;       /* n x n, symmetric: latency + c_pp / bw, mean of both directions */
    double *dp;       /* n x n: 2 * (latency + c_dp / (ddp * bw)), direction i -> j */
    /* scratch for the cost functions (not thread-safe: one problem per thread) */
    double *w_group;  /* dpp x dpp bottleneck weights */
    int *members;     /* dpp x ddp, devices of each group */
    double *edges;    /* ddp x ddp sorted weights of one pair */
    int *mt, *ml, *mt_lo, *ml_lo, *seen;  /* matching workspace, ddp each */
    double *hk;       /* Held-Karp table */
    int *hk_from;
} dtfm_problem;

/* Build from a topology: gpus[0..n-1] are the devices (contention-free path
 * latency and rate of path_lone). c_pp and c_dp in bytes. */
int dtfm_problem_init(dtfm_problem *pr, const topology *t, const int *gpus, int dpp, int ddp,
                      double c_pp, double c_dp, gt_err *e);
/* Build from matrices (n x n, row-major): one-way latency in seconds and
 * bandwidth in bytes/s (tests, brute force, DT-FM's own config matrices). */
int dtfm_problem_from_matrices(dtfm_problem *pr, int dpp, int ddp, const double *lat,
                               const double *bw, double c_pp, double c_dp, gt_err *e);
void dtfm_problem_free(dtfm_problem *pr);

/* A balanced partition: part[v] = group of device v, every group holds ddp. */

/* Bottleneck perfect matching between groups a[0..k-1] and b[0..k-1] under
 * the n x n weights w: the least possible largest matched weight; match[i]
 * is the index into b matched to a[i] (may be NULL). */
double dtfm_bottleneck_matching(dtfm_problem *pr, const double *w, const int *a, const int *b,
                                int k, int *match);
/* Shortest open (Hamiltonian) path over m nodes with symmetric distances
 * dist (m x m), any start: exact Held-Karp up to DTFM_EXACT_PATH nodes, then
 * nearest neighbour from every start + 2-opt. order[0..m-1] gets the path. */
#define DTFM_EXACT_PATH 12
double dtfm_open_path(dtfm_problem *pr, const double *dist, int m, int *order);

double dtfm_data_cost(dtfm_problem *pr, const int *part);
/* path (dpp) may be NULL. */
double dtfm_pipeline_cost(dtfm_problem *pr, const int *part, int *path);
/* DataPCost + 2 * PipelinePCost; data and pipe (may be NULL) get the parts. */
double dtfm_total_cost(dtfm_problem *pr, const int *part, double *data, double *pipe);
/* Cost of an explicit assignment pipes[r*dpp + s] (device of pipeline r's
 * stage s): the groups are the stages, the pipelines are the matchings and
 * the stage order is the path, nothing is optimised. This is what DT-FM's
 * random scheduler charges a random assignment (random_scheduler.py). */
double dtfm_chain_cost(dtfm_problem *pr, const int *pipes, double *data, double *pipe);
/* Decode: pipes[r*dpp + s] = device of pipeline r's stage s (path order,
 * then the bottleneck matchings chain replicas across consecutive groups). */
int dtfm_decode(dtfm_problem *pr, const int *part, int *pipes);

/* --- the hybrid genetic algorithm ------------------------------------------ */

typedef enum {
    DTFM_GAIN_DTFM = 0,   /* DT-FM's gain: fastest link inside the group vs the
                             average pipeline link to the other group */
    DTFM_GAIN_EDGECUT = 1 /* the classic edge-cut gain: sum of link costs to the
                             other group minus sum inside the own group */
} dtfm_gain;

typedef struct dtfm_ga_opts {
    int population;        /* 100 in DT-FM */
    int trials;            /* steady-state offspring, 4900 in DT-FM */
    int crossover_points;  /* 5 */
    dtfm_gain gain;
    const planner_opts *stop;  /* budget and stop flag (may be NULL) */
    double t0;             /* start time for the budget */
} dtfm_ga_opts;

void dtfm_ga_defaults(dtfm_ga_opts *g);

typedef struct dtfm_ga_result {
    double cost, data_cost, pipe_cost;   /* best found (pipe_cost = PipelinePCost) */
    double first_cost;                   /* best of the initial population */
    long evaluations;
    int trials_done;
} dtfm_ga_result;

/* Search; best[] (n) gets the best balanced partition. Deterministic in seed. */
int dtfm_ga(dtfm_problem *pr, const dtfm_ga_opts *g, uint64_t seed, int *best,
            dtfm_ga_result *res, gt_err *e);

/* Building blocks, exposed for tests: DT-FM's five-point crossover with
 * balance repair, and one run of cyclic partitioning on part (in place). */
void dtfm_crossover(const dtfm_problem *pr, const int *p1, const int *p2, int points,
                    gsl_rng *rng, int *child);
int dtfm_local_search(dtfm_problem *pr, dtfm_gain gain, int *part);

/* --- the planner's shape rule and DT-FM's volumes ------------------------ */

/* D_PP x D_DP for n GPUs (see dtfm.c for the rule). 0 or -1 with reason. */
int dtfm_choose_shape(const topology *t, const job *j, int *dpp, int *ddp, gt_err *e);
/* c_pp = activation bytes of one pipeline's whole batch (b*s*h*2 x B/(b*D_DP));
 * c_dp = gradient bytes of the average stage (2 x parameters / D_PP). */
void dtfm_volumes(const job *j, int dpp, int ddp, double *c_pp, double *c_dp);

/* DT-FM's native cost of any plan whose pipelines all have dpp single-GPU
 * stages (groups = the stages of equal index, the plan's own chaining as
 * the matching): -1 with reason for other plans. */
int dtfm_plan_cost(const topology *t, const job *j, const plan *p, double *cost, gt_err *e);

#endif
