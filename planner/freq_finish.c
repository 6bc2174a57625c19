/* freq_finish.c — frequency assignment on a search's finalists (freq_finish.h). */
#include "freq_finish.h"

#include <string.h>

#include "encoding.h"
#include "freq_assign.h"
#include "objective.h"

bool freq_finish_applies(const char *obj_text)
{
    objective ob;
    gt_err e;
    if (objective_parse(obj_text ? obj_text : "time", &ob, &e))
        return false;
    return ob.kind == OBJ_ENERGY || ob.kind == OBJ_WEIGHTED || ob.kind == OBJ_ENERGY_WITHIN ||
           ob.kind == OBJ_PARETO;
}

int freq_finish_plan(const topology *t, const job *j, const char *obj_text, plan *p,
                     planner_stats *st, gt_err *e)
{
    if (!freq_finish_applies(obj_text))
        return 0;
    est_summary before, after;
    long evals = 0;
    if (freq_assign(t, j, p, 0, &before, &after, &evals, e))
        return -1;
    objective ob;
    if (objective_parse(obj_text, &ob, e))
        return -1;
    /* energy and energy-within are valued in joules: the time does not move,
     * so the feasible value scales with the energy */
    if (ob.kind == OBJ_ENERGY || ob.kind == OBJ_ENERGY_WITHIN)
        st->objective_value *= after.energy_j / before.energy_j;
    st->evaluations += evals;
    size_t n = strlen(st->note);
    snprintf(st->note + n, sizeof st->note - n, "; SM clocks: %+.2f %% energy (estimated)",
             100 * (after.energy_j / before.energy_j - 1));
    return 0;
}

int freq_finish_front(const topology *t, const job *j, uint64_t seed, pareto_front *f,
                      gt_err *e)
{
    sim_options so;
    sim_options_default(&so);
    so.seed = seed;
    for (int i = 0; i < f->n; i++) {
        est_summary after;
        if (freq_assign(t, j, &f->plans[i], 0, NULL, &after, NULL, e))
            return -1;
        f->est[i] = obj_from_estimate(&after);
        if (enc_replay_work(&f->plans[i]) > ENC_REPLAY_MAX_WORK) {
            f->sim[i] = f->est[i]; /* too large to replay: the estimate stands */
            continue;
        }
        sim_result r;
        if (simulate_plan(t, j, &f->plans[i], &so, &r, e))
            return -1;
        f->sim[i] = obj_from_sim(&r);
    }
    return 0;
}
