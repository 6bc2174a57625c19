/* path.h — the network path between two GPUs, the one model of it that the
 * simulator's flow solver (sim/engine/network.c), the estimator (its
 * contention-free transfers and its load bounds), the collectives and the
 * planners' traffic floor all read: which shared resources a flow loads and
 * their keys, each resource's capacity, the path's latency, the per-pair
 * sharing of "per_pair" WAN links, the private caps (LAN, TCP window).
 *
 * Resource keys, unique per resource:
 *   GPU link out / in      2g, 2g + 1                       (g < G GPUs)
 *   NIC out / in           2G + 2n, 2G + 2n + 1             (n < N nodes)
 *   WAN link a -> b        2G + 2N + a*S + b                (S sites)
 *   per-pair (node pair)   2G + 2N + S*S + na*N + nb
 *   per-pair (GPU pair)    2G + 2N + S*S + N*N + a*G + b    ("pair": "gpu")
 * Keys below path_dense_count() form one dense array; per-pair keys can be
 * G^2 many, so their users index them through a hash (sim/base/res_table.h).
 * Inside a node a flow loads the sender's link out and the receiver's link
 * in; across nodes the two NICs; between sites the WAN link too, or on a
 * per_pair link its endpoint pair's own resource at the link's rate. */
#ifndef GT_PATH_H
#define GT_PATH_H

#include "sim/inputs/topology.h"

#define PATH_MAX_RES 3

typedef struct path_res {
    long key;
    double cap;           /* bytes/s */
} path_res;

/* Key of the per-pair resource between GPUs a and b (their sites' link is
 * per_pair). Under 2^37 for TOPO_MAX_GPUS, so a long. */
long path_pair_key(const topology *t, int a, int b);

/* First key of the NICs and of the WAN links in the dense layout, and how
 * many keys it holds (GPU links, NICs, site x site WAN). Inline, with
 * path_resources: the solver and the estimator ask once per transfer. */
static inline long path_nic_key0(const topology *t)
{
    return 2L * t->ngpus;
}
static inline long path_wan_key0(const topology *t)
{
    return 2L * t->ngpus + 2L * t->nnodes;
}
static inline long path_dense_count(const topology *t)
{
    return path_wan_key0(t) + (long)t->nsites * t->nsites;
}

/* The shared resources of a flow from GPU a to GPU b; returns how many
 * (2 or 3) were written to out. */
static inline int path_resources(const topology *t, int a, int b, path_res out[PATH_MAX_RES])
{
    const topo_gpu *ga = &t->gpus[a], *gb = &t->gpus[b];
    if (ga->node == gb->node) {
        out[0] = (path_res){2L * a, topo_gpu_type(t, a)->link_bw};
        out[1] = (path_res){2L * b + 1, topo_gpu_type(t, b)->link_bw};
        return 2;
    }
    out[0] = (path_res){path_nic_key0(t) + 2L * ga->node, t->nodes[ga->node].nic_bw};
    out[1] = (path_res){path_nic_key0(t) + 2L * gb->node + 1, t->nodes[gb->node].nic_bw};
    if (ga->site == gb->site)
        return 2;
    const topo_link *l = topo_wan(t, ga->site, gb->site);
    long key = l->per_pair ? path_pair_key(t, a, b)
                           : path_wan_key0(t) + (long)ga->site * t->nsites + gb->site;
    out[2] = (path_res){key, l->bw};
    return 3;
}

/* Capacity of dense resource `key` (the WAN diagonal a -> a carries nothing). */
double path_dense_cap(const topology *t, long key);
/* Whether any WAN link of t is shared per endpoint pair. */
bool path_any_per_pair(const topology *t);

/* TCP cap of one flow on WAN link (site a -> site b) with `connections`
 * parallel connections: connections x window / RTT (infinite at RTT 0). */
double path_tcp_cap(const topology *t, int sa, int sb, int connections);
/* A flow's own limit besides its resources: none inside a node, the LAN
 * inside a site, the TCP cap across the WAN. */
double path_private_cap(const topology *t, int a, int b, int connections);
/* One-way latency: 0 inside a node, the site's LAN, else the WAN link's. */
static inline double path_latency(const topology *t, int a, int b)
{
    const topo_gpu *ga = &t->gpus[a], *gb = &t->gpus[b];
    if (ga->node == gb->node)
        return 0;
    if (ga->site == gb->site)
        return t->sites[ga->site].lan_lat_s;
    return topo_wan(t, ga->site, gb->site)->lat_s;
}
/* Contention-free path from GPU a to GPU b: one-way latency and the rate a
 * lone flow gets (min over the path's resources and its private cap, with
 * the topology's connection count). */
void path_lone(const topology *t, int a, int b, double *lat_s, double *rate);

#endif
