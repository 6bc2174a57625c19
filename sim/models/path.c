/* path.c — resource keys, capacities, latency and caps of a GPU-to-GPU
 * network path (path.h). */
#include "sim/models/path.h"

#include <math.h>

_Static_assert(sizeof(long) >= 8, "resource keys of GPU pairs need a 64-bit long");

long path_nic_key0(const topology *t)
{
    return 2L * t->ngpus;
}

long path_wan_key0(const topology *t)
{
    return 2L * t->ngpus + 2L * t->nnodes;
}

long path_dense_count(const topology *t)
{
    return path_wan_key0(t) + (long)t->nsites * t->nsites;
}

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

int path_resources(const topology *t, int a, int b, path_res out[PATH_MAX_RES])
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

double path_latency(const topology *t, int a, int b)
{
    const topo_gpu *ga = &t->gpus[a], *gb = &t->gpus[b];
    if (ga->node == gb->node)
        return 0;
    if (ga->site == gb->site)
        return t->sites[ga->site].lan_lat_s;
    return topo_wan(t, ga->site, gb->site)->lat_s;
}

void path_lone(const topology *t, int a, int b, double *lat_s, double *rate)
{
    path_res r[PATH_MAX_RES];
    int k = path_resources(t, a, b, r);
    double v = path_private_cap(t, a, b, t->tcp_connections);
    for (int i = 0; i < k; i++)
        v = fmin(v, r[i].cap);
    *rate = v;
    *lat_s = path_latency(t, a, b);
}
