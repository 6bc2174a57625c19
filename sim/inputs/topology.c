/* topology.c — topology reader, validator, writer and path queries
 * (see topology.h and docs/formats.md). */
#include "sim/inputs/topology.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/grammar.h"
#include "sim/base/jsonio.h"
#include "sim/inputs/topo_traces.h"

#define GBPS 125000000.0   /* bytes/s in one Gbit/s */
/* The WAN matrix holds nsites^2 topo_links of ~456 bytes each (4096 sites =
 * 7.6 GB from a 400 kB file): refuse more sites than this (478 MB). */
#define SITE_LIMIT (TOPO_MAX_SITES < 1024 ? TOPO_MAX_SITES : 1024)

static const char *const TOP_KEYS[] = {"name", "sources", "sites", "links", "default_wan",
                                       "tcp", "description", "wan_j_per_byte",
                                       "egress_usd_per_gb", NULL};
static const char *const SITE_KEYS[] = {"id", "region", "lat", "lon", "carbon_g_per_kwh",
                                        "pue", "price_kwh", "nodes", "lan", "source", NULL};
static const char *const NODE_KEYS[] = {"gpu", "count", "nic_gbps", "repeat", NULL};
static const char *const LAN_KEYS[] = {"gbps", "latency_ms", NULL};
static const char *const LINK_KEYS[] = {"a", "b", "gbps", "a_to_b_gbps", "b_to_a_gbps",
                                        "latency_ms", "sharing", "pair", "policy",
                                        "trace", "source", NULL};
static const char *const TCP_KEYS[] = {"window_mb", "connections", NULL};

/* Array member `key` of obj; required arrays must exist. */
static int get_array(const jdoc *d, json_t *obj, const char *objpath, const char *key,
                     int required, json_t **out, gt_err *e)
{
    char jp[256];
    snprintf(jp, sizeof jp, "%s%s%s", objpath, *objpath ? "." : "", key);
    json_t *v = json_object_get(obj, key);
    *out = v;
    if (!v)
        return required ? jdoc_fail(d, e, jp, "missing, expected an array") : 0;
    if (!json_is_array(v))
        return jdoc_fail(d, e, jp, "expected an array");
    return 0;
}

static int get_object(const jdoc *d, json_t *parent, const char *jp, json_t *v, gt_err *e)
{
    (void)parent;
    if (!json_is_object(v))
        return jdoc_fail(d, e, jp, "expected an object");
    return 0;
}

static int parse_lan(const jdoc *d, json_t *site, const char *sp, topo_site *s, gt_err *e)
{
    char jp[256];
    snprintf(jp, sizeof jp, "%s.lan", sp);
    json_t *lan = json_object_get(site, "lan");
    if (!lan)
        return jdoc_fail(d, e, jp, "missing, expected {\"gbps\": ..., \"latency_ms\": ...}");
    if (get_object(d, site, jp, lan, e) || jdoc_keys(d, lan, jp, LAN_KEYS, e))
        return -1;
    double gbps, ms;
    if (jdoc_num(d, lan, jp, "gbps", 1, 1e-9, 1e7, 0, &gbps, e) ||
        jdoc_num(d, lan, jp, "latency_ms", 0, 0, 1e6, 0, &ms, e))
        return -1;
    s->lan_bw = gbps * GBPS;
    s->lan_lat_s = ms / 1e3;
    return 0;
}

/* Count GPUs and nodes first so that arrays are sized once and a huge count
 * is refused before any allocation. */
static int count_site(const jdoc *d, json_t *site, const char *sp, long *nodes, long *gpus,
                      const topology *t, gt_err *e)
{
    json_t *arr;
    if (get_array(d, site, sp, "nodes", 1, &arr, e))
        return -1;
    if (json_array_size(arr) == 0) {
        char jp[300];
        snprintf(jp, sizeof jp, "%s.nodes", sp);
        return jdoc_fail(d, e, jp, "a site needs at least one node with GPUs (a site "
                                   "without GPUs cannot take part; remove it)");
    }
    size_t i;
    json_t *n;
    json_array_foreach(arr, i, n) {
        char np[256];
        snprintf(np, sizeof np, "%s.nodes[%zu]", sp, i);
        if (get_object(d, arr, np, n, e) || jdoc_keys(d, n, np, NODE_KEYS, e))
            return -1;
        char gpu[64];
        long count, repeat;
        if (jdoc_str(d, n, np, "gpu", 1, NULL, gpu, sizeof gpu, e) ||
            jdoc_int(d, n, np, "count", 1, 1, 1024, 0, &count, e) ||
            jdoc_int(d, n, np, "repeat", 0, 1, TOPO_MAX_GPUS, 1, &repeat, e))
            return -1;
        int found = -1;
        for (int k = 0; k < t->ntypes; k++)
            if (strcmp(t->types[k].id, gpu) == 0)
                found = k;
        if (found < 0) {
            char jp[300];
            snprintf(jp, sizeof jp, "%s.gpu", np);
            return jdoc_fail(d, e, jp, "unknown GPU type \"%s\" (see topologies/gpus.csv)",
                             gpu);
        }
        *nodes += repeat;
        *gpus += count * repeat;
        if (*gpus > TOPO_MAX_GPUS) {
            char jp[300];
            snprintf(jp, sizeof jp, "%s.count", np);
            return jdoc_fail(d, e, jp, "topology exceeds the limit of %d GPUs",
                             TOPO_MAX_GPUS);
        }
    }
    return 0;
}

static int parse_nodes(const jdoc *d, json_t *site, const char *sp, topology *t, int si,
                       gt_err *e)
{
    json_t *arr = json_object_get(site, "nodes");
    size_t i;
    json_t *n;
    topo_site *s = &t->sites[si];
    s->first_node = t->nnodes;
    s->first_gpu = t->ngpus;
    json_array_foreach(arr, i, n) {
        char np[256], gpu[64];
        snprintf(np, sizeof np, "%s.nodes[%zu]", sp, i);
        long count, repeat;
        double nic;
        jdoc_str(d, n, np, "gpu", 1, NULL, gpu, sizeof gpu, e);
        jdoc_int(d, n, np, "count", 1, 1, 1024, 0, &count, e);
        jdoc_int(d, n, np, "repeat", 0, 1, TOPO_MAX_GPUS, 1, &repeat, e);
        if (jdoc_num(d, n, np, "nic_gbps", 0, 1e-9, 1e7, 100, &nic, e))
            return -1;
        int type = 0;
        for (int k = 0; k < t->ntypes; k++)
            if (strcmp(t->types[k].id, gpu) == 0)
                type = k;
        for (long r = 0; r < repeat; r++) {
            topo_node *nd = &t->nodes[t->nnodes];
            nd->site = si;
            nd->type = type;
            nd->ngpus = (int)count;
            nd->first_gpu = t->ngpus;
            nd->index_in_site = t->nnodes - s->first_node;
            nd->nic_bw = nic * GBPS;
            for (long g = 0; g < count; g++) {
                topo_gpu *gp = &t->gpus[t->ngpus++];
                gp->site = si;
                gp->node = t->nnodes;
                gp->local = (int)g;
                gp->type = type;
            }
            t->nnodes++;
        }
    }
    s->nnodes = t->nnodes - s->first_node;
    s->ngpus = t->ngpus - s->first_gpu;
    return 0;
}

static int parse_site(const jdoc *d, json_t *site, const char *sp, topology *t, int si,
                      gt_err *e)
{
    topo_site *s = &t->sites[si];
    if (jdoc_str(d, site, sp, "id", 1, NULL, s->id, sizeof s->id, e) ||
        jdoc_str(d, site, sp, "region", 0, "", s->region, sizeof s->region, e) ||
        jdoc_str(d, site, sp, "source", 0, "", s->source, sizeof s->source, e) ||
        jdoc_num(d, site, sp, "lat", 0, -90, 90, 0, &s->lat, e) ||
        jdoc_num(d, site, sp, "lon", 0, -180, 180, 0, &s->lon, e) ||
        jdoc_num(d, site, sp, "carbon_g_per_kwh", 0, 0, 5000, 0, &s->carbon_g_per_kwh, e) ||
        jdoc_num(d, site, sp, "pue", 0, 1, 10, 1, &s->pue, e) ||
        jdoc_num(d, site, sp, "price_kwh", 0, 0, 100, 0, &s->price_kwh, e))
        return -1;
    char why[128];
    const char *bad = gram_site_id_error(s->id, why, sizeof why);
    if (bad) {
        char jp[300];
        snprintf(jp, sizeof jp, "%s.id", sp);
        if (strchr(s->id, '/')) /* printable: name it */
            return jdoc_fail(d, e, jp, "site id \"%s\" must not contain '/'",
                             gram_printable(s->id, why, sizeof why));
        return jdoc_fail(d, e, jp, "site id %s", bad);
    }
    for (int k = 0; k < si; k++)
        if (strcmp(t->sites[k].id, s->id) == 0) {
            char jp[300];
            snprintf(jp, sizeof jp, "%s.id", sp);
            return jdoc_fail(d, e, jp, "duplicate site id \"%s\"", s->id);
        }
    if (parse_lan(d, site, sp, s, e))
        return -1;
    return parse_nodes(d, site, sp, t, si, e);
}

static int parse_policy(const jdoc *d, json_t *l, const char *lp, topo_link *ab, topo_link *ba,
                        gt_err *e)
{
    char sharing[16], pair[16], policy[16];
    if (jdoc_str(d, l, lp, "sharing", 0, "shared", sharing, sizeof sharing, e) ||
        jdoc_str(d, l, lp, "pair", 0, "", pair, sizeof pair, e) ||
        jdoc_str(d, l, lp, "policy", 0, "", policy, sizeof policy, e) ||
        jdoc_str(d, l, lp, "trace", 0, "", ab->trace, sizeof ab->trace, e) ||
        jdoc_str(d, l, lp, "source", 0, "", ab->source, sizeof ab->source, e))
        return -1;
    char jp[300];
    if (strcmp(sharing, "shared") && strcmp(sharing, "per_pair")) {
        snprintf(jp, sizeof jp, "%s.sharing", lp);
        return jdoc_fail(d, e, jp, "expected \"shared\" or \"per_pair\" (got \"%s\")", sharing);
    }
    ab->per_pair = strcmp(sharing, "per_pair") == 0;
    if (*pair) { /* who shares one shaped pair capacity: hosts (default) or GPUs */
        snprintf(jp, sizeof jp, "%s.pair", lp);
        if (!ab->per_pair)
            return jdoc_fail(d, e, jp, "\"pair\" needs \"sharing\": \"per_pair\"");
        if (strcmp(pair, "node") && strcmp(pair, "gpu"))
            return jdoc_fail(d, e, jp, "expected \"node\" or \"gpu\" (got \"%s\")", pair);
        ab->pair_gpu = strcmp(pair, "gpu") == 0;
    }
    if (*policy) {
        if (wan_policy_parse(policy, &ab->policy)) {
            char names[128];
            wan_policy_list(names, sizeof names, "\"");
            snprintf(jp, sizeof jp, "%s.policy", lp);
            return jdoc_fail(d, e, jp, "expected %s (got \"%s\")", names, policy);
        }
        ab->policy_set = true;
    }
    memcpy(ba->trace, ab->trace, sizeof ab->trace);
    memcpy(ba->source, ab->source, sizeof ab->source);
    ba->per_pair = ab->per_pair;
    ba->pair_gpu = ab->pair_gpu;
    ba->policy_set = ab->policy_set;
    ba->policy = ab->policy;
    return *ab->trace ? topo_check_link_trace(d, lp, ab, e) : 0;
}

/* A link's number, with the link named in the error:
 *   x.json:14:9: links[3].gbps: link "us-east"->"eu-west": gbps must be > 0 (got -1) */
static int link_num(const jdoc *d, json_t *l, const char *lp, const char *key, const char *a,
                    const char *b, double lo, double *out, gt_err *e)
{
    if (jdoc_num(d, l, lp, key, 1, lo, 1e7, 0, out, NULL) == 0)
        return 0;
    json_t *v = json_object_get(l, key);
    char jp[300];
    snprintf(jp, sizeof jp, "%s.%s", lp, key);
    if (!v)
        return jdoc_fail(d, e, jp, "link \"%s\"->\"%s\": %s missing, expected a number", a,
                         b, key);
    if (!json_is_number(v))
        return jdoc_fail(d, e, jp, "link \"%s\"->\"%s\": %s must be a number", a, b, key);
    double x = json_number_value(v);
    if (lo > 0 && x <= 0)
        return jdoc_fail(d, e, jp, "link \"%s\"->\"%s\": %s must be > 0 (got %g)", a, b, key,
                         x);
    if (x < lo)
        return jdoc_fail(d, e, jp, "link \"%s\"->\"%s\": %s must be >= %g (got %g)", a, b,
                         key, lo, x);
    return jdoc_fail(d, e, jp, "link \"%s\"->\"%s\": %s must be <= 1e+07 (got %g)", a, b,
                     key, x);
}

static int parse_link(const jdoc *d, json_t *l, const char *lp, topology *t, gt_err *e)
{
    char a[64], b[64], jp[300];
    if (get_object(d, NULL, lp, l, e) || jdoc_keys(d, l, lp, LINK_KEYS, e) ||
        jdoc_str(d, l, lp, "a", 1, NULL, a, sizeof a, e) ||
        jdoc_str(d, l, lp, "b", 1, NULL, b, sizeof b, e))
        return -1;
    int sa = topo_site_lookup(t, a), sb = topo_site_lookup(t, b);
    if (sa < 0 || sb < 0) {
        snprintf(jp, sizeof jp, "%s.%s", lp, sa < 0 ? "a" : "b");
        return jdoc_fail(d, e, jp, "unknown site \"%s\"", sa < 0 ? a : b);
    }
    if (sa == sb) {
        snprintf(jp, sizeof jp, "%s.b", lp);
        return jdoc_fail(d, e, jp, "link from site \"%s\" to itself (use the site's lan)", a);
    }
    topo_link *ab = &t->wan[(size_t)sa * t->nsites + sb], *ba = &t->wan[(size_t)sb * t->nsites + sa];
    if (ab->present) {
        snprintf(jp, sizeof jp, "%s", lp);
        return jdoc_fail(d, e, jp, "duplicate link \"%s\"-\"%s\"", a, b);
    }
    double gbps_ab, gbps_ba, ms;
    bool sym = json_object_get(l, "gbps") != NULL;
    bool asym = json_object_get(l, "a_to_b_gbps") || json_object_get(l, "b_to_a_gbps");
    if (sym == asym)
        return jdoc_fail(d, e, lp, "link \"%s\"-\"%s\": give either gbps or both "
                                   "a_to_b_gbps and b_to_a_gbps", a, b);
    if (link_num(d, l, lp, sym ? "gbps" : "a_to_b_gbps", a, b, 1e-9, &gbps_ab, e))
        return -1;
    gbps_ba = gbps_ab;
    if (!sym && link_num(d, l, lp, "b_to_a_gbps", a, b, 1e-9, &gbps_ba, e))
        return -1;
    if (link_num(d, l, lp, "latency_ms", a, b, 0, &ms, e))
        return -1;
    ab->present = ba->present = true;
    ab->bw = gbps_ab * GBPS;
    ba->bw = gbps_ba * GBPS;
    ab->lat_s = ba->lat_s = ms / 1e3;
    return parse_policy(d, l, lp, ab, ba, e);
}

static int parse_links(const jdoc *d, topology *t, gt_err *e)
{
    json_t *arr;
    if (get_array(d, d->root, "", "links", 0, &arr, e))
        return -1;
    size_t i;
    json_t *l;
    if (arr)
        json_array_foreach(arr, i, l) {
            char lp[64];
            snprintf(lp, sizeof lp, "links[%zu]", i);
            if (parse_link(d, l, lp, t, e))
                return -1;
        }
    json_t *dw = json_object_get(d->root, "default_wan");
    double dgbps = 0, dms = 0;
    if (dw) {
        static const char *const DW_KEYS[] = {"gbps", "latency_ms", NULL};
        if (get_object(d, NULL, "default_wan", dw, e) ||
            jdoc_keys(d, dw, "default_wan", DW_KEYS, e) ||
            jdoc_num(d, dw, "default_wan", "gbps", 1, 1e-9, 1e7, 0, &dgbps, e) ||
            jdoc_num(d, dw, "default_wan", "latency_ms", 1, 0, 1e6, 0, &dms, e))
            return -1;
    }
    for (int a = 0; a < t->nsites; a++)
        for (int b = 0; b < t->nsites; b++) {
            topo_link *ab = &t->wan[(size_t)a * t->nsites + b];
            if (a == b || ab->present)
                continue;
            if (!dw)
                return jdoc_fail(d, e, "links", "missing link between sites \"%s\" and "
                                 "\"%s\" (add it, or give \"default_wan\")",
                                 t->sites[a].id, t->sites[b].id);
            ab->present = true;
            ab->bw = dgbps * GBPS;
            ab->lat_s = dms / 1e3;
            snprintf(ab->source, sizeof ab->source, "default_wan");
        }
    return 0;
}

static int parse_top(const jdoc *d, topology *t, gt_err *e)
{
    json_t *root = d->root;
    if (jdoc_keys(d, root, "", TOP_KEYS, e) ||
        jdoc_str(d, root, "", "name", 0, "unnamed", t->name, sizeof t->name, e) ||
        jdoc_str(d, root, "", "description", 0, "", t->description, sizeof t->description, e) ||
        jdoc_num(d, root, "", "wan_j_per_byte", 0, 0, 1, 0, &t->wan_j_per_byte, e) ||
        jdoc_num(d, root, "", "egress_usd_per_gb", 0, 0, 100, 0, &t->egress_usd_per_gb, e))
        return -1;
    json_t *src;
    if (get_array(d, root, "", "sources", 0, &src, e))
        return -1;
    if (src) {
        t->sources = calloc(json_array_size(src) + 1, sizeof *t->sources);
        if (!t->sources)
            return gt_fail(e, "%s: out of memory", d->path);
        size_t i;
        json_t *s;
        json_array_foreach(src, i, s) {
            char jp[64];
            snprintf(jp, sizeof jp, "sources[%zu]", i);
            if (!json_is_string(s))
                return jdoc_fail(d, e, jp, "expected a string");
            t->sources[t->nsources] = strdup(json_string_value(s));
            if (!t->sources[t->nsources++])
                return gt_fail(e, "%s: out of memory", d->path);
        }
    }
    t->tcp_window_bytes = 3e6;
    t->tcp_connections = 1;
    json_t *tcp = json_object_get(root, "tcp");
    if (tcp) {
        double wmb;
        long conn;
        if (get_object(d, NULL, "tcp", tcp, e) || jdoc_keys(d, tcp, "tcp", TCP_KEYS, e) ||
            jdoc_num(d, tcp, "tcp", "window_mb", 0, 1e-6, 1e6, 3, &wmb, e) ||
            jdoc_int(d, tcp, "tcp", "connections", 0, 1, 4096, 1, &conn, e))
            return -1;
        t->tcp_window_bytes = wmb * 1e6;
        t->tcp_connections = (int)conn;
    }
    return 0;
}

static int parse_doc(const jdoc *d, topology *t, gt_err *e)
{
    if (parse_top(d, t, e))
        return -1;
    json_t *sites;
    if (get_array(d, d->root, "", "sites", 1, &sites, e))
        return -1;
    size_t ns = json_array_size(sites);
    if (ns == 0)
        return jdoc_fail(d, e, "sites", "expected at least one site");
    if (ns > SITE_LIMIT)
        return jdoc_fail(d, e, "sites", "%zu sites, more than the limit of %d", ns,
                         SITE_LIMIT);
    long nodes = 0, gpus = 0;
    size_t i;
    json_t *s;
    json_array_foreach(sites, i, s) {
        char sp[64];
        snprintf(sp, sizeof sp, "sites[%zu]", i);
        if (get_object(d, sites, sp, s, e) || jdoc_keys(d, s, sp, SITE_KEYS, e) ||
            count_site(d, s, sp, &nodes, &gpus, t, e))
            return -1;
    }
    if (gpus == 0)
        return jdoc_fail(d, e, "sites", "the topology has no GPUs");
    t->nsites = (int)ns;
    t->sites = calloc(ns, sizeof *t->sites);
    t->nodes = calloc((size_t)nodes, sizeof *t->nodes);
    t->gpus = calloc((size_t)gpus, sizeof *t->gpus);
    t->wan = calloc(ns * ns, sizeof *t->wan);
    if (!t->sites || !t->nodes || !t->gpus || !t->wan)
        return gt_fail(e, "%s: out of memory for %ld GPUs", d->path, gpus);
    json_array_foreach(sites, i, s) {
        char sp[64];
        snprintf(sp, sizeof sp, "sites[%zu]", i);
        if (parse_site(d, s, sp, t, (int)i, e))
            return -1;
    }
    return parse_links(d, t, e);
}

static int copy_catalog(topology *t, const gpu_catalog *cat, gt_err *e)
{
    gpu_catalog own = {0};
    if (!cat) {
        if (gpu_catalog_load_default(&own, e))
            return -1;
        cat = &own;
    }
    t->types = malloc((size_t)cat->n * sizeof *t->types);
    if (!t->types) {
        gpu_catalog_free(&own);
        return gt_fail(e, "out of memory");
    }
    memcpy(t->types, cat->types, (size_t)cat->n * sizeof *t->types);
    t->ntypes = cat->n;
    gpu_catalog_free(&own);
    return 0;
}

int topo_parse(topology *t, const char *name, const char *buf, size_t len,
               const gpu_catalog *cat, gt_err *e)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", name);
    jdoc d;
    if (copy_catalog(t, cat, e))
        return -1;
    if (jdoc_parse(&d, name, buf, len, e)) {
        topo_free(t);
        return -1;
    }
    int rc = parse_doc(&d, t, e);
    jdoc_free(&d);
    if (rc)
        topo_free(t);
    return rc;
}

int topo_load(topology *t, const char *path, const gpu_catalog *cat, gt_err *e)
{
    memset(t, 0, sizeof *t);
    jdoc d;
    if (jdoc_load(&d, path, e))
        return -1;
    int rc = topo_parse(t, path, d.text, d.len, cat, e);
    jdoc_free(&d);
    return rc;
}

void topo_free(topology *t)
{
    for (int i = 0; i < t->nsources; i++)
        free(t->sources[i]);
    free(t->sources);
    free(t->types);
    free(t->sites);
    free(t->nodes);
    free(t->gpus);
    free(t->wan);
    memset(t, 0, sizeof *t);
}

void topo_gpu_name(const topology *t, int g, char *out, size_t cap)
{
    const topo_gpu *gp = &t->gpus[g];
    snprintf(out, cap, "%s/%d/%d", t->sites[gp->site].id, t->nodes[gp->node].index_in_site,
             gp->local);
}

int topo_site_lookup(const topology *t, const char *id)
{
    for (int i = 0; i < t->nsites; i++)
        if (t->sites && strcmp(t->sites[i].id, id) == 0)
            return i;
    return -1;
}

int topo_gpu_lookup(const topology *t, const char *name)
{
    const char *slash = strchr(name, '/');
    if (!slash || (size_t)(slash - name) >= 64)
        return -1;
    char site[64];
    memcpy(site, name, (size_t)(slash - name));
    site[slash - name] = '\0';
    int s = topo_site_lookup(t, site);
    if (s < 0)
        return -1;
    /* SITE/NODE/GPU with canonical indices (grammar.h): a/0/01, a/0/+1 and
     * "a/0/ 1" name no GPU */
    const char *np = slash + 1, *slash2 = strchr(np, '/');
    long node, local;
    if (!slash2 || gram_index(np, (size_t)(slash2 - np), &node) ||
        gram_index(slash2 + 1, strlen(slash2 + 1), &local))
        return -1;
    const topo_site *st = &t->sites[s];
    if (node < 0 || node >= st->nnodes)
        return -1;
    const topo_node *nd = &t->nodes[st->first_node + node];
    if (local < 0 || local >= nd->ngpus)
        return -1;
    return nd->first_gpu + (int)local;
}

/* Indexed by wan_policy. */
static const char *const WAN_POLICY_NAMES[WAN_NPOLICIES] = {"fair", "temporal"};

const char *wan_policy_name(wan_policy p)
{
    return (unsigned)p < WAN_NPOLICIES ? WAN_POLICY_NAMES[p] : "?";
}

int wan_policy_parse(const char *s, wan_policy *out)
{
    for (int k = 0; k < WAN_NPOLICIES; k++)
        if (!strcmp(s, WAN_POLICY_NAMES[k])) {
            *out = (wan_policy)k;
            return 0;
        }
    return -1;
}

void wan_policy_list(char *buf, size_t cap, const char *quote)
{
    size_t n = 0;
    buf[0] = 0;
    for (int k = 0; k < WAN_NPOLICIES && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s%s%s", k == 0 ? "" : k + 1 < WAN_NPOLICIES ? ", " : " or ",
                              quote, WAN_POLICY_NAMES[k], quote);
}

const gpu_type *topo_gpu_type(const topology *t, int g)
{
    return &t->types[t->gpus[g].type];
}
