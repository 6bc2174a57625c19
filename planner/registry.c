/* registry.c — the table of planners, in the order `compare` runs them.
 * Add a planner: declare its entry function here and add one row. */
#include <string.h>

#include "planner.h"

/* entry points, one per planner file */
/* (memetic planner: planner/memetic.c; exact: planner/exact.c;
 *  baselines: planner/baselines/<name>.c) */

static const planner_def PLANNERS[] = {
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
