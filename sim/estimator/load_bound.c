/* load_bound.c — lower bounds from shared-resource load (load_bound.h). */
#include "sim/estimator/load_bound.h"

#include <stdlib.h>

#include "sim/models/cost.h"
#include "sim/base/res_table.h"
#include "sim/models/path.h"

/* --- sync groups ------------------------------------------------------------- */

/* One group's load on one shared resource, for the cross-group bound. */
struct group_load {
    coll_load l;
    int group;
    int64_t start;
};
typedef struct group_load group_load;

static int by_resource_then_start(const void *a, const void *b)
{
    const group_load *x = a, *y = b;
    if (x->l.key != y->l.key)
        return (x->l.key > y->l.key) - (x->l.key < y->l.key);
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return x->group - y->group;
}

/* Sync groups of different layers run at the same time and share WAN links
 * and NICs, which each group's own estimate ignores. On each resource, the
 * groups starting at or after time s cannot all have finished before
 * s + their bytes / capacity; the group that the estimate ends last on that
 * resource is held to the largest such bound. With one group per resource
 * nothing changes, so contention-free plans stay exact. */
void sync_loads_bound(sync_loads *s, timing *tm)
{
    group_load *gl = s->v;
    int n = s->n;
    if (n == 0)
        return;
    qsort(gl, (size_t)n, sizeof *gl, by_resource_then_start);
    for (int i = 0; i < n;) {
        int k = i;
        while (k < n && gl[k].l.key == gl[i].l.key)
            k++;
        if (k - i > 1) {
            double suffix = 0, lat = gl[k - 1].l.min_lat;
            int64_t bound = 0;
            int last = gl[i].group;
            for (int x = k - 1; x >= i; x--) {
                suffix += gl[x].l.bytes;
                lat = gl[x].l.min_lat < lat ? gl[x].l.min_lat : lat;
                int64_t b = gl[x].start + cost_ns(lat) + cost_ns(suffix / gl[x].l.cap);
                bound = b > bound ? b : bound;
                if (tm->group_end[gl[x].group] >= tm->group_end[last])
                    last = gl[x].group;
            }
            if (bound > tm->group_end[last])
                tm->group_end[last] = bound;
        }
        i = k;
    }
}

int sync_loads_push(sync_loads *s, const coll_load *l, int m, int group, int64_t start)
{
    if (s->n + m > s->cap) {
        int nc = 2 * (s->n + m);
        group_load *x = realloc(s->v, sizeof *x * (size_t)nc);
        if (!x)
            return -1;
        s->v = x;
        s->cap = nc;
    }
    for (int i = 0; i < m; i++)
        s->v[s->n++] = (group_load){l[i], group, start};
    return 0;
}

int sync_loads_add(sync_loads *s, const coll_plan *c, const topology *t, const workload *w,
                   int group, int64_t start)
{
    coll_load *l;
    int m = collective_loads(c, t, w, &l);
    if (m < 0)
        return -1;
    int rc = sync_loads_push(s, l, m, group, start);
    free(l);
    return rc;
}

void sync_loads_free(sync_loads *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

/* --- pipeline transfers --------------------------------------------------------- */

/* All transfers between one pair of lanes (a stream), then one entry per
 * resource a stream crosses. */
typedef struct stream_load {
    long key;              /* resource, once expanded; pair of lanes before */
    double cap, bytes, min_lat;
    int64_t first_start;   /* earliest transfer start (estimator's; the replay's is later) */
    int64_t min_tail;      /* least work left on the consumer's GPU after a transfer */
} stream_load;

static void merge_at(stream_load *d, const stream_load *x)
{
    d->bytes += x->bytes;
    d->min_lat = x->min_lat < d->min_lat ? x->min_lat : d->min_lat;
    d->first_start = x->first_start < d->first_start ? x->first_start : d->first_start;
    d->min_tail = x->min_tail < d->min_tail ? x->min_tail : d->min_tail;
}

/* Adds x into v[0..*n) under x.key (h finds the entry): bytes add up; the
 * earliest start, least latency and least tail are kept. */
static void merge_into(stream_load *v, int *n, res_table *h, stream_load x)
{
    bool added;
    int i = res_table_index(h, x.key, *n, &added);
    if (added)
        v[(*n)++] = x;
    else
        merge_at(&v[i], &x);
}

/* The stream entry of transfers from lane src into lane dst. A lane's
 * inputs come from one or two neighbour lanes (previous stage forward, next
 * stage backward), so two slots per lane find it without hashing; a third
 * producer goes through h. */
static void add_to_stream(stream_load *v, int *n, int *slot, res_table *h, int src, int dst,
                          stream_load x)
{
    for (int k = 0; k < 2; k++) {
        int *sl = &slot[2 * (2 * dst + k)];
        if (sl[0] == src) {
            merge_at(&v[sl[1]], &x);
            return;
        }
        if (sl[0] < 0) {
            sl[0] = src;
            sl[1] = *n;
            v[(*n)++] = x;
            return;
        }
    }
    merge_into(v, n, h, x);
}

/* tail[id]: op id's duration plus everything after it on its lane, plus the
 * lane's optimizer step: what its GPU must still do once op id may start. */
static void lane_tails(const workload *w, int64_t *tail)
{
    for (int l = 0; l < w->nlanes; l++) {
        int64_t total = w->lanes[l].opt_ns;
        for (int id = w->lanes[l].first_op; id >= 0; id = w->ops[id].next_on_lane)
            total += w->ops[id].dur_ns;
        for (int id = w->lanes[l].first_op; id >= 0; id = w->ops[id].next_on_lane) {
            tail[id] = total;
            total -= w->ops[id].dur_ns;
        }
    }
}

static int by_key_then_start(const void *a, const void *b)
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
    return (x->min_lat > y->min_lat) - (x->min_lat < y->min_lat);
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
static int64_t subset_bound(const stream_load *v, int n)
{
    int64_t best = 0;
    for (int i = 0; i < n; i++)     /* earliest start: v[i]'s (sorted) */
        for (int k = 0; k < n; k++) { /* least tail: v[k]'s */
            if (v[k].first_start < v[i].first_start)
                continue;
            double bytes = 0, lat = v[k].min_lat;
            for (int x = i; x < n; x++)
                if (v[x].min_tail >= v[k].min_tail) {
                    bytes += v[x].bytes;
                    lat = v[x].min_lat < lat ? v[x].min_lat : lat;
                }
            int64_t b = v[i].first_start + cost_ns(lat) + cost_ns(bytes / v[i].cap) +
                        v[k].min_tail;
            best = b > best ? b : best;
        }
    return best;
}

/* Each stream onto the resources it crosses; raises the iteration to the
 * largest resource bound: all of a resource's transfers together, and
 * (with several streams on it) its best subset of streams. */
static int resources_bound(const topology *t, const workload *w, const stream_load *v, int ns,
                           timing *tm)
{
    stream_load *res = malloc(sizeof *res * (size_t)(3 * ns));
    stream_load *per = malloc(sizeof *per * (size_t)(3 * ns)); /* one per (stream, resource) */
    res_table h = {0};
    if (!res || !per || res_table_init(&h, 3 * ns)) {
        free(res);
        free(per);
        return -1;
    }
    int nr = 0, np = 0;
    for (int s = 0; s < ns; s++) {
        int a = w->lanes[v[s].key / w->nlanes].gpu, b = w->lanes[v[s].key % w->nlanes].gpu;
        double lat, rate;
        path_lone(t, a, b, &lat, &rate);
        path_res r[3];
        int k = path_resources(t, a, b, r);
        for (int x = 0; x < k; x++) {
            stream_load one = {r[x].key, r[x].cap, v[s].bytes, lat, v[s].first_start,
                               v[s].min_tail};
            merge_into(res, &nr, &h, one);
            per[np++] = one;
        }
    }
    for (int i = 0; i < nr; i++) {
        int64_t b = res[i].first_start + cost_ns(res[i].min_lat) +
                    cost_ns(res[i].bytes / res[i].cap) + res[i].min_tail;
        tm->xfer_all_ns = b > tm->xfer_all_ns ? b : tm->xfer_all_ns;
    }
    if (tm->xfer_all_ns > tm->iteration_ns)
        tm->iteration_ns = tm->xfer_all_ns;
    if (np > nr) { /* some resource carries several streams */
        qsort(per, (size_t)np, sizeof *per, by_key_then_start);
        for (int i = 0; i < np;) {
            int k = i;
            while (k < np && per[k].key == per[i].key)
                k++;
            if (k - i > 1) {
                int64_t b = subset_bound(&per[i], k - i);
                tm->xfer_subset_ns = b > tm->xfer_subset_ns ? b : tm->xfer_subset_ns;
            }
            i = k;
        }
    }
    if (tm->xfer_subset_ns > tm->iteration_ns)
        tm->iteration_ns = tm->xfer_subset_ns;
    res_table_free(&h);
    free(res);
    free(per);
    return 0;
}

int transfer_load_bound(const topology *t, const workload *w, timing *tm)
{
    int n = 0;
    for (int i = 0; i < w->nops; i++)
        n += w->ops[i].input >= 0 && w->ops[i].xfer_bytes > 0;
    if (n == 0)
        return 0;
    int64_t *tail = malloc(sizeof *tail * (size_t)w->nops);
    stream_load *v = malloc(sizeof *v * (size_t)n);
    int *slot = malloc(sizeof *slot * (size_t)(4 * w->nlanes));
    res_table h = {0};
    if (!tail || !v || !slot || res_table_init(&h, n)) {
        free(tail);
        free(v);
        free(slot);
        return -1;
    }
    lane_tails(w, tail);
    int ns = 0;
    for (int i = 0; i < 4 * w->nlanes; i++)
        slot[i] = -1;
    for (int i = 0; i < w->nops; i++) {
        const wl_op *o = &w->ops[i];
        if (o->input < 0 || o->xfer_bytes <= 0)
            continue;
        int src = w->ops[o->input].lane;
        long pair = (long)src * w->nlanes + o->lane;
        add_to_stream(v, &ns, slot, &h, src, o->lane,
                      (stream_load){pair, 0, o->xfer_bytes, 0, tm->ops[i].xfer_start, tail[i]});
    }
    res_table_free(&h);
    int rc = resources_bound(t, w, v, ns, tm);
    free(tail);
    free(v);
    free(slot);
    return rc;
}

int transfer_streams_bound(const topology *t, const workload *w, const xfer_stream *s, int n,
                           timing *tm)
{
    if (n == 0)
        return 0;
    stream_load *v = malloc(sizeof *v * (size_t)n);
    if (!v)
        return -1;
    for (int i = 0; i < n; i++)
        v[i] = (stream_load){(long)s[i].src_lane * w->nlanes + s[i].dst_lane, 0, s[i].bytes, 0,
                             s[i].first_start, s[i].min_tail};
    int rc = resources_bound(t, w, v, n, tm);
    free(v);
    return rc;
}
