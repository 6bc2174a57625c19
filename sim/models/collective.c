/* collective.c — ring, hierarchical and parameter-server sync (collective.h):
 * each algorithm is written once, as blocks of transfers handed to a sink
 * (collective_emit); the simulator's steps (collective_build) and the
 * planners' per-resource bytes are two sinks of the same blocks. The steps
 * are priced step by step (collective_estimate_ns, collective_loads) or in
 * one pass that skips repeated steps (collective_price). */
#include "sim/models/collective.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"
#include "sim/models/cost.h"
#include "sim/models/dp_sync.h"
#include "sim/base/res_table.h"
#include "sim/models/path.h"

static int member_cmp(const void *a, const void *b)
{
    const coll_member *x = a, *y = b;
    if (x->site != y->site)
        return x->site - y->site;
    return x->gpu - y->gpu;
}

/* A transfer of reps steps only when it moves something (a ring of one
 * member sends nothing). */
static int xfer(const coll_sink *k, int src, int dst, double bytes, int div, int reps)
{
    return reps > 0 ? k->xfer(k->ctx, src, dst, bytes, div, reps) : 0;
}

/* Ring over mem[0..n-1], steps [s0, s1) of the 2(n-1) of an all-reduce
 * (the first n-1 reduce-scatter, the rest all-gather); each member sends
 * bytes/n onward per step. Adds to the open block. */
static int ring_xfers(const coll_sink *k, const coll_member *mem, int n, double bytes, int s0,
                      int s1)
{
    for (int i = 0; i < n && n > 1; i++)
        if (xfer(k, mem[i].id, mem[(i + 1) % n].id, bytes, n, s1 - s0))
            return -1;
    return 0;
}

static int emit_ring(const coll_sink *k, const coll_member *mem, int n, double bytes, int s0,
                     int s1)
{
    return ring_xfers(k, mem, n, bytes, s0, s1) || k->end(k->ctx) ? -1 : 0;
}

/* Rings inside each site (all sites in step: one block), a ring across one
 * leader per site, then each leader sends the result to its members. */
static int emit_hierarchical(const coll_sink *k, const coll_member *mem, int n, double bytes)
{
    /* sites are contiguous after sorting */
    int site_start[n + 1], nsites = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || mem[i].site != mem[i - 1].site)
            site_start[nsites++] = i;
    site_start[nsites] = n;
    for (int s = 0; s < nsites; s++) {
        int a = site_start[s], len = site_start[s + 1] - a;
        if (ring_xfers(k, &mem[a], len, bytes, 0, 2 * (len - 1)))
            return -1;
    }
    if (k->end(k->ctx))
        return -1;
    if (nsites > 1) {
        coll_member leaders[nsites];
        for (int s = 0; s < nsites; s++)
            leaders[s] = mem[site_start[s]];
        if (emit_ring(k, leaders, nsites, bytes, 0, 2 * (nsites - 1)))
            return -1;
        for (int s = 0; s < nsites; s++)
            for (int i = site_start[s] + 1; i < site_start[s + 1]; i++)
                if (xfer(k, mem[site_start[s]].id, mem[i].id, bytes, 1, 1))
                    return -1;
        if (k->end(k->ctx))
            return -1;
    }
    return 0;
}

/* Rounds [r0, r1) of the parameter server's two (round 0 sends the shards
 * to their owners: a reduce-scatter; round 1 sends them back: an all-gather). */
static int emit_ps(const coll_sink *k, const coll_member *mem, int n, double bytes, int r0, int r1)
{
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (a != b && xfer(k, mem[a].id, mem[b].id, bytes, n, r1 - r0))
                return -1;
    return k->end(k->ctx);
}

void collective_order(coll_member *mem, int n)
{
    /* (site, GPU) keys are unique, so any sort gives one order; a group is
     * usually small, and the planners' floor sorts one per layer */
    if (n > 32) {
        qsort(mem, (size_t)n, sizeof *mem, member_cmp);
        return;
    }
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && member_cmp(&mem[k], &mem[k - 1]) < 0; k--) {
            coll_member x = mem[k];
            mem[k] = mem[k - 1];
            mem[k - 1] = x;
        }
}

int collective_emit(coll_member *mem, int n, sync_kind kind, shard_kind shard, double grads,
                    double weights, int passes, const coll_sink *k)
{
    collective_order(mem, n);
    sync_phase ph[DP_SYNC_MAX_PHASES];
    int nph = dp_sync_phases(shard, grads, weights, passes, ph);
    for (int i = 0; i < nph && n > 1; i++) {
        /* which half of the all-reduce a phase is: [lo, hi) of {0, 1} */
        int lo = ph[i].kind == PHASE_ALL_GATHER, hi = ph[i].kind == PHASE_REDUCE_SCATTER ? 1 : 2;
        for (int r = 0; r < ph[i].reps; r++) { /* repeated gathers: one after another */
            int rc;
            if (kind == SYNC_RING)
                rc = emit_ring(k, mem, n, ph[i].bytes, lo * (n - 1), hi * (n - 1));
            else if (kind == SYNC_HIERARCHICAL) /* plan_check: only unsharded */
                rc = emit_hierarchical(k, mem, n, ph[i].bytes);
            else
                rc = emit_ps(k, mem, n, ph[i].bytes, lo, hi);
            if (rc)
                return -1;
        }
    }
    return 0;
}

int collective_xfers_per_phase(sync_kind kind, int n)
{
    /* hierarchical: n inside the sites, one per leader, one per non-leader */
    return kind == SYNC_PS ? n * (n - 1) : 2 * n;
}

double collective_replay_work(sync_kind kind, double D)
{
    /* ring 2(D-1) steps of D flows; the parameter server's all-to-all
     * steps cost the solver about D^2 times more */
    double f = 2 * (D - 1) * D;
    if (kind == SYNC_PS)
        f *= D * D;
    return f;
}

/* --- the simulator's sink: blocks expanded into steps of flows ---------------- */

static int add_flow(coll_plan *c, int src, int dst, double bytes)
{
    if (c->nflows == c->cap) {
        int ncap = c->cap ? c->cap * 2 : 64;
        coll_flow *nf = realloc(c->flows, sizeof *nf * (size_t)ncap);
        if (!nf)
            return -1;
        c->flows = nf;
        c->cap = ncap;
    }
    c->flows[c->nflows++] = (coll_flow){src, dst, bytes};
    return 0;
}

/* Close the open step (if it has flows): step_first[nsteps] is where the
 * open step begins. */
static int end_step(coll_plan *c)
{
    if (c->step_first[c->nsteps] == c->nflows)
        return 0;
    if (c->nsteps + 2 > c->step_cap) {
        int ncap = c->step_cap * 2;
        int *ns = realloc(c->step_first, sizeof *ns * (size_t)ncap);
        if (!ns)
            return -1;
        c->step_first = ns;
        c->step_cap = ncap;
    }
    c->step_first[++c->nsteps] = c->nflows;
    return 0;
}

typedef struct step_sink {
    coll_plan *c;
    struct pending { int src, dst, div, reps; double bytes; } *x;
    int n, cap;
} step_sink;

static int step_xfer(void *ctx, int src, int dst, double bytes, int div, int reps)
{
    step_sink *s = ctx;
    if (s->n == s->cap) {
        int ncap = s->cap ? s->cap * 2 : 64;
        struct pending *nx = realloc(s->x, sizeof *nx * (size_t)ncap);
        if (!nx)
            return -1;
        s->x = nx;
        s->cap = ncap;
    }
    s->x[s->n++] = (struct pending){src, dst, div, reps, bytes};
    return 0;
}

/* Step r of a block carries every transfer with more than r steps. */
static int step_end(void *ctx)
{
    step_sink *s = ctx;
    int steps = 0;
    for (int i = 0; i < s->n; i++)
        steps = s->x[i].reps > steps ? s->x[i].reps : steps;
    for (int r = 0; r < steps; r++) {
        for (int i = 0; i < s->n; i++)
            if (r < s->x[i].reps && add_flow(s->c, s->x[i].src, s->x[i].dst,
                                             s->x[i].bytes / s->x[i].div))
                return -1;
        if (end_step(s->c))
            return -1;
    }
    s->n = 0;
    return 0;
}

int collective_build(coll_plan *c, const topology *t, const workload *w,
                     const sync_group *g, sync_kind kind, gt_err *e)
{
    memset(c, 0, sizeof *c);
    c->step_first = malloc(sizeof *c->step_first * 16);
    if (!c->step_first)
        return gt_fail(e, "out of memory");
    c->step_cap = 16;
    c->step_first[0] = 0;
    int n = g->nmembers;
    coll_member *mem = malloc(sizeof *mem * (size_t)n);
    if (!mem) {
        collective_free(c);
        return gt_fail(e, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        mem[i].id = g->members[i];
        mem[i].gpu = w->lanes[g->members[i]].gpu;
        mem[i].site = t->gpus[mem[i].gpu].site;
    }
    step_sink s = {c, NULL, 0, 0};
    coll_sink k = {step_xfer, step_end, &s};
    int rc = collective_emit(mem, n, kind, w->shard, g->bytes, g->weights, g->passes, &k);
    free(s.x);
    free(mem);
    if (rc) {
        collective_free(c);
        return gt_fail(e, "out of memory building a collective of %d members", n);
    }
    return 0;
}

void collective_free(coll_plan *c)
{
    free(c->flows);
    free(c->step_first);
    memset(c, 0, sizeof *c);
}

/* One more flow of `bytes` and latency lat on a resource's load. */
static void load_add(coll_load *l, double bytes, double lat)
{
    l->bytes += bytes;
    l->flows++;
    if (lat < l->min_lat)
        l->min_lat = lat;
}

/* Flows [first, last) of c summed per shared resource into buf (one entry
 * per resource, in order of first use); h maps resources to entries and is
 * left empty. Returns the number of entries. */
static int merge_loads(const coll_plan *c, int first, int last, const topology *t,
                       const workload *w, coll_load *buf, res_table *h)
{
    int m = 0;
    for (int f = first; f < last; f++) {
        const coll_flow *fl = &c->flows[f];
        int a = w->lanes[fl->src_lane].gpu, b = w->lanes[fl->dst_lane].gpu;
        double lat = path_latency(t, a, b); /* path_lone's (its rate is not needed) */
        path_res r[3];
        int k = path_resources(t, a, b, r);
        for (int i = 0; i < k; i++) {
            bool added;
            int x = res_table_index(h, r[i].key, m, &added);
            if (added)
                buf[m++] = (coll_load){r[i].key, r[i].cap, fl->bytes, lat, 1};
            else
                load_add(&buf[x], fl->bytes, lat);
        }
    }
    res_table_clear(h);
    return m;
}

/* The most flows any one step of c has (sizes the per-step buffers). */
static int max_step_flows(const coll_plan *c)
{
    int most = 0;
    for (int s = 0; s < c->nsteps; s++) {
        int k = c->step_first[s + 1] - c->step_first[s];
        most = k > most ? k : most;
    }
    return most;
}

/* A flow of bytes alone on its path (GPU a to b): its time, and the latency. */
static int64_t flow_lone_ns(const topology *t, int a, int b, double bytes, double *lat)
{
    double rate;
    path_lone(t, a, b, lat, &rate);
    return cost_transfer_ns(bytes, *lat, rate);
}

/* A step cannot end before its busiest shared resource has carried its
 * bytes: min latency + bytes / capacity (load_floor_ns). With one flow per
 * resource this is never above the lone-flow time, so contention-free plans
 * stay exact. */
static int64_t step_load_bound(const coll_plan *c, int s, const topology *t, const workload *w,
                               coll_load *buf, res_table *h)
{
    int n = merge_loads(c, c->step_first[s], c->step_first[s + 1], t, w, buf, h);
    int64_t worst = 0;
    for (int i = 0; i < n; i++)
        if (buf[i].flows > 1) {
            int64_t d = load_floor_ns(buf[i].min_lat, buf[i].bytes, buf[i].cap, buf[i].flows);
            worst = d > worst ? d : worst;
        }
    return worst;
}

int collective_loads(const coll_plan *c, const topology *t, const workload *w, coll_load **out)
{
    res_table h;
    *out = malloc(sizeof **out * (size_t)(3 * c->nflows + 1));
    if (!*out || res_table_init(&h, 3 * c->nflows + 1)) {
        free(*out);
        *out = NULL;
        return -1;
    }
    int n = merge_loads(c, 0, c->nflows, t, w, *out, &h);
    res_table_free(&h);
    return n;
}

int64_t collective_estimate_ns(const coll_plan *c, const topology *t, const workload *w)
{
    int64_t total = 0;
    int maxflows = max_step_flows(c);
    coll_load *buf = malloc(sizeof *buf * (size_t)(3 * maxflows + 1));
    res_table h;
    if (buf && res_table_init(&h, 3 * maxflows + 1)) {
        free(buf);
        buf = NULL; /* out of memory: the lone-flow figure alone, still a lower bound */
    }
    for (int s = 0; s < c->nsteps; s++) {
        int64_t worst = 0;
        for (int f = c->step_first[s]; f < c->step_first[s + 1]; f++) {
            const coll_flow *fl = &c->flows[f];
            double lat;
            int64_t d = flow_lone_ns(t, w->lanes[fl->src_lane].gpu, w->lanes[fl->dst_lane].gpu,
                                     fl->bytes, &lat);
            worst = d > worst ? d : worst;
        }
        if (buf) {
            int64_t bound = step_load_bound(c, s, t, w, buf, &h);
            worst = bound > worst ? bound : worst;
        }
        total = t_add(total, worst);
    }
    if (buf)
        res_table_free(&h);
    free(buf);
    return total;
}

/* --- estimate and loads in one pass (collective_price) ----------------------- */

/* Whether step s carries the same flows, bit for bit, as step s - 1 (a
 * ring's steps all do; a parameter server's two all-gather rounds do):
 * then it costs the same and adds the same bytes in the same order. */
static int same_as_previous(const coll_plan *c, int s)
{
    if (s == 0)
        return 0;
    int a = c->step_first[s - 1], b = c->step_first[s], n = c->step_first[s + 1] - b;
    return n == b - a && !memcmp(&c->flows[a], &c->flows[b], sizeof *c->flows * (size_t)n);
}

void coll_price_work_free(coll_price_work *p)
{
    res_table_free(&p->h);
    free(p->res);
    free(p->nres);
    free(p->stamp);
    free(p->touched);
    free(p->step);
    free(p->dense);
    memset(p, 0, sizeof *p);
}

/* p's arrays grown for c (kept from earlier calls when large enough; a
 * resource's stamp is written when it is first added, before it is read). */
static int price_work_reserve(coll_price_work *p, int nflows, int maxstep)
{
    size_t nres = PATH_MAX_RES * (size_t)nflows + 1;
    if (res_table_reserve(&p->h, &p->room, (int)nres) ||
        gt_grow(&p->res, &p->cap[0], PATH_MAX_RES * (size_t)maxstep + 1, sizeof *p->res) ||
        gt_grow(&p->nres, &p->cap[1], (size_t)maxstep + 1, sizeof *p->nres) ||
        gt_grow(&p->stamp, &p->cap[2], nres, sizeof *p->stamp) ||
        gt_grow(&p->touched, &p->cap[3], nres, sizeof *p->touched) ||
        gt_grow(&p->step, &p->cap[4], nres, sizeof *p->step)) {
        coll_price_work_free(p);
        return -1;
    }
    return 0;
}

/* A step not seen just before: each flow's lone time, its bytes added to
 * the whole collective's loads (out, m entries so far, as merge_loads adds
 * them) and to the step's own (as step_load_bound merges them). Returns
 * the step's duration; *m grows by the new resources. */
static int64_t price_new_step(const coll_plan *c, int s, const topology *t, const workload *w,
                              coll_price_work *p, coll_load *out, int *m)
{
    int64_t worst = 0;
    int ntouched = 0;
    for (int f = c->step_first[s], j = 0; f < c->step_first[s + 1]; f++, j++) {
        const coll_flow *fl = &c->flows[f];
        int a = w->lanes[fl->src_lane].gpu, b = w->lanes[fl->dst_lane].gpu;
        double lat;
        int64_t d;
        path_res own[PATH_MAX_RES];
        const path_res *r = own;
        int k;
        const path_entry *pe = path_memo_get(p->pm, t, a, b);
        if (pe) { /* the same figures, worked out once for the pair */
            lat = pe->lat;
            d = cost_transfer_ns(fl->bytes, lat, pe->rate);
            r = pe->res;
            k = pe->nres;
        } else {
            d = flow_lone_ns(t, a, b, fl->bytes, &lat);
            k = path_resources(t, a, b, own);
        }
        worst = d > worst ? d : worst;
        p->nres[j] = k;
        for (int i = 0; i < k; i++) {
            bool added;
            int x = res_index(p->dense, p->ndense, &p->h, r[i].key, *m, &added);
            if (added)
                out[(*m)++] = (coll_load){r[i].key, r[i].cap, fl->bytes, lat, 1};
            else
                load_add(&out[x], fl->bytes, lat);
            p->res[PATH_MAX_RES * j + i] = x;
            if (added || p->stamp[x] != s) {
                p->stamp[x] = s;
                p->touched[ntouched++] = x;
                p->step[x] = (coll_load){r[i].key, r[i].cap, fl->bytes, lat, 1};
            } else {
                load_add(&p->step[x], fl->bytes, lat);
            }
        }
    }
    for (int i = 0; i < ntouched; i++) {
        const coll_load *l = &p->step[p->touched[i]];
        if (l->flows > 1) {
            int64_t d = load_floor_ns(l->min_lat, l->bytes, l->cap, l->flows);
            worst = d > worst ? d : worst;
        }
    }
    return worst;
}

/* A step equal to the one before: its bytes added again, in the same order
 * (the latencies are the same, so the least ones stay). */
static void price_repeat_step(const coll_plan *c, int s, const coll_price_work *p,
                              coll_load *out)
{
    for (int f = c->step_first[s], j = 0; f < c->step_first[s + 1]; f++, j++)
        for (int i = 0; i < p->nres[j]; i++) {
            coll_load *l = &out[p->res[PATH_MAX_RES * j + i]];
            load_add(l, c->flows[f].bytes, l->min_lat);
        }
}

int collective_price_ws(const coll_plan *c, const topology *t, const workload *w,
                        coll_price_work *p, int64_t *est_ns, coll_load **out)
{
    *out = malloc(sizeof **out * (size_t)(PATH_MAX_RES * c->nflows + 1));
    if (!*out || price_work_reserve(p, c->nflows, max_step_flows(c))) {
        free(*out);
        *out = NULL;
        return -1;
    }
    int64_t total = 0, worst = 0;
    int m = 0;
    for (int s = 0; s < c->nsteps; s++) {
        if (same_as_previous(c, s))
            price_repeat_step(c, s, p, *out);
        else
            worst = price_new_step(c, s, t, w, p, *out, &m);
        total = t_add(total, worst);
    }
    for (int i = 0; i < m; i++) /* p->dense back to all -1 */
        if ((*out)[i].key < p->ndense)
            p->dense[(*out)[i].key] = -1;
    *est_ns = total;
    return m;
}

int coll_price_work_keys(coll_price_work *p, long ndense)
{
    if (res_dense_grow(&p->dense, &p->cap_dense, ndense))
        return -1;
    p->ndense = ndense;
    return 0;
}

int collective_price(const coll_plan *c, const topology *t, const workload *w, int64_t *est_ns,
                     coll_load **out)
{
    coll_price_work p = {0};
    int m = collective_price_ws(c, t, w, &p, est_ns, out);
    coll_price_work_free(&p);
    return m;
}
