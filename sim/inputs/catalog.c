/* catalog.c — the GPU catalog reader (see catalog.h). */
#include "sim/inputs/catalog.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/csv.h"
#include "sim/base/datadir.h"

#define GIB 1073741824.0

static int read_row(csv_reader *r, const int *col, gpu_type *g, gt_err *e)
{
    const char *id = csv_get(r, col[0]);
    if (!*id || strlen(id) >= sizeof g->id)
        return csv_fail_at(r, col[0], e, "empty or too long");
    snprintf(g->id, sizeof g->id, "%s", id);
    snprintf(g->name, sizeof g->name, "%s", csv_get(r, col[1]));
    double mem, bw, tf, tdp, idle, eff, link;
    if (csv_double(r, col[2], 0.1, 1e4, 0, 0, &mem, e) ||
        csv_double(r, col[3], 1, 1e6, 0, 0, &bw, e) ||
        csv_double(r, col[4], 0.1, 1e5, 0, 0, &tf, e) ||
        csv_double(r, col[5], 1, 1e5, 0, 0, &tdp, e) ||
        csv_double(r, col[6], 0, 1e5, 0, 0, &idle, e) ||
        csv_double(r, col[7], 0.01, 1, 0, 0, &eff, e) ||
        csv_double(r, col[8], 0.1, 1e5, 0, 0, &link, e))
        return -1;
    if (idle >= tdp)
        return csv_fail_at(r, col[6], e, "%g must be below tdp_w %g", idle, tdp);
    g->mem_bytes = mem * GIB;
    g->mem_bw = bw * 1e9;
    g->peak_flops = tf * 1e12;
    g->tdp_w = tdp;
    g->idle_w = idle;
    g->efficiency = eff;
    g->link_bw = link * 1e9;
    return 0;
}

/* Optional kernel-model columns (absent or empty: the type has no kernel
 * data and sim/models/kernels.c uses the constant-efficiency fallback). */
static const char *kern_names[] = {"arch",     "sms",     "tflops_fp8", "tflops_tf32",
                                   "tflops_fp32", "gemm_eff", "mem_eff",  "kernel_us",
                                   "link_lat_us", "link_eff", "k_sat"};
#define NKERN ((int)(sizeof kern_names / sizeof *kern_names))

/* Optional measured-efficiency columns (fused attention, fp8 GEMMs), each
 * absent or empty = 0 (no measurement). */
static const char *attn_names[] = {"attn_fwd_eff", "attn_bwd_eff", "fa2_fwd_eff",
                                   "fa2_bwd_eff", "gemm_eff_fp8"};
#define NATTN ((int)(sizeof attn_names / sizeof *attn_names))

static int read_attn_cols(csv_reader *r, const int *ac, gpu_type *g, gt_err *e)
{
    double *f[] = {&g->attn_fwd_eff, &g->attn_bwd_eff, &g->fa2_fwd_eff, &g->fa2_bwd_eff,
                   &g->gemm_eff_fp8};
    for (int i = 0; i < NATTN; i++)
        if (ac[i] >= 0 && *csv_get(r, ac[i]) && csv_double(r, ac[i], 0.01, 1, 0, 0, f[i], e))
            return -1;
    return 0;
}

static int read_kernel_cols(csv_reader *r, const int *kc, gpu_type *g, gt_err *e)
{
    if (kc[0] < 0 || !*csv_get(r, kc[0]))
        return 0;
    const char *arch = csv_get(r, kc[0]);
    if (strlen(arch) >= sizeof g->arch)
        return csv_fail_at(r, kc[0], e, "'%s' too long (at most %zu characters)", arch,
                           sizeof g->arch - 1);
    snprintf(g->arch, sizeof g->arch, "%s", arch);
    double v[NKERN];
    static const double lo[] = {0, 1, 0, 0, 0.01, 0.05, 0.05, 0, 0, 0.05, 0};
    static const double hi[] = {0, 2000, 1e5, 1e5, 1e5, 1, 1, 1000, 1000, 1, 1e5};
    for (int i = 1; i < NKERN; i++) {
        if (kc[i] < 0)
            return gt_fail(e, "%s: column '%s' missing (needed with 'arch')", r->path,
                           kern_names[i]);
        if (csv_double(r, kc[i], lo[i], hi[i], 0, 0, &v[i], e))
            return -1;
    }
    g->sms = (int)v[1];
    g->peak_fp8 = v[2] * 1e12;
    g->peak_tf32 = v[3] * 1e12;
    g->peak_fp32 = v[4] * 1e12;
    g->gemm_eff = v[5];
    g->mem_eff = v[6];
    g->kernel_s = v[7] * 1e-6;
    g->link_lat_s = v[8] * 1e-6;
    g->link_eff = v[9];
    g->k_sat = v[10];
    return read_attn_cols(r, kc + NKERN, g, e);
}

int gpu_catalog_load(gpu_catalog *c, const char *path, gt_err *e)
{
    static const char *names[] = {"id",     "name",   "memory_gib", "mem_bw_gbs", "tflops",
                                  "tdp_w",  "idle_w", "efficiency", "link_gbs"};
    memset(c, 0, sizeof *c);
    csv_reader r;
    if (csv_open(&r, path, e))
        return -1;
    int col[9], kc[NKERN + NATTN];
    for (int i = 0; i < 9; i++)
        if ((col[i] = csv_col(&r, names[i], 1, e)) < 0)
            goto fail;
    for (int i = 0; i < NKERN; i++)
        kc[i] = csv_col(&r, kern_names[i], 0, e);
    for (int i = 0; i < NATTN; i++)
        kc[NKERN + i] = csv_col(&r, attn_names[i], 0, e);
    int cap = 0, got;
    while ((got = csv_next(&r, e)) == 1) {
        if (c->n == cap) {
            cap = cap ? cap * 2 : 32;
            gpu_type *nt = realloc(c->types, (size_t)cap * sizeof *nt);
            if (!nt) {
                gt_fail(e, "%s: out of memory", path);
                goto fail;
            }
            c->types = nt;
        }
        gpu_type *g = &c->types[c->n];
        memset(g, 0, sizeof *g);
        if (read_row(&r, col, g, e) || read_kernel_cols(&r, kc, g, e))
            goto fail;
        if (gpu_catalog_find(c, g->id) >= 0) {
            csv_fail_at(&r, col[0], e, "duplicate GPU id '%s'", g->id);
            goto fail;
        }
        c->n++;
    }
    if (got < 0)
        goto fail;
    if (c->n == 0) {
        gt_fail(e, "%s: no GPU rows", path);
        goto fail;
    }
    csv_close(&r);
    if (freq_catalog_attach_beside(c, path, e)) {
        gpu_catalog_free(c);
        return -1;
    }
    return 0;
fail:
    csv_close(&r);
    gpu_catalog_free(c);
    return -1;
}

int gpu_catalog_load_default(gpu_catalog *c, gt_err *e)
{
    char path[4096];
    if (datadir_find("gpus.csv", path, sizeof path))
        return gt_fail(e, "GPU catalog gpus.csv not found (set GEOTRAIN_DATA to the "
                          "folder that holds it)");
    return gpu_catalog_load(c, path, e);
}

void gpu_catalog_free(gpu_catalog *c)
{
    free(c->types);
    memset(c, 0, sizeof *c);
}

int gpu_catalog_find(const gpu_catalog *c, const char *id)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->types[i].id, id) == 0)
            return i;
    return -1;
}

double gpu_comm_w(const gpu_type *g)
{
    return g->freq.known ? g->freq.comm_w : g->idle_w;
}
