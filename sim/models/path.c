/* path.c — resource keys, capacities, latency and caps of a GPU-to-GPU
 * network path (path.h). */
#include "sim/models/path.h"

#include <math.h>

_Static_assert(sizeof(long) >= 8, "resource keys of GPU pairs need a 64-bit long");

double path_dense_cap(const topology *t, long key)
{
    if (key < path_nic_key0(t))
        return topo_gpu_type(t, (int)(key / 2))->link_bw;
    if (key < path_wan_key0(t))
        return t->nodes[(key - path_nic_key0(t)) / 2].nic_bw;
    return t->wan[key - path_wan_key0(t)].bw;
}

long path_pair_key(const topology *t, int a, int b)
{
    long G = t->ngpus, Nn = t->nnodes;
    long base = path_dense_count(t);
    const topo_gpu *ga = &t->gpus[a], *gb = &t->gpus[b];
    if (topo_wan(t, ga->site, gb->site)->pair_gpu)
        return base + Nn * Nn + (long)a * G + b;
    return base + (long)ga->node * Nn + gb->node;
}

bool path_any_per_pair(const topology *t)
{
    bool any = false;
    for (int i = 0; i < t->nsites * t->nsites; i++)
        any |= t->wan[i].present && t->wan[i].per_pair;
    return any;
}

double path_tcp_cap(const topology *t, int sa, int sb, int connections)
{
    double rtt = 2 * topo_wan(t, sa, sb)->lat_s;
    return rtt > 0 ? connections * t->tcp_window_bytes / rtt : INFINITY;
}

double path_private_cap(const topology *t, int a, int b, int connections)
{
    const topo_gpu *ga = &t->gpus[a], *gb = &t->gpus[b];
    if (ga->node == gb->node)
        return INFINITY;
    if (ga->site == gb->site)
        return t->sites[ga->site].lan_bw;
    return path_tcp_cap(t, ga->site, gb->site, connections);
}

/* The same figures as min over path_resources and path_private_cap (the
 * network test checks it pair by pair), without building the list: the
 * estimator asks this once per transfer. */
void path_lone(const topology *t, int a, int b, double *lat_s, double *rate)
{
    const topo_gpu *ga = &t->gpus[a], *gb = &t->gpus[b];
    *lat_s = path_latency(t, a, b);
    if (ga->node == gb->node) {
        *rate = fmin(t->types[ga->type].link_bw, t->types[gb->type].link_bw);
        return;
    }
    double r = fmin(t->nodes[ga->node].nic_bw, t->nodes[gb->node].nic_bw);
    if (ga->site == gb->site) {
        *rate = fmin(r, t->sites[ga->site].lan_bw);
        return;
    }
    *rate = fmin(fmin(r, topo_wan(t, ga->site, gb->site)->bw),
                 path_tcp_cap(t, ga->site, gb->site, t->tcp_connections));
}
