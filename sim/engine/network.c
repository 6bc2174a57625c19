/* network.c — max-min fair fluid flows and temporal WAN sharing (network.h). */
#include "sim/engine/network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/models/cost.h"
#include "sim/models/path.h"

#define NONE (-1)

int net_wan_resource(const network *n, int a, int b)
{
    const topo_link *l = topo_wan(n->t, a, b);
    if (l->per_pair)
        return NONE;
    return n->wan_res0 + a * n->t->nsites + b;
}

int net_init(network *n, const topology *t, int max_flows, int policy, int tcp_connections,
             gt_err *e)
{
    memset(n, 0, sizeof *n);
    n->t = t;
    n->tcp_connections = tcp_connections > 0 ? tcp_connections : t->tcp_connections;
    /* the dense resources are indexed by their path keys (sim/models/path.h) */
    n->gpu_res0 = 0;
    n->node_res0 = (int)path_nic_key0(t);
    n->wan_res0 = (int)path_wan_key0(t);
    n->nres = (int)path_dense_count(t);
    n->cap_flows = max_flows > 0 ? max_flows : 1;
    /* Per-pair resources are made when a pair's first flow appears: at most
     * one per flow, so the arrays hold nres + cap_flows, never ngpus^2. */
    n->pair_res0 = n->nres;
    bool any_pair = path_any_per_pair(t);
    int room = n->nres + (any_pair ? n->cap_flows : 0);
    if (any_pair && res_table_init(&n->pairs, n->cap_flows))
        return gt_fail(e, "out of memory for %d flows", max_flows);
    n->res = calloc((size_t)room, sizeof *n->res);
    n->flows = calloc((size_t)n->cap_flows, sizeof *n->flows);
    n->wait_next = malloc(sizeof(int) * (size_t)n->cap_flows);
    n->fres = malloc(sizeof(int) * NET_MAX_RES * (size_t)n->cap_flows);
    n->fnres = malloc((size_t)n->cap_flows);
    n->fcap = malloc(sizeof(double) * (size_t)n->cap_flows);
    n->mark_f = calloc((size_t)n->cap_flows, sizeof(int));
    n->list_f = malloc(sizeof(int) * (size_t)n->cap_flows);
    n->mark_r = calloc((size_t)room, sizeof(int));
    n->list_r = malloc(sizeof(int) * (size_t)room);
    n->res_left = malloc(sizeof(double) * (size_t)room);
    n->res_unfrozen = malloc(sizeof(int) * (size_t)room);
    n->new_rate = malloc(sizeof(double) * (size_t)n->cap_flows);
    n->act_f = malloc(sizeof(int) * (size_t)n->cap_flows);
    n->act_r = malloc(sizeof(int) * (size_t)room);
    n->res_share = malloc(sizeof(double) * (size_t)room);
    if (!n->res || !n->flows || !n->wait_next || !n->fres || !n->fnres || !n->fcap ||
        !n->mark_f || !n->list_f ||
        !n->mark_r || !n->list_r || !n->res_left || !n->res_unfrozen || !n->new_rate ||
        !n->act_f || !n->act_r || !n->res_share) {
        net_free(n);
        return gt_fail(e, "out of memory for %d flows", max_flows);
    }
    for (int r = 0; r < n->nres; r++)
        n->res[r].wait_head = NONE;
    for (int r = 0; r < n->wan_res0; r++) /* GPU links and NICs */
        n->res[r].cap = path_dense_cap(t, r);
    for (int a = 0; a < t->nsites; a++)
        for (int b = 0; b < t->nsites; b++) {
            if (a == b)
                continue;
            const topo_link *l = topo_wan(t, a, b);
            net_resource *r = &n->res[n->wan_res0 + a * t->nsites + b];
            r->cap = path_dense_cap(t, n->wan_res0 + a * t->nsites + b);
            wan_policy pol = policy >= 0 ? (wan_policy)policy
                                         : (l->policy_set ? l->policy : WAN_FAIR);
            r->temporal = pol == WAN_TEMPORAL;
        }
    return 0;
}

void net_free(network *n)
{
    for (int r = 0; n->res && r < n->nres; r++)
        free(n->res[r].fl);
    free(n->res);
    free(n->fres);
    free(n->fnres);
    free(n->fcap);
    free(n->flows);
    free(n->wait_next);
    free(n->mark_f);
    free(n->list_f);
    free(n->mark_r);
    free(n->list_r);
    free(n->res_left);
    free(n->res_unfrozen);
    free(n->new_rate);
    free(n->act_f);
    free(n->act_r);
    free(n->res_share);
    res_table_free(&n->pairs);
    memset(n, 0, sizeof *n);
}

/* The per-pair resource p (path.h) of a flow, made on first use. */
static int pair_resource(network *n, const path_res *p)
{
    bool added;
    int i = res_table_index(&n->pairs, p->key, n->nres - n->pair_res0, &added);
    if (added) {
        net_resource *r = &n->res[n->nres++];
        memset(r, 0, sizeof *r);
        r->cap = p->cap;
        r->wait_head = NONE;
    }
    return n->pair_res0 + i;
}

int net_flow_new(network *n, int a, int b, double bytes, double priority, int64_t now)
{
    if (n->nflows == n->cap_flows)
        return NONE;
    int id = n->nflows++;
    net_flow *f = &n->flows[id];
    memset(f, 0, sizeof *f);
    const topology *t = n->t;
    const topo_gpu *ga = &t->gpus[a], *gb = &t->gpus[b];
    f->src_gpu = a;
    f->dst_gpu = b;
    f->bytes = f->remaining = bytes;
    f->priority = priority;
    f->start = now;
    f->sched = -1;
    f->finish = INT64_MAX;
    f->wan_res = f->wan_a = f->wan_b = NONE;
    f->cap = INFINITY;
    f->slot = 0;
    /* the path's resources (dense keys are indices) and private cap */
    path_res pr[PATH_MAX_RES];
    int k = path_resources(t, a, b, pr);
    for (int i = 0; i < k; i++) /* per-pair: fair sharing only, never temporal */
        f->res[f->nres++] = pr[i].key < n->pair_res0 ? (int)pr[i].key : pair_resource(n, &pr[i]);
    f->cap = path_private_cap(t, a, b, n->tcp_connections);
    if (k == 3) {
        f->wan_a = ga->site;
        f->wan_b = gb->site;
        f->wan_res = f->res[2];
    }
    for (int k = 0; k < f->nres; k++)
        n->fres[NET_MAX_RES * id + k] = f->res[k];
    n->fnres[id] = (uint8_t)f->nres;
    n->fcap[id] = f->cap;
    return id;
}

double net_flow_latency(const network *n, int id)
{
    return path_latency(n->t, n->flows[id].src_gpu, n->flows[id].dst_gpu);
}

/* --- joining and leaving resources -------------------------------------- */

/* Each resource keeps its flows in a dense array in join order; readers walk
 * it newest first, the order the component walk and the filling have always
 * used (it fixes the order of floating-point sums, hence every rate bit).
 * Returns -1 when growing an array failed. */
static int join(network *n, int id)
{
    net_flow *f = &n->flows[id];
    for (int k = 0; k < f->nres; k++) {
        net_resource *r = &n->res[f->res[k]];
        if (r->njoined == r->cap_fl) {
            int nc = r->cap_fl ? 2 * r->cap_fl : 8;
            int *x = realloc(r->fl, sizeof *x * (size_t)nc);
            if (!x)
                return -1;
            r->fl = x;
            r->cap_fl = nc;
        }
        r->fl[r->njoined++] = id;
    }
    f->joined = true;
    return 0;
}

/* Remove id keeping the others' order (flows leave mostly from the old end,
 * and the array is ints, so the move is short and cache-friendly). */
static void leave(network *n, int id)
{
    net_flow *f = &n->flows[id];
    for (int k = 0; k < f->nres; k++) {
        net_resource *r = &n->res[f->res[k]];
        int i = r->njoined - 1;
        while (i >= 0 && r->fl[i] != id)
            i--;
        memmove(&r->fl[i], &r->fl[i + 1], sizeof *r->fl * (size_t)(r->njoined - 1 - i));
        r->njoined--;
    }
    f->joined = false;
}

/* --- max-min recomputation over the component of the seed resources ----- */

static int collect(network *n, const int *seed_res, int nseed, int *nf)
{
    int stamp = ++n->stamp, nr = 0, fcount = 0;
    int *mark_r = n->mark_r, *mark_f = n->mark_f, *list_r = n->list_r;
    for (int i = 0; i < nseed; i++)
        if (mark_r[seed_res[i]] != stamp) {
            mark_r[seed_res[i]] = stamp;
            list_r[nr++] = seed_res[i];
        }
    for (int ri = 0; ri < nr; ri++) {
        const net_resource *r = &n->res[list_r[ri]];
        for (int j = r->njoined - 1; j >= 0; j--) {
            int id = r->fl[j];
            if (mark_f[id] == stamp)
                continue;
            mark_f[id] = stamp;
            n->list_f[fcount++] = id;
            const int *fr = &n->fres[NET_MAX_RES * id];
            for (int k = 0; k < n->fnres[id]; k++)
                if (mark_r[fr[k]] != stamp) {
                    mark_r[fr[k]] = stamp;
                    list_r[nr++] = fr[k];
                }
        }
    }
    *nf = fcount;
    return nr;
}

/* The next bottleneck level: the least fair share of a resource with
 * unfrozen flows, or the least private cap of an unfrozen flow. A minimum
 * does not depend on the scan order, so the lists may be compacted. */
static double fill_level(network *n, const int *act_r, int nr, const int *act_f, int nf)
{
    double x = INFINITY;
    for (int i = 0; i < nr; i++) {
        int r = act_r[i];
        double share = n->res_left[r] / n->res_unfrozen[r];
        n->res_share[r] = share;
        x = share < x ? share : x;
    }
    for (int i = 0; i < nf; i++) {
        double cap = n->fcap[n->list_f[act_f[i]]];
        x = cap < x ? cap : x;
    }
    return x < 0 ? 0 : x;
}

/* Progressive filling: raise all unfrozen flows together to the next
 * bottleneck level, freeze the flows it binds, repeat. Flows are visited in
 * component order at every level, and a flow frozen earlier in a pass
 * changes the shares later flows of the same pass see: that order fixes the
 * rounding of every rate, so it is kept exactly. Frozen flows and resources
 * without unfrozen flows drop out of the (order-preserving) active lists, so
 * a level costs what is still unfrozen, not the whole component; each
 * resource's share is divided out once and again only when it changes. */
static void progressive_fill(network *n, int nr, int nf, double *new_rate)
{
    double *res_left = n->res_left, *res_share = n->res_share;
    int *res_unfrozen = n->res_unfrozen, *act_f = n->act_f, *act_r = n->act_r;
    int na = 0;
    for (int i = 0; i < nr; i++) {
        int r = n->list_r[i];
        res_left[r] = n->res[r].cap;
        res_unfrozen[r] = n->res[r].njoined;
        if (res_unfrozen[r] > 0)
            act_r[na++] = r;
    }
    for (int i = 0; i < nf; i++)
        act_f[i] = i;
    int left = nf;
    while (left > 0) {
        double x = fill_level(n, act_r, na, act_f, left);
        int kept = 0;
        for (int a = 0; a < left; a++) {
            int i = act_f[a], id = n->list_f[i], nres = n->fnres[id];
            const int *fr = &n->fres[NET_MAX_RES * id];
            double cap = n->fcap[id];
            int bind = cap <= x;
            for (int k = 0; k < nres && !bind; k++)
                bind = res_share[fr[k]] <= x * (1 + 1e-12);
            if (!bind) {
                act_f[kept++] = i;
                continue;
            }
            double rate = cap < x ? cap : x;
            new_rate[i] = rate;
            for (int k = 0; k < nres; k++) {
                int r = fr[k];
                res_left[r] -= rate;
                if (--res_unfrozen[r] > 0)
                    res_share[r] = res_left[r] / res_unfrozen[r];
            }
        }
        left = kept;
        int nk = 0;
        for (int j = 0; j < na; j++)
            if (res_unfrozen[act_r[j]] > 0)
                act_r[nk++] = act_r[j];
        na = nk;
    }
}

/* Settle the bytes moved at the old rate and set the new rate. The flow's
 * one completion event moves to the new finish at once, earlier or later
 * (eventq_set), so no event ever fires before its flow is done; only a
 * stalled flow (rate 0, finish "never") leaves its old event to fire
 * early and be counted as stale. */
static int reschedule(network *n, int id, double rate, int64_t now, eventq *q, int ev_kind)
{
    net_flow *f = &n->flows[id];
    if (rate == f->rate && rate > 0)
        return 0; /* unchanged: keep the event, avoid rounding drift */
    f->remaining -= f->rate * (double)(now - f->last_update) * 1e-9;
    if (f->remaining < 0)
        f->remaining = 0;
    f->rate = rate;
    f->last_update = now;
    if (rate <= 0) {
        f->finish = INT64_MAX;
        return 0;
    }
    f->finish = now + cost_ns(f->remaining / rate); /* both <= GT_TIME_CAP_NS */
    if (f->sched == f->finish)
        return 0;
    f->version++;
    f->sched = f->finish;
    return eventq_set(q, id, f->finish, ev_kind, id, f->version); /* replaces a pending one */
}

static int recompute(network *n, const int *seed_res, int nseed, int64_t now, eventq *q,
                     int ev_kind)
{
    int nf, nr = collect(n, seed_res, nseed, &nf);
    if (nf == 0)
        return 0;
    double *new_rate = n->new_rate;
    progressive_fill(n, nr, nf, new_rate);
    int rc = 0;
    for (int i = 0; i < nf && !rc; i++)
        rc = reschedule(n, n->list_f[i], new_rate[i], now, q, ev_kind);
    return rc;
}

/* --- temporal queues ---------------------------------------------------- */

static void enqueue_waiting(network *n, int r, int id)
{
    int *pp = &n->res[r].wait_head;
    const net_flow *f = &n->flows[id];
    while (*pp != NONE) {
        const net_flow *g = &n->flows[*pp];
        if (f->priority < g->priority || (f->priority == g->priority && id < *pp))
            break;
        pp = &n->wait_next[*pp];
    }
    n->wait_next[id] = *pp;
    *pp = id;
}

/* The rate a flow could get alone: its cap and its resources' capacities. */
static double solo_rate(const network *n, const net_flow *f)
{
    double x = f->cap;
    for (int k = 0; k < f->nres; k++)
        x = fmin(x, n->res[f->res[k]].cap);
    return x;
}

/* Admit waiting flows in order while the admitted ones leave room. Returns
 * how many joined, or -1 when out of memory. */
static int admit(network *n, int r, int *joined_ids, int max_ids)
{
    double used = 0;
    for (int j = n->res[r].njoined - 1; j >= 0; j--)
        used += solo_rate(n, &n->flows[n->res[r].fl[j]]);
    int count = 0;
    while (n->res[r].wait_head != NONE && used < n->res[r].cap * (1 - 1e-9) && count < max_ids) {
        int id = n->res[r].wait_head;
        n->res[r].wait_head = n->wait_next[id];
        n->flows[id].waiting = false;
        if (join(n, id))
            return -1;
        used += solo_rate(n, &n->flows[id]);
        joined_ids[count++] = id;
    }
    return count;
}

int net_flow_start(network *n, int id, int64_t now, eventq *q, int ev_kind)
{
    net_flow *f = &n->flows[id];
    f->bytes_start = now;
    f->last_update = now;
    f->rate = 0;
    if (f->bytes <= 0) {
        f->version++;
        f->finish = f->sched = now;
        return eventq_set(q, id, now, ev_kind, id, f->version);
    }
    if (f->wan_res >= 0 && n->res[f->wan_res].temporal) {
        f->waiting = true;
        enqueue_waiting(n, f->wan_res, id);
        int ids[64];
        int k = admit(n, f->wan_res, ids, 64);
        if (k <= 0)
            return k;
    } else if (join(n, id)) {
        return -1;
    }
    return recompute(n, f->res, f->nres, now, q, ev_kind);
}

int net_flow_done_event(network *n, int id, uint32_t version, int64_t now, eventq *q,
                        int ev_kind)
{
    net_flow *f = &n->flows[id];
    if (version != f->version || f->done)
        return 0;
    f->sched = -1;
    if (now < f->finish) { /* the rate dropped since this event was scheduled */
        n->stale_events++;
        if (f->finish == INT64_MAX)
            return 0; /* stalled (temporal queue or zero capacity) */
        f->version++;
        f->sched = f->finish;
        return eventq_set(q, id, f->finish, ev_kind, id, f->version) ? -1 : 0;
    }
    f->done = true;
    f->end = now;
    f->remaining = 0;
    if (f->wan_res >= 0)
        n->res[f->wan_res].wan_bytes += f->bytes;
    if (!f->joined)
        return 1; /* zero-byte flow */
    leave(n, id);
    int seeds[NET_MAX_RES];
    memcpy(seeds, f->res, sizeof seeds);
    if (f->wan_res >= 0 && n->res[f->wan_res].temporal) {
        int ids[64];
        if (admit(n, f->wan_res, ids, 64) < 0)
            return -1;
    }
    if (recompute(n, seeds, f->nres, now, q, ev_kind))
        return -1;
    return 1;
}

int net_set_capacity(network *n, int r, double cap, int64_t now, eventq *q, int ev_kind)
{
    n->res[r].cap = cap;
    if (n->res[r].temporal) {
        int ids[64];
        if (admit(n, r, ids, 64) < 0)
            return -1;
    }
    return recompute(n, &r, 1, now, q, ev_kind);
}
