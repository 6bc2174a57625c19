/* stream_load.h — the transfer bound's entries and the arithmetic on them
 * (load_bound.h), shared by the full pass (load_bound.c) and the pass that
 * keeps each resource's result across evaluations (xfer_kept.c): both must
 * give the same figures to the ns, so they use the same functions. Private
 * to sim/estimator. */
#ifndef GT_STREAM_LOAD_H
#define GT_STREAM_LOAD_H

#include <stdint.h>

#include "sim/base/timecap.h"
#include "sim/models/collective.h"

/* All transfers between one pair of lanes (a stream), then one entry per
 * resource a stream crosses. */
typedef struct stream_load {
    long key;              /* resource, once expanded; pair of lanes before */
    double cap, bytes, min_lat;
    long n;                /* transfers */
    int64_t first_start;   /* earliest transfer start (estimator's; the replay's is later) */
    int64_t min_tail;      /* least work left on the consumer's GPU after a transfer */
} stream_load;

static inline void merge_at(stream_load *d, const stream_load *x)
{
    d->bytes += x->bytes;
    d->n += x->n;
    d->min_lat = x->min_lat < d->min_lat ? x->min_lat : d->min_lat;
    d->first_start = x->first_start < d->first_start ? x->first_start : d->first_start;
    d->min_tail = x->min_tail < d->min_tail ? x->min_tail : d->min_tail;
}

/* The bound of all the transfers over one resource, merged into r: they
 * cannot all have finished before the earliest starts + the least latency
 * + their bytes / capacity, and then the last consumer still has the least
 * tail to run. */
static inline int64_t all_streams_bound(const stream_load *r)
{
    return t_add(r->first_start,
                 t_add(load_floor_ns(r->min_lat, r->bytes, r->cap, r->n), r->min_tail));
}

static inline int by_key_then_start(const void *a, const void *b)
{
    const stream_load *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    if (x->first_start != y->first_start)
        return (x->first_start > y->first_start) - (x->first_start < y->first_start);
    if (x->min_tail != y->min_tail)
        return (x->min_tail > y->min_tail) - (x->min_tail < y->min_tail);
    if (x->bytes != y->bytes) /* a total order on values: ties are equal entries */
        return (x->bytes > y->bytes) - (x->bytes < y->bytes);
    if (x->min_lat != y->min_lat)
        return (x->min_lat > y->min_lat) - (x->min_lat < y->min_lat);
    return (x->n > y->n) - (x->n < y->n);
}

/* The streams v[0..n) crossing one resource (n >= 2, sorted by start):
 * any subset of them cannot have finished before its earliest start +
 * its least latency + its bytes / capacity, and then its last consumer
 * still has at least the subset's least tail to run. The best subset is
 * one of "start >= s and tail >= tau" for a stream's s and a stream's tau
 * (adding such streams to a subset only adds bytes), so trying those pairs
 * is the maximum over all subsets. This sees, e.g., GPipe's forward
 * transfers on a link (early, with every backward still to run after
 * them) and its backward transfers (late, little left) each on their own,
 * where the bound over all of them together keeps only the early start and
 * the small tail. */
static inline int64_t subset_bound(const stream_load *v, int n)
{
    int64_t best = 0;
    for (int i = 0; i < n; i++)     /* earliest start: v[i]'s (sorted) */
        for (int k = 0; k < n; k++) { /* least tail: v[k]'s */
            if (v[k].first_start < v[i].first_start)
                continue;
            double bytes = 0, lat = v[k].min_lat;
            long flows = 0;
            for (int x = i; x < n; x++)
                if (v[x].min_tail >= v[k].min_tail) {
                    bytes += v[x].bytes;
                    flows += v[x].n;
                    lat = v[x].min_lat < lat ? v[x].min_lat : lat;
                }
            int64_t b = t_add(v[i].first_start,
                              t_add(load_floor_ns(lat, bytes, v[i].cap, flows), v[k].min_tail));
            best = b > best ? b : best;
        }
    return best;
}

/* No subset of the streams v[0..n) of one resource (sorted by start) can
 * give more than this: the latest start, the largest latency, all their
 * bytes (summed in the same order, so no subset's sum is above it), no
 * rounding credit, the largest tail; every term of subset_bound's sum is
 * monotone in each of these. */
static inline int64_t subset_ceiling(const stream_load *v, int n)
{
    int64_t start = 0, tail = 0;
    double bytes = 0, lat = 0;
    for (int x = 0; x < n; x++) {
        start = v[x].first_start > start ? v[x].first_start : start;
        tail = v[x].min_tail > tail ? v[x].min_tail : tail;
        lat = v[x].min_lat > lat ? v[x].min_lat : lat;
        bytes += v[x].bytes;
    }
    return t_add(start, t_add(load_floor_ns(lat, bytes, v[0].cap, 0), tail));
}

#endif
