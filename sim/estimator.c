/* estimator.c — the contention-free recurrence (estimator.h, DESIGN 5).
 *
 * Ops are processed in dependency order (Kahn's algorithm over "previous op
 * on my GPU" and "op whose output I need"), so each op's start is
 * max(GPU free, input arrived) with arrival = producer end + lone transfer. */
#include "estimator.h"

#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "collective.h"
#include "cost.h"

static int64_t transfer_ns(const topology *t, const workload *w, const wl_op *o)
{
    double lat, rate;
    const wl_op *src = &w->ops[o->input];
    topo_path(t, w->lanes[src->lane].gpu, w->lanes[o->lane].gpu, &lat, &rate);
    return cost_transfer_ns(o->xfer_bytes, lat, rate);
}

static double wan_bytes_of(const topology *t, const workload *w, int src_lane, int dst_lane,
                           double bytes)
{
    return t->gpus[w->lanes[src_lane].gpu].site != t->gpus[w->lanes[dst_lane].gpu].site ? bytes
                                                                                      : 0;
}

/* Forward/backward ops in dependency order. */
static int run_ops(const topology *t, const workload *w, timing *tm, gt_err *e)
{
    int n = w->nops;
    int *pending = calloc((size_t)(n > 0 ? n : 1), sizeof *pending);
    int *queue = malloc(sizeof *queue * (size_t)(n > 0 ? n : 1));
    int *prev = malloc(sizeof *prev * (size_t)(n > 0 ? n : 1));
    if (!pending || !queue || !prev) {
        free(pending);
        free(queue);
        free(prev);
        return gt_fail(e, "out of memory");
    }
    for (int i = 0; i < n; i++)
        prev[i] = -1;
    for (int i = 0; i < n; i++) {
        if (w->ops[i].next_on_lane >= 0) {
            prev[w->ops[i].next_on_lane] = i;
            pending[w->ops[i].next_on_lane]++;
        }
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
        int64_t ready = prev[id] >= 0 ? tm->ops[prev[id]].end : 0;
        int64_t arrival = 0, xs = 0;
        if (o->input >= 0) {
            xs = tm->ops[o->input].end;
            arrival = xs + (o->xfer_bytes > 0 ? transfer_ns(t, w, o) : 0);
            if (o->xfer_bytes > 0)
                tm->wan_bytes += wan_bytes_of(t, w, w->ops[o->input].lane, o->lane, o->xfer_bytes);
        }
        ot->xfer_start = xs;
        ot->arrival = arrival;
        ot->start = ready > arrival ? ready : arrival;
        ot->end = ot->start + o->dur_ns;
        int next[2] = {o->next_on_lane, o->consumer};
        for (int k = 0; k < 2; k++)
            if (next[k] >= 0 && --pending[next[k]] == 0)
                queue[tail++] = next[k];
    }
    free(pending);
    free(queue);
    free(prev);
    if (tail != n)
        return gt_fail(e, "the schedule deadlocks (%d of %d ops could run)", tail, n);
    return 0;
}

static void lane_ends(const workload *w, timing *tm)
{
    for (int l = 0; l < w->nlanes; l++) {
        int64_t end = 0;
        for (int id = w->lanes[l].first_op; id >= 0; id = w->ops[id].next_on_lane)
            end = tm->ops[id].end;
        tm->lanes[l].bwd_end = end;
    }
}

/* One group's load on one shared resource, for the cross-group bound. */
typedef struct group_load {
    coll_load l;
    int group;
    int64_t start;
} group_load;

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
static void cross_group_bound(group_load *gl, int n, timing *tm)
{
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

/* Appends group g's per-resource loads to *gl (grown as needed). */
static int add_group_loads(const coll_plan *c, const topology *t, const workload *w, int g,
                           int64_t start, group_load **gl, int *n, int *cap)
{
    coll_load *l;
    int m = collective_loads(c, t, w, &l);
    if (m < 0)
        return -1;
    if (*n + m > *cap) {
        int nc = 2 * (*n + m);
        group_load *x = realloc(*gl, sizeof *x * (size_t)nc);
        if (!x) {
            free(l);
            return -1;
        }
        *gl = x;
        *cap = nc;
    }
    for (int i = 0; i < m; i++)
        (*gl)[(*n)++] = (group_load){l[i], g, start};
    free(l);
    return 0;
}

int estimate_run(const topology *t, const workload *w, sync_kind sync, timing *tm, gt_err *e)
{
    tm->wan_bytes = 0;
    if (run_ops(t, w, tm, e))
        return -1;
    lane_ends(w, tm);
    group_load *gl = NULL;
    int ngl = 0, glcap = 0;
    for (int g = 0; g < w->ngroups; g++) {
        const sync_group *sg = &w->groups[g];
        int64_t start = 0;
        for (int m = 0; m < sg->nmembers; m++)
            if (tm->lanes[sg->members[m]].bwd_end > start)
                start = tm->lanes[sg->members[m]].bwd_end;
        coll_plan c;
        if (collective_build(&c, t, w, sg, sync, e)) {
            free(gl);
            return -1;
        }
        tm->group_start[g] = start;
        tm->group_end[g] = start + collective_estimate_ns(&c, t, w);
        for (int f = 0; f < c.nflows; f++)
            tm->wan_bytes += wan_bytes_of(t, w, c.flows[f].src_lane, c.flows[f].dst_lane,
                                          c.flows[f].bytes);
        int rc = add_group_loads(&c, t, w, g, start, &gl, &ngl, &glcap);
        collective_free(&c);
        if (rc) {
            free(gl);
            return gt_fail(e, "out of memory");
        }
    }
    cross_group_bound(gl, ngl, tm);
    free(gl);
    timing_finish_lanes(tm, w);
    return 0;
}

int estimate_plan(const topology *t, const job *j, const plan *p, est_summary *out, gt_err *e)
{
    memset(out, 0, sizeof *out);
    if (plan_check(p, t, j, e))
        return -1;
    workload w;
    if (workload_build(&w, t, j, p, e))
        return -1;
    timing tm;
    lane_account *la = NULL;
    int rc = timing_alloc(&tm, &w, e);
    if (!rc)
        rc = estimate_run(t, &w, p->sync, &tm, e);
    if (!rc) {
        la = malloc(sizeof *la * (size_t)w.nlanes);
        if (!la)
            rc = gt_fail(e, "out of memory");
    }
    if (!rc) {
        account_lanes(t, &w, &tm, la);
        run_totals tot;
        account_totals(t, &w, &tm, la, 0, &tot);
        out->iteration_s = tm.iteration_ns * 1e-9;
        out->energy_j = tot.energy_j;
        out->carbon_g = tot.carbon_g;
        out->usd = tot.usd;
        out->tokens_per_s = w.tokens / out->iteration_s;
        out->gpus_used = plan_gpus_used(p);
        for (int g = 0; g < t->ngpus; g++) {
            double need = plan_gpu_memory(p, j, g) / topo_gpu_type(t, g)->mem_bytes;
            out->peak_mem_frac = need > out->peak_mem_frac ? need : out->peak_mem_frac;
        }
    }
    free(la);
    timing_free(&tm);
    workload_free(&w);
    return rc;
}
