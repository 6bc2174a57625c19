/* run_memo.c — a content-addressed store of computed results (run_memo.h). */
#include "sim/estimator/run_memo.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"
#include "sim/base/word_hash.h"

struct run_memo_entry {
    uint64_t hash;
    size_t key, nkey;      /* offset into the pool, in words */
    size_t val, len;       /* offset into the pool, in bytes */
};
typedef struct run_memo_entry run_memo_entry;

/* Offsets in the pool are kept 8-byte aligned, so keys read as words. */
static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* int64_t and uint64_t may alias each other (signed and unsigned
 * variants of one type), so the key is hashed as the words it is. */
static uint64_t hash_key(const int64_t *key, size_t nkey)
{
    return word_hash((const uint64_t *)(const void *)key, nkey, 0);
}

static const int64_t *key_at(const run_memo *m, const run_memo_entry *x)
{
    return (const int64_t *)(const void *)(m->pool + x->key);
}

const void *run_memo_get(const run_memo *m, const int64_t *key, size_t nkey, size_t *len)
{
    if (!m->nslot)
        return NULL;
    uint64_t h = hash_key(key, nkey);
    for (size_t i = h & (m->nslot - 1);; i = (i + 1) & (m->nslot - 1)) {
        int s = m->slot[i];
        if (!s)
            return NULL;
        const run_memo_entry *x = &m->v[s - 1];
        if (x->hash == h && x->nkey == nkey &&
            !memcmp(key_at(m, x), key, sizeof *key * nkey)) {
            *len = x->len;
            return m->pool + x->val;
        }
    }
}

void run_memo_clear(run_memo *m)
{
    m->n = 0;
    m->used = 0;
    if (m->slot)
        memset(m->slot, 0, sizeof *m->slot * m->nslot);
}

/* The first empty slot on hash h's probe sequence. */
static int *free_slot(const run_memo *m, uint64_t h)
{
    size_t i = h & (m->nslot - 1);
    while (m->slot[i])
        i = (i + 1) & (m->nslot - 1);
    return &m->slot[i];
}

/* The slot table at twice the entries' room, rebuilt from v. */
static int rehash(run_memo *m, size_t nslot)
{
    int *s = calloc(nslot, sizeof *s);
    if (!s)
        return -1;
    free(m->slot);
    m->slot = s;
    m->nslot = nslot;
    for (size_t e = 0; e < m->n; e++)
        *free_slot(m, m->v[e].hash) = (int)e + 1;
    return 0;
}

int run_memo_put(run_memo *m, const int64_t *key, size_t nkey, const void *val, size_t len)
{
    size_t need = sizeof *key * nkey + align8(len);
    if (m->n >= RUN_MEMO_MAX_ENTRIES || m->used + need > RUN_MEMO_MAX_BYTES)
        run_memo_clear(m);
    /* doubled when full, so the entries are copied a bounded number of times */
    if (gt_grow(&m->v, &m->cap, m->n < m->cap ? m->n + 1 : 2 * m->cap + 16, sizeof *m->v) ||
        gt_grow(&m->pool, &m->cap_pool,
                m->used + need <= m->cap_pool ? m->used + need : 2 * m->cap_pool + need, 1) ||
        (2 * (m->n + 1) > m->nslot && rehash(m, m->nslot ? 2 * m->nslot : 64))) {
        run_memo_clear(m);
        return -1;
    }
    run_memo_entry *x = &m->v[m->n];
    *x = (run_memo_entry){hash_key(key, nkey), m->used, nkey, m->used + sizeof *key * nkey,
                          len};
    memcpy(m->pool + x->key, key, sizeof *key * nkey);
    memcpy(m->pool + x->val, val, len);
    m->used += need;
    *free_slot(m, x->hash) = (int)++m->n;
    return 0;
}

void run_memo_free(run_memo *m)
{
    free(m->v);
    free(m->slot);
    free(m->pool);
    memset(m, 0, sizeof *m);
}
