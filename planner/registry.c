/* registry.c — the table of planners, in the order `compare` runs them.
 * Add a planner: declare its entry function here and add one row. */
#include <string.h>

#include "planner.h"
#include "baselines/baselines.h"
#include "exact.h"
#include "memetic.h"

/* entry points, one per planner file */
/* (memetic planner: planner/memetic.c; exact: planner/exact.c;
 *  baselines: planner/baselines/<name>.c) */

static const planner_def PLANNERS[] = {
    /* GeoTrain (planner/memetic.c, planner/exact.c) */
    {"memetic", planner_memetic, "GeoTrain's memetic algorithm: GA + local search (LS1-LS4)",
     false},
    {"exact", planner_exact, "exact referee: enumeration modulo symmetry, branch and bound "
     "(small instances)", false},
    /* baselines (planner/baselines/, declared in baselines/baselines.h) */
    {"dtfm", planner_dtfm, "DT-FM (Yuan et al. 2022): GA + cyclic partitioning, own comm cost",
     true},
    {"dtfm-hybrid", planner_dtfm_hybrid, "DT-FM's GA with the classic edge-cut local search",
     true},
    {"megatron", planner_megatron, "Megatron-LM: all GPUs, uniform layers, rank order, best "
     "TPxPPxDP", true},
    {"megatron-random", planner_megatron_random, "Megatron-LM grid search on a random "
     "placement", true},
    {"metis", planner_metis, "Metis (ATC'24): GPU-type groups, PP/DP/TP, balanced layers",
     true},
    {"atlas", planner_atlas, "Atlas: PP across the j largest DCs, DP replicas inside a DC",
     true},
    {"greedy", planner_greedy, "fastest GPUs first, layers in proportion to speed", true},
    {"random", planner_random, "best of N random valid plans", true},
    /* ablations of the memetic planner (planner/memetic.c) */
    {"memetic-nols", planner_memetic_nols, "memetic without local search (speed-proportional "
     "layers)", false},
    {"memetic-all-gpus", planner_memetic_all_gpus, "memetic without GPU selection (all GPUs)",
     false},
    {"memetic-uniform", planner_memetic_uniform, "memetic with uniform layer cuts", false},
    {"memetic-plainx", planner_memetic_plainx, "memetic with plain order crossover", false},
    {NULL, NULL, NULL, false},
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
