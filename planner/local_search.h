/* local_search.h — the memetic planner's local searches on a genome
 * (DESIGN 8). LS1, the exact min-max layer re-partition, runs inside every
 * decoding (encoding.h, partition_dp.h); the others change the placement and
 * keep a change only when the evaluated objective improves:
 *   LS2 stage order: each pipeline's GPUs re-ordered to the shortest path of
 *       activation + gradient transfer times (Held-Karp up to LS_HK_MAX
 *       stages, 2-opt beyond), both directions tried; then the replicas of
 *       consecutive stages re-matched across pipelines to minimise the
 *       slowest link (bottleneck assignment); and the critical stage's GPU
 *       moved to each other position of its pipeline, then other GPUs of
 *       that pipeline at random (max_moves in all), each order decoded with
 *       its own split (order and split searched jointly).
 *   LS3 critical stage: the bottleneck stage's GPU swapped with a placed GPU
 *       of another class or replaced by an unselected one (one candidate per
 *       class), best improvement.
 *   LS4 prune: drop a pipeline or a stage (column), or re-slice the same
 *       GPUs (or all but one) into another shape (6x1 -> 3x2), when that
 *       lowers the objective, best improvement.
 *   LS4b grow: one pipeline more, or as many as the unselected GPUs allow
 *       (fastest first): the plans of the memetic-all-gpus ablation, reached
 *       from the full search's smaller ones.
 * and, for the genes the placement does not fix:
 *   genes: every schedule x sync x microbatch size for the placement, best
 *       improvement (at most 2 x 3 x ENC_MAX_B candidates). */
#ifndef GT_LOCAL_SEARCH_H
#define GT_LOCAL_SEARCH_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include "encoding.h"

#define LS_HK_MAX 12

/* Decode and estimate g, setting g->status, g->fit, g->est. */
typedef void (*ls_eval_fn)(void *ctx, genome *g);

typedef struct ls_env {
    const enc_problem *pr;
    ls_eval_fn eval;
    void *ctx;
    gsl_rng *rng;
    genome *tmp, *best;   /* scratch genomes (caller-allocated) */
    int max_moves;        /* candidates per LS call (LS3, LS4) */
    long evals;           /* evaluations done (incremented) */
    int keep_d;           /* > 0: LS4 keeps the pipeline count (a niche's search) */
} ls_env;

/* Each takes an evaluated genome, returns true when it improved it in place. */
bool ls_stage_order(ls_env *env, genome *g);
bool ls_critical(ls_env *env, genome *g);
bool ls_prune(ls_env *env, genome *g);
bool ls_genes(ls_env *env, genome *g);
bool ls_grow(ls_env *env, genome *g);

/* g with D2 > g->D pipelines of its S stages: its grid, then the unselected
 * GPUs fastest first (out undecoded). -1 when the shape is not allowed. */
int ls_grow_to(const enc_problem *pr, const genome *g, int D2, genome *out);
/* ls_grow_to with the most pipelines allowed. */
int ls_widest(const enc_problem *pr, const genome *g, genome *out);

#endif
