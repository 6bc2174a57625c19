/* topo_digest.c — the part of a topology the estimator's caches read, taken
 * or compared (topo_digest.h). */
#include "sim/estimator/topo_digest.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"

/* Where the digest's bytes go: appended to buf (take) or compared with
 * buf from pos on (compare). One walk of the topology serves both, so the
 * two cannot disagree on what the digest holds. */
typedef struct sink {
    unsigned char *buf;
    size_t pos, cap;
    int take;
    int differ;           /* compare: a difference was found; take: out of memory */
} sink;

static void put(sink *s, const void *p, size_t n)
{
    if (s->differ || !n)
        return;
    if (s->take) {
        if (gt_grow(&s->buf, &s->cap, s->pos + n, 1)) {
            s->differ = 1;
            return;
        }
        memcpy(s->buf + s->pos, p, n);
    } else if (s->pos + n > s->cap || memcmp(s->buf + s->pos, p, n)) {
        s->differ = 1; /* longer than the held digest, or other bytes */
        return;
    }
    s->pos += n;
}

/* The bytes [from, to) of each of n structs of the given size. */
static void put_fields(sink *s, const void *a, int n, size_t size, size_t from, size_t to)
{
    const unsigned char *p = a;
    for (int i = 0; i < n && !s->differ; i++) /* a count that differs ends it */
        put(s, p + size * (size_t)i + from, to - from);
}

/* The GPU type of each of n structs (its index at byte off) that differs
 * from the one before it, whole. The structs themselves are in the digest,
 * so two digests walk the same indices and compare the types they name. */
static void put_types(sink *s, const topology *t, const void *a, int n, size_t size, size_t off)
{
    const unsigned char *p = a;
    int last = -1;
    for (int i = 0; i < n && !s->differ; i++) {
        int ty;
        memcpy(&ty, p + size * (size_t)i + off, sizeof ty);
        if (ty != last && ty >= 0 && ty < t->ntypes)
            put(s, &t->types[ty], sizeof *t->types);
        last = ty;
    }
}

static void walk(sink *s, const topology *t)
{
    int counts[] = {t->nsites, t->nnodes, t->ngpus, t->ntypes};
    put(s, counts, sizeof counts);
    put_fields(s, t->sites, t->nsites, sizeof *t->sites, offsetof(topo_site, lat),
               offsetof(topo_site, source));
    put(s, t->nodes, sizeof *t->nodes * (size_t)t->nnodes);
    put(s, t->gpus, sizeof *t->gpus * (size_t)t->ngpus);
    put_fields(s, t->wan, t->nsites * t->nsites, sizeof *t->wan, 0, offsetof(topo_link, trace));
    put_types(s, t, t->nodes, t->nnodes, sizeof *t->nodes, offsetof(topo_node, type));
    put_types(s, t, t->gpus, t->ngpus, sizeof *t->gpus, offsetof(topo_gpu, type));
    put(s, &t->tcp_window_bytes, sizeof t->tcp_window_bytes);
    put(s, &t->tcp_connections, sizeof t->tcp_connections);
}

int topo_digest_same(const topo_digest *d, const topology *t)
{
    if (!d->have)
        return 0;
    sink s = {d->buf, 0, d->len, 0, 0};
    walk(&s, t);
    return !s.differ && s.pos == d->len;
}

int topo_digest_take(topo_digest *d, const topology *t)
{
    sink s = {d->buf, 0, d->cap, 1, 0};
    walk(&s, t);
    d->buf = s.buf;
    d->cap = s.cap;
    d->len = s.pos;
    d->have = !s.differ;
    return s.differ ? -1 : 0;
}

void topo_digest_free(topo_digest *d)
{
    free(d->buf);
    memset(d, 0, sizeof *d);
}
