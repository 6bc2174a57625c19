/* timeline.h — the first simulated iteration as a Chrome trace-event file
 * (JSON; gzip-compressed when the path ends in .gz, plain otherwise) that opens in Perfetto or
 * chrome://tracing: one track per GPU (ops named F3/B3 for microbatch 3 with
 * pipeline, stage and microbatch in args, then sync and optimizer), one track
 * per WAN link (its transfers; overlapping transfers on extra rows), and,
 * with BubbleTea, one prefill track per GPU. Written atomically. */
#ifndef GT_TIMELINE_H
#define GT_TIMELINE_H

#include "simulate.h"
#include "topology.h"

struct prefill_result;

int timeline_write(const char *path, const topology *t, const sim_detail *d,
                   const struct prefill_result *pf, gt_err *e);

#endif
