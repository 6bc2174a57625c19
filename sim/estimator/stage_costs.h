/* stage_costs.h — each stage's forward and backward time at the maximum
 * clock (the kernel model's or the profile's, workload.h), kept across
 * evaluations (docs/estimator.md).
 *
 * The kernel model is the costliest part of a fast-path evaluation, and a
 * planner prices the same (GPU type, tensor-parallel degree, microbatch
 * size, layer range) over and over. Entries hold for one job (its bytes and
 * its profile's rows, compared on each evaluation) on one topology's GPU
 * types (the caller clears them when the topology changes). */
#ifndef GT_STAGE_COSTS_H
#define GT_STAGE_COSTS_H

#include <stddef.h>
#include <stdint.h>
#include "sim/base/res_table.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"

typedef struct stage_costs {
    unsigned char *job;   /* the job's bytes, then its profile's rows */
    size_t job_len, job_cap;
    res_table h;          /* stage key -> entry */
    int64_t (*ns)[2];     /* forward, backward of each entry */
    int n, cap;
} stage_costs;

/* Before an evaluation of job j: keeps the entries when j is the job they
 * were computed for (returns 1), else drops them (0); -1 when out of
 * memory. */
int stage_costs_begin(stage_costs *c, const job *j);
void stage_costs_clear(stage_costs *c);
/* Listed stage k of pipeline pi: as workload_stage_base_ns (0, or -1 when
 * out of memory). */
int stage_costs_get(stage_costs *c, const topology *t, const job *j, const plan *p, int pi,
                    int k, int64_t *fwd_ns, int64_t *bwd_ns);
void stage_costs_free(stage_costs *c);

#endif
