/* eventq.h — the DES clock: a 4-ary min-heap of events keyed on (time in ns,
 * sequence number), so events at the same instant run in the order they were
 * scheduled (deterministic FIFO ties). Events are small values stored in the
 * heap array itself; the array grows by doubling outside the hot path and
 * can be reserved up front, so the event loop does not allocate.
 *
 * Besides plain events, a caller may keep one *addressable* event per handle
 * (e.g. one completion event per network flow): eventq_set() moves a
 * handle's pending event to a new time (decrease- or increase-key) or pushes
 * it when none is pending, so a rescheduled object never leaves a stale
 * event behind. A moved event takes a fresh sequence number, exactly as if
 * it had been pushed anew and the old one skipped. */
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

typedef struct eventq {
    event *heap;
    int64_t n, cap;
    uint64_t next_seq;
    int64_t *pos;      /* handle -> heap index, -1 when not pending */
    int32_t nhandles;
} eventq;

int eventq_init(eventq *q, int64_t reserve);
void eventq_free(eventq *q);
/* Drop every pending event (keeps the memory). */
void eventq_clear(eventq *q);
/* Returns -1 only if growing the heap failed. */
int eventq_push(eventq *q, int64_t time, int32_t kind, int32_t id, uint32_t version);
/* Schedule handle's one event at `time` (replacing a pending one). Returns
 * -1 only if growing the heap or the handle table failed. */
int eventq_set(eventq *q, int32_t handle, int64_t time, int32_t kind, int32_t id,
               uint32_t version);
/* Pops the earliest event into *out; returns 0 when empty. */
int eventq_pop(eventq *q, event *out);

#endif
