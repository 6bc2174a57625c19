/* registry.c — the table of planners, in the order `compare` runs them: one
 * row per planner or variant, each with its entry function, the
 * configuration the function is called with and the planners that seed it
 * (planner.h). Add a planner: declare its entry function (and any
 * configurations) in its header and add one row here. */
#include <string.h>

#include "planner.h"
#include "baselines/baselines.h"
#include "exact.h"
#include "memetic.h"

/* The memetic planner's seeds: the fast baselines. dtfm's GA and random's
 * 5,000 draws would multiply a small instance's planning time by about four.
 * (Not for memetic-all-gpus, whose grids are fixed.) */
static const char *const FAST_BASELINES[] = {"metis", "greedy", "megatron", "atlas",
                                             "megatron-random", NULL};

static const planner_def PLANNERS[] = {
    /* GeoTrain (planner/memetic.c, planner/exact.c) */
    {"memetic", planner_memetic, "GeoTrain's memetic algorithm: GA + local search (LS1-LS4)",
     false, &MEMETIC_CFG, FAST_BASELINES},
    {"exact", planner_exact, "exact referee: enumeration modulo symmetry, branch and bound "
     "(small instances)", false, NULL, NULL},
    /* baselines (planner/baselines/, declared in baselines/baselines.h) */
    {"dtfm", planner_dtfm, "DT-FM (Yuan et al. 2022): GA + cyclic partitioning, own comm cost",
     true, &DTFM_CFG, NULL},
    {"dtfm-hybrid", planner_dtfm, "DT-FM's GA with the classic edge-cut local search", true,
     &DTFM_HYBRID_CFG, NULL},
    {"megatron", planner_megatron, "Megatron-LM: all GPUs, uniform layers, rank order, best "
     "TPxPPxDP", true, &MEGATRON_CFG, NULL},
    {"megatron-random", planner_megatron, "Megatron-LM grid search on a random placement", true,
     &MEGATRON_RANDOM_CFG, NULL},
    {"metis", planner_metis, "Metis (ATC'24): GPU-type groups, PP/DP/TP, balanced layers", true,
     NULL, NULL},
    {"atlas", planner_atlas, "Atlas: PP across the j largest DCs, DP replicas inside a DC", true,
     NULL, NULL},
    {"greedy", planner_greedy, "fastest GPUs first, layers in proportion to speed", true, NULL,
     NULL},
    {"random", planner_random, "best of N random valid plans", true, NULL, NULL},
    /* ablations of the memetic planner (planner/memetic.c) */
    {"memetic-nols", planner_memetic, "memetic without local search (speed-proportional "
     "layers)", false, &MEMETIC_NOLS_CFG, FAST_BASELINES},
    {"memetic-all-gpus", planner_memetic, "memetic without GPU selection (all GPUs)", false,
     &MEMETIC_ALL_GPUS_CFG, NULL},
    {"memetic-uniform", planner_memetic, "memetic with uniform layer cuts", false,
     &MEMETIC_UNIFORM_CFG, FAST_BASELINES},
    {"memetic-plainx", planner_memetic, "memetic with plain order crossover", false,
     &MEMETIC_PLAINX_CFG, FAST_BASELINES},
    {NULL, NULL, NULL, false, NULL, NULL},
};

const planner_def *planner_all(int *n)
{
    *n = (int)(sizeof PLANNERS / sizeof *PLANNERS) - 1;
    return PLANNERS;
}

const planner_def *planner_find(const char *name)
{
    for (const planner_def *p = PLANNERS; p->name; p++)
        if (!strcmp(p->name, name))
            return p;
    return NULL;
}
