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
 * ring's or the parameter server's steps.
 * Each algorithm is written once (collective_emit); the simulator and the
 * estimator read it as steps of flows (collective_build), the planners'
 * traffic floor as bytes per resource (planner/enc_fitness.c). A new
 * algorithm: its name in plan.h / plan.c and its blocks here. */
#ifndef GT_COLLECTIVE_H
#define GT_COLLECTIVE_H

#include "sim/base/res_table.h"
#include "sim/base/timecap.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"
#include "sim/models/workload.h"
#include "sim/models/path_memo.h"

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

/* Each algorithm, written once, is a sequence of blocks of transfers. A
 * transfer of `reps` steps sends bytes/div from src to dst in each of reps
 * consecutive steps of its block; step r of a block holds every transfer
 * with more than r steps, and a block's steps follow the previous block's.
 * The sink gets the transfers of a block in order, then end(); ids are
 * whatever the caller numbers its members by (lanes, GPUs). */
typedef struct coll_sink {
    int (*xfer)(void *ctx, int src, int dst, double bytes, int div, int reps);
    int (*end)(void *ctx);
    void *ctx;
} coll_sink;

typedef struct coll_member {
    int id, site, gpu;
} coll_member;

/* mem[0..n) in the order every collective runs its members: by site, then
 * GPU (the ring's order; also what dp_overlap.c and the estimator's
 * collective shapes must follow). */
void collective_order(coll_member *mem, int n);
/* The sync of `grads` gradient and `weights` weight bytes per member (the
 * phases of dp_sync.h under `shard`, for `passes` forward passes per step)
 * over mem[0..n), which is sorted by (site, GPU) in place, as `kind` runs
 * it. Returns 0, or -1 when a sink call fails. */
int collective_emit(coll_member *mem, int n, sync_kind kind, shard_kind shard, double grads,
                    double weights, int passes, const coll_sink *k);
/* At most how many transfers one phase of `kind` over n members emits. */
int collective_xfers_per_phase(sync_kind kind, int n);
/* Relative solver work of one sync group of D members (the planners' guess
 * of what a replay costs, planner/enc_fitness.c). */
double collective_replay_work(sync_kind kind, double D);

/* The simulator's form: the steps of flows between lanes. */
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
/* The least time, in whole ns, a replay can take to carry `bytes` in
 * `flows` flows over one resource of `cap` bytes/s, from the moment they
 * may start: their least latency (min_lat, rounded as the replay rounds
 * each flow's), then the bytes at capacity. The replay ends each flow at
 * the nearest ns of its finish, so a flow may end up to half a ns early
 * and leave that share unsent: the bytes take at least bytes / cap -
 * flows / 2 ns, rounded up (the replay's times are whole ns). A lower
 * bound term of the load bounds (load_bound.h and each step's here), so
 * that they never pass the replay. */
/* (inline: the load bounds ask hundreds of times per evaluation) */
static inline int64_t load_floor_ns(double min_lat, double bytes, double cap, long flows)
{
    double ns = bytes / cap * 1e9 - 0.5 * (double)flows;
    if (!(ns < (double)GT_TIME_CAP_NS))
        return GT_TIME_CAP_NS;
    /* ceil(ns) for 0 < ns < 2^60, inline (the estimator asks thousands of
     * times per evaluation): the truncation is exact, and below ns when ns
     * has a fraction */
    int64_t carry = ns > 0 ? (int64_t)ns : 0;
    carry += ns > 0 && (double)carry < ns;
    return t_add(cost_ns(min_lat), carry);
}
/* Contention-free duration: sum over steps of the slowest lone flow. */
int64_t collective_estimate_ns(const coll_plan *c, const topology *t, const workload *w);
/* Both of the above in one pass, the same to the bit: the estimate in
 * *est_ns and the loads (as collective_loads) in a malloc'd *out; returns
 * their count, or -1 when out of memory. Prices a step that repeats the
 * one before (a ring's, a parameter server's repeated round) without
 * walking its paths again. The estimator's collective cache fills with it;
 * the op path keeps the two separate functions, its oracle. */
int collective_price(const coll_plan *c, const topology *t, const workload *w, int64_t *est_ns,
                     coll_load **out);
/* Its work arrays, kept between the calls of a caller pricing many
 * collectives (zeroed at first; grown, never shrunk), and the same pricing
 * on them. */
typedef struct coll_price_work {
    res_table h;          /* resource key -> index in out */
    int room;             /* keys h has room for */
    int *res, *nres;      /* per flow of the open step: its resources' indices, how many */
    int *stamp, *touched; /* per resource: last step that used it; this step's resources */
    coll_load *step;      /* per resource: this step's bytes, flows, least latency */
    size_t cap[5];
    int *dense;           /* keys below ndense -> index (-1 between calls), not h */
    long ndense;          /* 0: every key through h */
    size_t cap_dense;
    path_memo *pm;        /* the caller's paths of this topology, or NULL: path.h asked */
} coll_price_work;
/* Keys below ndense go through an array of that size from now on (the
 * caller's choice: a small topology's every key); 0, or -1 when out of
 * memory. */
int coll_price_work_keys(coll_price_work *p, long ndense);
int collective_price_ws(const coll_plan *c, const topology *t, const workload *w,
                        coll_price_work *p, int64_t *est_ns, coll_load **out);
void coll_price_work_free(coll_price_work *p);

#endif
