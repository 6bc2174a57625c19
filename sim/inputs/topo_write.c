/* topo_write.c — topology writer: the inverse of topo_load (docs/formats.md).
 * Consecutive identical nodes are folded into one entry with "repeat". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonio.h"
#include "sim/inputs/topology.h"

#define GBPS 125000000.0

/* Round to 6 significant digits so written files stay readable and stable. */
static json_t *num(double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", x);
    double r = strtod(buf, NULL);
    if (r == floor(r) && fabs(r) < 1e15)
        return json_integer((json_int_t)r);
    return json_real(r);
}

static json_t *site_json(const topology *t, const topo_site *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(s->id));
    if (*s->region)
        json_object_set_new(o, "region", json_string(s->region));
    if (s->lat || s->lon) {
        json_object_set_new(o, "lat", num(s->lat));
        json_object_set_new(o, "lon", num(s->lon));
    }
    json_object_set_new(o, "carbon_g_per_kwh", num(s->carbon_g_per_kwh));
    json_object_set_new(o, "pue", num(s->pue));
    if (s->price_kwh > 0)
        json_object_set_new(o, "price_kwh", num(s->price_kwh));
    if (*s->source)
        json_object_set_new(o, "source", json_string(s->source));
    json_t *nodes = json_array();
    for (int k = 0; k < s->nnodes;) {
        const topo_node *n = &t->nodes[s->first_node + k];
        int rep = 1;
        while (k + rep < s->nnodes) {
            const topo_node *m = &t->nodes[s->first_node + k + rep];
            if (m->type != n->type || m->ngpus != n->ngpus || m->nic_bw != n->nic_bw)
                break;
            rep++;
        }
        json_t *nj = json_object();
        json_object_set_new(nj, "gpu", json_string(t->types[n->type].id));
        json_object_set_new(nj, "count", json_integer(n->ngpus));
        json_object_set_new(nj, "nic_gbps", num(n->nic_bw / GBPS));
        if (rep > 1)
            json_object_set_new(nj, "repeat", json_integer(rep));
        json_array_append_new(nodes, nj);
        k += rep;
    }
    json_object_set_new(o, "nodes", nodes);
    json_t *lan = json_object();
    json_object_set_new(lan, "gbps", num(s->lan_bw / GBPS));
    json_object_set_new(lan, "latency_ms", num(s->lan_lat_s * 1e3));
    json_object_set_new(o, "lan", lan);
    return o;
}

static json_t *link_json(const topology *t, int a, int b)
{
    const topo_link *ab = topo_wan(t, a, b), *ba = topo_wan(t, b, a);
    json_t *o = json_object();
    json_object_set_new(o, "a", json_string(t->sites[a].id));
    json_object_set_new(o, "b", json_string(t->sites[b].id));
    if (ab->bw == ba->bw) {
        json_object_set_new(o, "gbps", num(ab->bw / GBPS));
    } else {
        json_object_set_new(o, "a_to_b_gbps", num(ab->bw / GBPS));
        json_object_set_new(o, "b_to_a_gbps", num(ba->bw / GBPS));
    }
    json_object_set_new(o, "latency_ms", num(ab->lat_s * 1e3));
    if (ab->per_pair)
        json_object_set_new(o, "sharing", json_string("per_pair"));
    if (ab->per_pair && ab->pair_gpu)
        json_object_set_new(o, "pair", json_string("gpu"));
    if (ab->policy_set)
        json_object_set_new(o, "policy",
                            json_string(wan_policy_name(ab->policy)));
    if (*ab->trace)
        json_object_set_new(o, "trace", json_string(ab->trace));
    if (*ab->source)
        json_object_set_new(o, "source", json_string(ab->source));
    return o;
}


json_t *topo_to_json(const topology *t)
{
    json_t *root = json_object();
    json_object_set_new(root, "name", json_string(t->name));
    if (*t->description)
        json_object_set_new(root, "description", json_string(t->description));
    json_t *src = json_array();
    for (int i = 0; i < t->nsources; i++)
        json_array_append_new(src, json_string(t->sources[i]));
    json_object_set_new(root, "sources", src);
    json_t *sites = json_array();
    for (int i = 0; i < t->nsites; i++)
        json_array_append_new(sites, site_json(t, &t->sites[i]));
    json_object_set_new(root, "sites", sites);
    json_t *links = json_array();
    for (int a = 0; a < t->nsites; a++)
        for (int b = a + 1; b < t->nsites; b++)
            json_array_append_new(links, link_json(t, a, b));
    json_object_set_new(root, "links", links);
    json_t *tcp = json_object();
    json_object_set_new(tcp, "window_mb", num(t->tcp_window_bytes / 1e6));
    json_object_set_new(tcp, "connections", json_integer(t->tcp_connections));
    json_object_set_new(root, "tcp", tcp);
    if (t->wan_j_per_byte > 0)
        json_object_set_new(root, "wan_j_per_byte", num(t->wan_j_per_byte));
    if (t->egress_usd_per_gb > 0)
        json_object_set_new(root, "egress_usd_per_gb", num(t->egress_usd_per_gb));
    return root;
}

int topo_write(const topology *t, const char *path, gt_err *e)
{
    json_t *root = topo_to_json(t);
    if (!root)
        return gt_fail(e, "%s: out of memory", path);
    int rc = json_write_atomic(root, path, e);
    json_decref(root);
    return rc;
}
