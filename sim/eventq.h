/* eventq.h — the DES clock: a 4-ary min-heap of events keyed on (time in ns,
 * sequence number), so events at the same instant run in the order they were
 * scheduled (deterministic FIFO ties). Events are small values stored in the
 * heap array itself; the array grows by doubling outside the hot path and
 * can be reserved up front, so the event loop does not allocate. */
#ifndef GT_EVENTQ_H
#define GT_EVENTQ_H

#include <stdint.h>

typedef struct event {
    int64_t time;
    uint64_t seq;
    int32_t kind;      /* meaning owned by the caller */
    int32_t id;        /* object the event is about */
    uint32_t version;  /* lets the caller ignore superseded events */
} event;

typedef struct eventq {
    event *heap;
    int64_t n, cap;
    uint64_t next_seq;
} eventq;

int eventq_init(eventq *q, int64_t reserve);
void eventq_free(eventq *q);
/* Returns -1 only if growing the heap failed. */
int eventq_push(eventq *q, int64_t time, int32_t kind, int32_t id, uint32_t version);
/* Pops the earliest event into *out; returns 0 when empty. */
int eventq_pop(eventq *q, event *out);

#endif
