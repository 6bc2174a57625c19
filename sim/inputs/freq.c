/* freq.c — the SM-frequency model: catalog reader and t(f), P(f) (freq.h). */
#include "sim/inputs/freq.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/inputs/catalog.h"
#include "sim/base/timecap.h"
#include "sim/base/csv.h"

enum { C_ID, C_FMIN, C_FMAX, C_STEP, C_ALPHA, C_PSTAT, C_PEXP, C_COMM, C_TERR, C_PERR,
       C_BASIS, NCOL };
static const char *const COLS[NCOL] = {"id",       "f_min_mhz", "f_max_mhz", "step_mhz",
                                       "alpha",    "p_static",  "p_exp",     "comm_w",
                                       "t_err_max", "p_err_max", "basis"};

static int read_freq_row(csv_reader *r, const int *col, const gpu_type *g, gpu_freq *f,
                         gt_err *e)
{
    long fmin, fmax, step;
    double comm;
    if (csv_long(r, col[C_FMIN], 1, 100000, &fmin, e) ||
        csv_long(r, col[C_FMAX], 1, 100000, &fmax, e) ||
        csv_long(r, col[C_STEP], 1, 100000, &step, e) ||
        csv_double(r, col[C_ALPHA], 0, 1, 0, 0, &f->alpha, e) ||
        csv_double(r, col[C_PSTAT], 0, 1, 0, 0, &f->p_static, e) ||
        csv_double(r, col[C_PEXP], 0.01, 50, 0, 0, &f->p_exp, e) ||
        csv_double(r, col[C_COMM], 0, 1e5, 0, 0, &comm, e) ||
        csv_double(r, col[C_TERR], 0, 10, 0, 0, &f->t_err_max, e) ||
        csv_double(r, col[C_PERR], 0, 10, 0, 0, &f->p_err_max, e))
        return -1;
    if (fmin > fmax || (fmax - fmin) % step)
        return csv_fail_at(r, col[C_FMIN], e, "%ld must be f_max_mhz %ld minus a multiple of "
                                             "step_mhz %ld", fmin, fmax, step);
    if (comm > g->tdp_w || comm < g->idle_w) /* the planners' energy bounds need idle <= comm */
        return csv_fail_at(r, col[C_COMM], e, "%g W must be within idle_w %g and tdp_w %g of %s",
                           comm, g->idle_w, g->tdp_w, g->id);
    f->f_min_mhz = (int)fmin;
    f->f_max_mhz = (int)fmax;
    f->step_mhz = (int)step;
    f->comm_w = comm;
    f->transfer = strncmp(csv_get(r, col[C_BASIS]), "transfer", 8) == 0;
    f->known = 1;
    return 0;
}

int freq_catalog_attach(gpu_catalog *c, const char *path, gt_err *e)
{
    FILE *probe = fopen(path, "r");
    if (!probe)
        return 0; /* no frequency catalog: every type runs at its one clock */
    fclose(probe);
    csv_reader r;
    if (csv_open(&r, path, e))
        return -1;
    int col[NCOL], got;
    for (int i = 0; i < NCOL; i++)
        if ((col[i] = csv_col(&r, COLS[i], 1, e)) < 0)
            goto fail;
    while ((got = csv_next(&r, e)) == 1) {
        int k = gpu_catalog_find(c, csv_get(&r, col[C_ID]));
        if (k < 0)
            continue; /* a reduced GPU catalog: the row's type is not used */
        gpu_freq f;
        memset(&f, 0, sizeof f);
        if (c->types[k].freq.known) {
            csv_fail_at(&r, col[C_ID], e, "duplicate GPU id '%s'", c->types[k].id);
            goto fail;
        }
        if (read_freq_row(&r, col, &c->types[k], &f, e))
            goto fail;
        c->types[k].freq = f;
    }
    if (got < 0)
        goto fail;
    csv_close(&r);
    return 0;
fail:
    csv_close(&r);
    return -1;
}

int freq_catalog_attach_beside(gpu_catalog *c, const char *gpus_path, gt_err *e)
{
    char path[4096];
    const char *slash = strrchr(gpus_path, '/');
    int dir = slash ? (int)(slash - gpus_path + 1) : 0;
    if (snprintf(path, sizeof path, "%.*sgpu_freq.csv", dir, gpus_path) >= (int)sizeof path)
        return gt_fail(e, "%s: path too long", gpus_path);
    return freq_catalog_attach(c, path, e);
}

int freq_is_max(const gpu_type *g, int f_mhz)
{
    return f_mhz == 0 || (g->freq.known && f_mhz == g->freq.f_max_mhz);
}

int freq_check(const gpu_type *g, int f_mhz, char *why, size_t n)
{
    const gpu_freq *f = &g->freq;
    if (!f->known) {
        snprintf(why, n, "GPU type %s has no frequency model (topologies/gpu_freq.csv): "
                         "leave freq_mhz out", g->id);
        return -1;
    }
    if (f_mhz < f->f_min_mhz || f_mhz > f->f_max_mhz || (f->f_max_mhz - f_mhz) % f->step_mhz) {
        snprintf(why, n, "%d MHz is not a clock of %s: expected %d..%d MHz in steps of %d",
                 f_mhz, g->id, f->f_min_mhz, f->f_max_mhz, f->step_mhz);
        return -1;
    }
    return 0;
}

double freq_time_ratio(const gpu_type *g, int f_mhz)
{
    if (freq_is_max(g, f_mhz))
        return 1.0;
    const gpu_freq *f = &g->freq;
    return f->alpha + (1.0 - f->alpha) * f->f_max_mhz / f_mhz;
}

double freq_power_ratio(const gpu_type *g, int f_mhz)
{
    if (freq_is_max(g, f_mhz))
        return 1.0;
    const gpu_freq *f = &g->freq;
    return f->p_static + (1.0 - f->p_static) * pow((double)f_mhz / f->f_max_mhz, f->p_exp);
}

int64_t freq_op_ns(const gpu_type *g, int64_t ns, int f_mhz)
{
    if (freq_is_max(g, f_mhz))
        return ns;
    return cost_ns(ns * 1e-9 * freq_time_ratio(g, f_mhz));
}

double freq_compute_w(const gpu_type *g, int f_mhz)
{
    if (freq_is_max(g, f_mhz))
        return g->tdp_w;
    return g->tdp_w * freq_power_ratio(g, f_mhz);
}

int freq_clock_at_limit(const gpu_type *g, double limit_w)
{
    if (!g->freq.known)
        return -1;
    for (int i = 0; i < freq_nclocks(g); i++) {
        int f = freq_clock(g, i);
        if (freq_compute_w(g, f) <= limit_w)
            return f;
    }
    return -1;
}

int freq_nclocks(const gpu_type *g)
{
    const gpu_freq *f = &g->freq;
    return f->known ? (f->f_max_mhz - f->f_min_mhz) / f->step_mhz + 1 : 1;
}

int freq_clock(const gpu_type *g, int i)
{
    const gpu_freq *f = &g->freq;
    return f->known ? f->f_max_mhz - i * f->step_mhz : 0;
}
