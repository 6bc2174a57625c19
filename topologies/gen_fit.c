/* gen_fit.c — the generator's two distance fits (latency and log-bandwidth
 * against great-circle km, gen.h) and their k-fold cross-validation. */
#include "topologies/gen_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#define EARTH_RADIUS_KM 6371.0

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
