/* eventq.h — the DES clock: a 4-ary min-heap of events keyed on (time in ns,
 * sequence number), so events at the same instant run in the order they were
 * scheduled (deterministic FIFO ties). The arrays grow by doubling outside
 * the hot path and can be reserved up front, so the event loop does not
 * allocate.
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
 * Layout (why it is fast): the heap holds 16-byte keys only, (time, tag)
 * with tag = sequence number | handle flag | slot, so the four children of
 * an entry are one cache line; the rest of an event (kind, id, version)
 * waits in a slot table and is read once, when the event pops. A handle's
 * slot is the handle itself; plain events take slots from a free list.
 * A pop leaves the root empty instead of refilling it at once: a push that
 * follows (the simulator's usual step: handle an event, schedule the next)
 * drops straight into the hole and sifts down once, instead of a refill
 * sift-down plus a sift-up. The pop order is that of the (time, seq) keys
 * alone, so neither trick changes any result. */
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

/* Limits of the packed tag: 2^25 handles and 2^25 pending plain events,
 * 2^38 events scheduled over the queue's life (push/set return -1 beyond). */
#define EVENTQ_SLOT_BITS 25
#define EVENTQ_MAX_SLOTS (INT64_C(1) << EVENTQ_SLOT_BITS)
#define EVENTQ_MAX_SEQ (UINT64_C(1) << (64 - EVENTQ_SLOT_BITS - 1))

typedef struct eventq_key {
    int64_t time;
    uint64_t tag;      /* seq << 26 | is_handle << 25 | slot */
} eventq_key;

typedef struct eventq_body {
    int32_t kind, id;
    uint32_t version;
} eventq_body;

typedef struct eventq {
    eventq_key *heap;  /* entry 0 of the heap, 3 entries into mem */
    eventq_key *mem;   /* 64-byte aligned block */
    int64_t n, cap;
    uint64_t next_seq;
    int root_hole;     /* the last pop left heap[0] empty (counted in n) */
    /* plain events' bodies and their free slots */
    eventq_body *plain;
    int32_t *free_slot;
    int64_t nfree, plain_cap;
    /* handles: heap index (-1 when not pending) and body */
    int64_t *pos;
    eventq_body *hbody;
    int32_t nhandles;
} eventq;

int eventq_init(eventq *q, int64_t reserve);
/* Room for handles [0, n) at once, when the caller knows how many it will
 * use: exact, where growing by doubling can leave half unused. -1 when out
 * of memory or over the limit. */
int eventq_reserve_handles(eventq *q, int64_t n);
void eventq_free(eventq *q);
/* Drop every pending event (keeps the memory). */
void eventq_clear(eventq *q);
/* Returns -1 only if growing the heap failed or a limit above was reached. */
int eventq_push(eventq *q, int64_t time, int32_t kind, int32_t id, uint32_t version);
/* Schedule handle's one event at `time` (replacing a pending one). Returns
 * -1 only if growing the heap or the handle table failed, or at a limit. */
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
/* Time of the earliest pending event, INT64_MAX when none. */
int64_t eventq_peek_time(eventq *q);
/* Pops the earliest event into *out; returns 0 when empty. */
int eventq_pop(eventq *q, event *out);

#endif
