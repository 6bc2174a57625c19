/* memetic.h — the memetic planner (DESIGN 8) and its ablations: a genetic
 * search over the genomes of encoding.h with local search, evaluated by the
 * estimator, finalists re-ranked by the simulator.
 *
 * Per generation: lambda children, each from its own gsl_rng_mt19937 stream
 * seeded from (seed, generation, index); tournament selection (size 2),
 * group-preserving crossover with repair (a quarter of the crossovers plain
 * order crossover, the memetic-plainx ablation's operator), one or two
 * mutations, decoding (LS1 inside), estimate, and for promising children
 * LS2-LS4 (local_search.h). Children are computed in parallel (OpenMP) into an
 * array and merged in index order, so the result does not depend on the
 * thread count. (mu + lambda) survival keeps the elite; duplicates (same
 * canonical genome) are removed; the search stops on the generation or time
 * budget, on stagnation, or when opts->stop is set (the best so far is
 * returned). The best few distinct plans by estimate among all evaluated
 * (local-search neighbours included) are replayed by simulate_plan and the
 * best simulated objective wins (with the seeds, and the widest grid and
 * reversed stage order of the best, memetic.c); for absolute objectives the
 * four ablations' own searches run too and their plans are finalists, then
 * the baseline seed plans as they are (seed_plans.h);
 * planner_stats.objective_value is that simulated objective.
 *
 * energy-within:X runs a time search first (a third of the budget) to learn
 * the fastest time; pareto runs weighted searches from W = 1 down to 0 and
 * keeps every non-dominated plan seen. */
#ifndef GT_MEMETIC_H
#define GT_MEMETIC_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include "encoding.h"
#include "pareto.h"
#include "planner.h"

typedef struct memetic_cfg {
    const char *name;      /* planner name written into plans */
    enc_cfg enc;           /* cut rule, all-GPUs */
    bool local_search;     /* LS2-LS4 */
    bool plain_crossover;  /* order crossover on the permutation instead */
    bool full;             /* the full planner: its ablations' searches and its seed
                              plans stand as finalists (ma_finalists) */
    const plan *seed_plans; /* other planners' plans to seed from (memetic_run copies
                               them from planner_opts.seeds) */
    int nseed_plans;
    double beat;           /* with a time budget, the value the search's plan must beat
                              to matter (an ablation's, inside the full planner): when
                              no estimate, a lower bound of the replay, beats it, nothing
                              is replayed (0: none) */
    struct ma_store *shared; /* estimates and splits shared by the searches of one run
                                (memetic_cache.h; NULL: memetic_run makes one for the
                                run, a search outside it keeps its own) */
} memetic_cfg;

/* The registry entry point: cfg is a memetic_cfg, one of those below (the
 * planner and its ablations, rows of planner/registry.c). The plans in
 * o->seeds (the caller's: planner_plan) seed the population and, for
 * "memetic", stand as finalists (seed_plans.h). */
int planner_memetic(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                    plan *out, planner_stats *st, gt_err *e);
extern const memetic_cfg MEMETIC_CFG;          /* "memetic" */
extern const memetic_cfg MEMETIC_NOLS_CFG;     /* no local search, speed-proportional cuts */
extern const memetic_cfg MEMETIC_ALL_GPUS_CFG; /* no GPU selection */
extern const memetic_cfg MEMETIC_UNIFORM_CFG;  /* uniform layer cuts */
extern const memetic_cfg MEMETIC_PLAINX_CFG;   /* plain order crossover */

/* The configuration of row d when it is "memetic" or one of its ablations,
 * else NULL. */
const memetic_cfg *memetic_config(const planner_def *d);

/* The planner with cfg, seeded with o->seeds. */
int memetic_run(const topology *t, const job *j, const planner_opts *o, const memetic_cfg *cfg,
                plan *out, planner_stats *st, gt_err *e);
/* objective "pareto": the simulated front (out->n >= 1 on success). */
int memetic_front(const topology *t, const job *j, const planner_opts *o, pareto_front *out,
                  planner_stats *st, gt_err *e);

/* The island model of islands.h over the process group `par` (NULL: one
 * process): K memetic searches, island i seeded with seed + 7919 i, so one
 * island is the plain planner (with the plans in o->seeds, which the caller
 * runs: planner_seeds_run). Objectives time, energy, weighted, carbon and
 * cost (energy-within and pareto are refused). */
struct gt_par;
struct island_cfg;
struct island_report;
int memetic_islands(const struct gt_par *par, const topology *t, const job *j,
                    const planner_opts *o, const memetic_cfg *cfg, const struct island_cfg *icfg,
                    plan *out, planner_stats *st, struct island_report *rep, gt_err *e);

/* --- operators (operators.c) ------------------------------------------------ */

/* Child of a and b: shape and genes from either parent, whole pipelines (rows)
 * or whole stage groups (columns) inherited, duplicates repaired with unused
 * GPUs of the same class, else the same type, else the fastest. With `plain`,
 * order crossover (OX) on the whole permutation instead (ablation). */
void op_crossover(const enc_problem *pr, const genome *a, const genome *b, bool plain,
                  gsl_rng *rng, genome *child);
/* One mutation: swap two placed GPUs, swap in an unselected GPU, change the
 * shape (a stage or pipeline more or less), or change the schedule, sync or
 * microbatch size. (Cuts and microbatch counts are decoded, not mutated.)
 * keep_d > 0: the pipeline count stays (a stage more or less only). */
void op_mutate(const enc_problem *pr, genome *g, gsl_rng *rng, int keep_d);

#endif
