/* freq_finish.h — SM clocks as the finishing step of a planner's search
 * (`geotrain plan --freq`, docs/energy-model.md).
 *
 * The memetic search chooses GPUs, shape, placement and cuts at maximum
 * clocks; its finalist (or every plan of its Pareto front) then gets the
 * clocks of freq_assign with no slowdown: the iteration time of its critical
 * path stays, its energy can only fall. Applies to the objectives energy,
 * weighted:W, energy-within:X and pareto (freq_finish_applies). Called by
 * `geotrain plan --freq` (planner/cmd_plan.c) on what the memetic planner
 * returns, so that the search itself (and every other caller) is unchanged. */
#ifndef GT_FREQ_FINISH_H
#define GT_FREQ_FINISH_H

#include <stdbool.h>
#include <stdint.h>
#include "pareto.h"
#include "planner.h"

bool freq_finish_applies(const char *obj_text);
/* The single plan of a search; updates the energy-valued objective and the note. */
int freq_finish_plan(const topology *t, const job *j, const char *obj_text, plan *p,
                     planner_stats *st, gt_err *e);
/* Every plan of a front, with its clocks re-estimated and re-simulated. */
int freq_finish_front(const topology *t, const job *j, uint64_t seed, pareto_front *f,
                      gt_err *e);

#endif
