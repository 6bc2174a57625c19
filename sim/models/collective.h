/* collective.h — gradient sync algorithms as steps of flows (docs/models.md).
 *
 * A collective is a list of steps; every flow of a step starts when the
 * previous step has completely ended (a barrier, which is what the closed
 * forms assume). The estimator prices each step as its slowest lone flow;
 * the simulator runs the flows and lets them contend.
 *   ring          members ordered by site; 2(D-1) steps, each member sends
 *                 G/D to the next (reduce-scatter, then all-gather)
 *   hierarchical  ring all-reduce inside each site (sites in parallel), ring
 *                 across one leader per site, leaders send G to their members
 *   ps            DT-FM's sharded parameter server: every member sends each
 *                 peer a G/D shard, then receives the reduced shard back
 * Under ZeRO / FSDP (workload.shard) the sync is the phases of dp_sync.h:
 * reduce-scatters and all-gathers are the first and second halves of the
 * ring's or the parameter server's steps. */
#ifndef GT_COLLECTIVE_H
#define GT_COLLECTIVE_H

#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"
#include "sim/models/workload.h"

typedef struct coll_flow {
    int src_lane, dst_lane;
    double bytes;
} coll_flow;

typedef struct coll_plan {
    coll_flow *flows;
    int nflows, cap;
    int *step_first;      /* index of each step's first flow; step_first[nsteps] = nflows */
    int nsteps, step_cap;
} coll_plan;

int collective_build(coll_plan *c, const topology *t, const workload *w,
                     const sync_group *g, sync_kind kind, gt_err *e);
void collective_free(coll_plan *c);

/* One shared resource (GPU link, NIC or shared WAN link, keyed as in
 * sim/engine/network.c) and the bytes a collective puts on it. */
typedef struct coll_load {
    long key;
    double cap, bytes, min_lat;
    int flows;            /* how many flows put bytes on it */
} coll_load;
/* The collective's bytes per shared resource, one entry per resource sorted
 * by key, in a malloc'd *out; returns the count, or -1 when out of memory. */
int collective_loads(const coll_plan *c, const topology *t, const workload *w, coll_load **out);
/* Contention-free duration: sum over steps of the slowest lone flow. */
int64_t collective_estimate_ns(const coll_plan *c, const topology *t, const workload *w);

#endif
