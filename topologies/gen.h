/* gen.h — the topology generator behind `geotrain topo gen` (docs/formats.md, 11).
 *
 * A generated topology puts its sites in real cloud regions picked from
 * topologies/regions.csv. The WAN between two regions is the measurement in
 * topologies/wan_measured.csv when one exists (one-way latency = RTT / 2;
 * bandwidth per direction); otherwise a distance fit made on those same
 * measurements when the tables are loaded:
 *
 *   latency   one-way ms = a + b * km               (least squares weighted by
 *                                                    1/ms^2, i.e. relative error)
 *   bandwidth ln(Gbps)   = c_p + k_p * km            (least squares per provider
 *                                                    of the sending region)
 *
 * where km is the great-circle distance between the regions' coordinates.
 * topologies/GENERATOR.md gives the coefficients and their held-out error.
 *
 * GPUs are spread over the sites (--gpus-dist), cut into nodes of --node-size
 * and typed by a mix (--mix). Every random choice draws from GSL's mt19937
 * seeded from opts.seed, one stream per stage (regions, counts, types, jitter),
 * so that changing the mix does not change which regions are picked. Same
 * options + same tables = the same topology, bit for bit.
 *
 * Library code: no printing, no exit; errors fill a gt_err. */
#ifndef GT_TOPOGEN_H
#define GT_TOPOGEN_H

#include "sim/inputs/catalog.h"
#include "sim/base/error.h"
#include "sim/inputs/topology.h"

#define TOPOGEN_MAX_PROVIDERS 8

typedef struct topogen_region {
    char id[64];            /* "aws:us-east-1" */
    char continent[32];     /* "north-america", ... */
    int prov;               /* index into topogen_data.providers */
    double lat, lon;
    double carbon_g_per_kwh;
    bool carbon_estimate;   /* regions.csv marks the value as an ESTIMATE */
    double lan_latency_ms;  /* one-way, inside the region */
} topogen_region;

/* The two distance fits (see the top of this file). */
typedef struct topogen_fit {
    double lat_a, lat_b;                    /* ms, ms per km */
    int nlat;                               /* pairs fitted */
    double bw_c[TOPOGEN_MAX_PROVIDERS];     /* ln Gbps at 0 km, by sending provider */
    double bw_k[TOPOGEN_MAX_PROVIDERS];     /* per km */
    int bw_n[TOPOGEN_MAX_PROVIDERS];        /* directions fitted (< 2: global fit used) */
    double bw_gc, bw_gk;                    /* all providers together */
    int nbw;
} topogen_fit;

/* Error of the fits on measured pairs they were not fitted on (k-fold). */
typedef struct topogen_fit_error {
    int folds;                  /* 1 = in-sample (fitted and tested on everything) */
    int nlat, nbw;              /* pairs / directions tested */
    double lat_rmse_ms, lat_mae_ms, lat_medrel, lat_p90rel;
    double bw_rmse_ln, bw_medrel, bw_p90rel;   /* rel = |fit - measured| / measured */
} topogen_fit_error;

/* The tables the generator draws from (read-only once loaded, so one copy can
 * serve many threads). */
typedef struct topogen_data {
    int n;
    topogen_region *regions;
    int nprov;
    char providers[TOPOGEN_MAX_PROVIDERS][16];
    double *lat_ms;             /* n x n, symmetric, NAN = not measured */
    double *gbps;               /* n x n, [src * n + dst], NAN = not measured */
    char (*lat_ds)[32];         /* n x n: dataset tag of the latency, "" = none */
    char (*bw_ds)[32];          /* n x n: dataset tag of the bandwidth, "" = none */
    topogen_fit fit;            /* fitted on every measurement */
    gpu_catalog cat;
} topogen_data;

/* Load topologies/regions.csv, topologies/wan_measured.csv (found like the
 * catalogs, datadir.h) and the GPU catalog, and fit. */
int topogen_data_load(topogen_data *d, gt_err *e);
int topogen_data_load_from(topogen_data *d, const char *regions_csv, const char *wan_csv,
                           gt_err *e);
void topogen_data_free(topogen_data *d);

/* Great-circle distance in km (haversine, mean Earth radius 6371 km). */
double topogen_distance_km(double lat1, double lon1, double lat2, double lon2);
double topogen_region_km(const topogen_data *d, int a, int b);

/* Fit on the measured pairs {i<j} with use[i*n+j] != 0 (NULL = all); a pair's
 * latency and both of its directions go together. */
int topogen_fit_compute(const topogen_data *d, const unsigned char *use, topogen_fit *f,
                        gt_err *e);
double topogen_fit_latency_ms(const topogen_fit *f, double km);
double topogen_fit_gbps(const topogen_fit *f, int src_prov, double km);
/* k-fold cross-validation over measured pairs: the p-th measured pair {i<j}
 * in region-list order (i outer) is held out in fold p mod k; folds = 1
 * reports the in-sample error. */
int topogen_fit_holdout(const topogen_data *d, int folds, topogen_fit_error *out, gt_err *e);

/* What to generate. Text fields take the command-line syntax, so that the
 * study command and scripts can pass options straight through. */
typedef struct topogen_opts {
    int sites;                  /* 0 = default: 4, or every region --regions lists */
    long gpus;                  /* total; 0 = default: 8 per site */
    char gpus_dist[64];         /* even|fixed|random|zipf:S|uniform:LO:HI ("" = even) */
    char mix[1024];             /* "h100:0.2,a100:0.3,t4:0.5"; '/' separates per-site mixes */
    char mix_per[8];            /* node|site ("" = node) */
    int node_size;              /* GPUs per node (last node of a site takes the rest) */
    double nic_gbps;            /* per node; the LAN runs at this speed */
    char regions[1024];         /* any|aws|gcp|azure|CONTINENT|REGION_ID, comma-separated */
    double bw_scale;            /* x every WAN bandwidth */
    double bw_jitter;           /* x U[1-j, 1+j] per link direction, 0 <= j < 1 */
    double pue;
    int tcp_connections;
    double tcp_window_mb;
    unsigned long seed;
    char name[128];             /* "" = gen-<sites>s-<gpus>g-seed<seed> */
    const topogen_data *data;   /* preloaded tables; NULL = load the shipped ones */
} topogen_opts;

#define TOPOGEN_DEFAULT_MIX "h100_sxm:0.25,a100_sxm_80gb:0.25,v100_sxm2_16gb:0.25,t4:0.25"

void topogen_defaults(topogen_opts *o);
/* Check every option against the tables; the message names the option and the
 * bad value (the command turns a failure into a usage error, exit 2). */
int topogen_check(const topogen_opts *o, const topogen_data *d, gt_err *e);
/* Build the topology in memory (caller frees with topo_free). Values are
 * rounded as topo_write() rounds them, so the written file reads back equal. */
int topo_generate(const topogen_opts *o, topology *out, gt_err *e);
/* The catalog id a --mix alias stands for (h100 -> h100_sxm, a100 ->
 * a100_sxm_80gb, v100 -> v100_sxm2_16gb, 4090 -> rtx_4090, ...), else `name`. */
const char *topogen_gpu_alias(const char *name);

#endif
