/* load_bound.c — lower bounds from shared-resource load (load_bound.h): the
 * pipeline transfers' bound (the sync groups' is group_bound.c). */
#include "sim/estimator/load_bound.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"
#include "sim/base/msort.h"
#include "sim/models/cost.h"
#include "sim/base/res_table.h"
#include "sim/models/path.h"
#include "sim/estimator/stream_load.h"

long lb_array_keys(const topology *t)
{
    long G = t->ngpus, N = t->nnodes, all = path_dense_count(t) + N * N + G * G;
    return all <= LB_ARRAY_KEYS_MAX ? all : path_dense_count(t);
}

long lb_work_array_keys(const lb_work *lw, const topology *t)
{
    return lw->array_keys > 0 ? lw->array_keys : lb_array_keys(t);
}

/* --- pipeline transfers --------------------------------------------------------- */

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

/* The streams being gathered: v[0..n) in lw, two slots per lane, and the
 * table of the rare third producer, made on first need. */
typedef struct stream_set {
    lb_work *lw;
    int n;
    int transfers;         /* the most distinct streams there can be */
    int table;             /* lw->h holds this gathering's keys */
} stream_set;

/* The stream entry of transfers from lane src into lane dst. A lane's
 * inputs come from one or two neighbour lanes (previous stage forward, next
 * stage backward), so two slots per lane find it without hashing, and v
 * holds two streams per lane; a third producer goes through the table
 * (sized to every transfer only then: it was most of a large replay's
 * peak memory). Streams keep their first-seen order either way. */
static int add_to_stream(stream_set *ss, int src, int dst, stream_load x)
{
    lb_work *lw = ss->lw;
    for (int k = 0; k < 2; k++) {
        int *sl = &lw->slot[2 * (2 * dst + k)];
        if (sl[0] == src) {
            merge_at(&lw->v[sl[1]], &x);
            return 0;
        }
        if (sl[0] < 0) {
            sl[0] = src;
            sl[1] = ss->n;
            lw->v[ss->n++] = x;
            return 0;
        }
    }
    if (!ss->table) {
        if (res_table_reserve(&lw->h, &lw->cap_h, ss->transfers))
            return -1;
        ss->table = 1;
    }
    if (gt_grow(&lw->v, &lw->cap_v, 2 * (size_t)(ss->n + 1), sizeof *lw->v))
        return -1;
    merge_into(lw->v, &ss->n, &lw->h, x);
    return 0;
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

int64_t lane_drain_ns(int64_t xfer_ns, int64_t next_work, int64_t next_drain)
{
    return t_add(xfer_ns, t_add(next_work, next_drain));
}

/* Turns tail[] (lane work + optimizer, lane_tails) into lane work + the
 * lane's drain: the longest chain, through the lone transfers out of each
 * lane's last op, of work that must still follow that op. Every link of the
 * chain is a lower bound of the replay's (an op starts after its input has
 * arrived, a transfer takes at least its lone time, a lane's last op is
 * followed by its optimizer step), so the sum is too. Lanes form a DAG
 * through last ops (a cycle would make an op wait on itself), so relaxing
 * the few (last op -> consumer) edges at most nlanes + 1 times settles it. */
static int lane_drains(const workload *w, const timing *tm, int64_t *tail, lb_work *lw)
{
    int nl = w->nlanes;
    if (gt_grow(&lw->drain, &lw->cap_drain, (size_t)nl, sizeof *lw->drain) ||
        gt_grow(&lw->last, &lw->cap_last, (size_t)nl, sizeof *lw->last))
        return -1;
    int64_t *drain = lw->drain;
    int *last = lw->last;
    for (int l = 0; l < nl; l++) {
        last[l] = -1;
        for (int id = w->lanes[l].first_op; id >= 0; id = w->ops[id].next_on_lane)
            last[l] = id;
        drain[l] = w->lanes[l].opt_ns;
    }
    int nf = 0;
    for (int i = 0; i < w->nops; i++) {
        int p = w->ops[i].input;
        if (p >= 0 && w->ops[p].lane != w->ops[i].lane && last[w->ops[p].lane] == p) {
            if (gt_grow(&lw->feed, &lw->cap_feed, (size_t)nf + 1, sizeof *lw->feed))
                return -1;
            lw->feed[nf++] = i;
        }
    }
    for (int pass = 0, changed = 1; changed && pass <= nl; pass++) {
        changed = 0;
        for (int f = 0; f < nf; f++) {
            const wl_op *c = &w->ops[lw->feed[f]];
            int from = w->ops[c->input].lane;
            int64_t d = lane_drain_ns(tm->ops[lw->feed[f]].arrival - tm->ops[lw->feed[f]].xfer_start,
                                      tail[lw->feed[f]] - w->lanes[c->lane].opt_ns,
                                      drain[c->lane]);
            if (d > drain[from]) {
                drain[from] = d;
                changed = 1;
            }
        }
    }
    for (int i = 0; i < w->nops; i++) {
        int l = w->ops[i].lane;
        tail[i] = t_add(tail[i] - w->lanes[l].opt_ns, drain[l]);
    }
    return 0;
}

/* Raises tail[i] (lane work + drain) to the chain through op i's consumer on
 * another lane: op i, the lone transfer, then the consumer's own tail (a
 * stage's forward feeds the next stage's, whose lane may have more left to
 * do than this one's). Each consumer's tail is settled before its
 * producer's: a walk down the consumers to a settled op (or one with none),
 * then back up (memo: -1 while unsettled, 1 once settled). */
static int lane_chains(const workload *w, const timing *tm, int64_t *tail, lb_work *lw)
{
    int n = w->nops;
    if (gt_grow(&lw->feed, &lw->cap_feed, 2 * (size_t)n, sizeof *lw->feed))
        return -1;
    int *settled = lw->feed, *stack = lw->feed + n;
    for (int i = 0; i < n; i++)
        settled[i] = 0;
    for (int i = 0; i < n; i++) {
        int top = 0;
        for (int j = i; j >= 0 && !settled[j]; ) {
            stack[top++] = j;
            settled[j] = -1;
            int c = w->ops[j].consumer;
            j = c >= 0 && w->ops[c].lane != w->ops[j].lane ? c : -1;
        }
        while (top > 0) {
            int j = stack[--top], c = w->ops[j].consumer;
            if (c >= 0 && w->ops[c].lane != w->ops[j].lane) {
                int64_t v = t_add(w->ops[j].dur_ns,
                                  t_add(tm->ops[c].arrival - tm->ops[c].xfer_start, tail[c]));
                tail[j] = v > tail[j] ? v : tail[j];
            }
            settled[j] = 1;
        }
    }
    return 0;
}

void lb_work_free(lb_work *lw)
{
    sync_loads_free(&lw->sl);
    free(lw->v);
    free(lw->res);
    free(lw->per);
    free(lw->ri);
    free(lw->dense);
    free(lw->tail);
    free(lw->slot);
    free(lw->drain);
    free(lw->last);
    free(lw->feed);
    res_table_free(&lw->h);
    xfer_kept_free(lw->kept);
    *lw = (lb_work){0};
}

/* The best subset bound over resources whose subsets may give more than
 * beat (the estimate so far, or -1 for all; 0 when none): the (stream, resource) entries
 * per[0..np), of resource index ri[x] (0..nr), grouped by resource with a
 * counting pass into out (np entries; per is the sorts' scratch after). A
 * resource's entries then come sorted by start as a full sort by key would
 * give them, and the maximum does not depend on the order of resources. */
static int64_t best_subset(stream_load *per, const int *ri, int np, int nr, int *off,
                           stream_load *out, int64_t beat)
{
    for (int r = 0; r <= nr; r++)
        off[r] = 0;
    for (int x = 0; x < np; x++)
        off[ri[x] + 1]++;
    for (int r = 0; r < nr; r++)
        off[r + 1] += off[r];
    for (int x = 0; x < np; x++) /* off[r]: next free place of resource r */
        out[off[ri[x]]++] = per[x];
    int64_t best = 0;
    for (int r = 0, i = 0; r < nr; i = off[r++]) { /* off[r]: now the end of resource r */
        int n = off[r] - i;
        if (n < 2)
            continue;
        gt_sort_small(&out[i], (size_t)n, sizeof *out, by_key_then_start, per);
        if (subset_ceiling(&out[i], n) <= beat)
            continue; /* no subset here can raise the estimate */
        int64_t b = subset_bound(&out[i], n);
        best = b > best ? b : best;
    }
    return best;
}

/* Each stream onto the resources it crosses; raises the iteration to the
 * largest resource bound: all of a resource's transfers together, and
 * (with several streams on it) its best subset of streams. */
static int resources_bound(const topology *t, const workload *w, const stream_load *v, int ns,
                           timing *tm, lb_work *lw)
{
    /* per: one entry per (stream, resource); ri: its resource's index in res */
    long ndense = lb_work_array_keys(lw, t);
    if (gt_grow(&lw->res, &lw->cap_res, (size_t)(3 * ns), sizeof *lw->res) ||
        gt_grow(&lw->per, &lw->cap_per, (size_t)(3 * ns), sizeof *lw->per) ||
        gt_grow(&lw->ri, &lw->cap_ri, (size_t)(6 * ns + 1), sizeof *lw->ri) ||
        res_dense_grow(&lw->dense, &lw->cap_dense, ndense) || res_table_reserve(&lw->h, &lw->cap_h, 3 * ns))
        return -1;
    stream_load *res = lw->res, *per = lw->per;
    int *ri = lw->ri;
    int nr = 0, np = 0;
    for (int s = 0; s < ns; s++) {
        int a = w->lanes[v[s].key / w->nlanes].gpu, b = w->lanes[v[s].key % w->nlanes].gpu;
        const path_entry *pe = path_memo_get(lw->pm, t, a, b);
        path_res own[PATH_MAX_RES];
        const path_res *r = pe ? pe->res : own;
        double lat = pe ? pe->lat : path_latency(t, a, b); /* path_lone's */
        int k = pe ? pe->nres : path_resources(t, a, b, own);
        for (int x = 0; x < k; x++) {
            stream_load one = {r[x].key, r[x].cap, v[s].bytes, lat, v[s].n, v[s].first_start,
                               v[s].min_tail};
            bool added;
            int i = res_index(lw->dense, ndense, &lw->h, one.key, nr, &added);
            if (added)
                res[nr++] = one;
            else
                merge_at(&res[i], &one);
            ri[np] = i;
            per[np++] = one;
        }
    }
    for (int i = 0; i < nr; i++) /* lw->dense back to all -1 */
        if (res[i].key < ndense)
            lw->dense[res[i].key] = -1;
    for (int i = 0; i < nr; i++) {
        int64_t b = all_streams_bound(&res[i]);
        tm->xfer_all_ns = b > tm->xfer_all_ns ? b : tm->xfer_all_ns;
    }
    if (tm->xfer_all_ns > tm->iteration_ns)
        tm->iteration_ns = tm->xfer_all_ns;
    if (np > nr) { /* some resource carries several streams; res is free now */
        int64_t b = best_subset(per, ri, np, nr, ri + np, res,
                                lw->every_subset ? -1 : tm->iteration_ns);
        tm->xfer_subset_ns = b > tm->xfer_subset_ns ? b : tm->xfer_subset_ns;
    }
    if (tm->xfer_subset_ns > tm->iteration_ns)
        tm->iteration_ns = tm->xfer_subset_ns;
    return 0;
}

int transfer_load_bound(const topology *t, const workload *w, timing *tm, lb_work *lw)
{
    int n = 0;
    for (int i = 0; i < w->nops; i++)
        n += w->ops[i].input >= 0 && w->ops[i].xfer_bytes > 0;
    if (n == 0)
        return 0;
    if (gt_grow(&lw->tail, &lw->cap_tail, (size_t)w->nops, sizeof *lw->tail) ||
        gt_grow(&lw->v, &lw->cap_v, 2 * (size_t)w->nlanes, sizeof *lw->v) ||
        gt_grow(&lw->slot, &lw->cap_slot, (size_t)(4 * w->nlanes), sizeof *lw->slot))
        return -1;
    int64_t *tail = lw->tail;
    lane_tails(w, tail);
    if (lane_drains(w, tm, tail, lw) || lane_chains(w, tm, tail, lw))
        return -1;
    for (int i = 0; i < 4 * w->nlanes; i++)
        lw->slot[i] = -1;
    stream_set ss = {lw, 0, n, 0};
    for (int i = 0; i < w->nops; i++) {
        const wl_op *o = &w->ops[i];
        if (o->input < 0 || o->xfer_bytes <= 0)
            continue;
        int src = w->ops[o->input].lane;
        long pair = (long)src * w->nlanes + o->lane;
        if (add_to_stream(&ss, src, o->lane,
                          (stream_load){pair, 0, o->xfer_bytes, 0, 1, tm->ops[i].xfer_start,
                                        tail[i]}))
            return -1;
    }
    return resources_bound(t, w, lw->v, ss.n, tm, lw);
}

int transfer_streams_bound(const topology *t, const workload *w, const xfer_stream *s, int n,
                           timing *tm, lb_work *lw)
{
    int kept = xfer_kept_bound(t, w, s, n, tm, lw);
    if (kept <= 0 || n == 0)
        return kept < 0 ? -1 : 0;
    if (gt_grow(&lw->v, &lw->cap_v, (size_t)n, sizeof *lw->v))
        return -1;
    stream_load *v = lw->v;
    for (int i = 0; i < n; i++)
        v[i] = (stream_load){(long)s[i].src_lane * w->nlanes + s[i].dst_lane, 0, s[i].bytes, 0,
                             s[i].count, s[i].first_start, s[i].min_tail};
    return resources_bound(t, w, v, n, tm, lw);
}
