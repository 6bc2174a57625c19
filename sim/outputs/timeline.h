/* timeline.h — the first simulated iteration as a Chrome trace-event file
 * (JSON; gzip-compressed through zlib when the path ends in .gz, plain otherwise) that opens in Perfetto or
 * chrome://tracing:
 *   GPUs      one track per GPU (ops named F3/B3 for microbatch 3 with
 *             pipeline, stage and microbatch in args, then sync and optimizer);
 *   links     WAN (site -> site), LAN (node -> node) and NVLink (GPU -> GPU)
 *             tracks, one slice per transfer, overlaps on extra rows;
 *   flows     an arrow from each sending op through its transfer to the op
 *             that receives it;
 *   counters  each GPU's power (W, before PUE) and each WAN link's
 *             throughput (Gbit/s) and utilisation;
 *   prefill   with BubbleTea, one prefill track per GPU.
 * Written atomically. docs/library.md describes the tracks. */
#ifndef GT_TIMELINE_H
#define GT_TIMELINE_H

#include "sim/engine/simulate.h"
#include "sim/inputs/topology.h"

struct prefill_result;

int timeline_write(const char *path, const topology *t, const sim_detail *d,
                   const struct prefill_result *pf, gt_err *e);

#endif
