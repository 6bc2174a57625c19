/* memetic_cache.c — the memetic planner's caches of estimates and decoded
 * splits (memetic_cache.h): open-addressing tables keyed by the canonical
 * genome's two hashes, the split pools, and the store one memetic run's
 * searches share. */
#include "memetic_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp_view.h"

uint64_t ma_cache_key2(const genome *g)
{
    return g->hash2 | 1;
}

const cache_entry *ma_cache_find(const eval_cache *c, uint64_t k1, uint64_t k2)
{
    if (!c || !c->cap)
        return NULL;
    for (size_t i = k1 & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        if (!c->tab[i].k2)
            return NULL;
        if (c->tab[i].k1 == k1 && c->tab[i].k2 == k2)
            return &c->tab[i];
    }
}

/* Double the table (at most half full). */
static int cache_grow(eval_cache *c)
{
    size_t cap = c->cap ? 2 * c->cap : 4096;
    cache_entry *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < c->cap; i++)
        if (c->tab[i].k2) {
            size_t k = c->tab[i].k1 & (cap - 1);
            while (t[k].k2)
                k = (k + 1) & (cap - 1);
            t[k] = c->tab[i];
        }
    free(c->tab);
    c->tab = t;
    c->cap = cap;
    return 0;
}

/* The slot x goes to: its own if the key is there (*found), else the empty
 * one its probe ends on. */
static cache_entry *cache_slot(eval_cache *c, const cache_entry *x, bool *found)
{
    size_t i = x->k1 & (c->cap - 1);
    while (c->tab[i].k2) {
        if (c->tab[i].k1 == x->k1 && c->tab[i].k2 == x->k2) {
            *found = true;
            return &c->tab[i];
        }
        i = (i + 1) & (c->cap - 1);
    }
    *found = false;
    return &c->tab[i];
}

int ma_cache_put(eval_cache *c, const cache_entry *x)
{
    if (2 * (c->n + 1) > c->cap && cache_grow(c))
        return -1;
    bool found;
    cache_entry *slot = cache_slot(c, x, &found);
    if (!found) {
        *slot = *x;
        c->n++;
    }
    return 0;
}

/* --- splits ---------------------------------------------------------------------- */

/* Room for n more ints within the pool's limit; false when it is reached. */
static bool pool_room(split_pool *p, size_t n)
{
    if (p->n + n > p->limit || p->n + n > INT32_MAX)
        return false;
    if (p->n + n <= p->cap)
        return true;
    size_t cap = p->cap ? p->cap : 1024;
    while (cap < p->n + n)
        cap *= 2;
    int *v = realloc(p->v, sizeof *v * cap);
    if (!v)
        return false; /* not kept: only costs a decode */
    p->v = v;
    p->cap = cap;
    return true;
}

/* A split as kept: its cell and pipeline counts, first[cells], mb[D]. */
static int32_t pool_append(split_pool *p, const int *first, int cells, const int *mb, int D)
{
    if (!pool_room(p, 2 + (size_t)cells + (size_t)D))
        return -1;
    int32_t off = (int32_t)p->n;
    int *v = &p->v[p->n];
    v[0] = cells;
    v[1] = D;
    memcpy(v + 2, first, sizeof(int) * (size_t)cells);
    memcpy(v + 2 + cells, mb, sizeof(int) * (size_t)D);
    p->n += 2 + (size_t)cells + (size_t)D;
    return off;
}

int32_t ma_split_save(split_pool *p, const genome *g)
{
    return pool_append(p, g->first, g->S * g->D, g->mb, g->D);
}

bool ma_split_restore(const split_pool *p, const cache_entry *x, genome *g)
{
    if (!x || x->off < 0)
        return false;
    const int *v = &p->v[x->off];
    int cells = v[0], D = v[1];
    if (cells != g->S * g->D || D != g->D)
        return false; /* cannot happen for the same key; decode then */
    memcpy(g->first, v + 2, sizeof(int) * (size_t)cells);
    memcpy(g->mb, v + 2 + cells, sizeof(int) * (size_t)D);
    /* what enc_decode_rule leaves besides the split */
    g->status = 0;
    g->fit = INFINITY;
    g->est_ok = false;
    g->split = x->split;
    return true;
}

/* --- the store ---------------------------------------------------------------------- */

void ma_store_init(ma_store *st)
{
    memset(st, 0, sizeof *st);
    st->pool.limit = MA_STORE_INTS;
}

void ma_store_free(ma_store *st)
{
    for (int i = 0; i < st->nslots; i++)
        free(st->slot[i].c.tab);
    free(st->pool.v);
    memset(st, 0, sizeof *st);
}

eval_cache *ma_store_slot_of(ma_store *st, const enc_problem *pr)
{
    int tp = pr->cfg.tp ? pr->cfg.tp->tp : 1;
    for (int i = 0; i < st->nslots; i++)
        if (st->slot[i].tp == tp && st->slot[i].cuts == pr->cfg.cuts)
            return &st->slot[i].c;
    if (st->nslots == MA_STORE_SLOTS)
        return NULL;
    ma_store_slot *s = &st->slot[st->nslots++];
    memset(s, 0, sizeof *s);
    s->tp = tp;
    s->cuts = pr->cfg.cuts;
    return &s->c;
}

int ma_store_put(ma_store *st, eval_cache *slot, const cache_entry *x, const split_pool *from)
{
    if (!slot)
        return 0;
    if (2 * (slot->n + 1) > slot->cap && cache_grow(slot))
        return -1;
    bool found;
    cache_entry *e = cache_slot(slot, x, &found);
    if (found)
        return 0;
    *e = *x;
    e->off = -1;
    if (x->off >= 0) {
        const int *v = &from->v[x->off];
        e->off = pool_append(&st->pool, v + 2, v[0], v + 2 + v[0], v[1]);
    }
    slot->n++;
    return 0;
}

/* Whether the split saved for x is g's decoded split. */
static bool same_split(const split_pool *p, const cache_entry *x, const genome *g)
{
    if (x->off < 0)
        return false;
    const int *v = &p->v[x->off];
    int cells = g->S * g->D;
    return v[0] == cells && v[1] == g->D &&
           !memcmp(v + 2, g->first, sizeof(int) * (size_t)cells) &&
           !memcmp(v + 2 + cells, g->mb, sizeof(int) * (size_t)g->D);
}

const cache_entry *ma_store_same_plan(const ma_store *st, const enc_problem *pr, const genome *g)
{
    int tp = pr->cfg.tp ? pr->cfg.tp->tp : 1;
    uint64_t k2 = ma_cache_key2(g);
    for (int i = 0; i < st->nslots; i++) {
        const ma_store_slot *s = &st->slot[i];
        if (s->tp != tp || s->cuts == pr->cfg.cuts)
            continue;
        const cache_entry *x = ma_cache_find(&s->c, g->hash, k2);
        if (x && same_split(&st->pool, x, g))
            return x;
    }
    return NULL;
}
