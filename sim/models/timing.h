/* timing.h — when every op, transfer and sync happened in one iteration.
 * Filled by the estimator and by the event simulator in the same shape, so
 * accounting, reports and the exact-agreement test treat them alike. */
#ifndef GT_TIMING_H
#define GT_TIMING_H

#include <stdint.h>
#include "sim/base/error.h"
#include "sim/models/workload.h"

typedef struct op_time {
    int64_t start, end;
    int64_t xfer_start;   /* when the input transfer began (producer's end) */
    int64_t arrival;      /* when the input was available */
} op_time;

typedef struct lane_time {
    int64_t bwd_end;      /* end of the lane's last op */
    int64_t sync_end;     /* end of the last sync group it belongs to */
    int64_t sync_comm_ns; /* time inside sync groups (union of intervals) */
    int64_t opt_start, opt_end;
} lane_time;

typedef struct timing {
    op_time *ops;
    lane_time *lanes;
    int64_t *group_start, *group_end;
    int64_t iteration_ns;
    int64_t unbounded_ns; /* estimator: the iteration before the transfer load bound */
    int64_t xfer_all_ns;  /* estimator: the transfer bound over each resource's transfers */
    int64_t xfer_subset_ns; /* ... over its best subset of streams, on the resources
                             * where a subset may pass the estimate so far (0: none) */
    double wan_bytes;     /* bytes that crossed a WAN link */
    int64_t *scratch;     /* timing_finish_lanes' work space, kept by timing_reuse */
    size_t cap_scratch;
} timing;

int timing_alloc(timing *tm, const workload *w, gt_err *e);
/* dst: a new copy of src's lane and group times and its figures, and of its
 * op times when ops (dst's arrays sized to w, src's workload). */
int timing_copy(timing *dst, const timing *src, const workload *w, bool ops, gt_err *e);
/* timing_alloc into tm's arrays when they are large enough (cap[3]: the
 * ops, lanes and groups they hold, 0 at first; updated when they grow):
 * for a caller that times many workloads in turn. */
int timing_reuse(timing *tm, int cap[3], const workload *w, gt_err *e);
void timing_free(timing *tm);
/* After group times are known: lane sync ends, sync comm time, optimizer
 * and the iteration end. 0, or -1 when out of memory. */
int timing_finish_lanes(timing *tm, const workload *w); /* 0, or -1: out of memory */

#endif
