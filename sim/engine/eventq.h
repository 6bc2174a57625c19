/* eventq.h — the DES clock: a priority queue of events keyed on (time in
 * ns, sequence number), so events at the same instant run in the order they
 * were scheduled (deterministic FIFO ties). The queue's arrays grow by
 * doubling while a run warms up and are kept, so a steady event loop does
 * not allocate.
 *
 * Besides plain events, a caller may keep one *addressable* event per handle
 * (e.g. one completion event per network flow): eventq_set() moves a
 * handle's pending event to a new time (decrease- or increase-key) or pushes
 * it when none is pending, so a rescheduled object never leaves a stale
 * event behind. A moved event takes a fresh sequence number, exactly as if
 * it had been pushed anew and the old one skipped. Keys are ordered by
 * (time, sequence number, handle): the handle only breaks ties inside a
 * batch (eventq_batch), whose events share a sequence number.
 *
 * Structure (why it is fast): a radix heap on the times, plus a sorted run
 * for the current instant. A discrete-event clock never schedules before
 * the event it handles, so every pending time is at least the last popped
 * one ("last"). A key at a later time lives in the bucket named by the
 * highest bit where its time differs from last; a push there is an append.
 * Every key *at* last sits in the run ("now"), in key order from its head:
 * the simulator's lockstep pipelines put many events on one nanosecond, and
 * a new event of the current instant has the newest sequence number, so it
 * is appended at the run's tail, and a pop takes the head. When the run is
 * empty, a pop empties the lowest non-empty bucket around its least time
 * (each bucket's least time is kept as keys arrive, so this is one pass):
 * keys at that time form the new run (sorted once, by tag; they arrive
 * nearly in order), the others go to lower buckets. So each key moves a few
 * times over its life, always through arrays read in order (no
 * cache-missing sift through a 1 M-entry tree). Keys are unique, so the pop
 * order is that of the keys alone, whatever the structure. A key taken out
 * of the run (a handle's event moved) is marked dead in place and skipped;
 * a key of the current instant older than the run's tail (a batch's
 * number reserved before later pushes) is inserted in order. A key below
 * last (only a caller rewinding the clock does that) re-buckets every
 * pending key around it: correct, O(pending), and never met by the
 * simulator. An event's body (kind, id, version) travels with its key, so
 * a pop touches one record; a handle's pending entry is found through a
 * position table indexed by the handle. */
#ifndef GT_EVENTQ_H
#define GT_EVENTQ_H

#include <stdint.h>

typedef struct event {
    int64_t time;
    uint64_t seq;
    int32_t kind;      /* meaning owned by the caller */
    int32_t id;        /* object the event is about */
    uint32_t version;  /* lets the caller ignore superseded events */
    int32_t handle;    /* addressable event's handle, -1 for a plain one */
} event;

/* Limits of the packed tag: 2^25 handles, 2^38 events scheduled over the
 * queue's life, 2^30 pending in one bucket (push/set return -1 beyond). */
#define EVENTQ_SLOT_BITS 25
#define EVENTQ_MAX_SLOTS (INT64_C(1) << EVENTQ_SLOT_BITS)
#define EVENTQ_MAX_SEQ (UINT64_C(1) << (64 - EVENTQ_SLOT_BITS - 1))

/* A pending event: its key (time, tag) and its body, one 32-byte record
 * that moves as a whole, so a pop reads nothing else. */
typedef struct eventq_entry {
    int64_t time;
    uint64_t tag;      /* seq << 26 | is_handle << 25 | handle (0 for a plain event) */
    int32_t kind, id;
    uint32_t version;
    int32_t dead;      /* in the run only: taken out, skipped by pops */
} eventq_entry;

/* One radix bucket: entries in no particular order. */
typedef struct eventq_bucket {
    eventq_entry *e;
    int32_t n, cap;
} eventq_bucket;

/* bucket 0: the run of keys at last, sorted from index `head` (dead ones
 * included); 1..64: times first differing from last at bit b-1 */
#define EVENTQ_NBUCKETS 65

typedef struct eventq {
    eventq_bucket b[EVENTQ_NBUCKETS];
    int32_t head;         /* the run's first entry not popped */
    int32_t now_live;     /* the run's entries not dead */
    uint64_t occupied;    /* bit b-1: bucket b >= 1 is not empty */
    uint64_t min_stale;   /* bit b-1: bmin[b] must be found again */
    int64_t last;         /* time of the last pop: every pending time is >= last */
    int64_t bmin[EVENTQ_NBUCKETS]; /* each bucket's least time */
    int64_t n;            /* pending events */
    uint64_t next_seq;
    /* handles: where the pending entry is (bucket << 32 | index, -1 when
     * not pending) */
    int64_t *pos;
    int32_t nhandles;
} eventq;

int eventq_init(eventq *q);
/* Room for handles [0, n) at once, when the caller knows how many it will
 * use: exact, where growing by doubling can leave half unused. -1 when out
 * of memory or over the limit. */
int eventq_reserve_handles(eventq *q, int64_t n);
void eventq_free(eventq *q);
/* Drop every pending event (keeps the memory). */
void eventq_clear(eventq *q);
/* Returns -1 only if growing a bucket failed or a limit above was reached. */
int eventq_push(eventq *q, int64_t time, int32_t kind, int32_t id, uint32_t version);
/* Schedule handle's one event at `time` (replacing a pending one). Returns
 * -1 only if growing a bucket or the handle table failed, or at a limit. */
int eventq_set(eventq *q, int32_t handle, int64_t time, int32_t kind, int32_t id,
               uint32_t version);
/* A batch of handle events sharing one sequence number, so that among
 * themselves same-instant events pop in handle order, and all of them after
 * every event scheduled before the batch and before every one after it:
 * the order a caller would get by setting them one by one in ascending
 * handle order, without sorting. eventq_batch() reserves the number (-1 at
 * the limit); eventq_set_batch() is eventq_set() with it. */
int64_t eventq_batch(eventq *q);
int eventq_set_batch(eventq *q, int64_t batch, int32_t handle, int64_t time, int32_t kind,
                     int32_t id, uint32_t version);
/* Time of the earliest pending event, INT64_MAX when none. Inline for a
 * key at the current instant (the event loop asks after every event). */
int64_t eventq_peek_later(eventq *q);
static inline int64_t eventq_peek_time(eventq *q)
{
    return q->now_live ? q->last : eventq_peek_later(q);
}
/* Pops the earliest event into *out; returns 1, or 0 when empty, or -1
 * when the queue could not grow a bucket (out of memory; nothing popped,
 * nothing lost). */
int eventq_pop(eventq *q, event *out);

#endif
