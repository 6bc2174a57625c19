/* eventq.c — 4-ary heap (see eventq.h). A 4-ary heap halves the depth of a
 * binary heap and keeps the four children in one cache line pair. */
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
    q->cap = reserve > 16 ? reserve : 16;
    q->heap = malloc(sizeof *q->heap * (size_t)q->cap);
    return q->heap ? 0 : -1;
}

void eventq_free(eventq *q)
{
    free(q->heap);
    q->heap = NULL;
    q->n = q->cap = 0;
}

int eventq_push(eventq *q, int64_t time, int32_t kind, int32_t id, uint32_t version)
{
    if (q->n == q->cap) {
        event *nh = realloc(q->heap, sizeof *nh * (size_t)(q->cap * 2));
        if (!nh)
            return -1;
        q->heap = nh;
        q->cap *= 2;
    }
    event ev = {time, q->next_seq++, kind, id, version};
    int64_t i = q->n++;
    while (i > 0) {
        int64_t parent = (i - 1) / 4;
        if (!before(&ev, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = ev;
    return 0;
}

int eventq_pop(eventq *q, event *out)
{
    if (q->n == 0)
        return 0;
    *out = q->heap[0];
    event last = q->heap[--q->n];
    int64_t i = 0, n = q->n;
    for (;;) {
        int64_t c = 4 * i + 1, best = -1;
        for (int64_t k = c; k < c + 4 && k < n; k++)
            if (best < 0 || before(&q->heap[k], &q->heap[best]))
                best = k;
        if (best < 0 || !before(&q->heap[best], &last))
            break;
        q->heap[i] = q->heap[best];
        i = best;
    }
    if (n > 0)
        q->heap[i] = last;
    return 1;
}
