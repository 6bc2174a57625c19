/* coll_cache.c — sync-group collectives kept across evaluations (coll_cache.h). */
#include "sim/estimator/coll_cache.h"
#include "sim/estimator/load_bound.h"

#include <stdlib.h>
#include <string.h>

/* Bounded: a planner's run repeats a working set of groups; past this many
 * distinct ones, or this many bytes (per workspace, so per planner
 * thread), the cache starts over rather than grow without end. */
#define COLL_CACHE_MAX 8192
#define COLL_CACHE_BYTES (16u << 20)

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* The members' GPUs in ascending order, into cc->key (grown as needed):
 * collective_emit orders the members by (site, GPU) before it lays out a
 * single flow, and every flow reads only its ends' GPUs, so the collective
 * is a function of the set of GPUs, not of the order the group lists its
 * lanes in (two stages that swap GPUs across pipelines give the same
 * groups in another lane order). */
static int sorted_gpus(coll_cache *cc, const workload *w, const sync_group *sg)
{
    if (sg->nmembers > cc->key_cap) {
        int cap = sg->nmembers > 2 * cc->key_cap ? sg->nmembers : 2 * cc->key_cap;
        int *k = realloc(cc->key, sizeof *k * (size_t)cap);
        if (!k)
            return -1;
        cc->key = k;
        cc->key_cap = cap;
    }
    int *k = cc->key;
    for (int m = 0; m < sg->nmembers; m++) {
        int g = w->lanes[sg->members[m]].gpu, i = m;
        for (; i > 0 && k[i - 1] > g; i--)
            k[i] = k[i - 1];
        k[i] = g;
    }
    return 0;
}

/* The hash of what both keys hold besides the GPUs or the shape. */
static uint64_t sizes_hash(const workload *w, const sync_group *sg, sync_kind sync)
{
    uint64_t h = mix(mix(mix(0, (uint64_t)sync), (uint64_t)w->shard), (uint64_t)sg->nmembers);
    return mix(mix(mix(h, bits(sg->bytes)), bits(sg->weights)), (uint64_t)sg->passes);
}

static uint64_t key_hash(const coll_cache *cc, const workload *w, const sync_group *sg,
                         sync_kind sync)
{
    uint64_t h = sizes_hash(w, sg, sync);
    for (int m = 0; m < sg->nmembers; m++)
        h = mix(h, (uint64_t)cc->key[m]);
    return h;
}

static int same_sizes(const coll_entry *x, const workload *w, const sync_group *sg,
                      sync_kind sync)
{
    return x->sync == (int)sync && x->shard == (int)w->shard && x->n == sg->nmembers &&
           bits(x->bytes) == bits(sg->bytes) && bits(x->weights) == bits(sg->weights) &&
           x->passes == sg->passes;
}

static int same_key(const coll_cache *cc, const coll_entry *x, uint64_t h, const workload *w,
                    const sync_group *sg, sync_kind sync)
{
    return x->hash == h && same_sizes(x, w, sg, sync) &&
           !memcmp(x->gpus, cc->key, sizeof *x->gpus * (size_t)x->n);
}


/* One shape priced (coll_shape.h): the entry made for it and, per load of
 * that entry, its resource's local id in the shape. */
typedef struct shape_rec {
    uint64_t hash;         /* first, as in coll_entry: table_reserve rehashes by it */
    int entry;
    uint64_t *w;
    int nw;
    int *load_id;
} shape_rec;

static void clear(coll_cache *cc)
{
    arena_empty(&cc->mem); /* every entry's and shape record's arrays */
    cc->n = cc->nsr = 0;
    cc->bytes = 0;
    cc->gen++;
    if (cc->slot)
        memset(cc->slot, 0, sizeof *cc->slot * (size_t)cc->nslot);
    if (cc->sslot)
        memset(cc->sslot, 0, sizeof *cc->sslot * (size_t)cc->nsslot);
}

int coll_cache_begin(coll_cache *cc, const topology *t)
{
    if (topo_digest_same(&cc->topo, t)) {
        if (cc->n >= COLL_CACHE_MAX || cc->bytes >= COLL_CACHE_BYTES)
            clear(cc); /* full: starts over (the same topology) */
        return 1;
    }
    clear(cc);
    return topo_digest_take(&cc->topo, t) ? -1 : 0;
}

void coll_cache_free(coll_cache *cc)
{
    clear(cc);
    free(cc->v);
    free(cc->slot);
    topo_digest_free(&cc->topo);
    arena_free(&cc->mem);
    free(cc->key);
    free(cc->sr);
    free(cc->sslot);
    coll_shape_free(&cc->sh);
    coll_price_work_free(&cc->pw);
    memset(cc, 0, sizeof *cc);
}

/* Puts record index i (0-based) of hash h into the open-addressing slots. */
static void slot_put(int *slot, int nslot, uint64_t h, int i)
{
    int s = (int)(h & (uint64_t)(nslot - 1));
    while (slot[s])
        s = (s + 1) & (nslot - 1);
    slot[s] = i + 1;
}

/* Room for one more of the n records of size bytes in *v (*cap of them),
 * each starting with its uint64_t hash; the slot table (index + 1, 0
 * empty, four per record so at most half full) made anew when *v grows. */
static int table_reserve(void *v, int n, int *cap, size_t size, int **slot, int *nslot)
{
    if (n < *cap)
        return 0;
    int c = *cap ? 2 * *cap : 64, ns = 4 * c;
    void *x = realloc(*(void **)v, size * (size_t)c);
    if (!x)
        return -1;
    *(void **)v = x;
    int *sl = calloc((size_t)ns, sizeof *sl);
    if (!sl)
        return -1;
    free(*slot);
    *slot = sl;
    *nslot = ns;
    *cap = c;
    for (int i = 0; i < n; i++) { /* rehash */
        uint64_t h;
        memcpy(&h, (char *)x + size * (size_t)i, sizeof h);
        slot_put(sl, ns, h, i);
    }
    return 0;
}

/* Room for one more entry. An evaluation reads its groups' loads in place
 * until its group bound (sync_loads_push), so entries are dropped only
 * between evaluations (coll_cache_begin), never here. */
static int reserve(coll_cache *cc)
{
    return table_reserve(&cc->v, cc->n, &cc->cap, sizeof *cc->v, &cc->slot, &cc->nslot);
}

/* A copy of n items of size bytes at p in the cache's arena (NULL when
 * out of memory). */
static void *keep(coll_cache *cc, const void *p, size_t n, size_t size)
{
    void *x = arena_alloc(&cc->mem, n * size);
    if (x && n)
        memcpy(x, p, n * size);
    return x;
}

/* Whether flow f goes from one site to another. */
static int crosses(const topology *t, const workload *w, const coll_flow *f)
{
    return t->gpus[w->lanes[f->src_lane].gpu].site != t->gpus[w->lanes[f->dst_lane].gpu].site;
}

/* The entry computed from the collective itself, its arrays in the
 * cache's arena. */
static int fill(coll_cache *cc, coll_entry *x, uint64_t h, const topology *t, const workload *w,
                const sync_group *sg, sync_kind sync, gt_err *e)
{
    coll_plan c;
    memset(x, 0, sizeof *x);
    if (collective_build(&c, t, w, sg, sync, e))
        return -1;
    int nwan = 0;
    for (int f = 0; f < c.nflows; f++)
        nwan += crosses(t, w, &c.flows[f]);
    *x = (coll_entry){h, (int)sync, (int)w->shard, sg->nmembers, sg->passes, sg->bytes, sg->weights,
                      keep(cc, cc->key, (size_t)sg->nmembers, sizeof *cc->key), 0, NULL, 0,
                      arena_alloc(&cc->mem, sizeof(double) * (size_t)nwan), 0};
    coll_load *loads = NULL; /* collective_price sizes it for every flow's resources */
    x->nloads = coll_price_work_keys(&cc->pw, lb_array_keys(t)) ? -1
                : collective_price_ws(&c, t, w, &cc->pw, &x->est_ns, &loads);
    if (x->nloads >= 0)
        x->loads = keep(cc, loads, (size_t)x->nloads, sizeof *loads);
    free(loads);
    if (!x->gpus || !x->wan || x->nloads < 0 || !x->loads) {
        collective_free(&c);
        return gt_fail(e, "out of memory");
    }
    for (int f = 0; f < c.nflows; f++)
        if (crosses(t, w, &c.flows[f]))
            x->wan[x->nwan++] = c.flows[f].bytes;
    collective_free(&c);
    return 0;
}

/* The record of the group's shape (cc->sh, hash sh) with the same sizes;
 * -1 when none. */
static int shape_find(const coll_cache *cc, uint64_t sh, const workload *w, const sync_group *sg,
                      sync_kind sync)
{
    if (!cc->nsslot)
        return -1;
    for (int s = (int)(sh & (uint64_t)(cc->nsslot - 1)); cc->sslot[s];
         s = (s + 1) & (cc->nsslot - 1)) {
        const shape_rec *r = &cc->sr[cc->sslot[s] - 1];
        if (r->hash == sh && r->nw == cc->sh.nw && same_sizes(&cc->v[r->entry], w, sg, sync) &&
            !memcmp(r->w, cc->sh.w, sizeof *r->w * (size_t)r->nw))
            return cc->sslot[s] - 1;
    }
    return -1;
}

/* x: the entry of the record's shape for the group being looked up (its
 * GPUs cc->key, its resources' keys cc->sh.keys by local id): the same
 * estimate, WAN bytes and loads, each load on this group's resource. */
static int renamed(coll_entry *x, uint64_t h, coll_cache *cc, const shape_rec *r)
{
    const coll_entry *src = &cc->v[r->entry];
    *x = (coll_entry){h, src->sync, src->shard, src->n, src->passes, src->bytes, src->weights,
                      keep(cc, cc->key, (size_t)src->n, sizeof *cc->key), src->est_ns,
                      arena_alloc(&cc->mem, sizeof *src->loads * (size_t)src->nloads),
                      src->nloads, keep(cc, src->wan, (size_t)src->nwan, sizeof *src->wan),
                      src->nwan};
    if (!x->gpus || !x->loads || !x->wan)
        return -1;
    for (int i = 0; i < x->nloads; i++) {
        x->loads[i] = src->loads[i];
        x->loads[i].key = cc->sh.keys[r->load_id[i]];
    }
    return 0;
}

/* Records entry x (about to be cc->v[cc->n]) as the one of shape cc->sh
 * (hash sh): 0; 1 when a load's resource is not on the shape (no record);
 * -1 when out of memory. */
static int shape_add(coll_cache *cc, uint64_t sh, const coll_entry *x)
{
    if (table_reserve(&cc->sr, cc->nsr, &cc->cap_sr, sizeof *cc->sr, &cc->sslot, &cc->nsslot))
        return -1;
    shape_rec r = {sh, cc->n, keep(cc, cc->sh.w, (size_t)cc->sh.nw, sizeof *cc->sh.w), cc->sh.nw,
                   arena_alloc(&cc->mem, sizeof *r.load_id * (size_t)x->nloads)};
    int rc = !r.w || !r.load_id ? -1 : 0;
    for (int i = 0; i < x->nloads && rc == 0; i++)
        rc = (r.load_id[i] = coll_shape_id(&cc->sh, x->loads[i].key)) < 0;
    if (rc) /* its arrays stay in the arena until the cache starts over */
        return rc;
    cc->bytes += sizeof r + sizeof *r.w * (size_t)r.nw + sizeof *r.load_id * (size_t)x->nloads;
    cc->sr[cc->nsr] = r;
    slot_put(cc->sslot, cc->nsslot, sh, cc->nsr++);
    return 0;
}

const coll_entry *coll_cache_get(coll_cache *cc, const topology *t, const workload *w,
                                 const sync_group *sg, sync_kind sync, gt_err *e)
{
    if (sorted_gpus(cc, w, sg)) {
        gt_fail(e, "out of memory");
        return NULL;
    }
    uint64_t h = key_hash(cc, w, sg, sync);
    if (cc->nslot) {
        for (int s = (int)(h & (uint64_t)(cc->nslot - 1)); cc->slot[s];
             s = (s + 1) & (cc->nslot - 1))
            if (same_key(cc, &cc->v[cc->slot[s] - 1], h, w, sg, sync))
                return &cc->v[cc->slot[s] - 1];
    }
    if (reserve(cc)) {
        gt_fail(e, "out of memory");
        return NULL;
    }
    coll_entry *x = &cc->v[cc->n];
    int shaped = coll_shape_of(&cc->sh, t, cc->pw.pm, lb_array_keys(t), w, sg);
    uint64_t sh = 0;
    int found = -1;
    if (shaped == 0) {
        sh = mix(sizes_hash(w, sg, sync), cc->sh.hash);
        found = shape_find(cc, sh, w, sg, sync);
    }
    if (shaped < 0 || (found >= 0 && renamed(x, h, cc, &cc->sr[found]))) {
        gt_fail(e, "out of memory");
        return NULL;
    }
    if (found < 0 && fill(cc, x, h, t, w, sg, sync, e))
        return NULL;
    if (shaped == 0 && found < 0 && shape_add(cc, sh, x) < 0) {
        gt_fail(e, "out of memory");
        return NULL;
    }
    cc->renamed += found >= 0;
    cc->bytes += sizeof *x + sizeof(int) * (size_t)x->n + sizeof *x->loads * (size_t)x->nloads +
                 sizeof *x->wan * (size_t)x->nwan;
    slot_put(cc->slot, cc->nslot, h, cc->n++);
    return &cc->v[cc->n - 1];
}
