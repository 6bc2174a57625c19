/* eventq.c — 4-ary heap (see eventq.h). A 4-ary heap halves the depth of a
 * binary heap and keeps the four children in one cache line pair. Entries
 * with a handle record their index in pos[] whenever they move. */
#include "eventq.h"

#include <stdlib.h>

static inline int before(const event *a, const event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

int eventq_init(eventq *q, int64_t reserve)
{
    q->n = 0;
    q->next_seq = 0;
    q->pos = NULL;
    q->nhandles = 0;
    q->cap = reserve > 16 ? reserve : 16;
    q->heap = malloc(sizeof *q->heap * (size_t)q->cap);
    return q->heap ? 0 : -1;
}

void eventq_free(eventq *q)
{
    free(q->heap);
    free(q->pos);
    q->heap = NULL;
    q->pos = NULL;
    q->n = q->cap = 0;
    q->nhandles = 0;
}

void eventq_clear(eventq *q)
{
    for (int64_t i = 0; i < q->n; i++)
        if (q->heap[i].handle >= 0)
            q->pos[q->heap[i].handle] = -1;
    q->n = 0;
}

static inline void place(eventq *q, int64_t i, const event *ev)
{
    q->heap[i] = *ev;
    if (ev->handle >= 0)
        q->pos[ev->handle] = i;
}

/* Move ev up from hole i to its place. */
static void sift_up(eventq *q, int64_t i, const event *ev)
{
    while (i > 0) {
        int64_t parent = (i - 1) / 4;
        if (!before(ev, &q->heap[parent]))
            break;
        place(q, i, &q->heap[parent]);
        i = parent;
    }
    place(q, i, ev);
}

/* Move ev down from hole i (heap of q->n entries) to its place. */
static void sift_down(eventq *q, int64_t i, const event *ev)
{
    int64_t n = q->n;
    for (;;) {
        int64_t c = 4 * i + 1, best = -1;
        for (int64_t k = c; k < c + 4 && k < n; k++)
            if (best < 0 || before(&q->heap[k], &q->heap[best]))
                best = k;
        if (best < 0 || !before(&q->heap[best], ev))
            break;
        place(q, i, &q->heap[best]);
        i = best;
    }
    place(q, i, ev);
}

static int grow(eventq *q)
{
    if (q->n < q->cap)
        return 0;
    event *nh = realloc(q->heap, sizeof *nh * (size_t)(q->cap * 2));
    if (!nh)
        return -1;
    q->heap = nh;
    q->cap *= 2;
    return 0;
}

int eventq_push(eventq *q, int64_t time, int32_t kind, int32_t id, uint32_t version)
{
    if (grow(q))
        return -1;
    event ev = {time, q->next_seq++, kind, id, version, -1};
    sift_up(q, q->n++, &ev);
    return 0;
}

static int reserve_handle(eventq *q, int32_t handle)
{
    if (handle < q->nhandles)
        return 0;
    int64_t nh = q->nhandles > 0 ? q->nhandles : 64;
    while (nh <= handle)
        nh *= 2;
    if (nh > INT32_MAX)
        return -1;
    int64_t *np = realloc(q->pos, sizeof *np * (size_t)nh);
    if (!np)
        return -1;
    for (int64_t h = q->nhandles; h < nh; h++)
        np[h] = -1;
    q->pos = np;
    q->nhandles = (int32_t)nh;
    return 0;
}

int eventq_set(eventq *q, int32_t handle, int64_t time, int32_t kind, int32_t id,
               uint32_t version)
{
    if (handle < 0 || reserve_handle(q, handle))
        return -1;
    event ev = {time, q->next_seq++, kind, id, version, handle};
    int64_t i = q->pos[handle];
    if (i < 0) {
        if (grow(q))
            return -1;
        sift_up(q, q->n++, &ev);
    } else if (before(&ev, &q->heap[i])) {
        sift_up(q, i, &ev);
    } else {
        sift_down(q, i, &ev);
    }
    return 0;
}

int eventq_pop(eventq *q, event *out)
{
    if (q->n == 0)
        return 0;
    *out = q->heap[0];
    if (out->handle >= 0)
        q->pos[out->handle] = -1;
    event last = q->heap[--q->n];
    if (q->n > 0)
        sift_down(q, 0, &last);
    return 1;
}
