/* seed_plans.h — other planners' plans in the memetic planner: they seed
 * its population (memetic.c, where the search space holds them) and, as
 * they are, stand as finalists against its winner, so that `memetic` is
 * never worse on the simulated objective than the baselines it runs.
 *
 * The caller runs the seed planners (planner_plan: those the registry row
 * names, the fast baselines for "memetic") on the real topology, with the
 * job as given and within a quarter of a time budget, and hands their plans
 * in (planner_opts.seeds, which memetic_run copies into memetic_cfg). A seed
 * enters the search as a genome (enc_from_plan: the decoder then re-cuts its
 * layers and re-splits its microbatches); the plan itself, with the
 * baseline's own cuts (Megatron's 12/12 where LS1 would cut 13/11, say), is
 * what seed_plans_final replays. */
#ifndef GT_SEED_PLANS_H
#define GT_SEED_PLANS_H

#include "memetic.h"

/* Replay every seed plan that uses no memory option of its own (plan.h)
 * and, when one's simulated objective beats st->objective_value, make it
 * the result (renamed to c->name, the note saying whose plan it was). Only
 * for objectives with absolute values (time, energy, carbon, cost) and a
 * winner that was itself replayed. -1 when out of memory. */
int seed_plans_final(const topology *t, const job *j, const planner_opts *o,
                     const memetic_cfg *c, plan *out, planner_stats *st);

#endif
