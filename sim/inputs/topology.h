/* topology.h — the world a plan runs on: sites, nodes, GPUs and links.
 *
 * Loaded from the JSON format of docs/formats.md (strict: unknown fields
 * are errors) and written back by topo_write(). GPUs are numbered globally
 * 0..ngpus-1 in file order; a GPU's name is "site/node/index". Links are kept
 * as a directed site x site matrix in bytes/s and seconds (one-way). */
#ifndef GT_TOPOLOGY_H
#define GT_TOPOLOGY_H

#include <stdbool.h>
#include <stdio.h>
#include "sim/inputs/catalog.h"
#include "sim/base/error.h"

#define TOPO_MAX_GPUS 200000   /* refuse larger topologies with this limit named */
#define TOPO_MAX_SITES 1024   /* the site x site link matrix stays under ~0.5 GB */

/* How a shared WAN link divides its rate among its flows (the solver:
 * sim/engine/network.c). WAN_NPOLICIES stays last. */
typedef enum { WAN_FAIR = 0, WAN_TEMPORAL = 1, WAN_NPOLICIES } wan_policy;
/* The policy's name in topologies and on the command line, and back
 * (0, or -1 for an unknown name). */
const char *wan_policy_name(wan_policy p);
int wan_policy_parse(const char *s, wan_policy *out);
/* The names for an error message: a, b or c, each between `quote`s. */
void wan_policy_list(char *buf, size_t cap, const char *quote);

typedef struct topo_link {
    bool present;
    double bw;          /* bytes/s, direction a->b */
    double lat_s;       /* one-way latency */
    bool per_pair;      /* bw is each endpoint pair's own capacity (tc/netem style) */
    bool pair_gpu;      /* per_pair endpoints are GPUs, not nodes ("pair": "gpu") */
    bool policy_set;    /* the file chose a policy for this link */
    wan_policy policy;
    char trace[256];    /* bandwidth trace file, "" if none */
    char source[160];
} topo_link;

typedef struct topo_site {
    char id[64];
    char region[64];
    double lat, lon;
    double carbon_g_per_kwh, pue, price_kwh;
    double lan_bw, lan_lat_s;   /* per node pair inside the site */
    int first_node, nnodes;
    int first_gpu, ngpus;
    char source[160];
} topo_site;

typedef struct topo_node {
    int site;
    int type;            /* index into topology.types */
    int ngpus;
    int first_gpu;
    int index_in_site;
    double nic_bw;       /* bytes/s each way */
} topo_node;

typedef struct topo_gpu {
    int site, node, local, type;
} topo_gpu;

typedef struct topology {
    char name[128];
    char path[512];
    gpu_type *types;     /* copy of the catalog the file was read with */
    int ntypes;
    topo_site *sites;
    int nsites;
    topo_node *nodes;
    int nnodes;
    topo_gpu *gpus;
    int ngpus;
    topo_link *wan;      /* nsites * nsites, [a * nsites + b] */
    double tcp_window_bytes;
    int tcp_connections;
    double wan_j_per_byte;   /* optional network energy, J per WAN byte */
    double egress_usd_per_gb;
    char **sources;
    int nsources;
    char description[512];
} topology;

/* Load and validate. `cat` may be NULL (the default catalog is loaded). */
int topo_load(topology *t, const char *path, const gpu_catalog *cat, gt_err *e);
int topo_parse(topology *t, const char *name, const char *buf, size_t len,
               const gpu_catalog *cat, gt_err *e);
void topo_free(topology *t);
int topo_write(const topology *t, const char *path, gt_err *e);
/* The JSON document topo_write() writes (caller owns the reference). */
struct json_t *topo_to_json(const topology *t);

/* "site/node/index" of GPU g into out. */
void topo_gpu_name(const topology *t, int g, char *out, size_t cap);
/* GPU index from "site/node/index", or -1. */
int topo_gpu_lookup(const topology *t, const char *name);
int topo_site_lookup(const topology *t, const char *id);
const gpu_type *topo_gpu_type(const topology *t, int g);
static inline const topo_link *topo_wan(const topology *t, int a, int b)
{
    return &t->wan[(size_t)a * (size_t)t->nsites + (size_t)b];
}

/* The network path between two GPUs (resources, keys, capacities, caps,
 * latency): sim/models/path.h. */

/* Human summary for `geotrain topo show`. */
void topo_print_summary(const topology *t, FILE *out);

#endif
