/* estimator.c — the contention-free recurrence (estimator.h, DESIGN 5).
 *
 * Contention enters only through lower bounds on the iteration
 * (load_bound.h), so the estimate stays below the simulator's replay.
 *
 * Ops are processed in dependency order (Kahn's algorithm over "previous op
 * on my GPU" and "op whose output I need"), so each op's start is
 * max(GPU free, input arrived) with arrival = producer end + lone transfer. */
#include "sim/estimator/estimator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/models/accounting.h"
#include "sim/models/collective.h"
#include "sim/models/cost.h"
#include "sim/estimator/load_bound.h"
#include "sim/estimator/coll_cache.h"
#include "sim/estimator/stage_path.h"
#include "sim/models/path.h"
#include "sim/models/plan_check.h"

/* The last transfer priced into each lane, per producer lane: a lane's
 * inputs come from one or two neighbours with the same bytes every
 * microbatch, so most lookups hit and skip the path computation. */
typedef struct xfer_memo {
    int src;
    double bytes;
    int64_t ns;
} xfer_memo;

static int64_t transfer_ns(const topology *t, const workload *w, const wl_op *o, xfer_memo *memo)
{
    int src = w->ops[o->input].lane;
    xfer_memo *m = &memo[2 * o->lane];
    if (m->src != src && m->src >= 0)
        m++;
    if (m->src == src && m->bytes == o->xfer_bytes)
        return m->ns;
    double lat, rate;
    path_lone(t, w->lanes[src].gpu, w->lanes[o->lane].gpu, &lat, &rate);
    *m = (xfer_memo){src, o->xfer_bytes, cost_transfer_ns(o->xfer_bytes, lat, rate)};
    return m->ns;
}

static double wan_bytes_of(const topology *t, const workload *w, int src_lane, int dst_lane,
                           double bytes)
{
    return t->gpus[w->lanes[src_lane].gpu].site != t->gpus[w->lanes[dst_lane].gpu].site ? bytes
                                                                                      : 0;
}

/* Forward/backward ops in dependency order; each lane's bwd_end is the end
 * of its last op. */
static int run_ops(const topology *t, const workload *w, timing *tm, gt_err *e)
{
    int n = w->nops;
    int *pending = calloc((size_t)(n > 0 ? n : 1), sizeof *pending);
    int *queue = malloc(sizeof *queue * (size_t)(n > 0 ? n : 1));
    xfer_memo *memo = malloc(sizeof *memo * (size_t)(2 * w->nlanes + 2));
    if (!pending || !queue || !memo) {
        free(pending);
        free(queue);
        free(memo);
        return gt_fail(e, "out of memory");
    }
    for (int l = 0; l < 2 * w->nlanes + 2; l++)
        memo[l] = (xfer_memo){-1, 0, 0};
    /* A lane's ops run in lane order (each waits for the one before it), so
     * the lane's running end is its previous op's end, and after the pass
     * it is the lane's last end (bwd_end). */
    for (int l = 0; l < w->nlanes; l++)
        tm->lanes[l].bwd_end = 0;
    for (int i = 0; i < n; i++) {
        if (w->ops[i].next_on_lane >= 0)
            pending[w->ops[i].next_on_lane]++;
        if (w->ops[i].input >= 0)
            pending[i]++;
    }
    int head = 0, tail = 0;
    for (int i = 0; i < n; i++)
        if (!pending[i])
            queue[tail++] = i;
    /* successors of an op: the next op on its lane and the op needing its output */
    while (head < tail) {
        int id = queue[head++];
        const wl_op *o = &w->ops[id];
        op_time *ot = &tm->ops[id];
        int64_t *lane_end = &tm->lanes[o->lane].bwd_end;
        int64_t ready = *lane_end;
        int64_t arrival = 0, xs = 0;
        if (o->input >= 0) {
            xs = tm->ops[o->input].end;
            arrival = t_add(xs, o->xfer_bytes > 0 ? transfer_ns(t, w, o, memo) : 0);
            if (o->xfer_bytes > 0)
                tm->wan_bytes += wan_bytes_of(t, w, w->ops[o->input].lane, o->lane, o->xfer_bytes);
        }
        ot->xfer_start = xs;
        ot->arrival = arrival;
        ot->start = ready > arrival ? ready : arrival;
        ot->end = t_add(ot->start, o->dur_ns); /* saturates at the cap: timecap.h */
        *lane_end = ot->end;
        int next[2] = {o->next_on_lane, o->consumer};
        for (int k = 0; k < 2; k++)
            if (next[k] >= 0 && --pending[next[k]] == 0)
                queue[tail++] = next[k];
    }
    free(pending);
    free(queue);
    free(memo);
    if (tail != n)
        return gt_fail(e, "the schedule deadlocks (%d of %d ops could run)", tail, n);
    return 0;
}

/* When a group's collective may start: all members' gradients ready, i.e.
 * after their last backward op, or (overlapped sync) part of the way
 * through it (the lane's last op: from sp's sums on the per-stage path). */
static int64_t group_ready(const timing *tm, const sync_group *sg, const stage_path *sp)
{
    int64_t start = 0;
    for (int m = 0; m < sg->nmembers; m++) {
        int64_t r = tm->lanes[sg->members[m]].bwd_end;
        if (sg->ready_op) {
            int64_t s0, s1;
            if (sp) {
                s0 = sp->lanes[sg->members[m]].last_start;
                s1 = sp->lanes[sg->members[m]].last_end;
            } else {
                s0 = tm->ops[sg->ready_op[m]].start;
                s1 = tm->ops[sg->ready_op[m]].end;
            }
            r = s0 + llround(sg->ready_frac[m] * (double)(s1 - s0));
        }
        start = r > start ? r : start;
    }
    return start;
}

/* Group g's collective: its estimate, WAN bytes and loads (from the cache
 * when given one: the same values, computed once). */
static int run_group(const topology *t, const workload *w, sync_kind sync, timing *tm, int g,
                     int64_t start, sync_loads *sl, coll_cache *cc, gt_err *e)
{
    const sync_group *sg = &w->groups[g];
    tm->group_start[g] = start;
    if (cc) {
        const coll_entry *x = coll_cache_get(cc, t, w, sg, sync, e);
        if (!x)
            return -1;
        tm->group_end[g] = t_add(start, x->est_ns);
        for (int f = 0; f < x->nwan; f++)
            tm->wan_bytes += x->wan[f];
        return sync_loads_push(sl, x->loads, x->nloads, g, start) ? gt_fail(e, "out of memory")
                                                                 : 0;
    }
    coll_plan c;
    if (collective_build(&c, t, w, sg, sync, e))
        return -1;
    tm->group_end[g] = t_add(start, collective_estimate_ns(&c, t, w));
    for (int f = 0; f < c.nflows; f++)
        tm->wan_bytes += wan_bytes_of(t, w, c.flows[f].src_lane, c.flows[f].dst_lane,
                                      c.flows[f].bytes);
    int rc = sync_loads_add(sl, &c, t, w, g, start);
    collective_free(&c);
    return rc ? gt_fail(e, "out of memory") : 0;
}

int estimate_finish(const topology *t, const workload *w, sync_kind sync, timing *tm,
                    const stage_path *sp, coll_cache *cc, lb_work *lw, gt_err *e)
{
    lb_work own = {0};
    lb_work *l = lw ? lw : &own;
    sync_loads_reset(&l->sl);
    l->sl.epoch = cc ? cc->gen : 0; /* the cache's loads stay in place while gen holds */
    l->paths_epoch = cc && l->pm ? cc->gen : 0; /* the memo is reset with the cache */
    int rc = 0;
    for (int g = 0; g < w->ngroups && !rc; g++)
        rc = run_group(t, w, sync, tm, g, group_ready(tm, &w->groups[g], sp), &l->sl, cc, e);
    if (!rc && (sync_loads_bound(&l->sl, lb_work_array_keys(l, t), tm) || timing_finish_lanes(tm, w)))
        rc = gt_fail(e, "out of memory");
    if (!rc && t_over(tm->iteration_ns))
        rc = t_cap_fail(e, t->path, "the estimated iteration");
    if (!rc) {
        tm->unbounded_ns = tm->iteration_ns;
        if ((sp ? transfer_streams_bound(t, w, sp->streams, sp->nstreams, tm, l)
                : transfer_load_bound(t, w, tm, l)) < 0)
            rc = gt_fail(e, "out of memory");
    }
    lb_work_free(&own);
    return rc;
}

int estimate_run(const topology *t, const workload *w, sync_kind sync, timing *tm, gt_err *e)
{
    return estimate_run_ws(t, w, sync, tm, NULL, e);
}

int estimate_run_ws(const topology *t, const workload *w, sync_kind sync, timing *tm,
                    lb_work *lw, gt_err *e)
{
    tm->wan_bytes = 0;
    if (run_ops(t, w, tm, e)) /* also sets each lane's bwd_end */
        return -1;
    return estimate_finish(t, w, sync, tm, NULL, NULL, lw, e);
}
