/* eventq.c — radix heap of (time, tag) keys (see eventq.h). Keys are
 * compared as 128-bit numbers: time (signed) then tag. A key's bucket is
 * found from the highest set bit of its XOR with last; the XOR of two times
 * is the same whether they are read signed or sign-flipped unsigned, so
 * signed times need no conversion. An occupancy bitmap finds the lowest
 * non-empty bucket in one count-trailing-zeros. Entries of addressable
 * events record their (bucket, index) in pos[] whenever they move. */
#include "sim/engine/eventq.h"

#include <stdlib.h>
#include <string.h>

#define HANDLE_FLAG (UINT64_C(1) << EVENTQ_SLOT_BITS)
#define SLOT_MASK (HANDLE_FLAG - 1)
#define SEQ_SHIFT (EVENTQ_SLOT_BITS + 1)
#define MAX_BUCKET (INT64_C(1) << 30)

static inline int before(const eventq_entry *a, const eventq_entry *b)
{
    return a->time < b->time || (a->time == b->time && a->tag < b->tag);
}

static inline int same_key(const eventq_entry *a, const eventq_entry *b)
{
    return a->time == b->time && a->tag == b->tag;
}

/* The bucket of key k around lo (k >= lo). */
static inline int bucket_around(const eventq_entry *k, const eventq_entry *lo)
{
    uint64_t dt = (uint64_t)k->time ^ (uint64_t)lo->time;
    if (dt)
        return 128 - __builtin_clzll(dt);
    uint64_t dg = k->tag ^ lo->tag;
    return dg ? 64 - __builtin_clzll(dg) : 0;
}

static inline void mark(eventq *q, int b)
{
    q->occupied[b >> 6] |= UINT64_C(1) << (b & 63);
}

static inline void unmark(eventq *q, int b)
{
    q->occupied[b >> 6] &= ~(UINT64_C(1) << (b & 63));
}

/* Lowest non-empty bucket, -1 when all are empty. */
static int lowest(const eventq *q)
{
    for (int w = 0; w < 3; w++)
        if (q->occupied[w])
            return w * 64 + __builtin_ctzll(q->occupied[w]);
    return -1;
}

/* Room for `need` entries in bucket bk. */
static int ensure(eventq_bucket *bk, int64_t need)
{
    if (need <= bk->cap)
        return 0;
    int64_t nc = bk->cap ? bk->cap : 16;
    while (nc < need)
        nc *= 2;
    if (nc > MAX_BUCKET)
        return -1;
    eventq_entry *ne = realloc(bk->e, sizeof *ne * (size_t)nc);
    if (!ne)
        return -1;
    bk->e = ne;
    bk->cap = (int32_t)nc;
    return 0;
}

static inline int is_stale(const eventq *q, int b)
{
    return (q->min_stale[b >> 6] >> (b & 63)) & 1;
}

/* Append x to bucket b (room already made), keeping the bucket's least. */
static inline void append(eventq *q, int b, const eventq_entry *x)
{
    eventq_bucket *bk = &q->b[b];
    if (x->tag & HANDLE_FLAG)
        q->pos[x->tag & SLOT_MASK] = (int64_t)b << 32 | bk->n;
    if (bk->n == 0) {
        mark(q, b);
        q->min_stale[b >> 6] &= ~(UINT64_C(1) << (b & 63));
        q->bmin[b].time = x->time, q->bmin[b].tag = x->tag;
    } else if (before(x, &q->bmin[b])) {
        q->bmin[b].time = x->time, q->bmin[b].tag = x->tag;
    }
    bk->e[bk->n++] = *x;
}

static const eventq_entry KEY_MIN = {.time = INT64_MIN, .tag = 0};

int eventq_init(eventq *q)
{
    memset(q, 0, sizeof *q);
    q->last = KEY_MIN;
    /* bucket 0 holds at most one entry (keys are unique): its room is made
     * here, so taking a bucket apart never needs to grow it */
    return ensure(&q->b[0], 1);
}

void eventq_free(eventq *q)
{
    for (int b = 0; b < EVENTQ_NBUCKETS; b++)
        free(q->b[b].e);
    free(q->pos);
    memset(q, 0, sizeof *q);
}

void eventq_clear(eventq *q)
{
    for (int b = 0; b < EVENTQ_NBUCKETS; b++) {
        for (int32_t i = 0; i < q->b[b].n; i++)
            if (q->b[b].e[i].tag & HANDLE_FLAG)
                q->pos[q->b[b].e[i].tag & SLOT_MASK] = -1;
        q->b[b].n = 0;
    }
    memset(q->occupied, 0, sizeof q->occupied);
    q->last = KEY_MIN;
    q->n = 0;
}

/* Take the entry at (b, i) out of its bucket (the bucket's last entry
 * fills the gap). */
static void take_out(eventq *q, int b, int32_t i)
{
    eventq_bucket *bk = &q->b[b];
    eventq_entry *x = &bk->e[i];
    if (same_key(x, &q->bmin[b]))
        q->min_stale[b >> 6] |= UINT64_C(1) << (b & 63);
    if (--bk->n == 0)
        unmark(q, b);
    if (i < bk->n) {
        *x = bk->e[bk->n];
        if (x->tag & HANDLE_FLAG)
            q->pos[x->tag & SLOT_MASK] = (int64_t)b << 32 | i;
    }
    q->n--;
}

/* A key below last: re-bucket every pending entry around k, the new last.
 * Nothing changes unless all the room is made. */
static int rebase(eventq *q, const eventq_entry *k)
{
    int64_t count[EVENTQ_NBUCKETS] = {0};
    for (int b = 0; b < EVENTQ_NBUCKETS; b++)
        for (int32_t i = 0; i < q->b[b].n; i++)
            count[bucket_around(&q->b[b].e[i], k)]++;
    eventq_entry *all = malloc(sizeof *all * (size_t)(q->n + 1));
    if (!all)
        return -1;
    for (int b = 0; b < EVENTQ_NBUCKETS; b++)
        if (ensure(&q->b[b], count[b] + (b == 0))) {
            free(all);
            return -1;
        }
    int64_t m = 0;
    for (int b = 0; b < EVENTQ_NBUCKETS; b++) {
        if (q->b[b].n > 0) /* an empty bucket may have no array */
            memcpy(all + m, q->b[b].e, sizeof *all * (size_t)q->b[b].n);
        m += q->b[b].n;
        q->b[b].n = 0;
    }
    memset(q->occupied, 0, sizeof q->occupied);
    q->last = (eventq_entry){.time = k->time, .tag = k->tag};
    for (int64_t i = 0; i < m; i++)
        append(q, bucket_around(&all[i], k), &all[i]);
    free(all);
    return 0;
}

/* Schedule entry x; if handle >= 0 has a pending entry, it is replaced. */
static int put(eventq *q, const eventq_entry *x, int32_t handle)
{
    if (before(x, &q->last) && rebase(q, x))
        return -1;
    int b = bucket_around(x, &q->last);
    if (ensure(&q->b[b], (int64_t)q->b[b].n + 1))
        return -1;
    if (handle >= 0 && q->pos[handle] >= 0)
        take_out(q, (int)(q->pos[handle] >> 32), (int32_t)(q->pos[handle] & 0xffffffff));
    append(q, b, x);
    q->n++;
    return 0;
}

int eventq_push(eventq *q, int64_t time, int32_t kind, int32_t id, uint32_t version)
{
    if (q->next_seq >= EVENTQ_MAX_SEQ)
        return -1;
    eventq_entry x = {time, q->next_seq << SEQ_SHIFT, kind, id, version, 0};
    if (put(q, &x, -1))
        return -1;
    q->next_seq++;
    return 0;
}

/* Room for handles [0, nh), nh at most EVENTQ_MAX_SLOTS. */
static int handles_to(eventq *q, int64_t nh)
{
    if (nh <= q->nhandles)
        return 0;
    int64_t *np = realloc(q->pos, sizeof *np * (size_t)nh);
    if (!np)
        return -1;
    q->pos = np;
    for (int64_t h = q->nhandles; h < nh; h++)
        np[h] = -1;
    q->nhandles = (int32_t)nh;
    return 0;
}

static int reserve_handle(eventq *q, int32_t handle)
{
    if (handle < q->nhandles)
        return 0;
    int64_t nh = q->nhandles > 0 ? q->nhandles : 64;
    while (nh <= handle)
        nh *= 2;
    if (nh > EVENTQ_MAX_SLOTS)
        nh = EVENTQ_MAX_SLOTS;
    if (handle >= nh)
        return -1;
    return handles_to(q, nh);
}

int eventq_reserve_handles(eventq *q, int64_t n)
{
    return n > EVENTQ_MAX_SLOTS ? -1 : handles_to(q, n);
}

/* Schedule handle's one event at (time, seq). */
static int set_key(eventq *q, int32_t handle, int64_t time, int32_t kind, int32_t id,
                   uint32_t version, uint64_t seq)
{
    if (handle < 0 || reserve_handle(q, handle))
        return -1;
    eventq_entry x = {time, seq << SEQ_SHIFT | HANDLE_FLAG | (uint64_t)handle, kind, id,
                      version, 0};
    return put(q, &x, handle);
}

int eventq_set(eventq *q, int32_t handle, int64_t time, int32_t kind, int32_t id,
               uint32_t version)
{
    if (q->next_seq >= EVENTQ_MAX_SEQ)
        return -1;
    if (set_key(q, handle, time, kind, id, version, q->next_seq))
        return -1;
    q->next_seq++;
    return 0;
}

int64_t eventq_batch(eventq *q)
{
    if (q->next_seq >= EVENTQ_MAX_SEQ)
        return -1;
    return (int64_t)q->next_seq++;
}

int eventq_set_batch(eventq *q, int64_t batch, int32_t handle, int64_t time, int32_t kind,
                     int32_t id, uint32_t version)
{
    return batch < 0 ? -1 : set_key(q, handle, time, kind, id, version, (uint64_t)batch);
}

/* The least key of the lowest non-empty bucket b: the least pending key. */
static const eventq_entry *least(eventq *q, int b)
{
    if (is_stale(q, b)) { /* its least was replaced: one scan */
        const eventq_bucket *bk = &q->b[b];
        const eventq_entry *m = &bk->e[0];
        for (int32_t i = 1; i < bk->n; i++)
            m = before(&bk->e[i], m) ? &bk->e[i] : m;
        q->bmin[b].time = m->time, q->bmin[b].tag = m->tag;
        q->min_stale[b >> 6] &= ~(UINT64_C(1) << (b & 63));
    }
    return &q->bmin[b];
}

/* Empty the lowest bucket b >= 1 into lower ones around its minimum, the
 * new last, which is taken out into *out (it would land in bucket 0 only to
 * leave it again: one move less per pop). Every entry of bucket b differs
 * from its minimum only below the bit that names bucket b, so each goes to
 * a lower bucket, and those were all empty. If one cannot grow, the moved
 * entries (exactly the lower buckets' contents, and the minimum) go back:
 * nothing changes. */
static int split(eventq *q, int b, eventq_entry *out)
{
    eventq_entry lo = *least(q, b), old = q->last;
    eventq_bucket *bk = &q->b[b];
    q->last = lo;
    int got = 0;
    while (bk->n > 0) {
        const eventq_entry *x = &bk->e[bk->n - 1];
        int j = bucket_around(x, &lo);
        if (j == 0) { /* the minimum itself (keys are unique) */
            *out = *x;
            got = 1;
        } else if (ensure(&q->b[j], (int64_t)q->b[j].n + 1)) {
            break;
        } else {
            append(q, j, x);
        }
        bk->n--;
    }
    if (bk->n == 0) {
        unmark(q, b);
        if (bk->cap > 4096) { /* a large array goes back for the lower buckets to grow into */
            free(bk->e);
            bk->e = NULL;
            bk->cap = 0;
        }
        return 0;
    }
    for (int j = 1; j < b; j++) { /* roll back */
        for (int32_t i = 0; i < q->b[j].n; i++)
            append(q, b, &q->b[j].e[i]);
        q->b[j].n = 0;
        unmark(q, j);
    }
    if (got)
        append(q, b, out);
    q->last = old;
    return -1;
}

int64_t eventq_peek_time(eventq *q)
{
    if (q->n == 0)
        return INT64_MAX;
    return q->b[0].n ? q->b[0].e[0].time : least(q, lowest(q))->time;
}

int eventq_pop(eventq *q, event *out)
{
    if (q->n == 0)
        return 0;
    eventq_entry least_out;
    const eventq_entry *x = &least_out;
    if (q->b[0].n == 0) {
        if (split(q, lowest(q), &least_out))
            return -1;
    } else {
        x = &q->b[0].e[0];
        q->b[0].n = 0;
        unmark(q, 0);
    }
    q->n--;
    q->last = (eventq_entry){.time = x->time, .tag = x->tag};
    if (x->tag & HANDLE_FLAG) {
        out->handle = (int32_t)(x->tag & SLOT_MASK);
        q->pos[out->handle] = -1;
    } else {
        out->handle = -1;
    }
    out->time = x->time;
    out->seq = x->tag >> SEQ_SHIFT;
    out->kind = x->kind;
    out->id = x->id;
    out->version = x->version;
    return 1;
}
