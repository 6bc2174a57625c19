/* xfer_kept.c — the per-stage path's transfer bound (load_bound.h:
 * transfer_streams_bound) with each resource's result kept across
 * evaluations.
 *
 * A resource's bound reads nothing but the streams that cross it: their
 * bytes, counts, earliest starts and least tails, and their paths'
 * latencies and capacities. Along a search most streams come back as they
 * were (a mutation retimes one or two pipelines), so this pass keeps, per
 * resource, its streams (by index, ascending: the order the full pass
 * merges them in), its all-streams bound, its subsets' ceiling and, once
 * asked for, its best subset. An evaluation compares each stream with the
 * one kept at its index, moves a stream whose GPUs changed to the
 * resources of its new path, and works out again only the resources a
 * changed stream crosses, with the same functions in the same order as the
 * full pass (stream_load.h). The maxima over resources do not depend on
 * their order, so the figures are the full pass's to the ns.
 *
 * The paths come from the caller's path memo; the kept state holds while
 * its epoch (the collective cache's generation, with which the memo is
 * reset) does. Keys past the array (lb_work_array_keys), no memo, or the
 * every-subset oracle leave it to the full pass (load_bound.c), which
 * stays the reference: tests/test_estimator_fast.c compares a kept
 * workspace with a fresh one and with the op path on every output. */
#include "sim/estimator/load_bound.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"
#include "sim/base/msort.h"
#include "sim/base/res_table.h"
#include "sim/estimator/stream_load.h"

/* One stream as the last evaluation gave it, by the GPUs at its ends. */
typedef struct kept_stream {
    int a, b;              /* source and destination GPU */
    double bytes;
    long n;
    int64_t first_start, min_tail;
} kept_stream;

/* A stream on a resource: its index and what its path gives the entry. */
typedef struct on_res {
    int s;
    double cap, lat;
} on_res;

/* One resource some kept stream crossed. */
typedef struct kept_res {
    long key;
    on_res *on;            /* its streams, by ascending index */
    int non;
    size_t cap_on;
    int64_t all;           /* all_streams_bound of its streams */
    int64_t ceil;          /* subset_ceiling (two streams or more) */
    int64_t sub;           /* subset_bound, when has_sub */
    int has_sub;
    int dirty;             /* listed to be worked out again */
    int act;               /* its place in the active list, -1: no streams */
} kept_res;

struct xfer_kept {
    unsigned long epoch;   /* the lb_work paths_epoch the state holds for (0: none) */
    unsigned long off;     /* an epoch with keys past the array: the full pass */
    long nkeys;
    int *slot;             /* resource key -> its record, -1: none */
    size_t cap_slot;
    kept_res *r;
    int nr;
    size_t cap_r;
    int *act, nact;        /* records with streams */
    size_t cap_act;
    int *dirty, ndirty;
    size_t cap_dirty;
    kept_stream *s;        /* the kept streams, by index */
    int ns;
    size_t cap_s;
    stream_load *tmp;      /* one resource's entries and the sort's scratch */
    size_t cap_tmp;
    int taken;             /* the last evaluation's resources taken as kept */
};

void xfer_kept_free(xfer_kept *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->cap_r; i++) /* records past nr may keep a list from before a reset */
        free(k->r[i].on);
    free(k->slot);
    free(k->r);
    free(k->act);
    free(k->dirty);
    free(k->s);
    free(k->tmp);
    free(k);
}

int xfer_kept_taken(const xfer_kept *k)
{
    return k ? k->taken : 0;
}

/* Forgets every stream and resource (the lists' memory kept). */
static int reset(xfer_kept *k, long nkeys, unsigned long epoch)
{
    k->epoch = 0;
    if (res_dense_grow(&k->slot, &k->cap_slot, nkeys))
        return -1;
    for (int i = 0; i < k->nr; i++) /* the records themselves are made anew (record) */
        k->slot[k->r[i].key] = -1;
    k->nr = k->nact = k->ns = 0;
    k->nkeys = nkeys;
    k->epoch = epoch;
    return 0;
}

/* The record of resource key, made when new; -1 when out of memory. */
static int record(xfer_kept *k, long key)
{
    if (k->slot[key] >= 0)
        return k->slot[key];
    if ((size_t)k->nr == k->cap_r) {
        size_t old = k->cap_r;
        if (gt_grow(&k->r, &k->cap_r, 2 * old + 16, sizeof *k->r))
            return -1;
        memset(k->r + old, 0, sizeof *k->r * (k->cap_r - old));
    }
    kept_res *x = &k->r[k->nr];
    *x = (kept_res){key, x->on, 0, x->cap_on, 0, 0, 0, 0, 0, -1};
    k->slot[key] = k->nr;
    return k->nr++;
}

static int mark(xfer_kept *k, int i)
{
    if (k->r[i].dirty)
        return 0;
    if (gt_grow(&k->dirty, &k->cap_dirty, (size_t)k->ndirty + 1, sizeof *k->dirty))
        return -1;
    k->r[i].dirty = 1;
    k->dirty[k->ndirty++] = i;
    return 0;
}

/* Stream si's entry on record x: taken off (op < 0), put on in index order
 * (op > 0), or left (op == 0, its figures changed). */
static int place(kept_res *x, int si, int op, double cap, double lat)
{
    if (op < 0) {
        int p = 0;
        while (p < x->non && x->on[p].s != si)
            p++;
        if (p < x->non) {
            memmove(&x->on[p], &x->on[p + 1], sizeof *x->on * (size_t)(x->non - p - 1));
            x->non--;
        }
    } else if (op > 0) {
        if (gt_grow(&x->on, &x->cap_on, (size_t)x->non + 1, sizeof *x->on))
            return -1;
        int p = x->non;
        while (p > 0 && x->on[p - 1].s > si)
            p--;
        memmove(&x->on[p + 1], &x->on[p], sizeof *x->on * (size_t)(x->non - p));
        x->on[p] = (on_res){si, cap, lat};
        x->non++;
    }
    return 0;
}

/* Stream si over the path from GPU a to GPU b, onto or off its resources
 * (place's op), each marked to be worked out again. 0; 1 when a key is
 * past the array or there is no path entry; -1 when out of memory. */
static int touch(xfer_kept *k, path_memo *pm, const topology *t, int a, int b, int si, int op)
{
    const path_entry *pe = path_memo_get(pm, t, a, b);
    if (!pe)
        return 1;
    for (int x = 0; x < pe->nres; x++) {
        if (pe->res[x].key >= k->nkeys)
            return 1;
        int i = record(k, pe->res[x].key);
        if (i < 0 || place(&k->r[i], si, op, pe->res[x].cap, pe->lat) || mark(k, i))
            return -1;
    }
    return 0;
}

static int same_stream(const kept_stream *x, const kept_stream *y)
{
    return x->a == y->a && x->b == y->b && !memcmp(&x->bytes, &y->bytes, sizeof x->bytes) &&
           x->n == y->n && x->first_start == y->first_start && x->min_tail == y->min_tail;
}

/* The kept streams brought to s[0..n): each one that differs from the one
 * kept at its index is taken off its old resources and put on its new ones
 * (only marked, when its GPUs did not change). 0; 1 (the full pass); -1. */
static int diff_streams(xfer_kept *k, const topology *t, const workload *w, path_memo *pm,
                        const xfer_stream *s, int n)
{
    int top = n > k->ns ? n : k->ns;
    if (gt_grow(&k->s, &k->cap_s, (size_t)top, sizeof *k->s))
        return -1;
    for (int i = 0; i < top; i++) {
        kept_stream now = {0};
        if (i < n)
            now = (kept_stream){w->lanes[s[i].src_lane].gpu, w->lanes[s[i].dst_lane].gpu,
                                s[i].bytes, s[i].count, s[i].first_start, s[i].min_tail};
        int had = i < k->ns, has = i < n, rc = 0;
        if (had && has && same_stream(&k->s[i], &now))
            continue;
        int moved = !(had && has && k->s[i].a == now.a && k->s[i].b == now.b);
        if (had)
            rc = touch(k, pm, t, k->s[i].a, k->s[i].b, i, moved ? -1 : 0);
        if (!rc && has && moved)
            rc = touch(k, pm, t, now.a, now.b, i, 1);
        if (rc)
            return rc;
        if (has)
            k->s[i] = now;
    }
    k->ns = n;
    return 0;
}

/* Record x's entries into k->tmp, in index order: what the full pass's
 * per-resource entries hold. */
static int entries(xfer_kept *k, const kept_res *x)
{
    if (gt_grow(&k->tmp, &k->cap_tmp, 2 * (size_t)x->non, sizeof *k->tmp))
        return -1;
    for (int p = 0; p < x->non; p++) {
        const kept_stream *st = &k->s[x->on[p].s];
        k->tmp[p] = (stream_load){x->key, x->on[p].cap, st->bytes, x->on[p].lat, st->n,
                                  st->first_start, st->min_tail};
    }
    return 0;
}

/* A marked record's bounds worked out again from its streams. */
static int redo(xfer_kept *k, int i)
{
    kept_res *x = &k->r[i];
    x->dirty = 0;
    x->has_sub = 0;
    if (x->non == 0) {
        if (x->act >= 0) { /* off the active list: the last one takes its place */
            int last = k->act[--k->nact];
            k->act[x->act] = last;
            k->r[last].act = x->act;
            x->act = -1;
        }
        return 0;
    }
    if (x->act < 0) {
        if (gt_grow(&k->act, &k->cap_act, (size_t)k->nact + 1, sizeof *k->act))
            return -1;
        x->act = k->nact;
        k->act[k->nact++] = i;
    }
    if (entries(k, x))
        return -1;
    stream_load all = k->tmp[0];
    for (int p = 1; p < x->non; p++)
        merge_at(&all, &k->tmp[p]);
    x->all = all_streams_bound(&all);
    if (x->non > 1) {
        gt_sort_small(k->tmp, (size_t)x->non, sizeof *k->tmp, by_key_then_start,
                      k->tmp + x->non);
        x->ceil = subset_ceiling(k->tmp, x->non);
    }
    return 0;
}

/* Record x's best subset (worked out once per change of its streams). */
static int subset_of(xfer_kept *k, kept_res *x)
{
    if (!x->has_sub) {
        if (entries(k, x))
            return -1;
        gt_sort_small(k->tmp, (size_t)x->non, sizeof *k->tmp, by_key_then_start,
                      k->tmp + x->non);
        x->sub = subset_bound(k->tmp, x->non);
        x->has_sub = 1;
    }
    return 0;
}

/* The maxima over the active resources, as resources_bound raises them. */
static int raise_iteration(xfer_kept *k, timing *tm)
{
    int multi = 0;
    for (int a = 0; a < k->nact; a++) {
        const kept_res *x = &k->r[k->act[a]];
        tm->xfer_all_ns = x->all > tm->xfer_all_ns ? x->all : tm->xfer_all_ns;
        multi |= x->non > 1;
    }
    if (tm->xfer_all_ns > tm->iteration_ns)
        tm->iteration_ns = tm->xfer_all_ns;
    if (multi) {
        int64_t best = 0, beat = tm->iteration_ns;
        for (int a = 0; a < k->nact; a++) {
            kept_res *x = &k->r[k->act[a]];
            if (x->non < 2 || x->ceil <= beat)
                continue; /* no subset here can raise the estimate */
            if (subset_of(k, x))
                return -1;
            best = x->sub > best ? x->sub : best;
        }
        tm->xfer_subset_ns = best > tm->xfer_subset_ns ? best : tm->xfer_subset_ns;
    }
    if (tm->xfer_subset_ns > tm->iteration_ns)
        tm->iteration_ns = tm->xfer_subset_ns;
    return 0;
}

int xfer_kept_bound(const topology *t, const workload *w, const xfer_stream *s, int n,
                    timing *tm, lb_work *lw)
{
    unsigned long epoch = lw->paths_epoch;
    if (lw->kept)
        lw->kept->taken = 0;
    if (!lw->pm || !epoch || lw->every_subset)
        return 1;
    if (!lw->kept && !(lw->kept = calloc(1, sizeof *lw->kept)))
        return -1;
    xfer_kept *k = lw->kept;
    long nkeys = lb_work_array_keys(lw, t);
    if (k->off == epoch)
        return 1;
    if ((k->epoch != epoch || k->nkeys != nkeys) && reset(k, nkeys, epoch))
        return -1;
    k->ndirty = 0;
    int rc = diff_streams(k, t, w, lw->pm, s, n);
    for (int d = 0; d < k->ndirty && rc == 0; d++)
        rc = redo(k, k->dirty[d]);
    if (rc == 0) {
        k->taken = k->nact;
        for (int d = 0; d < k->ndirty; d++)
            k->taken -= k->r[k->dirty[d]].act >= 0;
        rc = raise_iteration(k, tm);
    }
    if (rc) { /* half done: nothing kept; a key past the array: not tried again */
        for (int d = 0; d < k->ndirty; d++)
            k->r[k->dirty[d]].dirty = 0;
        k->epoch = 0;
        k->off = rc > 0 ? epoch : k->off;
        k->taken = 0;
    }
    return rc;
}
