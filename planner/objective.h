/* objective.h — what a planner minimises (docs/planner.md): parsing the --objective
 * string and turning a plan's metrics into one number, lower is better.
 * Shared by every planner (memetic, exact, baselines) and by `compare`.
 *
 *   time             iteration seconds
 *   energy           joules per iteration
 *   weighted:W       W*T/T_ref + (1-W)*E/E_ref, 0 <= W <= 1; T_ref and E_ref come
 *                    from a reference plan (objective_set_refs; the memetic and
 *                    exact planners use the fastest-first seed, see encoding.h)
 *   energy-within:X  joules, subject to T <= (1+X)*T_fast where T_fast is the
 *                    fastest time found (objective_set_fastest), X >= 0
 *   carbon           gCO2e per iteration
 *   cost             USD per iteration
 *   pareto           the non-dominated plans in time x energy; as a single
 *                    number it ranks by time (ties broken by the archive)
 *
 * A plan over the energy-within time limit is infeasible: its value is at
 * least OBJ_INFEASIBLE (growing with T, so that a search still sees which
 * infeasible plan is closer), above any feasible value. */
#ifndef GT_OBJECTIVE_H
#define GT_OBJECTIVE_H

#include <stdbool.h>
#include "sim/base/error.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/simulator.h"

#define OBJ_INFEASIBLE 1e18

typedef enum {
    OBJ_TIME, OBJ_ENERGY, OBJ_WEIGHTED, OBJ_ENERGY_WITHIN, OBJ_CARBON, OBJ_COST, OBJ_PARETO
} obj_kind;

typedef struct objective {
    obj_kind kind;
    double param;         /* W (weighted) or X (energy-within) */
    double t_ref, e_ref;  /* weighted: reference time and energy (default 1, 1) */
    double t_limit;       /* energy-within: (1+X)*T_fast; 0 = not set (no limit) */
    char text[64];        /* as parsed, e.g. "weighted:0.5" */
} objective;

/* What an objective reads of an evaluated plan (estimated or simulated). */
typedef struct obj_metrics {
    double time_s, energy_j, carbon_g, usd;
} obj_metrics;

/* Parse "time", "energy", "weighted:W", "energy-within:X", "carbon", "cost",
 * "pareto". On error e names the accepted forms. */
int objective_parse(const char *s, objective *o, gt_err *e);

bool objective_needs_refs(const objective *o);      /* weighted:W */
bool objective_needs_fastest(const objective *o);   /* energy-within:X */
void objective_set_refs(objective *o, const obj_metrics *ref);
void objective_set_fastest(objective *o, double t_fast_s);

/* The number to minimise (see the header comment). */
double objective_value(const objective *o, const obj_metrics *m);
/* False only for an energy-within plan over its time limit. */
bool objective_feasible(const objective *o, const obj_metrics *m);
/* Unit of objective_value ("s", "J", "gCO2e", "USD", "" for weighted). */
const char *objective_unit(const objective *o);

obj_metrics obj_from_estimate(const est_summary *s);
obj_metrics obj_from_sim(const sim_result *r);

#endif
