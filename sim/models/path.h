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

/* The shared resources of a flow from GPU a to GPU b; returns how many
 * (2 or 3) were written to out. */
int path_resources(const topology *t, int a, int b, path_res out[PATH_MAX_RES]);
/* How many keys the dense layout holds (GPU links, NICs, site x site WAN). */
long path_dense_count(const topology *t);
/* First key of the NICs and of the WAN links in the dense layout. */
long path_nic_key0(const topology *t);
long path_wan_key0(const topology *t);
/* Capacity of dense resource `key` (the WAN diagonal a -> a carries nothing). */
double path_dense_cap(const topology *t, long key);
/* Key of the per-pair resource between GPUs a and b (their sites' link is
 * per_pair). Under 2^37 for TOPO_MAX_GPUS, so a long. */
long path_pair_key(const topology *t, int a, int b);
/* Whether any WAN link of t is shared per endpoint pair. */
bool path_any_per_pair(const topology *t);

/* TCP cap of one flow on WAN link (site a -> site b) with `connections`
 * parallel connections: connections x window / RTT (infinite at RTT 0). */
double path_tcp_cap(const topology *t, int sa, int sb, int connections);
/* A flow's own limit besides its resources: none inside a node, the LAN
 * inside a site, the TCP cap across the WAN. */
double path_private_cap(const topology *t, int a, int b, int connections);
/* One-way latency: 0 inside a node, the site's LAN, else the WAN link's. */
double path_latency(const topology *t, int a, int b);
/* Contention-free path from GPU a to GPU b: one-way latency and the rate a
 * lone flow gets (min over the path's resources and its private cap, with
 * the topology's connection count). */
void path_lone(const topology *t, int a, int b, double *lat_s, double *rate);

#endif
