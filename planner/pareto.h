/* pareto.h — the archive of non-dominated plans in time x energy (docs/planner.md,
 * objective "pareto"), and the front a planner hands back.
 *
 * Point a dominates b when a is no slower and uses no more energy, and is
 * strictly better in one of the two. Equal points are kept once (the first
 * inserted). The archive stores copies of the genomes, sorted by time. When
 * it would exceed its capacity the member whose neighbours are closest
 * (smallest crowding gap, ends never) is dropped. */
#ifndef GT_PARETO_H
#define GT_PARETO_H

#include <stdbool.h>
#include "encoding.h"
#include "objective.h"
#include "sim/inputs/plan.h"

typedef struct pareto_archive {
    int n, cap, N;
    genome *g;           /* [cap], members sorted by est.time_s */
} pareto_archive;

int pareto_init(pareto_archive *a, int cap, int N);
void pareto_free(pareto_archive *a);
/* Offer an evaluated feasible genome; returns 1 when it joined the front. */
int pareto_insert(pareto_archive *a, const genome *g);
/* Whether (t, e) is dominated by, or equal to, a member. */
bool pareto_covered(const pareto_archive *a, double t, double e);
bool pareto_dominates(double t1, double e1, double t2, double e2);

/* A finished front: plans with their estimated and simulated metrics, sorted
 * by simulated time (planners drop members the simulation shows dominated). */
typedef struct pareto_front {
    int n;
    plan *plans;
    obj_metrics *est, *sim;
} pareto_front;

void pareto_front_free(pareto_front *f);
/* Replay every archive member with the simulator and keep those the
 * simulation leaves non-dominated, sorted by simulated time. */
int pareto_front_build(const enc_problem *pr, const pareto_archive *a, const char *name,
                       pareto_front *out, gt_err *e);

#endif
