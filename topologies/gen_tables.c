/* gen_tables.c — the generator's tables (gen.h): topologies/regions.csv and
 * topologies/wan_measured.csv read and checked. */
#include "topologies/gen_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/csv.h"
#include "sim/base/datadir.h"

/* ======================================================================== */
/* tables                                                                    */
/* ======================================================================== */

static int provider_index(topogen_data *d, const char *name, const csv_reader *r, int col,
                          gt_err *e)
{
    for (int i = 0; i < d->nprov; i++)
        if (strcmp(d->providers[i], name) == 0)
            return i;
    if (d->nprov == TOPOGEN_MAX_PROVIDERS || !*name || strlen(name) >= 16)
        return csv_fail_at(r, col, e, "'%s' (empty, too long, or more than %d providers)",
                           name, TOPOGEN_MAX_PROVIDERS);
    memcpy(d->providers[d->nprov], name, strlen(name) + 1);
    return d->nprov++;
}

int gen_region_find(const topogen_data *d, const char *id)
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
        return csv_fail_at(r, col, e, "'%s' is empty or longer than %zu characters", s,
                           cap - 1);
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
    if ((g->prov = provider_index(d, csv_get(r, c[RC_PROV]), r, c[RC_PROV], e)) < 0)
        return -1;
    if (gen_region_find(d, g->id) >= 0)
        return csv_fail_at(r, c[RC_ID], e, "'%s' appears twice", g->id);
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
        return csv_fail_at(r, vcol, e, "a value needs its dataset in '%s' and a dataset "
                                       "needs a value", r->head[dcol]);
    if (strlen(s) >= 32)
        return csv_fail_at(r, dcol, e, "longer than 31 characters");
    memcpy(ds, s, strlen(s) + 1);
    return 0;
}

static int wan_endpoint(const csv_reader *r, int col, const topogen_data *d, int *out,
                        gt_err *e)
{
    *out = gen_region_find(d, csv_get(r, col));
    if (*out < 0)
        return csv_fail_at(r, col, e, "unknown region '%s' (not in regions.csv)",
                           csv_get(r, col));
    return 0;
}

static int read_wan_row(const csv_reader *r, const int *c, topogen_data *d, gt_err *e)
{
    int a, b, n = d->n;
    if (wan_endpoint(r, c[WC_A], d, &a, e) || wan_endpoint(r, c[WC_B], d, &b, e))
        return -1;
    size_t ab = (size_t)a * n + b, ba = (size_t)b * n + a;
    if (a == b)
        return csv_fail_at(r, c[WC_B], e, "a region paired with itself");
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
