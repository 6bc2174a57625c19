/* group_bound.c — the sync groups' cross-group bound on shared resources
 * (load_bound.h: sync_loads_*): the groups' loads gathered per resource,
 * counted across evaluations when their owner keeps them in place. */
#include "sim/estimator/load_bound.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"
#include "sim/base/msort.h"
#include "sim/base/res_table.h"

/* --- sync groups ------------------------------------------------------------- */

/* One group's load on one shared resource, for the cross-group bound. */
struct group_load {
    coll_load l;
    int group;
    int64_t start;
};
typedef struct group_load group_load;

/* One group's loads, where the caller keeps them. */
struct group_ref {
    const coll_load *l;
    int m, group;
    int64_t start;
};
typedef struct group_ref group_ref;

static int by_resource_then_start(const void *a, const void *b)
{
    const group_load *x = a, *y = b;
    if (x->l.key != y->l.key)
        return (x->l.key > y->l.key) - (x->l.key < y->l.key);
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return x->group - y->group;
}

/* Shared resources, to be put in key order (distinct keys). */
typedef struct res_key {
    long key;
    int k;                 /* its index in the count table */
} res_key;

/* v[0..n) in key order (distinct keys, all >= 0), by digits from the
 * lowest (a stable counting sort per digit: a radix sort), tmp the scratch
 * of n entries: as few passes as digits of at most 8 bits need, the bits
 * shared evenly (13-bit keys: two passes of 7 bits, 128 counters each). A
 * comparison sort gave the same order (the keys are distinct) at several
 * times the instructions. */
static void sort_res_keys(res_key *v, int n, res_key *tmp)
{
    long top = 0;
    for (int i = 0; i < n; i++)
        top = v[i].key > top ? v[i].key : top;
    int bits = 0;
    while (bits < 63 && top >> bits)
        bits++;
    int passes = (bits + 7) / 8, width = passes ? (bits + passes - 1) / passes : 0;
    long mask = (1L << width) - 1;
    for (int shift = 0; shift < bits; shift += width) {
        int off[257];
        for (long d = 0; d <= mask + 1; d++)
            off[d] = 0;
        for (int i = 0; i < n; i++)
            off[(v[i].key >> shift & mask) + 1]++;
        for (long d = 0; d < mask + 1; d++)
            off[d + 1] += off[d];
        for (int i = 0; i < n; i++)
            tmp[off[v[i].key >> shift & mask]++] = v[i];
        memcpy(v, tmp, sizeof *v * (size_t)n);
    }
}

/* No load order on one resource can give its bound more than this: the
 * latest start, the largest latency, the least capacity, no rounding credit
 * and all the bytes, their sum (in any order) raised past what any subset's
 * sum in any order can round to (n positive terms: each sum is within
 * (n - 1) ulps' worth of the exact one, so a margin of 8 (n + 1) epsilon
 * covers both sums and the product). Every term of the bound is monotone
 * in each of these. */
static int64_t resource_ceiling(const group_load *gl, int n)
{
    int64_t start = gl[0].start;
    double bytes = 0, lat = gl[0].l.min_lat, cap = gl[0].l.cap;
    for (int x = 0; x < n; x++) {
        start = gl[x].start > start ? gl[x].start : start;
        lat = gl[x].l.min_lat > lat ? gl[x].l.min_lat : lat;
        cap = gl[x].l.cap < cap ? gl[x].l.cap : cap;
        bytes += gl[x].l.bytes;
    }
    bytes *= 1 + 8.0 * (n + 1) * DBL_EPSILON;
    return t_add(start, load_floor_ns(lat, bytes, cap, 0));
}

/* gl[0..n) (n >= 2): one shared resource's loads; the group that ends last
 * on it is held to the resource's bound: for each start s, the groups
 * starting at or after s cannot all finish before s + their bytes /
 * capacity. The loads are sorted by (start, group) first (tmp: the sort's
 * scratch), unless the resource's ceiling cannot pass the latest end among
 * its groups, when nothing can change (most resources: one group's own
 * estimate already covers its loads). */
static void raise_resource(group_load *gl, int n, timing *tm, group_load *tmp)
{
    int64_t latest = tm->group_end[gl[0].group];
    for (int x = 1; x < n; x++)
        latest = tm->group_end[gl[x].group] > latest ? tm->group_end[gl[x].group] : latest;
    if (resource_ceiling(gl, n) <= latest)
        return;
    gt_sort_small(gl, (size_t)n, sizeof *gl, by_resource_then_start, tmp);
    double suffix = 0, lat = gl[n - 1].l.min_lat;
    int64_t bound = 0;
    long flows = 0;
    int last = gl[0].group;
    for (int x = n - 1; x >= 0; x--) {
        suffix += gl[x].l.bytes;
        flows += gl[x].l.flows;
        lat = gl[x].l.min_lat < lat ? gl[x].l.min_lat : lat;
        int64_t b = t_add(gl[x].start, load_floor_ns(lat, suffix, gl[x].l.cap, flows));
        bound = b > bound ? b : bound;
        if (tm->group_end[gl[x].group] >= tm->group_end[last])
            last = gl[x].group;
    }
    if (bound > tm->group_end[last])
        tm->group_end[last] = bound;
}

/* Whether x's loads come before y's in an order of addresses, then of counts. */
static int ref_before(const group_ref *x, const group_ref *y)
{
    uintptr_t a = (uintptr_t)x->l, b = (uintptr_t)y->l;
    return a != b ? a < b : x->m < y->m;
}

static int by_address(const void *x, const void *y)
{
    return ref_before(x, y) ? -1 : ref_before(y, x);
}

/* rc brought to the loads of s's groups: the entries (loads at one
 * address) that this evaluation uses fewer times than the last take their
 * loads off, those it uses more often put theirs on. 0; 1 when a key is past the array (the
 * counts are then dropped); -1 when out of memory. */
static int count_kept(sync_loads *s, long ndense)
{
    if (s->kept_epoch != s->epoch || s->rc_keys != ndense) {
        for (int a = 0; a < 3; a++) {
            int **arr = a == 0 ? &s->rc : a == 1 ? &s->seen : &s->at;
            if (gt_grow(arr, &s->cap_rc[a], (size_t)ndense, sizeof **arr))
                return -1;
        }
        memset(s->rc, 0, sizeof *s->rc * (size_t)ndense);
        memset(s->seen, 0, sizeof *s->seen * (size_t)ndense);
        s->rc_keys = ndense;
        s->stamp = 0;
        s->nlast = 0;
        s->kept_epoch = s->epoch;
    }
    if (gt_grow(&s->cur, &s->cap_cur, 2 * (size_t)s->ng, sizeof *s->cur) ||
        gt_grow(&s->last, &s->cap_last, 2 * (size_t)s->ng, sizeof *s->last))
        return -1; /* both alike: they swap below */
    group_ref *cur = s->cur, *last = s->last;
    memcpy(cur, s->g, sizeof *cur * (size_t)s->ng); /* by the loads' address: a multiset */
    gt_sort_small(cur, (size_t)s->ng, sizeof *cur, by_address, cur + s->ng);
    int i = 0, k = 0;
    while (i < s->nlast || k < s->ng) { /* both in order: what left, what came */
        if (k < s->ng && i < s->nlast && cur[k].l == last[i].l && cur[k].m == last[i].m) {
            i++, k++;
        } else if (k == s->ng || (i < s->nlast && ref_before(&last[i], &cur[k]))) {
            for (int x = 0; x < last[i].m; x++)
                s->rc[last[i].l[x].key]--;
            i++;
        } else {
            for (int x = 0; x < cur[k].m; x++) {
                if (cur[k].l[x].key >= ndense) {
                    s->kept_epoch = 0;
                    s->off_epoch = s->epoch;
                    return 1;
                }
                s->rc[cur[k].l[x].key]++;
            }
            k++;
        }
    }
    s->cur = last; /* cur becomes the last evaluation's */
    s->last = cur;
    size_t c = s->cap_cur;
    s->cap_cur = s->cap_last;
    s->cap_last = c;
    s->nlast = s->ng;
    return 0;
}

/* sync_loads_bound's layout from the kept counts: one pass over the loads
 * picks the shared ones (a count over one) and their resources, which are
 * put in key order; the loads are then placed resource by resource. 0; 1
 * when the counts do not match the loads (dropped); -1 out of memory. */
static int bound_kept(sync_loads *s, timing *tm)
{
    int n = s->n, nsh = 0, nsl = 0;
    if (gt_grow(&s->tmp, &s->cap_tmp, 2 * (size_t)n, sizeof *s->tmp) ||
        gt_grow(&s->rk, &s->cap_rk, 2 * (size_t)n, sizeof *s->rk))
        return -1;
    if (++s->stamp <= 0) { /* wrapped: every key unseen again */
        memset(s->seen, 0, sizeof *s->seen * (size_t)s->rc_keys);
        s->stamp = 1;
    }
    group_load *sh = s->tmp, *picked = s->tmp + n;
    res_key *rk = s->rk;
    for (int q = 0; q < s->ng; q++) {
        const group_ref *r = &s->g[q];
        for (int x = 0; x < r->m; x++) {
            long key = r->l[x].key;
            if (s->rc[key] < 2)
                continue;
            picked[nsl++] = (group_load){r->l[x], r->group, r->start};
            if (s->seen[key] != s->stamp) {
                s->seen[key] = s->stamp;
                rk[nsh++] = (res_key){key, 0};
            }
        }
    }
    sort_res_keys(rk, nsh, rk + nsh);
    int ns = 0;
    for (int r = 0; r < nsh; r++) {
        s->at[rk[r].key] = ns;
        ns += s->rc[rk[r].key];
    }
    if (ns != nsl) { /* counts that do not match the loads (cannot happen while the
                        owner keeps its promise): dropped, the full pass instead */
        s->kept_epoch = 0;
        return 1;
    }
    for (int i = 0; i < nsl; i++)
        sh[s->at[picked[i].l.key]++] = picked[i];
    for (int r = 0, i = 0; r < nsh; r++) { /* at: now where each resource's loads end */
        int e = s->at[rk[r].key];
        raise_resource(&sh[i], e - i, tm, picked);
        i = e;
    }
    return 0;
}

/* Sync groups of different layers run at the same time and share WAN links
 * and NICs, which each group's own estimate ignores. On each resource, the
 * groups starting at or after time s cannot all have finished before
 * s + their bytes / capacity; the group that the estimate ends last on that
 * resource is held to the largest such bound. With one group per resource
 * nothing changes, so contention-free plans stay exact. */
int sync_loads_bound(sync_loads *s, long ndense, timing *tm)
{
    int n = s->n;
    if (n == 0)
        return 0;
    if (s->epoch && s->epoch != s->off_epoch) {
        int rc = count_kept(s, ndense);
        if (rc == 0)
            rc = bound_kept(s, tm);
        if (rc <= 0)
            return rc;
    } else if (!s->epoch) {
        s->kept_epoch = 0; /* another caller's loads: counted anew next time */
    }
    /* Only resources with several loads can raise a group, and most (a
     * GPU's own NIC) carry one. Their loads are laid out resource by
     * resource in key order, each resource's sorted by start: the order a
     * full sort by (key, start, group) gives (a total order, one load per
     * group and resource), without sorting every load. The order of
     * resources matters: each one may raise a group that the next sees. */
    if (gt_grow(&s->tmp, &s->cap_tmp, 2 * (size_t)n, sizeof *s->tmp) ||
        gt_grow(&s->cnt, &s->cap_cnt, 3 * (size_t)n, sizeof *s->cnt) ||
        gt_grow(&s->rk, &s->cap_rk, 2 * (size_t)n, sizeof *s->rk) ||
        gt_grow(&s->key, &s->cap_key, (size_t)n, sizeof *s->key) ||
        res_dense_grow(&s->dense, &s->cap_dense, ndense) || res_table_reserve(&s->h, &s->cap_h, n))
        return -1;
    /* loads numbered i = 0 .. n-1 group by group; cnt[k]: loads on the k-th
     * distinct resource, key[k] its key */
    int nk = 0, ns = 0, nsh = 0, *cnt = s->cnt, *res_of = s->cnt + n, *off = s->cnt + 2 * n;
    int *dense = s->dense;
    long *keys = s->key;
    for (int q = 0, i = 0; q < s->ng; q++) {
        const coll_load *l = s->g[q].l;
        for (int x = 0, m = s->g[q].m; x < m; x++, i++) {
            bool added;
            int k = res_index(dense, ndense, &s->h, l[x].key, nk, &added);
            if (added) {
                cnt[nk] = 0;
                keys[nk++] = l[x].key;
            }
            cnt[k]++;
            res_of[i] = k;
        }
    }
    res_key *rk = s->rk;
    for (int k = 0; k < nk; k++) { /* s->dense back to all -1; the shared resources */
        long key = keys[k];
        if (key < ndense)
            dense[key] = -1;
        if (cnt[k] > 1) {
            rk[nsh++] = (res_key){key, k};
            off[k] = cnt[k];
            cnt[k] = -cnt[k]; /* shared */
        }
    }
    sort_res_keys(rk, nsh, rk + nsh);
    for (int r = 0; r < nsh; r++) { /* off[k]: where resource k's loads start */
        int c = off[rk[r].k];
        off[rk[r].k] = ns;
        ns += c;
    }
    group_load *sh = s->tmp;
    for (int q = 0, i = 0; q < s->ng; q++) {
        const group_ref *r = &s->g[q];
        for (int x = 0; x < r->m; x++, i++)
            if (cnt[res_of[i]] < 0)
                sh[off[res_of[i]]++] = (group_load){r->l[x], r->group, r->start};
    }
    for (int r = 0, i = 0; r < nsh; r++) { /* off[k]: now where they end */
        int e = off[rk[r].k];
        raise_resource(&sh[i], e - i, tm, sh + ns);
        i = e;
    }
    return 0;
}

void sync_loads_reset(sync_loads *s)
{
    for (size_t i = 0; i < s->nowned; i++)
        free(s->owned[i]);
    s->nowned = 0;
    s->ng = s->n = 0;
}

int sync_loads_push(sync_loads *s, const coll_load *l, int m, int group, int64_t start)
{
    if (gt_grow(&s->g, &s->cap_g, s->ng < (int)s->cap_g ? s->cap_g : 2 * s->cap_g + 16,
                sizeof *s->g))
        return -1;
    s->g[s->ng++] = (group_ref){l, m, group, start};
    s->n += m;
    return 0;
}

int sync_loads_add(sync_loads *s, const coll_plan *c, const topology *t, const workload *w,
                   int group, int64_t start)
{
    coll_load *l;
    int m = collective_loads(c, t, w, &l);
    if (m < 0)
        return -1;
    if (gt_grow(&s->owned, &s->cap_owned, s->nowned + 1, sizeof *s->owned)) {
        free(l);
        return -1;
    }
    s->owned[s->nowned++] = l; /* read by sync_loads_bound, freed at the next reset */
    return sync_loads_push(s, l, m, group, start);
}

void sync_loads_free(sync_loads *s)
{
    sync_loads_reset(s);
    free(s->g);
    free(s->owned);
    free(s->key);
    free(s->tmp);
    free(s->cnt);
    free(s->rk);
    free(s->dense);
    int *counts[] = {s->rc, s->seen, s->at}; /* the kept counts (count_kept) */
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        free(counts[i]);
    free(s->last);
    free(s->cur);
    res_table_free(&s->h);
    *s = (sync_loads){0};
}
