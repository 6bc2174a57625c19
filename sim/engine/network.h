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
 * resource max-min fairly (progressive filling); when a flow starts or ends,
 * rates are recomputed only for the flows connected to it through shared
 * resources, and a flow whose rate did not change keeps its completion event
 * (which is what makes a lone flow finish at exactly latency + bytes/rate).
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

typedef struct net_flow {
    int src_gpu, dst_gpu;
    int res[NET_MAX_RES];
    int nres;
    int wan_res;          /* shared WAN resource or -1 */
    int wan_a, wan_b;     /* sites when crossing the WAN, else -1 */
    double cap;           /* private limit, bytes/s */
    double bytes, remaining, rate;
    double priority;      /* temporal order: lower first */
    int64_t start, bytes_start, end, last_update;
    int64_t finish;       /* completion time at the current rate */
    int64_t sched;        /* time of the pending completion event, -1 if none */
    uint32_t version;
    bool joined, waiting, done;
    int owner_kind, owner_id;
    int slot;             /* timeline row on its WAN link */
} net_flow;

typedef struct net_resource {
    double cap;
    int *fl;              /* joined flows in join order (iterated newest first) */
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
    net_flow *flows;
    int nflows, cap_flows;
    int *wait_next;       /* temporal queue links, per flow */
    /* what progressive filling reads of each flow, packed (the flow struct
     * itself is ~150 bytes): its resources and private cap */
    int *fres;            /* NET_MAX_RES per flow */
    uint8_t *fnres;
    double *fcap;
    long stale_events;    /* completion events that fired before the flow's finish */
    /* scratch for component recomputation (preallocated) */
    int *mark_f, *mark_r, *list_f, *list_r;
    double *res_left;
    int *res_unfrozen;
    double *res_share;    /* res_left / res_unfrozen, kept current in a pass */
    double *new_rate;
    int *act_f, *act_r;   /* unfrozen flows (list_f positions) / resources */
    int stamp;
    int tcp_connections;
} network;

/* `policy` -1 = as the topology says; WAN_FAIR / WAN_TEMPORAL forces all. */
int net_init(network *n, const topology *t, int max_flows, int policy, int tcp_connections,
             gt_err *e);
void net_free(network *n);
/* New flow of `bytes` from GPU a to GPU b (not yet moving). Returns its id,
 * or -1 when the pool is exhausted. */
int net_flow_new(network *n, int a, int b, double bytes, double priority, int64_t now);
/* One-way latency of the flow's path. */
double net_flow_latency(const network *n, int id);
/* The latency has passed: the flow starts moving bytes. */
int net_flow_start(network *n, int id, int64_t now, eventq *q, int ev_kind);
/* Completion event arrived with this version: returns 1 if the flow is done. */
int net_flow_done_event(network *n, int id, uint32_t version, int64_t now, eventq *q,
                        int ev_kind);
/* Change a resource's capacity (bandwidth traces). */
int net_set_capacity(network *n, int r, double cap, int64_t now, eventq *q, int ev_kind);
/* Resource index of the shared WAN link a->b, or -1. */
int net_wan_resource(const network *n, int a, int b);

#endif
