/* simulator.c — TEMPORARY: replays with the estimator until the event engine
 * lands (same API). */
#include "simulator.h"

#include <string.h>

#include "estimator.h"

void sim_options_default(sim_options *o)
{
    memset(o, 0, sizeof *o);
    o->wan_policy = -1;
    o->iterations = 1;
    o->seed = 1;
    o->straggler_factor = 1.5;
}

int simulate_plan(const topology *t, const job *j, const plan *p, const sim_options *o,
                  sim_result *out, gt_err *e)
{
    (void)o;
    memset(out, 0, sizeof *out);
    est_summary s;
    if (estimate_plan(t, j, p, &s, e))
        return -1;
    out->iteration_s = out->est_iteration_s = s.iteration_s;
    out->energy_j = out->est_energy_j = s.energy_j;
    out->carbon_g = s.carbon_g;
    out->usd = s.usd;
    out->tokens_per_s = s.tokens_per_s;
    out->gpus_used = s.gpus_used;
    return 0;
}
