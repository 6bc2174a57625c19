/* baselines.h — entry points of the baseline planners (planner/baselines/),
 * listed in planner/registry.c. Each file's header comment names its source
 * paper and what the baseline decides and ignores. */
#ifndef GT_BASELINES_H
#define GT_BASELINES_H

#include "planner/planner.h"

/* Each baseline is one entry function, called with its registry row's
 * configuration: NULL, or for the baselines with variants one of the
 * configurations declared beside it (opaque: only the registry needs their
 * addresses). */

/* DT-FM (Yuan et al., NeurIPS 2022): GA + cyclic partitioning on its own cost;
 * DTFM_HYBRID_CFG: the same search with the classic edge-cut gain in the local
 * search. */
typedef struct dtfm_cfg dtfm_cfg;
extern const dtfm_cfg DTFM_CFG, DTFM_HYBRID_CFG;
int planner_dtfm(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                 plan *out, planner_stats *st, gt_err *e);
/* Megatron-LM: all GPUs, uniform layers, rank order, best PP x DP x TP;
 * MEGATRON_RANDOM_CFG: the same on a random GPU placement. */
typedef struct megatron_cfg megatron_cfg;
extern const megatron_cfg MEGATRON_CFG, MEGATRON_RANDOM_CFG;
int planner_megatron(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                     plan *out, planner_stats *st, gt_err *e);
/* Metis (USENIX ATC 2024): GPU-type groupings, PP/DP/TP, balanced layers. */
int planner_metis(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                  plan *out, planner_stats *st, gt_err *e);
/* Atlas (arXiv 2411.14458): PP across the j largest DCs, DP inside a DC. */
int planner_atlas(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                  plan *out, planner_stats *st, gt_err *e);
/* Fastest GPUs first, layers in proportion to speed. */
int planner_greedy(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                   plan *out, planner_stats *st, gt_err *e);
/* Best of N random valid plans. */
int planner_random(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                   plan *out, planner_stats *st, gt_err *e);

#endif
