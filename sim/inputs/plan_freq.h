/* plan_freq.h — the per-stage SM clocks of a plan: reading and writing the
 * optional stage fields freq_mhz, freq_mhz_fwd, freq_mhz_bwd (docs/energy-model.md).
 *
 * freq_mhz sets both op kinds; freq_mhz_fwd / freq_mhz_bwd override one kind.
 * A value must be a clock of every GPU of the stage (freq_check); a field
 * left out means the maximum clock, and a plan is written back without the
 * fields when all its clocks are the maximum. */
#ifndef GT_PLAN_FREQ_H
#define GT_PLAN_FREQ_H

#include <jansson.h>
#include "sim/base/jsonio.h"
#include "sim/inputs/plan.h"

/* Read the clocks of the stage object st (path sp) whose GPUs are already in s. */
int plan_stage_freq_parse(const jdoc *d, json_t *st, const char *sp, const topology *t,
                          plan_stage *s, gt_err *e);
/* Every clock of an in-memory plan (e.g. a planner's) on its GPUs' grids;
 * plan_check calls it. */
int plan_freq_check(const plan *p, const topology *t, gt_err *e);
/* Add the stage's clock fields to sj (nothing at the maximum clocks). */
void plan_stage_freq_to_json(json_t *sj, const plan_stage *s);

#endif
