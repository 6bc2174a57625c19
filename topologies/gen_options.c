/* gen_options.c — the generator's options (gen.h): defaults, GPU aliases,
 * --regions / --gpus-dist / --mix parsed, checked and resolved against the
 * tables into a gen_plan (gen_internal.h). */
#include "topologies/gen_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/grammar.h"

/* ======================================================================== */
/* options                                                                   */
/* ======================================================================== */

void gen_plan_free(gen_plan *p)
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

/* A whole string as a finite number (the one grammar, sim/base/grammar.h). */
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
    int added = 0, exact = gen_region_find(d, item);
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

int gen_resolve(const topogen_opts *o, const topogen_data *d, gen_plan *p, gt_err *e)
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
    int rc = gen_resolve(o, d, &p, e);
    gen_plan_free(&p);
    return rc;
}
