/* eventq.c — radix heap on event times with a sorted run for the current
 * instant (see eventq.h). A later time's bucket is found from the highest
 * set bit of its XOR with last; the XOR of two times is the same whether
 * they are read signed or sign-flipped unsigned, so signed times need no
 * conversion. An occupancy bitmap finds the lowest non-empty bucket in one
 * count-trailing-zeros. Entries of addressable events record their
 * (bucket, index) in pos[] whenever they move. */
#include "sim/engine/eventq.h"

#include <stdlib.h>
#include <string.h>

#define HANDLE_FLAG (UINT64_C(1) << EVENTQ_SLOT_BITS)
#define SLOT_MASK (HANDLE_FLAG - 1)
#define SEQ_SHIFT (EVENTQ_SLOT_BITS + 1)
#define MAX_BUCKET (INT64_C(1) << 30)

/* The bucket of time t around last (t >= last): 0 for last itself. */
static inline int bucket_of(const eventq *q, int64_t t)
{
    uint64_t dt = (uint64_t)t ^ (uint64_t)q->last;
    return dt ? 64 - __builtin_clzll(dt) : 0;
}

static inline uint64_t bit(int b)
{
    return UINT64_C(1) << (b - 1);
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

static inline void set_pos(eventq *q, const eventq_entry *x, int b, int32_t i)
{
    if (x->tag & HANDLE_FLAG)
        q->pos[x->tag & SLOT_MASK] = (int64_t)b << 32 | i;
}

/* Append x to bucket b >= 1 (room already made), keeping its least time. */
static inline void append(eventq *q, int b, const eventq_entry *x)
{
    eventq_bucket *bk = &q->b[b];
    set_pos(q, x, b, bk->n);
    if (bk->n == 0) {
        q->occupied |= bit(b);
        q->min_stale &= ~bit(b);
        q->bmin[b] = x->time;
    } else if (x->time < q->bmin[b]) {
        q->bmin[b] = x->time;
    }
    bk->e[bk->n++] = *x;
}

/* The run is empty (every entry popped or dead): start it again at 0. */
static inline void run_reset(eventq *q)
{
    q->b[0].n = 0;
    q->head = 0;
}

/* Insert x (x->time == last) into the run in tag order (room already
 * made). Usually x is the newest key and goes at the tail. */
static void run_insert(eventq *q, const eventq_entry *x)
{
    eventq_bucket *r = &q->b[0];
    if (q->now_live == 0)
        run_reset(q);
    int32_t i = r->n;
    if (i > q->head && r->e[i - 1].tag > x->tag) { /* binary search of its place */
        int32_t lo = q->head, hi = r->n - 1; /* e[hi].tag > x->tag */
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (r->e[mid].tag > x->tag)
                hi = mid;
            else
                lo = mid + 1;
        }
        i = lo;
        memmove(&r->e[i + 1], &r->e[i], sizeof *r->e * (size_t)(r->n - i));
        for (int32_t k = i + 1; k <= r->n; k++)
            if (!r->e[k].dead)
                set_pos(q, &r->e[k], 0, k);
    }
    r->e[i] = *x;
    r->e[i].dead = 0;
    set_pos(q, x, 0, i);
    r->n++;
    q->now_live++;
}

static const int64_t TIME_MIN = INT64_MIN;

int eventq_init(eventq *q)
{
    memset(q, 0, sizeof *q);
    q->last = TIME_MIN;
    return 0;
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
        for (int32_t i = b ? 0 : q->head; i < q->b[b].n; i++)
            if ((q->b[b].e[i].tag & HANDLE_FLAG) && !q->b[b].e[i].dead)
                q->pos[q->b[b].e[i].tag & SLOT_MASK] = -1;
        q->b[b].n = 0;
    }
    q->head = q->now_live = 0;
    q->occupied = q->min_stale = 0;
    q->last = TIME_MIN;
    q->n = 0;
}

/* Take the entry at (b, i) out: in the run it is marked dead; in a bucket
 * the bucket's last entry fills the gap. */
static void take_out(eventq *q, int b, int32_t i)
{
    eventq_bucket *bk = &q->b[b];
    eventq_entry *x = &bk->e[i];
    q->n--;
    if (b == 0) {
        x->dead = 1;
        if (--q->now_live == 0)
            run_reset(q);
        return;
    }
    if (x->time == q->bmin[b])
        q->min_stale |= bit(b);
    if (--bk->n == 0)
        q->occupied &= ~bit(b);
    if (i < bk->n) {
        *x = bk->e[bk->n];
        set_pos(q, x, b, i);
    }
}

/* A time below last: re-bucket every pending entry around t, the new last
 * (all of them are later than t, so the run ends empty). Nothing changes
 * unless all the room is made. */
static int rebase(eventq *q, int64_t t)
{
    eventq_entry *all = malloc(sizeof *all * (size_t)(q->n + 1));
    if (!all)
        return -1;
    int64_t m = 0;
    for (int b = 0; b < EVENTQ_NBUCKETS; b++)
        for (int32_t i = b ? 0 : q->head; i < q->b[b].n; i++)
            if (b || !q->b[b].e[i].dead)
                all[m++] = q->b[b].e[i];
    int64_t count[EVENTQ_NBUCKETS] = {0};
    int64_t old = q->last;
    q->last = t;
    for (int64_t i = 0; i < m; i++)
        count[bucket_of(q, all[i].time)]++;
    for (int b = 1; b < EVENTQ_NBUCKETS; b++)
        if (ensure(&q->b[b], count[b])) {
            q->last = old;
            free(all);
            return -1;
        }
    for (int b = 0; b < EVENTQ_NBUCKETS; b++)
        q->b[b].n = 0;
    q->head = q->now_live = 0;
    q->occupied = q->min_stale = 0;
    for (int64_t i = 0; i < m; i++)
        append(q, bucket_of(q, all[i].time), &all[i]);
    free(all);
    return 0;
}

/* Schedule entry x; if handle >= 0 has a pending entry, it is replaced. */
static inline int put(eventq *q, const eventq_entry *x, int32_t handle)
{
    if (x->time < q->last && rebase(q, x->time))
        return -1;
    int b = bucket_of(q, x->time); /* taking the old entry out keeps last */
    if (ensure(&q->b[b], (int64_t)q->b[b].n + 1))
        return -1;
    if (handle >= 0 && q->pos[handle] >= 0)
        take_out(q, (int)(q->pos[handle] >> 32), (int32_t)(q->pos[handle] & 0xffffffff));
    if (b == 0)
        run_insert(q, x);
    else
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
static inline int set_key(eventq *q, int32_t handle, int64_t time, int32_t kind, int32_t id,
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

/* The least time of bucket b >= 1 (not empty). */
static int64_t least(eventq *q, int b)
{
    if (q->min_stale & bit(b)) { /* its least was taken out: one scan */
        const eventq_bucket *bk = &q->b[b];
        int64_t m = bk->e[0].time;
        for (int32_t i = 1; i < bk->n; i++)
            m = bk->e[i].time < m ? bk->e[i].time : m;
        q->bmin[b] = m;
        q->min_stale &= ~bit(b);
    }
    return q->bmin[b];
}

static int by_tag(const void *a, const void *b)
{
    uint64_t x = ((const eventq_entry *)a)->tag, y = ((const eventq_entry *)b)->tag;
    return (x > y) - (x < y);
}

/* Sort the run's n entries by tag. They come nearly in order (buckets are
 * filled by appends of ever newer keys), so an insertion sort is about one
 * pass; past a budget of moves, the library's sort takes over. Then every
 * handle's position is written. */
static void run_sort(eventq *q, int32_t n)
{
    eventq_entry *e = q->b[0].e;
    if (n == 1) { /* the common case away from lockstep ties */
        set_pos(q, &e[0], 0, 0);
        return;
    }
    int64_t budget = 4 * (int64_t)n + 64;
    for (int32_t i = 1; i < n && budget >= 0; i++) {
        eventq_entry x = e[i];
        int32_t j = i;
        for (; j > 0 && e[j - 1].tag > x.tag; j--)
            e[j] = e[j - 1];
        e[j] = x;
        budget -= i - j;
    }
    if (budget < 0)
        qsort(e, (size_t)n, sizeof *e, by_tag);
    for (int32_t i = 0; i < n; i++)
        set_pos(q, &e[i], 0, i);
}

/* Put back what a failed split moved: the run, the lower buckets (all
 * empty before it) and the bucket's unread tail [i, n) return to bucket b
 * (its array holds them all: they were its entries), last to `old`. */
static void split_undo(eventq *q, int b, int32_t i, int64_t old)
{
    eventq_bucket *bk = &q->b[b];
    int32_t keep = bk->n - i;
    memmove(bk->e, bk->e + i, sizeof *bk->e * (size_t)keep);
    bk->n = 0;
    for (int32_t k = 0; k < keep; k++)
        append(q, b, &bk->e[k]);
    for (int j = 0; j < b; j++) {
        for (int32_t k = 0; k < q->b[j].n; k++)
            append(q, b, &q->b[j].e[k]);
        q->b[j].n = 0;
        if (j)
            q->occupied &= ~bit(j);
    }
    q->head = q->now_live = 0;
    q->last = old;
}

/* With the run empty: empty the lowest bucket b >= 1 around its least time,
 * the new last. Every entry of bucket b differs from that time only below
 * the bit that names bucket b, so each goes to the run (at that time) or to
 * a lower bucket, and those were all empty: their counts and least times
 * start at zero and are kept in locals during the pass (written back once:
 * the stores through the entry arrays would make the compiler reload them
 * for every key). If one cannot grow, everything goes back: nothing
 * changes. Keys in buckets are never dead. */
static int split(eventq *q, int b)
{
    int64_t old = q->last;
    q->last = least(q, b);
    eventq_bucket *bk = &q->b[b];
    run_reset(q);
    int32_t cnt[EVENTQ_NBUCKETS], nb = bk->n;
    int64_t mn[EVENTQ_NBUCKETS];
    memset(cnt, 0, sizeof *cnt * (size_t)b); /* only buckets below b receive */
    int32_t i = 0;
    for (; i < nb; i++) {
        const eventq_entry *x = &bk->e[i];
        int j = bucket_of(q, x->time);
        eventq_bucket *to = &q->b[j];
        if (cnt[j] == to->cap && ensure(to, (int64_t)cnt[j] + 1))
            break;
        to->e[cnt[j]] = *x;
        if (j) {
            set_pos(q, x, j, cnt[j]);
            mn[j] = cnt[j] == 0 || x->time < mn[j] ? x->time : mn[j];
        }
        cnt[j]++;
    }
    q->b[0].n = cnt[0];
    for (int j = 1; j < b; j++)
        if (cnt[j]) {
            q->b[j].n = cnt[j];
            q->bmin[j] = mn[j];
            q->occupied |= bit(j);
            q->min_stale &= ~bit(j);
        }
    if (i < nb) {
        split_undo(q, b, i, old);
        return -1;
    }
    bk->n = 0;
    q->occupied &= ~bit(b);
    if (bk->cap > 4096) { /* a large array goes back for the lower buckets to grow into */
        free(bk->e);
        bk->e = NULL;
        bk->cap = 0;
    }
    run_sort(q, cnt[0]);
    q->now_live = cnt[0];
    return 0;
}

/* eventq_peek_time with no key at the current instant. */
int64_t eventq_peek_later(eventq *q)
{
    if (q->n == 0)
        return INT64_MAX;
    return q->now_live ? q->last : least(q, __builtin_ctzll(q->occupied) + 1);
}

int eventq_pop(eventq *q, event *out)
{
    if (q->n == 0)
        return 0;
    if (q->now_live == 0 && split(q, __builtin_ctzll(q->occupied) + 1))
        return -1;
    eventq_entry *run = q->b[0].e;
    while (run[q->head].dead)
        q->head++;
    const eventq_entry *x = &run[q->head++];
    q->n--;
    if (--q->now_live == 0)
        run_reset(q); /* x stays readable: the array is kept */
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
