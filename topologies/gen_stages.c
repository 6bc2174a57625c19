/* gen_stages.c — the generator's seeded stages: one random stream per stage,
 * then regions picked, GPUs distributed over sites, nodes made and typed. */
#include "topologies/gen_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

/* ======================================================================== */
/* generation stages                                                         */
/* ======================================================================== */

/* One mt19937 stream per stage: splitmix64 of (seed, stage), so that the
 * streams are unrelated and a stage's draws do not shift another's. */
gsl_rng *gen_stage_rng(unsigned long seed, int stage)
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

int gen_run_stages(const topogen_opts *o, gen_plan *p, gt_err *e)
{
    p->site_region = malloc((size_t)p->nsites * sizeof *p->site_region);
    p->site_gpus = calloc((size_t)p->nsites, sizeof *p->site_gpus);
    gsl_rng *r1 = gen_stage_rng(o->seed, STAGE_REGIONS), *r2 = gen_stage_rng(o->seed, STAGE_COUNTS),
            *r3 = gen_stage_rng(o->seed, STAGE_TYPES);
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
