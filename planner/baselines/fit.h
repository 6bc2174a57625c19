/* fit.h — baselines that fit where their users would make them fit.
 *
 * A user of Megatron-LM, DT-FM, Metis or Atlas whose job does not fit in
 * GPU memory does not give up: they turn on the memory options of the
 * system they run. bl_fit runs a baseline on the job as given and, only
 * when that yields no plan, again with those options, least costly first:
 *   1. a smaller microbatch (more microbatches per pipeline): halved down
 *      to 1 sequence; costs only GEMM efficiency and per-microbatch
 *      overheads;
 *   2. full activation recomputation (each layer's forward run again in the
 *      backward pass; only the layer inputs stay in memory), with the job's
 *      microbatch and then the smaller ones;
 *   3. with recomputation, Adam's two moments in bf16 instead of fp32
 *      (4 bytes per parameter less), with each microbatch.
 * Which options a baseline may use is its authors' system's (fit.c names
 * the sources). The plan records the options (plan.h: recompute_full,
 * opt_bytes_per_param), so every check and replay of it applies them, and
 * the planner's note starts with the options used. Infeasible only when no
 * rung fits: the error is the job-as-given one, saying that the options did
 * not help either. */
#ifndef GT_BL_FIT_H
#define GT_BL_FIT_H

#include <stdbool.h>
#include "planner/planner.h"

typedef struct bl_fit_opts {
    const char *system;  /* whose options, for the note ("Megatron-LM") */
    bool microbatch;     /* may shrink the microbatch */
    bool recompute;      /* may recompute activations */
    bool opt_bf16;       /* may keep Adam's moments in bf16 */
} bl_fit_opts;

/* Run `run` (with the baseline's configuration cfg) on the job as given,
 * else up the ladder above (each rung a whole run of the baseline; a time
 * budget, if any, covers all of them). */
int bl_fit(planner_fn run, const void *cfg, const bl_fit_opts *f, const topology *t,
           const job *j, const planner_opts *o, plan *out, planner_stats *st, gt_err *e);

#endif
