/* network.h — the flow-level fluid network of the simulator (DESIGN 6).
 *
 * Resources: each GPU's link out and in (inside a node), each node's NIC out
 * and in, and each shared WAN link (one per direction). A flow crosses the
 * resources of its path and carries a private cap: the LAN's per-pair rate
 * inside a site, and on WAN paths the TCP cap connections * window / RTT. A
 * "per_pair" WAN link has no shared site-to-site resource: each endpoint pair
 * (node pair, or GPU pair where the link says "pair": "gpu") gets its own
 * resource of the link's rate, made when its first flow appears (at most one
 * per flow, never ngpus^2), shared by that pair's flows only and always
 * fairly (a shaper has no priority order). Concurrent flows share every
 * resource max-min fairly (progressive filling, canonical arithmetic: every
 * rate is a function of the flow set alone, net_fill.h); when a flow starts
 * or ends, rates are re-solved only for the flows connected to it through
 * resources that can bind (a resource whose capacity exceeds its flows' solo
 * rates is left out), which gives every rate of a full re-solve to the last
 * bit; a flow whose rate did not change keeps its completion event (which
 * is what makes a lone flow finish at exactly latency + bytes/rate).
 *
 * A WAN link with the temporal policy (Atlas) serves flows in priority order
 * instead: a flow waits until the flows ahead of it leave room, so the link
 * runs at full rate for the first transfer rather than slowing all of them.
 * Flows are admitted in priority order while the admitted flows' own rate
 * limits sum to less than the link rate (work-conserving when one TCP flow
 * cannot fill the link). */
#ifndef GT_NETWORK_H
#define GT_NETWORK_H

#include <stdbool.h>
#include <stdint.h>
#include "sim/engine/eventq.h"
#include "sim/base/res_table.h"
#include "sim/inputs/topology.h"

#define NET_MAX_RES 3

/* Who made a flow (net_flow.owner_kind): an op's input transfer (owner_id
 * = the consuming op) or a gradient-sync step (owner_id = the group). */
enum { NET_OWNER_OP = 1, NET_OWNER_COLL = 2 };

/* The record of a flow, kept for the whole run (reports and the timeline
 * read it after the flow ended). */
typedef struct net_flow {
    int src_gpu, dst_gpu;
    int wan_a, wan_b;     /* sites when crossing the WAN, else -1 */
    int owner_kind, owner_id;
    double bytes;
    int64_t start, bytes_start, end;
} net_flow;

/* The solver's state of a live flow (made, not yet ended), in its slot. */
typedef struct net_live {
    double remaining, rate;
    double priority;      /* temporal order: lower first */
    int64_t last_update;
    int64_t finish;       /* completion time at the current rate */
    int64_t sched;        /* time of the pending completion event, -1 if none */
    uint32_t version;
    int id;               /* the flow */
    int wan_res;          /* shared WAN resource or -1 */
    bool joined, waiting;
} net_live;

typedef struct net_resource {
    double cap;
    int *fl;              /* joined flows, in no particular order */
    int njoined, cap_fl;
    bool temporal;
    int wait_head;        /* temporal queue, ordered by (priority, id) */
    double wan_bytes;     /* bytes carried (WAN links, for reports) */
} net_resource;

typedef struct network {
    const topology *t;
    net_resource *res;
    int nres;
    int gpu_res0, node_res0, wan_res0, pair_res0;
    res_table pairs;      /* path_pair_key -> per-pair resource - pair_res0 */
    net_flow *flows;      /* per flow id: records */
    int *slot_of;         /* per flow id: its slot while live, else -1 */
    int nflows, cap_flows;
    /* per slot (the live flows; arrays grow together, see grow_slots):
     * state, resources and private cap (what the filling reads), index in
     * each resource's fl, solo rate, temporal queue links, scratch */
    net_live *live;
    int *fres;            /* NET_MAX_RES per slot */
    int *fslot;           /* NET_MAX_RES per slot: its index in each resource's fl */
    uint8_t *fnres;
    double *fcap, *fsolo;
    int *wait_next;
    int *mark_f, *list_f, *act_f, *pend_f;
    double *new_rate;     /* per list_f position */
    int *free_slot, nfree, cap_slots;
    long stale_events;    /* completion events that fired before the flow's finish */
    long solves, solved_flows; /* re-solves and the flows they filled (bench, tests) */
    long moved_events;    /* completion events a re-solve moved (bench) */
    /* per resource scratch of the re-solve */
    int *mark_r, *list_r;
    double *res_left;
    int *res_unfrozen;
    double *res_share;    /* res_left / res_unfrozen, kept current in a pass */
    int *act_r;           /* resources with unfrozen flows */
    int *res_frozen;      /* flows of a resource frozen at the current level */
    /* pruning (net_fill.h): each resource's running sum of its flows' solo
     * rates; prune = false re-solves whole components (the oracle the tests
     * compare with) */
    double *res_solo;
    bool prune;
    /* deferred mode (net_defer): seeds waiting for net_settle */
    bool defer;
    int *pend_r, npend_r, npend_f;
    uint8_t *pend_mark;
    int stamp;
    int tcp_connections;
} network;

/* `policy` -1 = as the topology says; WAN_FAIR / WAN_TEMPORAL forces all. */
int net_init(network *n, const topology *t, int max_flows, int policy, int tcp_connections,
             gt_err *e);
void net_free(network *n);
/* Does any shared WAN link serve flows in priority order under `policy` (as
 * net_init reads it)? Only then do flows' priorities matter. */
bool net_any_temporal(const topology *t, int policy);
/* New flow of `bytes` from GPU a to GPU b (not yet moving). Returns its id,
 * or -1 when the pool is exhausted. */
int net_flow_new(network *n, int a, int b, double bytes, double priority, int64_t now);
/* The solver state of a live flow, NULL once it ended. */
const net_live *net_flow_live(const network *n, int id);
/* A live flow's resources (returns how many, 0 once it ended) and private
 * cap. */
int net_flow_path(const network *n, int id, int res[NET_MAX_RES], double *cap);
/* One-way latency of the flow's path. */
double net_flow_latency(const network *n, int id);
/* The latency has passed: the flow starts moving bytes. */
int net_flow_start(network *n, int id, int64_t now, eventq *q, int ev_kind);
/* Completion event arrived with this version: returns 1 if the flow is done. */
int net_flow_done_event(network *n, int id, uint32_t version, int64_t now, eventq *q,
                        int ev_kind);
/* Deferred mode: starts and completions only record what changed, and one
 * net_settle() re-solves it all. The rates after net_settle are exactly
 * those of re-solving after each change (the filling is canonical); call it
 * before the clock moves past `now` (when the next event is later), so
 * every flow has its rate before time passes. The simulator runs in this
 * mode. One difference from a re-solve per change remains: a completion
 * due in the same nanosecond as an arrival that slows the flow happens at
 * its scheduled time, where a re-solve per change could have recomputed it
 * from the sub-nanosecond residue at the lower rate and moved it 1 ns. */
static inline void net_defer(network *n, bool on) { n->defer = on; }
int net_settle(network *n, int64_t now, eventq *q, int ev_kind);
/* Change a resource's capacity (bandwidth traces); settles first. */
int net_set_capacity(network *n, int r, double cap, int64_t now, eventq *q, int ev_kind);
/* Resource index of the shared WAN link a->b, or -1. */
int net_wan_resource(const network *n, int a, int b);

#endif
