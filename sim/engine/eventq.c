/* eventq.c — 4-ary heap of packed keys (see eventq.h). A 4-ary heap halves
 * the depth of a binary heap; with 16-byte keys placed 3 entries into a
 * 64-byte aligned block, the children 4i+1 .. 4i+4 of entry i fill exactly
 * one cache line. Keys of addressable events record their heap index in
 * pos[] whenever they move. */
#include "sim/engine/eventq.h"

#include <stdlib.h>
#include <string.h>

#define HEAP_ALIGN 64
#define HEAP_SHIFT 3
#define HANDLE_FLAG (UINT64_C(1) << EVENTQ_SLOT_BITS)
#define SLOT_MASK (HANDLE_FLAG - 1)
#define SEQ_SHIFT (EVENTQ_SLOT_BITS + 1)

static inline int before(const eventq_key *a, const eventq_key *b)
{
    return a->time < b->time || (a->time == b->time && a->tag < b->tag);
}

static eventq_key *heap_block(int64_t cap)
{
    size_t bytes = sizeof(eventq_key) * (size_t)(cap + HEAP_SHIFT);
    bytes = (bytes + HEAP_ALIGN - 1) / HEAP_ALIGN * HEAP_ALIGN;
    return aligned_alloc(HEAP_ALIGN, bytes);
}

int eventq_init(eventq *q, int64_t reserve)
{
    memset(q, 0, sizeof *q);
    q->cap = reserve > 16 ? reserve : 16;
    q->mem = heap_block(q->cap);
    q->heap = q->mem ? q->mem + HEAP_SHIFT : NULL;
    return q->heap ? 0 : -1;
}

void eventq_free(eventq *q)
{
    free(q->mem);
    free(q->plain);
    free(q->free_slot);
    free(q->pos);
    free(q->hbody);
    memset(q, 0, sizeof *q);
}

void eventq_clear(eventq *q)
{
    for (int64_t i = q->root_hole; i < q->n; i++)
        if (q->heap[i].tag & HANDLE_FLAG)
            q->pos[q->heap[i].tag & SLOT_MASK] = -1;
    /* every plain slot is free again */
    q->nfree = q->plain_cap;
    for (int64_t s = 0; s < q->plain_cap; s++)
        q->free_slot[s] = (int32_t)(q->plain_cap - 1 - s);
    q->n = 0;
    q->root_hole = 0;
}

static inline void place(eventq *q, int64_t i, const eventq_key *k)
{
    q->heap[i] = *k;
    if (k->tag & HANDLE_FLAG)
        q->pos[k->tag & SLOT_MASK] = i;
}

/* Move k up from hole i to its place. */
static void sift_up(eventq *q, int64_t i, const eventq_key *k)
{
    while (i > 0) {
        int64_t parent = (i - 1) / 4;
        if (!before(k, &q->heap[parent]))
            break;
        place(q, i, &q->heap[parent]);
        i = parent;
    }
    place(q, i, k);
}

/* Move k down from hole i (heap of q->n entries) to its place. */
static void sift_down(eventq *q, int64_t i, const eventq_key *k)
{
    int64_t n = q->n;
    for (;;) {
        int64_t c = 4 * i + 1, best = c;
        if (16 * i + 20 < n) /* the grandchildren's lines load while we compare */
            for (int k = 0; k < 4; k++)
                __builtin_prefetch(&q->heap[4 * (c + k) + 1]);
        if (c + 3 < n) { /* all four children: the common case, no bound checks */
            best = before(&q->heap[c + 1], &q->heap[best]) ? c + 1 : best;
            best = before(&q->heap[c + 2], &q->heap[best]) ? c + 2 : best;
            best = before(&q->heap[c + 3], &q->heap[best]) ? c + 3 : best;
        } else if (c < n) {
            for (int64_t j = c + 1; j < n; j++)
                best = before(&q->heap[j], &q->heap[best]) ? j : best;
        } else {
            break;
        }
        if (!before(&q->heap[best], k))
            break;
        place(q, i, &q->heap[best]);
        i = best;
    }
    place(q, i, k);
}

static int grow(eventq *q)
{
    if (q->n < q->cap)
        return 0;
    eventq_key *nm = heap_block(q->cap * 2);
    if (!nm)
        return -1;
    memcpy(nm + HEAP_SHIFT, q->heap, sizeof *nm * (size_t)q->n);
    free(q->mem);
    q->mem = nm;
    q->heap = nm + HEAP_SHIFT;
    q->cap *= 2;
    return 0;
}

/* Refill an empty root with the last entry (before anything reads the
 * root or sifts up to it). */
static void fill_hole(eventq *q)
{
    if (!q->root_hole)
        return;
    q->root_hole = 0;
    if (--q->n > 0) {
        eventq_key last = q->heap[q->n];
        sift_down(q, 0, &last);
    }
}

/* A new key: into the empty root if there is one, else at the end. */
static int insert(eventq *q, const eventq_key *k)
{
    if (q->root_hole) {
        q->root_hole = 0;
        sift_down(q, 0, k);
        return 0;
    }
    if (grow(q))
        return -1;
    sift_up(q, q->n++, k);
    return 0;
}

/* A free plain slot, the table doubling when none is left; -1 at the limit. */
static int64_t take_plain_slot(eventq *q)
{
    if (q->nfree == 0) {
        int64_t nc = q->plain_cap ? 2 * q->plain_cap : 64;
        if (nc > EVENTQ_MAX_SLOTS)
            return -1;
        eventq_body *nb = realloc(q->plain, sizeof *nb * (size_t)nc);
        if (!nb)
            return -1;
        q->plain = nb;
        int32_t *nf = realloc(q->free_slot, sizeof *nf * (size_t)nc);
        if (!nf)
            return -1;
        q->free_slot = nf;
        for (int64_t s = nc - 1; s >= q->plain_cap; s--)
            q->free_slot[q->nfree++] = (int32_t)s;
        q->plain_cap = nc;
    }
    return q->free_slot[--q->nfree];
}

int eventq_push(eventq *q, int64_t time, int32_t kind, int32_t id, uint32_t version)
{
    if (q->next_seq >= EVENTQ_MAX_SEQ)
        return -1;
    int64_t s = take_plain_slot(q);
    if (s < 0)
        return -1;
    q->plain[s] = (eventq_body){kind, id, version};
    eventq_key k = {time, q->next_seq++ << SEQ_SHIFT | (uint64_t)s};
    if (insert(q, &k)) {
        q->free_slot[q->nfree++] = (int32_t)s;
        return -1;
    }
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
    eventq_body *nb = realloc(q->hbody, sizeof *nb * (size_t)nh);
    if (!nb)
        return -1;
    q->hbody = nb;
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
    q->hbody[handle] = (eventq_body){kind, id, version};
    eventq_key k = {time, seq << SEQ_SHIFT | HANDLE_FLAG | (uint64_t)handle};
    if (q->pos[handle] < 0)
        return insert(q, &k);
    fill_hole(q);
    int64_t i = q->pos[handle];
    if (before(&k, &q->heap[i]))
        sift_up(q, i, &k);
    else
        sift_down(q, i, &k);
    return 0;
}

int eventq_set(eventq *q, int32_t handle, int64_t time, int32_t kind, int32_t id,
               uint32_t version)
{
    if (q->next_seq >= EVENTQ_MAX_SEQ)
        return -1;
    return set_key(q, handle, time, kind, id, version, q->next_seq++);
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

int64_t eventq_peek_time(eventq *q)
{
    fill_hole(q);
    return q->n ? q->heap[0].time : INT64_MAX;
}

int eventq_pop(eventq *q, event *out)
{
    fill_hole(q);
    if (q->n == 0)
        return 0;
    eventq_key k = q->heap[0];
    int64_t s = (int64_t)(k.tag & SLOT_MASK);
    const eventq_body *b;
    if (k.tag & HANDLE_FLAG) {
        q->pos[s] = -1;
        b = &q->hbody[s];
        out->handle = (int32_t)s;
    } else {
        b = &q->plain[s];
        q->free_slot[q->nfree++] = (int32_t)s;
        out->handle = -1;
    }
    out->time = k.time;
    out->seq = k.tag >> SEQ_SHIFT;
    out->kind = b->kind;
    out->id = b->id;
    out->version = b->version;
    q->root_hole = 1;
    return 1;
}
