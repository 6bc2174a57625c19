/* coll_shape.c — a sync group's shape: its collective's inputs with the
 * GPUs' names left out (coll_shape.h). */
#include "sim/estimator/coll_shape.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"
#include "sim/base/word_hash.h"
#include "sim/models/collective.h"

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* The members' GPUs in the collective's order (collective_order). */
static void places(const topology *t, const workload *w, const sync_group *sg, int *g)
{
    coll_member mem[COLL_SHAPE_MAX_MEMBERS];
    for (int m = 0; m < sg->nmembers; m++) {
        int x = w->lanes[sg->members[m]].gpu;
        mem[m] = (coll_member){m, t->gpus[x].site, x};
    }
    collective_order(mem, sg->nmembers);
    for (int m = 0; m < sg->nmembers; m++)
        g[m] = mem[m].gpu;
}

/* A fresh stamp for the local ids (every key unseen). */
static int begin(coll_shape *s, long ndense)
{
    if (s->ndense != ndense) {
        if (gt_grow(&s->id, &s->cap_id[0], (size_t)ndense, sizeof *s->id) ||
            gt_grow(&s->stamp, &s->cap_id[1], (size_t)ndense, sizeof *s->stamp))
            return -1;
        memset(s->stamp, 0, sizeof *s->stamp * (size_t)ndense);
        s->ndense = ndense;
        s->now = 0;
    }
    if (++s->now <= 0) { /* wrapped */
        memset(s->stamp, 0, sizeof *s->stamp * (size_t)ndense);
        s->now = 1;
    }
    s->nkeys = 0;
    return 0;
}

/* The local id of key, given one when first seen; -1 when out of memory. */
static int local_id(coll_shape *s, long key)
{
    if (s->stamp[key] == s->now)
        return s->id[key];
    if (gt_grow(&s->keys, &s->cap_keys, (size_t)s->nkeys + 1, sizeof *s->keys))
        return -1;
    s->stamp[key] = s->now;
    s->id[key] = s->nkeys;
    s->keys[s->nkeys] = key;
    return s->nkeys++;
}

int coll_shape_of(coll_shape *s, const topology *t, path_memo *pm, long ndense,
                  const workload *w, const sync_group *sg)
{
    int n = sg->nmembers;
    s->nw = 0;
    if (!pm || n < 1 || n > COLL_SHAPE_MAX_MEMBERS || ndense <= 0)
        return 1;
    size_t most = 1 + (size_t)n + (size_t)n * (size_t)(n - 1) * (3 + 2 * PATH_MAX_RES);
    if (gt_grow(&s->w, &s->cap_w, most, sizeof *s->w) || begin(s, ndense))
        return -1;
    int g[COLL_SHAPE_MAX_MEMBERS];
    places(t, w, sg, g);
    uint64_t *v = s->w;
    int nw = 0, rank = 0;
    v[nw++] = (uint64_t)n;
    for (int i = 0; i < n; i++) {
        rank += i > 0 && t->gpus[g[i]].site != t->gpus[g[i - 1]].site;
        v[nw++] = (uint64_t)rank;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            const path_entry *pe = path_memo_get(pm, t, g[i], g[j]);
            if (!pe)
                return 1;
            v[nw++] = bits(pe->lat);
            v[nw++] = bits(pe->rate);
            v[nw++] = (uint64_t)pe->nres;
            for (int x = 0; x < pe->nres; x++) {
                if (pe->res[x].key < 0 || pe->res[x].key >= ndense)
                    return 1;
                int id = local_id(s, pe->res[x].key);
                if (id < 0)
                    return -1;
                v[nw++] = (uint64_t)id;
                v[nw++] = bits(pe->res[x].cap);
            }
        }
    s->hash = word_hash(v, (size_t)nw, 0); /* four lanes: word_hash.h */
    s->nw = nw;
    return 0;
}

int coll_shape_id(const coll_shape *s, long key)
{
    if (key < 0 || key >= s->ndense || s->stamp[key] != s->now)
        return -1;
    return s->id[key];
}

void coll_shape_free(coll_shape *s)
{
    free(s->w);
    free(s->keys);
    free(s->id);
    free(s->stamp);
    memset(s, 0, sizeof *s);
}
