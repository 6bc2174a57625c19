/* gen.c — the topology generator (see gen.h).
 *
 * Owns: reading topologies/regions.csv and topologies/wan_measured.csv, the
 * two distance fits and their cross-validation, option checking and the
 * seeded generation stages (regions, GPU counts, node types, bandwidth
 * jitter). It never prints or exits; the command line (`topo gen`, and the
 * generator options `study` shares) lives in cli/. */
#include "topologies/gen.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_fit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "sim/csv.h"
#include "sim/datadir.h"
#include "sim/grammar.h"

#define GBPS 125000000.0           /* bytes/s in one Gbit/s */
#define EARTH_RADIUS_KM 6371.0
#define GEN_MAX_MIX 32             /* GPU types in one mix */

/* ======================================================================== */
/* tables                                                                    */
/* ======================================================================== */

static int provider_index(topogen_data *d, const char *name, const csv_reader *r, gt_err *e)
{
    for (int i = 0; i < d->nprov; i++)
        if (strcmp(d->providers[i], name) == 0)
            return i;
    if (d->nprov == TOPOGEN_MAX_PROVIDERS || !*name || strlen(name) >= 16)
        return gt_fail(e, "%s:%d: column 'provider': '%s' (empty, too long, or more than %d "
                          "providers)", r->path, r->line, name, TOPOGEN_MAX_PROVIDERS);
    memcpy(d->providers[d->nprov], name, strlen(name) + 1);
    return d->nprov++;
}

static int region_find(const topogen_data *d, const char *id)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->regions[i].id, id) == 0)
            return i;
    return -1;
}

static int copy_field(const csv_reader *r, int col, char *out, size_t cap, gt_err *e)
{
    const char *s = csv_get(r, col);
    if (!*s || strlen(s) >= cap)
        return gt_fail(e, "%s:%d: column '%s': '%s' is empty or longer than %zu characters",
                       r->path, r->line, r->head[col], s, cap - 1);
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

enum { RC_ID, RC_PROV, RC_CONT, RC_LAT, RC_LON, RC_CARBON, RC_LAN, RC_CSRC, RC_N };
static const char *const REGION_COLS[RC_N] = {"region_id", "provider", "continent", "lat",
                                              "lon", "carbon_g_per_kwh", "lan_latency_ms",
                                              "carbon_source"};

static int read_region(const csv_reader *r, const int *c, topogen_data *d, topogen_region *g,
                       gt_err *e)
{
    memset(g, 0, sizeof *g);
    if (copy_field(r, c[RC_ID], g->id, sizeof g->id, e) ||
        copy_field(r, c[RC_CONT], g->continent, sizeof g->continent, e) ||
        csv_double(r, c[RC_LAT], -90, 90, 0, 0, &g->lat, e) ||
        csv_double(r, c[RC_LON], -180, 180, 0, 0, &g->lon, e) ||
        csv_double(r, c[RC_CARBON], 0, 5000, 0, 0, &g->carbon_g_per_kwh, e) ||
        csv_double(r, c[RC_LAN], 0, 1e3, 0, 0, &g->lan_latency_ms, e))
        return -1;
    if ((g->prov = provider_index(d, csv_get(r, c[RC_PROV]), r, e)) < 0)
        return -1;
    if (region_find(d, g->id) >= 0)
        return gt_fail(e, "%s:%d: column 'region_id': '%s' appears twice", r->path, r->line,
                       g->id);
    g->carbon_estimate = strncmp(csv_get(r, c[RC_CSRC]), "ESTIMATE", 8) == 0;
    return 0;
}

static int load_regions(topogen_data *d, const char *path, gt_err *e)
{
    csv_reader r;
    int c[RC_N], got = -1, cap = 0;
    if (csv_open(&r, path, e))
        return -1;
    for (int k = 0; k < RC_N; k++)
        if ((c[k] = csv_col(&r, REGION_COLS[k], 1, e)) < 0)
            goto done;
    while ((got = csv_next(&r, e)) == 1) {
        if (d->n == cap) {
            cap = cap ? 2 * cap : 64;
            topogen_region *nr = realloc(d->regions, (size_t)cap * sizeof *nr);
            if (!nr) {
                got = gt_fail(e, "%s: out of memory", path);
                break;
            }
            d->regions = nr;
        }
        if (read_region(&r, c, d, &d->regions[d->n], e))
            break;
        d->n++;
    }
    if (got == 0 && d->n < 2)
        got = gt_fail(e, "%s: needs at least two regions", path);
done:
    csv_close(&r);
    return got == 0 ? 0 : -1;
}

static int alloc_matrices(topogen_data *d, gt_err *e)
{
    size_t nn = (size_t)d->n * (size_t)d->n;
    d->lat_ms = malloc(nn * sizeof *d->lat_ms);
    d->gbps = malloc(nn * sizeof *d->gbps);
    d->lat_ds = calloc(nn, sizeof *d->lat_ds);
    d->bw_ds = calloc(nn, sizeof *d->bw_ds);
    if (!d->lat_ms || !d->gbps || !d->lat_ds || !d->bw_ds)
        return gt_fail(e, "out of memory for %d regions", d->n);
    for (size_t i = 0; i < nn; i++)
        d->lat_ms[i] = d->gbps[i] = NAN;
    return 0;
}

enum { WC_A, WC_B, WC_LAT, WC_LATDS, WC_AB, WC_ABDS, WC_BA, WC_BADS, WC_N };
static const char *const WAN_COLS[WC_N] = {"a", "b", "latency_ms", "latency_dataset",
                                           "a_to_b_gbps", "a_to_b_dataset", "b_to_a_gbps",
                                           "b_to_a_dataset"};

/* An optional positive value with the dataset it comes from: both or neither. */
static int read_measure(const csv_reader *r, int vcol, int dcol, double *v, char ds[32],
                        gt_err *e)
{
    if (csv_double(r, vcol, 1e-12, 1e7, 1, NAN, v, e))
        return -1;
    const char *s = csv_get(r, dcol);
    if (isnan(*v) != !*s)
        return gt_fail(e, "%s:%d: column '%s': a value needs its dataset in '%s' and a "
                          "dataset needs a value", r->path, r->line, r->head[vcol],
                       r->head[dcol]);
    if (strlen(s) >= 32)
        return gt_fail(e, "%s:%d: column '%s': longer than 31 characters", r->path, r->line,
                       r->head[dcol]);
    memcpy(ds, s, strlen(s) + 1);
    return 0;
}

static int wan_endpoint(const csv_reader *r, int col, const topogen_data *d, int *out,
                        gt_err *e)
{
    *out = region_find(d, csv_get(r, col));
    if (*out < 0)
        return gt_fail(e, "%s:%d: column '%s': unknown region '%s' (not in regions.csv)",
                       r->path, r->line, r->head[col], csv_get(r, col));
    return 0;
}

static int read_wan_row(const csv_reader *r, const int *c, topogen_data *d, gt_err *e)
{
    int a, b, n = d->n;
    if (wan_endpoint(r, c[WC_A], d, &a, e) || wan_endpoint(r, c[WC_B], d, &b, e))
        return -1;
    size_t ab = (size_t)a * n + b, ba = (size_t)b * n + a;
    if (a == b)
        return gt_fail(e, "%s:%d: column 'b': a region paired with itself", r->path, r->line);
    if (*d->lat_ds[ab] || *d->bw_ds[ab] || *d->bw_ds[ba] || !isnan(d->lat_ms[ab]))
        return gt_fail(e, "%s:%d: pair %s-%s appears twice", r->path, r->line,
                       d->regions[a].id, d->regions[b].id);
    double lat, gab, gba;
    char dl[32], dab[32], dba[32];
    if (read_measure(r, c[WC_LAT], c[WC_LATDS], &lat, dl, e) ||
        read_measure(r, c[WC_AB], c[WC_ABDS], &gab, dab, e) ||
        read_measure(r, c[WC_BA], c[WC_BADS], &gba, dba, e))
        return -1;
    d->lat_ms[ab] = d->lat_ms[ba] = lat;
    memcpy(d->lat_ds[ab], dl, 32);
    memcpy(d->lat_ds[ba], dl, 32);
    d->gbps[ab] = gab;
    d->gbps[ba] = gba;
    memcpy(d->bw_ds[ab], dab, 32);
    memcpy(d->bw_ds[ba], dba, 32);
    return 0;
}

static int load_wan(topogen_data *d, const char *path, gt_err *e)
{
    csv_reader r;
    int c[WC_N], got = -1;
    if (csv_open(&r, path, e))
        return -1;
    for (int k = 0; k < WC_N; k++)
        if ((c[k] = csv_col(&r, WAN_COLS[k], 1, e)) < 0)
            goto done;
    while ((got = csv_next(&r, e)) == 1)
        if (read_wan_row(&r, c, d, e))
            break;
done:
    csv_close(&r);
    return got == 0 ? 0 : -1;
}

int topogen_data_load_from(topogen_data *d, const char *regions_csv, const char *wan_csv,
                           gt_err *e)
{
    memset(d, 0, sizeof *d);
    if (load_regions(d, regions_csv, e) || alloc_matrices(d, e) || load_wan(d, wan_csv, e) ||
        topogen_fit_compute(d, NULL, &d->fit, e) || gpu_catalog_load_default(&d->cat, e)) {
        topogen_data_free(d);
        return -1;
    }
    return 0;
}

int topogen_data_load(topogen_data *d, gt_err *e)
{
    char rp[4096], wp[4096];
    if (datadir_find("regions.csv", rp, sizeof rp))
        return gt_fail(e, "%s: not found (the generator's region list; set GEOTRAIN_DATA to "
                          "the topologies folder)", rp);
    if (datadir_find("wan_measured.csv", wp, sizeof wp))
        return gt_fail(e, "%s: not found (the generator's WAN measurements)", wp);
    return topogen_data_load_from(d, rp, wp, e);
}

void topogen_data_free(topogen_data *d)
{
    free(d->regions);
    free(d->lat_ms);
    free(d->gbps);
    free(d->lat_ds);
    free(d->bw_ds);
    gpu_catalog_free(&d->cat);
    memset(d, 0, sizeof *d);
}

/* ======================================================================== */
/* distance fits                                                             */
/* ======================================================================== */

double topogen_distance_km(double lat1, double lon1, double lat2, double lon2)
{
    const double rad = M_PI / 180;
    double dp = (lat2 - lat1) * rad, dl = (lon2 - lon1) * rad;
    double h = sin(dp / 2) * sin(dp / 2) +
               cos(lat1 * rad) * cos(lat2 * rad) * sin(dl / 2) * sin(dl / 2);
    return 2 * EARTH_RADIUS_KM * asin(fmin(1, sqrt(h)));
}

double topogen_region_km(const topogen_data *d, int a, int b)
{
    const topogen_region *ra = &d->regions[a], *rb = &d->regions[b];
    return topogen_distance_km(ra->lat, ra->lon, rb->lat, rb->lon);
}

static bool pair_used(const topogen_data *d, const unsigned char *use, int i, int j)
{
    return !use || use[(size_t)i * d->n + j];
}

/* Weighted by 1/ms^2 so that a 1 ms link is fitted as carefully (relatively)
 * as a 150 ms one: plain least squares puts short links off by 10x. */
static int fit_latency(const topogen_data *d, const unsigned char *use, topogen_fit *f,
                       gt_err *e)
{
    int n = d->n, m = 0;
    size_t cap = (size_t)n * (size_t)n;
    double *x = malloc(cap * sizeof *x), *y = malloc(cap * sizeof *y),
           *w = malloc(cap * sizeof *w);
    int rc = x && y && w ? 0 : gt_fail(e, "out of memory");
    for (int i = 0; i < n && !rc; i++)
        for (int j = i + 1; j < n; j++) {
            double v = d->lat_ms[(size_t)i * n + j];
            if (isnan(v) || !pair_used(d, use, i, j))
                continue;
            x[m] = topogen_region_km(d, i, j);
            y[m] = v;
            w[m++] = 1 / (v * v);
        }
    double c00, c01, c11, chisq;
    if (!rc && m < 2)
        rc = gt_fail(e, "latency fit: needs at least 2 measured pairs (got %d)", m);
    if (!rc)
        gsl_fit_wlinear(x, 1, w, 1, y, 1, (size_t)m, &f->lat_a, &f->lat_b, &c00, &c01, &c11,
                        &chisq);
    if (!rc && !(isfinite(f->lat_a) && isfinite(f->lat_b)))
        rc = gt_fail(e, "latency fit: degenerate (all %d pairs at one distance?)", m);
    f->nlat = m;
    free(x);
    free(y);
    free(w);
    return rc;
}

/* ln(Gbps) against km for directions whose sender has provider `prov` (-1 =
 * all). Returns the number of points; *c and *k stay untouched below 2. */
static int fit_ln_bw(const topogen_data *d, const unsigned char *use, int prov, double *x,
                     double *y, double *c, double *k)
{
    int n = d->n, m = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = d->gbps[(size_t)i * n + j];
            if (i == j || isnan(v) || (prov >= 0 && d->regions[i].prov != prov) ||
                !pair_used(d, use, i < j ? i : j, i < j ? j : i))
                continue;
            x[m] = topogen_region_km(d, i, j);
            y[m++] = log(v);
        }
    double c00, c01, c11, ss, cc, kk;
    if (m >= 2 && gsl_fit_linear(x, 1, y, 1, (size_t)m, &cc, &kk, &c00, &c01, &c11, &ss) == 0 &&
        isfinite(cc) && isfinite(kk)) {
        *c = cc;
        *k = kk;
        return m;
    }
    return m >= 2 ? 0 : m;
}

static int fit_bandwidth(const topogen_data *d, const unsigned char *use, topogen_fit *f,
                         gt_err *e)
{
    size_t cap = (size_t)d->n * (size_t)d->n;
    double *x = malloc(cap * sizeof *x), *y = malloc(cap * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return gt_fail(e, "out of memory");
    }
    f->nbw = fit_ln_bw(d, use, -1, x, y, &f->bw_gc, &f->bw_gk);
    for (int p = 0; p < d->nprov; p++) {
        f->bw_c[p] = f->bw_gc;
        f->bw_k[p] = f->bw_gk;
        f->bw_n[p] = fit_ln_bw(d, use, p, x, y, &f->bw_c[p], &f->bw_k[p]);
    }
    free(x);
    free(y);
    if (f->nbw < 2)
        return gt_fail(e, "bandwidth fit: needs at least 2 measured directions (got %d)",
                       f->nbw);
    return 0;
}

int topogen_fit_compute(const topogen_data *d, const unsigned char *use, topogen_fit *f,
                        gt_err *e)
{
    memset(f, 0, sizeof *f);
    return fit_latency(d, use, f, e) || fit_bandwidth(d, use, f, e) ? -1 : 0;
}

double topogen_fit_latency_ms(const topogen_fit *f, double km)
{
    return fmax(0, f->lat_a + f->lat_b * km);
}

double topogen_fit_gbps(const topogen_fit *f, int src_prov, double km)
{
    if (src_prov >= 0 && src_prov < TOPOGEN_MAX_PROVIDERS && f->bw_n[src_prov] >= 2)
        return exp(f->bw_c[src_prov] + f->bw_k[src_prov] * km);
    return exp(f->bw_gc + f->bw_gk * km);
}

/* Residuals collected over the folds. */
typedef struct residuals {
    double *lat_rel, *bw_rel;   /* |fit - measured| / measured */
    int nlat, nbw;
    double lat_sq, lat_sum, bw_sq;
} residuals;

static void add_residuals(const topogen_data *d, const topogen_fit *f, int i, int j,
                          residuals *r)
{
    size_t n = (size_t)d->n, ij = i * n + j;
    double km = topogen_region_km(d, i, j), v = d->lat_ms[ij];
    if (!isnan(v)) {
        double diff = topogen_fit_latency_ms(f, km) - v;
        r->lat_sq += diff * diff;
        r->lat_sum += fabs(diff);
        r->lat_rel[r->nlat++] = fabs(diff) / v;
    }
    int src[2] = {i, j}, dst[2] = {j, i};
    for (int k = 0; k < 2; k++) {
        double g = d->gbps[src[k] * n + dst[k]];
        if (isnan(g))
            continue;
        double fit = topogen_fit_gbps(f, d->regions[src[k]].prov, km);
        double ln = log(fit) - log(g);
        r->bw_sq += ln * ln;
        r->bw_rel[r->nbw++] = fabs(fit - g) / g;
    }
}

static bool pair_measured(const topogen_data *d, int i, int j)
{
    size_t n = (size_t)d->n;
    return !isnan(d->lat_ms[i * n + j]) || !isnan(d->gbps[i * n + j]) ||
           !isnan(d->gbps[j * n + i]);
}

static double quantile(double *v, int n, double q)
{
    if (n == 0)
        return NAN;
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, q);
}

/* One fold: fit without the pairs of fold k, then test on them. */
static int run_fold(const topogen_data *d, const int *fold_of, int folds, int k,
                    unsigned char *use, residuals *r, gt_err *e)
{
    size_t nn = (size_t)d->n * (size_t)d->n;
    for (size_t p = 0; p < nn; p++)
        use[p] = folds <= 1 || fold_of[p] != k;
    topogen_fit f;
    if (topogen_fit_compute(d, use, &f, e))
        return -1;
    for (int i = 0; i < d->n; i++)
        for (int j = i + 1; j < d->n; j++)
            if (fold_of[(size_t)i * d->n + j] >= 0 &&
                (folds <= 1 || fold_of[(size_t)i * d->n + j] == k))
                add_residuals(d, &f, i, j, r);
    return 0;
}

static void summarise(residuals *r, int folds, topogen_fit_error *out)
{
    out->folds = folds < 1 ? 1 : folds;
    out->nlat = r->nlat;
    out->nbw = r->nbw;
    out->lat_rmse_ms = r->nlat ? sqrt(r->lat_sq / r->nlat) : NAN;
    out->lat_mae_ms = r->nlat ? r->lat_sum / r->nlat : NAN;
    out->lat_medrel = quantile(r->lat_rel, r->nlat, 0.5);
    out->lat_p90rel = quantile(r->lat_rel, r->nlat, 0.9);
    out->bw_rmse_ln = r->nbw ? sqrt(r->bw_sq / r->nbw) : NAN;
    out->bw_medrel = quantile(r->bw_rel, r->nbw, 0.5);
    out->bw_p90rel = quantile(r->bw_rel, r->nbw, 0.9);
}

int topogen_fit_holdout(const topogen_data *d, int folds, topogen_fit_error *out, gt_err *e)
{
    size_t nn = (size_t)d->n * (size_t)d->n;
    int *fold_of = malloc(nn * sizeof *fold_of);
    unsigned char *use = malloc(nn);
    residuals r = {.lat_rel = malloc(nn * sizeof(double)), .bw_rel = malloc(nn * sizeof(double))};
    int rc = fold_of && use && r.lat_rel && r.bw_rel ? 0 : gt_fail(e, "out of memory");
    int p = 0;
    for (size_t q = 0; q < nn && !rc; q++)
        fold_of[q] = -1;
    for (int i = 0; i < d->n && !rc; i++)
        for (int j = i + 1; j < d->n; j++)
            if (pair_measured(d, i, j))
                fold_of[(size_t)i * d->n + j] = folds > 1 ? p++ % folds : 0;
    for (int k = 0; k < (folds > 1 ? folds : 1) && !rc; k++)
        rc = run_fold(d, fold_of, folds, k, use, &r, e);
    if (!rc)
        summarise(&r, folds, out);
    free(fold_of);
    free(use);
    free(r.lat_rel);
    free(r.bw_rel);
    return rc;
}

/* ======================================================================== */
/* options                                                                   */
/* ======================================================================== */

typedef enum { DIST_EVEN, DIST_RANDOM, DIST_ZIPF, DIST_UNIFORM } dist_kind;

typedef struct gen_mix {
    int n;
    int type[GEN_MAX_MIX];     /* catalog index */
    double w[GEN_MAX_MIX];
} gen_mix;

typedef struct gen_node {
    int site, size, type, order;
} gen_node;

/* Options resolved against the tables, then the outcome of each stage. */
typedef struct gen_plan {
    int *pool;                 /* candidate regions, in list order */
    int npool;
    bool listed;               /* --regions named regions only */
    int nsites;
    long ngpus;                /* 0 until drawn for uniform:LO:HI */
    dist_kind dist;
    double p1, p2;             /* zipf exponent; uniform LO, HI */
    gen_mix *mix;              /* 1, or one per site */
    int nmix;
    bool per_site_unit;        /* --mix-per site */
    int *site_region;
    long *site_gpus;
    gen_node *nodes;
    int nnodes;
} gen_plan;

static void plan_free(gen_plan *p)
{
    free(p->pool);
    free(p->mix);
    free(p->site_region);
    free(p->site_gpus);
    free(p->nodes);
    memset(p, 0, sizeof *p);
}

void topogen_defaults(topogen_opts *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->gpus_dist, sizeof o->gpus_dist, "even");
    snprintf(o->mix, sizeof o->mix, "%s", TOPOGEN_DEFAULT_MIX);
    snprintf(o->mix_per, sizeof o->mix_per, "node");
    snprintf(o->regions, sizeof o->regions, "any");
    o->node_size = 8;
    o->nic_gbps = 100;
    o->bw_scale = 1;
    o->bw_jitter = 0;
    o->pue = 1.2;
    o->tcp_connections = 16;
    o->tcp_window_mb = 3;
    o->seed = 1;
}

static const char *const ALIASES[][2] = {
    {"h100", "h100_sxm"},       {"h200", "h200_sxm"},        {"a100", "a100_sxm_80gb"},
    {"a100-40", "a100_sxm_40gb"}, {"v100", "v100_sxm2_16gb"}, {"v100-32", "v100_sxm2_32gb"},
    {"4090", "rtx_4090"},       {"3090", "rtx_3090"},        {"a6000", "rtx_a6000"},
};

const char *topogen_gpu_alias(const char *name)
{
    for (size_t i = 0; i < sizeof ALIASES / sizeof *ALIASES; i++)
        if (strcmp(ALIASES[i][0], name) == 0)
            return ALIASES[i][1];
    return name;
}

/* A whole string as a finite number (the one grammar, sim/grammar.h). */
static int parse_num(const char *s, double *out)
{
    return gram_number(s, out);
}

static int add_pool(gen_plan *p, int region)
{
    for (int i = 0; i < p->npool; i++)
        if (p->pool[i] == region)
            return 0;
    p->pool[p->npool++] = region;
    return 1;
}

/* One --regions item: any/all, a provider, a continent or a region id. */
static int pool_item(const char *item, const topogen_data *d, gen_plan *p, gt_err *e)
{
    int added = 0, exact = region_find(d, item);
    if (exact >= 0) {
        add_pool(p, exact);
        return 0;
    }
    p->listed = false;
    for (int i = 0; i < d->n; i++) {
        const topogen_region *g = &d->regions[i];
        if (!strcmp(item, "any") || !strcmp(item, "all") ||
            !strcmp(item, d->providers[g->prov]) || !strcmp(item, g->continent)) {
            add_pool(p, i);
            added = 1;
        }
    }
    if (!added)
        return gt_fail(e, "--regions: unknown item '%s' (use any, a provider such as aws, gcp "
                          "or azure, a continent such as europe, or a region id such as %s; "
                          "geotrain topo gen --list-regions shows them)", item, d->regions[0].id);
    return 0;
}

static int parse_regions(const char *spec, const topogen_data *d, gen_plan *p, gt_err *e)
{
    char buf[sizeof ((topogen_opts *)0)->regions], *save = NULL;
    snprintf(buf, sizeof buf, "%s", *spec ? spec : "any");
    p->pool = malloc((size_t)d->n * sizeof *p->pool);
    if (!p->pool)
        return gt_fail(e, "out of memory");
    p->listed = true;
    for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save))
        if (pool_item(it, d, p, e))
            return -1;
    if (p->npool == 0)
        return gt_fail(e, "--regions: '%s' names no region", spec);
    return 0;
}

static int parse_dist(const char *spec, gen_plan *p, gt_err *e)
{
    char a[32], b[32];
    if (!*spec || !strcmp(spec, "even") || !strcmp(spec, "fixed")) {
        p->dist = DIST_EVEN;
    } else if (!strcmp(spec, "random")) {
        p->dist = DIST_RANDOM;
    } else if (!strncmp(spec, "zipf:", 5)) {
        p->dist = DIST_ZIPF;
        if (parse_num(spec + 5, &p->p1) || p->p1 < 0 || p->p1 > 10)
            return gt_fail(e, "--gpus-dist: zipf exponent must be a number in [0, 10] (got "
                              "'%s')", spec + 5);
    } else if (sscanf(spec, "uniform:%31[^:]:%31s", a, b) == 2) {
        p->dist = DIST_UNIFORM;
        if (parse_num(a, &p->p1) || parse_num(b, &p->p2) || p->p1 < 1 || p->p2 < p->p1 ||
            p->p1 != floor(p->p1) || p->p2 != floor(p->p2) || p->p2 > TOPO_MAX_GPUS)
            return gt_fail(e, "--gpus-dist: uniform:LO:HI needs whole numbers 1 <= LO <= HI "
                              "<= %d (got '%s')", TOPO_MAX_GPUS, spec);
    } else {
        return gt_fail(e, "--gpus-dist: '%s' is not one of even, fixed, random, zipf:S, "
                          "uniform:LO:HI", spec);
    }
    return 0;
}

/* "name[:weight]" -> catalog index and weight (default 1). */
static int mix_item(char *item, const topogen_data *d, gen_mix *m, gt_err *e)
{
    char *colon = strchr(item, ':');
    double w = 1;
    if (colon) {
        *colon = '\0';
        if (parse_num(colon + 1, &w) || w <= 0)
            return gt_fail(e, "--mix: weight of '%s' must be a number > 0 (got '%s')", item,
                           colon + 1);
    }
    int t = gpu_catalog_find(&d->cat, topogen_gpu_alias(item));
    if (t < 0)
        return gt_fail(e, "--mix: unknown GPU type '%s' (a topologies/gpus.csv id, or h100, "
                          "a100, v100, t4, l4, 4090, ...)", item);
    for (int k = 0; k < m->n; k++)
        if (m->type[k] == t)
            return gt_fail(e, "--mix: GPU type '%s' given twice in one mix", item);
    if (m->n == GEN_MAX_MIX)
        return gt_fail(e, "--mix: more than %d types in one mix", GEN_MAX_MIX);
    m->type[m->n] = t;
    m->w[m->n++] = w;
    return 0;
}

static int parse_one_mix(char *spec, const topogen_data *d, gen_mix *m, gt_err *e)
{
    char *save = NULL;
    memset(m, 0, sizeof *m);
    for (char *it = strtok_r(spec, ",", &save); it; it = strtok_r(NULL, ",", &save))
        if (mix_item(it, d, m, e))
            return -1;
    if (m->n == 0)
        return gt_fail(e, "--mix: an empty mix (expected type:weight,...)");
    return 0;
}

/* One mix for all sites, or one per site separated by '/'. */
static int parse_mix(const char *spec, const topogen_data *d, gen_plan *p, gt_err *e)
{
    char buf[sizeof ((topogen_opts *)0)->mix];
    snprintf(buf, sizeof buf, "%s", *spec ? spec : TOPOGEN_DEFAULT_MIX);
    int parts = 1;
    for (const char *c = buf; *c; c++)
        parts += *c == '/';
    if (parts > 1 && parts != p->nsites)
        return gt_fail(e, "--mix: %d per-site mixes ('/'-separated) for %d sites", parts,
                       p->nsites);
    if (parts > 1 && p->per_site_unit)
        return gt_fail(e, "--mix-per site takes one mix (per-site mixes already fix each "
                          "site's types)");
    p->mix = calloc((size_t)parts, sizeof *p->mix);
    if (!p->mix)
        return gt_fail(e, "out of memory");
    p->nmix = parts;
    char *rest = buf;
    for (int k = 0; k < parts; k++) {
        char *slash = strchr(rest, '/');
        if (slash)
            *slash = '\0';
        if (parse_one_mix(rest, d, &p->mix[k], e))
            return -1;
        rest = slash ? slash + 1 : rest;
    }
    return 0;
}

static int check_sizes(const topogen_opts *o, gen_plan *p, gt_err *e)
{
    if (o->sites < 0)
        return gt_fail(e, "--sites must be >= 1 (got %d)", o->sites);
    p->nsites = o->sites ? o->sites : p->listed ? p->npool : (p->npool < 4 ? p->npool : 4);
    if (p->nsites > p->npool)
        return gt_fail(e, "--sites %d: only %d regions match --regions '%s'", p->nsites,
                       p->npool, *o->regions ? o->regions : "any");
    if (p->dist == DIST_UNIFORM) {
        if (o->gpus)
            return gt_fail(e, "--gpus %ld and --gpus-dist uniform:LO:HI both fix the GPU "
                              "count; give one", o->gpus);
        if (p->p2 * p->nsites > TOPO_MAX_GPUS)
            return gt_fail(e, "--gpus-dist %s: up to %.0f GPUs, above the limit of %d",
                           o->gpus_dist, p->p2 * p->nsites, TOPO_MAX_GPUS);
        return 0;
    }
    p->ngpus = o->gpus ? o->gpus : 8L * p->nsites;
    if (p->ngpus < p->nsites || p->ngpus > TOPO_MAX_GPUS)
        return gt_fail(e, "--gpus %ld: must be at least --sites (%d: every site needs a GPU) "
                          "and at most %d", p->ngpus, p->nsites, TOPO_MAX_GPUS);
    return 0;
}

static int check_numbers(const topogen_opts *o, gt_err *e)
{
    if (o->node_size < 1 || o->node_size > 1024)
        return gt_fail(e, "--node-size must be in [1, 1024] (got %d)", o->node_size);
    if (!(o->nic_gbps > 0 && o->nic_gbps <= 1e7))
        return gt_fail(e, "--nic-gbps must be in (0, 1e7] (got %g)", o->nic_gbps);
    if (!(o->bw_scale > 0 && o->bw_scale <= 1e6))
        return gt_fail(e, "--bw-scale must be in (0, 1e6] (got %g)", o->bw_scale);
    if (!(o->bw_jitter >= 0 && o->bw_jitter < 1))
        return gt_fail(e, "--bw-jitter must be in [0, 1) (got %g)", o->bw_jitter);
    if (!(o->pue >= 1 && o->pue <= 10))
        return gt_fail(e, "--pue must be in [1, 10] (got %g)", o->pue);
    if (o->tcp_connections < 1 || o->tcp_connections > 4096)
        return gt_fail(e, "--tcp-connections must be in [1, 4096] (got %d)",
                       o->tcp_connections);
    if (!(o->tcp_window_mb > 0 && o->tcp_window_mb <= 1e6))
        return gt_fail(e, "--tcp-window-mb must be in (0, 1e6] (got %g)", o->tcp_window_mb);
    if (o->seed > 4294967295UL)
        return gt_fail(e, "--seed must be in [0, 4294967295] (got %lu)", o->seed);
    return 0;
}

static int resolve(const topogen_opts *o, const topogen_data *d, gen_plan *p, gt_err *e)
{
    memset(p, 0, sizeof *p);
    if (*o->mix_per && strcmp(o->mix_per, "node") && strcmp(o->mix_per, "site"))
        return gt_fail(e, "--mix-per: '%s', expected node or site", o->mix_per);
    p->per_site_unit = strcmp(o->mix_per, "site") == 0;
    if (check_numbers(o, e) || parse_regions(o->regions, d, p, e) ||
        parse_dist(o->gpus_dist, p, e) || check_sizes(o, p, e) || parse_mix(o->mix, d, p, e))
        return -1;
    return 0;
}

int topogen_check(const topogen_opts *o, const topogen_data *d, gt_err *e)
{
    gen_plan p;
    int rc = resolve(o, d, &p, e);
    plan_free(&p);
    return rc;
}

/* ======================================================================== */
/* generation stages                                                         */
/* ======================================================================== */

enum { STAGE_REGIONS = 1, STAGE_COUNTS = 2, STAGE_TYPES = 3, STAGE_JITTER = 4 };

/* One mt19937 stream per stage: splitmix64 of (seed, stage), so that the
 * streams are unrelated and a stage's draws do not shift another's. */
static gsl_rng *stage_rng(unsigned long seed, int stage)
{
    uint64_t z = (uint64_t)seed * 16u + (uint64_t)stage + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (r)
        gsl_rng_set(r, (unsigned long)(z & 0xffffffffu));
    return r;
}

static void pick_regions(gen_plan *p, gsl_rng *r)
{
    if (p->listed && p->nsites == p->npool)
        memcpy(p->site_region, p->pool, (size_t)p->nsites * sizeof *p->pool);
    else /* keeps list order, so sites come out in regions.csv (or listed) order */
        gsl_ran_choose(r, p->site_region, (size_t)p->nsites, p->pool, (size_t)p->npool,
                       sizeof *p->pool);
}

/* Largest remainder: split `total` by weights; ties go to the lower index. */
static void apportion(long total, const double *w, int n, long *out)
{
    double sum = 0;
    long given = 0;
    for (int i = 0; i < n; i++)
        sum += w[i];
    for (int i = 0; i < n; i++) {
        out[i] = (long)floor(total * w[i] / sum);
        given += out[i];
    }
    while (given < total) {
        int best = 0;
        double bestr = -1;
        for (int i = 0; i < n; i++) {
            double rem = total * w[i] / sum - (double)out[i];
            if (rem > bestr) {
                bestr = rem;
                best = i;
            }
        }
        out[best]++;
        given++;
    }
}

static int distribute(gen_plan *p, gsl_rng *r, gt_err *e)
{
    int s = p->nsites;
    double *w = malloc((size_t)s * sizeof *w);
    unsigned int *cnt = malloc((size_t)s * sizeof *cnt);
    int *rank = malloc((size_t)s * sizeof *rank);
    if (!w || !cnt || !rank) {
        free(w), free(cnt), free(rank);
        return gt_fail(e, "out of memory");
    }
    for (int i = 0; i < s; i++) {
        w[i] = 1;
        rank[i] = i;
    }
    if (p->dist == DIST_UNIFORM) {
        p->ngpus = 0;
        for (int i = 0; i < s; i++)
            p->ngpus += p->site_gpus[i] =
                (long)p->p1 + (long)gsl_rng_uniform_int(r, (unsigned long)(p->p2 - p->p1) + 1);
    } else if (p->dist == DIST_RANDOM) {
        /* every site gets one GPU, the rest land uniformly at random */
        gsl_ran_multinomial(r, (size_t)s, (unsigned int)(p->ngpus - s), w, cnt);
        for (int i = 0; i < s; i++)
            p->site_gpus[i] = 1 + (long)cnt[i];
    } else {
        if (p->dist == DIST_ZIPF) { /* a random site is the largest, ... */
            gsl_ran_shuffle(r, rank, (size_t)s, sizeof *rank);
            for (int i = 0; i < s; i++)
                w[i] = pow(rank[i] + 1, -p->p1);
        }
        apportion(p->ngpus - s, w, s, p->site_gpus);
        for (int i = 0; i < s; i++)
            p->site_gpus[i]++;
    }
    free(w), free(cnt), free(rank);
    return 0;
}

static int make_nodes(gen_plan *p, int node_size, gt_err *e)
{
    long n = 0;
    for (int s = 0; s < p->nsites; s++)
        n += (p->site_gpus[s] + node_size - 1) / node_size;
    p->nodes = calloc((size_t)n, sizeof *p->nodes);
    if (!p->nodes)
        return gt_fail(e, "out of memory for %ld nodes", n);
    for (int s = 0; s < p->nsites; s++)
        for (long left = p->site_gpus[s]; left > 0; left -= node_size) {
            gen_node *nd = &p->nodes[p->nnodes];
            nd->site = s;
            nd->size = (int)(left < node_size ? left : node_size);
            nd->order = p->nnodes++;
        }
    return 0;
}

/* Systematic assignment: walk the units in (shuffled) order along the GPU
 * axis; a unit takes the type whose share of the axis holds its midpoint.
 * The realised shares are then within one unit of the mix, which independent
 * draws would not guarantee. */
static void stratify(const int *order, int nunits, const long *size, const gen_mix *m,
                     int *type)
{
    double total = 0, wsum = 0, at = 0;
    for (int u = 0; u < nunits; u++)
        total += (double)size[order[u]];
    for (int t = 0; t < m->n; t++)
        wsum += m->w[t];
    for (int u = 0; u < nunits; u++) {
        double mid = at + size[order[u]] / 2.0, edge = 0;
        int t = 0;
        for (; t < m->n - 1; t++) {
            edge += m->w[t] / wsum * total;
            if (mid < edge)
                break;
        }
        type[order[u]] = m->type[t];
        at += (double)size[order[u]];
    }
}

/* Type the units (all nodes, one site's nodes, or the sites) of one mix. */
static int type_units(int nunits, const long *size, const gen_mix *m, gsl_rng *r, int *type,
                      gt_err *e)
{
    int *order = malloc((size_t)(nunits ? nunits : 1) * sizeof *order);
    if (!order)
        return gt_fail(e, "out of memory");
    for (int u = 0; u < nunits; u++)
        order[u] = u;
    gsl_ran_shuffle(r, order, (size_t)nunits, sizeof *order);
    stratify(order, nunits, size, m, type);
    free(order);
    return 0;
}

static int node_cmp(const void *a, const void *b)
{
    const gen_node *x = a, *y = b;
    if (x->site != y->site)
        return x->site < y->site ? -1 : 1;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Nodes of one site (a contiguous run: nodes are made site by site). */
static int type_per_site_mixes(gen_plan *p, long *size, int *type, gsl_rng *r, gt_err *e)
{
    for (int s = 0, first = 0; s < p->nsites; s++) {
        int cnt = 0;
        while (first + cnt < p->nnodes && p->nodes[first + cnt].site == s)
            cnt++;
        for (int k = 0; k < cnt; k++)
            size[k] = p->nodes[first + k].size;
        if (type_units(cnt, size, &p->mix[s], r, type + first, e))
            return -1;
        first += cnt;
    }
    return 0;
}

static int assign_types(gen_plan *p, gsl_rng *r, gt_err *e)
{
    int n = p->nnodes > p->nsites ? p->nnodes : p->nsites, rc = 0;
    long *size = malloc((size_t)n * sizeof *size);
    int *type = malloc((size_t)n * sizeof *type);
    if (!size || !type)
        rc = gt_fail(e, "out of memory");
    else if (p->nmix > 1)
        rc = type_per_site_mixes(p, size, type, r, e);
    else if (p->per_site_unit)
        rc = type_units(p->nsites, p->site_gpus, &p->mix[0], r, type, e);
    else {
        for (int k = 0; k < p->nnodes; k++)
            size[k] = p->nodes[k].size;
        rc = type_units(p->nnodes, size, &p->mix[0], r, type, e);
    }
    for (int k = 0; k < p->nnodes && !rc; k++)
        p->nodes[k].type = type[p->per_site_unit ? p->nodes[k].site : k];
    if (!rc) /* one site's nodes grouped by type: files stay short (repeat) */
        qsort(p->nodes, (size_t)p->nnodes, sizeof *p->nodes, node_cmp);
    free(size);
    free(type);
    return rc;
}

static int run_stages(const topogen_opts *o, gen_plan *p, gt_err *e)
{
    p->site_region = malloc((size_t)p->nsites * sizeof *p->site_region);
    p->site_gpus = calloc((size_t)p->nsites, sizeof *p->site_gpus);
    gsl_rng *r1 = stage_rng(o->seed, STAGE_REGIONS), *r2 = stage_rng(o->seed, STAGE_COUNTS),
            *r3 = stage_rng(o->seed, STAGE_TYPES);
    int rc = p->site_region && p->site_gpus && r1 && r2 && r3 ? 0 : gt_fail(e, "out of memory");
    if (!rc) {
        pick_regions(p, r1);
        rc = distribute(p, r2, e) || make_nodes(p, o->node_size, e) || assign_types(p, r3, e);
    }
    gsl_rng_free(r1);
    gsl_rng_free(r2);
    gsl_rng_free(r3);
    return rc ? -1 : 0;
}

/* ======================================================================== */
/* building the topology                                                     */
/* ======================================================================== */

/* topo_write() prints 6 significant digits; rounding the same way here makes
 * the in-memory topology equal to the file read back. */
static double round6(double x)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", x);
    return strtod(buf, NULL);
}

static int add_source(topology *t, const char *text)
{
    char **ns = realloc(t->sources, (size_t)(t->nsources + 1) * sizeof *ns);
    if (!ns)
        return -1;
    t->sources = ns;
    if (!(t->sources[t->nsources] = strdup(text)))
        return -1;
    t->nsources++;
    return 0;
}

static int add_sources(const topogen_opts *o, const topogen_data *d, topology *t)
{
    char buf[1024];
    int rc = add_source(t, "sites: real regions from topologies/regions.csv (derived from "
                           "../shared/data/regions.csv by topologies/derive/"
                           "derive_generator_tables.py): approximate city coordinates; grid "
                           "carbon (ESTIMATE = same-country mean where the shared table is "
                           "blank); LAN latency = half the Erben et al. same-region ping");
    snprintf(buf, sizeof buf, "WAN where measured: topologies/wan_measured.csv (Skyplane "
             "2022-04 mean ping RTT / 2, else Azure P95 RTT / 2; Skyplane iperf3 64-connection "
             "throughput 2022-11, else 2022-01, per direction; an unmeasured direction takes "
             "the other one). Elsewhere the distance fits of topologies/GENERATOR.md: one-way "
             "ms = %.4g + %.5g * km; ln(Gbps) = c + k * km per sending provider", d->fit.lat_a,
             d->fit.lat_b);
    rc |= add_source(t, buf);
    snprintf(buf, sizeof buf, "pue %g = topo gen default (an assumption; --pue); no price_kwh "
             "(electricity prices were not collected)", o->pue);
    rc |= add_source(t, buf);
    snprintf(buf, sizeof buf, "nodes: up to %d GPUs each, NIC %g Gbps, LAN at NIC speed "
             "(topo gen options; not measured)", o->node_size, o->nic_gbps);
    rc |= add_source(t, buf);
    snprintf(buf, sizeof buf, "tcp: window %g MB x %d connections (defaults as in the shipped "
             "real topologies, topologies/README.md)", o->tcp_window_mb, o->tcp_connections);
    rc |= add_source(t, buf);
    rc |= add_source(t, "generated by geotrain topo gen; the description holds the command "
                        "that regenerates this file");
    return rc ? -1 : 0;
}

/* The description is the command that regenerates the file. */
static void describe(const topogen_opts *o, const gen_plan *p, topology *t)
{
    char gpus[32] = "";
    if (p->dist != DIST_UNIFORM)
        snprintf(gpus, sizeof gpus, " --gpus %ld", p->ngpus);
    snprintf(t->description, sizeof t->description,
             "geotrain topo gen --sites %d%s --gpus-dist %s --mix %s --mix-per %s "
             "--node-size %d --nic-gbps %g --regions %s --bw-scale %g --bw-jitter %g --pue %g "
             "--tcp-connections %d --tcp-window-mb %g --seed %lu", p->nsites, gpus,
             *o->gpus_dist ? o->gpus_dist : "even", *o->mix ? o->mix : TOPOGEN_DEFAULT_MIX,
             p->per_site_unit ? "site" : "node", o->node_size, o->nic_gbps,
             *o->regions ? o->regions : "any", o->bw_scale, o->bw_jitter, o->pue,
             o->tcp_connections, o->tcp_window_mb, o->seed);
    if (*o->name)
        snprintf(t->name, sizeof t->name, "%s", o->name);
    else
        snprintf(t->name, sizeof t->name, "gen-%ds-%ldg-seed%lu", p->nsites, p->ngpus,
                 o->seed);
}

static void fill_site(const topogen_opts *o, const topogen_data *d, int region, topo_site *s)
{
    const topogen_region *g = &d->regions[region];
    snprintf(s->id, sizeof s->id, "%s", g->id);
    for (char *c = s->id; *c; c++)
        if (*c == ':')
            *c = '-';
    snprintf(s->region, sizeof s->region, "%s", g->id);
    s->lat = g->lat;
    s->lon = g->lon;
    s->carbon_g_per_kwh = g->carbon_g_per_kwh;
    s->pue = round6(o->pue);
    s->lan_bw = round6(o->nic_gbps) * GBPS;
    s->lan_lat_s = round6(g->lan_latency_ms) / 1e3;
    snprintf(s->source, sizeof s->source, "topologies/regions.csv %s: carbon%s, LAN latency "
             "(Erben ping / 2); pue topo gen default", g->id,
             g->carbon_estimate ? " ESTIMATE" : "");
}

static int build_nodes(const topogen_opts *o, const topogen_data *d, const gen_plan *p,
                       topology *t)
{
    for (int s = 0; s < p->nsites; s++)
        fill_site(o, d, p->site_region[s], &t->sites[s]);
    for (int k = 0; k < p->nnodes; k++) {
        const gen_node *gn = &p->nodes[k];
        topo_site *s = &t->sites[gn->site];
        if (s->nnodes == 0) {
            s->first_node = t->nnodes;
            s->first_gpu = t->ngpus;
        }
        topo_node *nd = &t->nodes[t->nnodes];
        *nd = (topo_node){.site = gn->site, .type = gn->type, .ngpus = gn->size,
                          .first_gpu = t->ngpus, .index_in_site = s->nnodes,
                          .nic_bw = round6(o->nic_gbps) * GBPS};
        for (int g = 0; g < gn->size; g++)
            t->gpus[t->ngpus++] = (topo_gpu){.site = gn->site, .node = t->nnodes, .local = g,
                                             .type = gn->type};
        s->nnodes++;
        s->ngpus += gn->size;
        t->nnodes++;
    }
    return 0;
}

/* Bandwidth of one direction: measured, else the measured other direction,
 * else the fit. `how` says which, for the link's source. */
static double direction_gbps(const topogen_data *d, int src, int dst, double km, char *how,
                             size_t cap)
{
    size_t n = (size_t)d->n;
    if (!isnan(d->gbps[src * n + dst])) {
        snprintf(how, cap, "%s", d->bw_ds[src * n + dst]);
        return d->gbps[src * n + dst];
    }
    if (!isnan(d->gbps[dst * n + src])) {
        snprintf(how, cap, "reverse %s", d->bw_ds[dst * n + src]);
        return d->gbps[dst * n + src];
    }
    snprintf(how, cap, "fit");
    return topogen_fit_gbps(&d->fit, d->regions[src].prov, km);
}

static double shape_gbps(const topogen_opts *o, double g, gsl_rng *jit)
{
    if (o->bw_jitter > 0)
        g *= 1 + o->bw_jitter * (2 * gsl_rng_uniform(jit) - 1);
    return fmax(1e-6, round6(g * o->bw_scale));
}

static void make_link(const topogen_opts *o, const topogen_data *d, const gen_plan *p, int sa,
                      int sb, gsl_rng *jit, topology *t)
{
    int ra = p->site_region[sa], rb = p->site_region[sb];
    size_t n = (size_t)d->n, ns = (size_t)t->nsites;
    double km = topogen_region_km(d, ra, rb), ms = d->lat_ms[ra * n + rb];
    char hab[48], hba[48];
    bool lat_measured = !isnan(ms);
    if (!lat_measured)
        ms = topogen_fit_latency_ms(&d->fit, km);
    double gab = shape_gbps(o, direction_gbps(d, ra, rb, km, hab, sizeof hab), jit);
    double gba = shape_gbps(o, direction_gbps(d, rb, ra, km, hba, sizeof hba), jit);
    topo_link *ab = &t->wan[sa * ns + sb], *ba = &t->wan[sb * ns + sa];
    ab->present = ba->present = true;
    ab->bw = gab * GBPS;
    ba->bw = gba * GBPS;
    ab->lat_s = ba->lat_s = round6(ms) / 1e3;
    snprintf(ab->source, sizeof ab->source, "latency %s, a->b %s, b->a %s; %.0f km; see "
             "topologies/wan_measured.csv, GENERATOR.md", lat_measured ? d->lat_ds[ra * n + rb]
             : "fit", hab, hba, km);
    memcpy(ba->source, ab->source, sizeof ab->source);
}

static int alloc_topology(const topogen_data *d, const gen_plan *p, topology *t, gt_err *e)
{
    memset(t, 0, sizeof *t);
    size_t ns = (size_t)p->nsites;
    t->types = malloc((size_t)d->cat.n * sizeof *t->types);
    t->sites = calloc(ns, sizeof *t->sites);
    t->nodes = calloc((size_t)p->nnodes, sizeof *t->nodes);
    t->gpus = calloc((size_t)p->ngpus, sizeof *t->gpus);
    t->wan = calloc(ns * ns, sizeof *t->wan);
    if (!t->types || !t->sites || !t->nodes || !t->gpus || !t->wan)
        return gt_fail(e, "out of memory for %ld GPUs", p->ngpus);
    memcpy(t->types, d->cat.types, (size_t)d->cat.n * sizeof *t->types);
    t->ntypes = d->cat.n;
    t->nsites = p->nsites;
    return 0;
}

static int build(const topogen_opts *o, const topogen_data *d, const gen_plan *p, topology *t,
                 gt_err *e)
{
    if (alloc_topology(d, p, t, e))
        return -1;
    describe(o, p, t);
    t->tcp_connections = o->tcp_connections;
    t->tcp_window_bytes = round6(o->tcp_window_mb) * 1e6;
    build_nodes(o, d, p, t);
    gsl_rng *jit = stage_rng(o->seed, STAGE_JITTER);
    if (!jit)
        return gt_fail(e, "out of memory");
    for (int a = 0; a < p->nsites; a++)
        for (int b = a + 1; b < p->nsites; b++)
            make_link(o, d, p, a, b, jit, t);
    gsl_rng_free(jit);
    if (add_sources(o, d, t))
        return gt_fail(e, "out of memory");
    return 0;
}

int topo_generate(const topogen_opts *o, topology *out, gt_err *e)
{
    topogen_data own;
    const topogen_data *d = o->data;
    memset(out, 0, sizeof *out);
    if (!d) {
        if (topogen_data_load(&own, e))
            return -1;
        d = &own;
    }
    gen_plan p;
    int rc = resolve(o, d, &p, e);
    if (!rc)
        rc = run_stages(o, &p, e);
    if (!rc)
        rc = build(o, d, &p, out, e);
    if (rc)
        topo_free(out);
    plan_free(&p);
    if (d == &own)
        topogen_data_free(&own);
    return rc ? -1 : 0;
}
