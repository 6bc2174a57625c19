/* baselines.h — entry points of the baseline planners (planner/baselines/),
 * listed in planner/registry.c. Each file's header comment names its source
 * paper and what the baseline decides and ignores. */
#ifndef GT_BASELINES_H
#define GT_BASELINES_H

#include "planner/planner.h"

/* DT-FM (Yuan et al., NeurIPS 2022): GA + cyclic partitioning on its own cost. */
int planner_dtfm(const topology *t, const job *j, const planner_opts *o, plan *out,
                 planner_stats *st, gt_err *e);
/* The same search with the classic edge-cut gain in the local search. */
int planner_dtfm_hybrid(const topology *t, const job *j, const planner_opts *o, plan *out,
                        planner_stats *st, gt_err *e);
/* Megatron-LM: all GPUs, uniform layers, rank order, best PP x DP x TP. */
int planner_megatron(const topology *t, const job *j, const planner_opts *o, plan *out,
                     planner_stats *st, gt_err *e);
/* Megatron-LM with a random GPU placement. */
int planner_megatron_random(const topology *t, const job *j, const planner_opts *o, plan *out,
                            planner_stats *st, gt_err *e);
/* Metis (USENIX ATC 2024): GPU-type groupings, PP/DP/TP, balanced layers. */
int planner_metis(const topology *t, const job *j, const planner_opts *o, plan *out,
                  planner_stats *st, gt_err *e);
/* Atlas (arXiv 2411.14458): PP across the j largest DCs, DP inside a DC. */
int planner_atlas(const topology *t, const job *j, const planner_opts *o, plan *out,
                  planner_stats *st, gt_err *e);
/* Fastest GPUs first, layers in proportion to speed. */
int planner_greedy(const topology *t, const job *j, const planner_opts *o, plan *out,
                   planner_stats *st, gt_err *e);
/* Best of N random valid plans. */
int planner_random(const topology *t, const job *j, const planner_opts *o, plan *out,
                   planner_stats *st, gt_err *e);

#endif
