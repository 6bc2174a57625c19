/* network.c — max-min fair fluid flows and temporal WAN sharing (network.h). */
#include "sim/engine/network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/net_fill.h"
#include "sim/models/cost.h"

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
    n->gpu_res0 = 0;
    n->node_res0 = 2 * t->ngpus;
    n->wan_res0 = n->node_res0 + 2 * t->nnodes;
    n->nres = n->wan_res0 + t->nsites * t->nsites;
    n->cap_flows = max_flows > 0 ? max_flows : 1;
    /* Per-pair resources are made when a pair's first flow appears: at most
     * one per flow, so the arrays hold nres + cap_flows, never ngpus^2. */
    n->pair_res0 = n->nres;
    bool any_pair = false;
    for (int i = 0; i < t->nsites * t->nsites; i++)
        any_pair |= t->wan[i].present && t->wan[i].per_pair;
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
    n->res_solo = calloc((size_t)room, sizeof(double));
    n->res_frozen = calloc((size_t)room, sizeof(int));
    n->fsolo = malloc(sizeof(double) * (size_t)n->cap_flows);
    n->pend_r = malloc(sizeof(int) * (size_t)room);
    n->pend_mark = calloc((size_t)room, 1);
    n->pend_f = malloc(sizeof(int) * (size_t)n->cap_flows);
    n->fslot = malloc(sizeof(int) * NET_MAX_RES * (size_t)n->cap_flows);
    n->prune = true;
    if (!n->res_solo || !n->pend_r || !n->pend_mark || !n->pend_f || !n->fslot || !n->res_frozen || !n->fsolo ||
        !n->res || !n->flows || !n->wait_next || !n->fres || !n->fnres || !n->fcap ||
        !n->mark_f || !n->list_f ||
        !n->mark_r || !n->list_r || !n->res_left || !n->res_unfrozen || !n->new_rate ||
        !n->act_f || !n->act_r || !n->res_share) {
        net_free(n);
        return gt_fail(e, "out of memory for %d flows", max_flows);
    }
    for (int r = 0; r < n->nres; r++)
        n->res[r].wait_head = NONE;
    for (int g = 0; g < t->ngpus; g++)
        n->res[2 * g].cap = n->res[2 * g + 1].cap = topo_gpu_type(t, g)->link_bw;
    for (int d = 0; d < t->nnodes; d++)
        n->res[n->node_res0 + 2 * d].cap = n->res[n->node_res0 + 2 * d + 1].cap =
            t->nodes[d].nic_bw;
    for (int a = 0; a < t->nsites; a++)
        for (int b = 0; b < t->nsites; b++) {
            if (a == b)
                continue;
            const topo_link *l = topo_wan(t, a, b);
            net_resource *r = &n->res[n->wan_res0 + a * t->nsites + b];
            r->cap = l->bw;
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
    free(n->res_solo);
    free(n->res_frozen);
    free(n->fsolo);
    free(n->fslot);
    free(n->pend_r);
    free(n->pend_mark);
    free(n->pend_f);
    res_table_free(&n->pairs);
    memset(n, 0, sizeof *n);
}

/* The per-pair resource of GPUs a -> b (their sites' link is per_pair),
 * made on first use with the link's rate as its capacity. */
static int pair_resource(network *n, int a, int b)
{
    bool added;
    int i = res_table_index(&n->pairs, topo_pair_key(n->t, a, b), n->nres - n->pair_res0,
                            &added);
    if (added) {
        net_resource *r = &n->res[n->nres++];
        const topology *t = n->t;
        memset(r, 0, sizeof *r);
        r->cap = topo_wan(t, t->gpus[a].site, t->gpus[b].site)->bw;
        r->wait_head = NONE;
    }
    return n->pair_res0 + i;
}

/* TCP cap with this run's connection count. */
static double tcp_cap(const network *n, int sa, int sb)
{
    double rtt = 2 * topo_wan(n->t, sa, sb)->lat_s;
    return rtt > 0 ? n->tcp_connections * n->t->tcp_window_bytes / rtt : INFINITY;
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
    if (ga->node == gb->node) {
        f->res[f->nres++] = n->gpu_res0 + 2 * a;
        f->res[f->nres++] = n->gpu_res0 + 2 * b + 1;
    } else {
        f->res[f->nres++] = n->node_res0 + 2 * ga->node;
        f->res[f->nres++] = n->node_res0 + 2 * gb->node + 1;
        if (ga->site == gb->site) {
            f->cap = t->sites[ga->site].lan_bw;
        } else {
            f->wan_a = ga->site;
            f->wan_b = gb->site;
            f->cap = tcp_cap(n, ga->site, gb->site);
            int w = net_wan_resource(n, ga->site, gb->site);
            if (w < 0)
                w = pair_resource(n, a, b); /* fair sharing only: never temporal */
            f->res[f->nres++] = w;
            f->wan_res = w;
        }
    }
    for (int k = 0; k < f->nres; k++)
        n->fres[NET_MAX_RES * id + k] = f->res[k];
    n->fnres[id] = (uint8_t)f->nres;
    n->fcap[id] = f->cap;
    return id;
}

double net_flow_latency(const network *n, int id)
{
    const net_flow *f = &n->flows[id];
    const topology *t = n->t;
    const topo_gpu *ga = &t->gpus[f->src_gpu], *gb = &t->gpus[f->dst_gpu];
    if (ga->node == gb->node)
        return 0;
    if (ga->site == gb->site)
        return t->sites[ga->site].lan_lat_s;
    return topo_wan(t, ga->site, gb->site)->lat_s;
}

/* --- joining and leaving resources -------------------------------------- */

/* Each resource keeps its flows in a dense array in no particular order
 * (the filling is canonical: the order fixes no bit), and each flow knows
 * its slot in each of its resources, so leaving is a swap with the last
 * entry. Returns -1 when growing an array failed. */
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
        n->fslot[NET_MAX_RES * id + k] = r->njoined;
        r->fl[r->njoined++] = id;
    }
    double solo = net_solo_rate(n, id);
    n->fsolo[id] = solo;
    for (int k = 0; k < f->nres; k++)
        n->res_solo[f->res[k]] += solo;
    f->joined = true;
    return 0;
}

static void leave(network *n, int id)
{
    net_flow *f = &n->flows[id];
    for (int k = 0; k < f->nres; k++) {
        int ri = f->res[k];
        net_resource *r = &n->res[ri];
        int i = n->fslot[NET_MAX_RES * id + k], last = r->fl[--r->njoined];
        r->fl[i] = last;
        for (int j = 0; j < n->fnres[last]; j++) /* the moved flow's slot there */
            if (n->fres[NET_MAX_RES * last + j] == ri)
                n->fslot[NET_MAX_RES * last + j] = i;
        /* the running sum is only a pruning test (net_may_bind): an empty
         * resource restarts it at exactly zero */
        n->res_solo[ri] = r->njoined ? n->res_solo[ri] - n->fsolo[id] : 0;
    }
    f->joined = false;
}

/* Settle the bytes moved at the old rate and set the new rate. The flow's
 * one completion event moves to the new finish at once, earlier or later
 * (eventq_set), so no event ever fires before its flow is done; only a
 * stalled flow (rate 0, finish "never") leaves its old event to fire
 * early and be counted as stale. */
static int reschedule(network *n, int id, double rate, int64_t now, eventq *q, int ev_kind,
                      int64_t batch)
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
    /* replaces a pending one */
    return eventq_set_batch(q, batch, id, f->finish, ev_kind, id, f->version);
}

/* Re-solve what the seeds can reach (net_collect) and move the completion
 * events of the flows whose rate changed, as one batch of the event queue:
 * same-instant completions among them pop in flow-id order. Which flows
 * change does not depend on how much was re-solved (the filling is
 * canonical), and with the id order neither does the order of their
 * same-nanosecond completions. */
static int recompute(network *n, const int *seed_res, int nseed, const int *seed_flow,
                     int nseed_f, int64_t now, eventq *q, int ev_kind)
{
    int nf, nr = net_collect(n, seed_res, nseed, seed_flow, nseed_f, &nf);
    if (nf == 0)
        return 0;
    double *new_rate = n->new_rate;
    net_fill(n, nr, nf, new_rate);
    n->solves++;
    n->solved_flows += nf;
    int64_t batch = eventq_batch(q);
    int rc = 0;
    for (int i = 0; i < nf && !rc; i++)
        rc = reschedule(n, n->list_f[i], new_rate[i], now, q, ev_kind, batch);
    return rc;
}

/* Seeds of a change at flow id: its resources that may bind (tested before
 * it leaves, or after it joins: with the larger flow set either way) and a
 * temporal WAN link always (flows it admitted must be solved). Returns how
 * many were written to seeds (room NET_MAX_RES). */
static int change_seeds(const network *n, int id, int *seeds)
{
    const net_flow *f = &n->flows[id];
    int ns = 0;
    for (int k = 0; k < f->nres; k++)
        if (net_may_bind(n, f->res[k]) || n->res[f->res[k]].temporal)
            seeds[ns++] = f->res[k];
    return ns;
}

/* Re-solve now, or (deferred mode) remember the seeds for net_settle. */
static int solve_or_defer(network *n, const int *seed_res, int nseed, const int *seed_flow,
                          int nseed_f, int64_t now, eventq *q, int ev_kind)
{
    if (!n->defer)
        return recompute(n, seed_res, nseed, seed_flow, nseed_f, now, q, ev_kind);
    for (int i = 0; i < nseed; i++)
        if (!n->pend_mark[seed_res[i]]) {
            n->pend_mark[seed_res[i]] = 1;
            n->pend_r[n->npend_r++] = seed_res[i];
        }
    for (int i = 0; i < nseed_f; i++) /* a flow arrives once: no duplicates */
        n->pend_f[n->npend_f++] = seed_flow[i];
    return 0;
}

/* Why one re-solve after a batch gives what re-solving after each change
 * would: every resource whose flow set changed and that could bind at the
 * moment of the change (with the larger of its two flow sets) is a seed, so
 * the final state's components that differ from the initial state's all
 * contain a seed; the others are unchanged, and so are their canonical
 * rates. */
int net_settle(network *n, int64_t now, eventq *q, int ev_kind)
{
    if (n->npend_r == 0 && n->npend_f == 0)
        return 0;
    for (int i = 0; i < n->npend_r; i++)
        n->pend_mark[n->pend_r[i]] = 0;
    int rc = recompute(n, n->pend_r, n->npend_r, n->pend_f, n->npend_f, now, q, ev_kind);
    n->npend_r = n->npend_f = 0;
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

/* Admit waiting flows in order while the admitted ones leave room. Returns
 * how many joined, or -1 when out of memory. */
static int admit(network *n, int r, int *joined_ids, int max_ids)
{
    double used = 0;
    for (int j = n->res[r].njoined - 1; j >= 0; j--)
        used += net_solo_rate(n, n->res[r].fl[j]);
    int count = 0;
    while (n->res[r].wait_head != NONE && used < n->res[r].cap * (1 - 1e-9) && count < max_ids) {
        int id = n->res[r].wait_head;
        n->res[r].wait_head = n->wait_next[id];
        n->flows[id].waiting = false;
        if (join(n, id))
            return -1;
        used += net_solo_rate(n, id);
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
    int seeds[NET_MAX_RES];
    int ns = change_seeds(n, id, seeds);
    return solve_or_defer(n, seeds, ns, &id, 1, now, q, ev_kind);
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
    int seeds[NET_MAX_RES];
    int ns = change_seeds(n, id, seeds); /* before it leaves */
    leave(n, id);
    if (f->wan_res >= 0 && n->res[f->wan_res].temporal) {
        int ids[64];
        if (admit(n, f->wan_res, ids, 64) < 0)
            return -1;
    }
    if (solve_or_defer(n, seeds, ns, NULL, 0, now, q, ev_kind))
        return -1;
    return 1;
}

/* Every flow on r changes its solo rate, so the sums of its other resources
 * move and any of them may start or stop binding: re-solve the whole
 * (unpruned) component of r. Capacity changes are rare (bandwidth traces). */
int net_set_capacity(network *n, int r, double cap, int64_t now, eventq *q, int ev_kind)
{
    if (net_settle(n, now, q, ev_kind))
        return -1;
    n->res[r].cap = cap;
    for (int j = 0; j < n->res[r].njoined; j++)
        n->fsolo[n->res[r].fl[j]] = net_solo_rate(n, n->res[r].fl[j]);
    int stamp = ++n->stamp; /* each touched resource's sum, summed anew once */
    for (int j = 0; j < n->res[r].njoined; j++) {
        int id = n->res[r].fl[j];
        for (int k = 0; k < n->fnres[id]; k++) {
            int x = n->fres[NET_MAX_RES * id + k];
            if (n->mark_r[x] == stamp)
                continue;
            n->mark_r[x] = stamp;
            double sum = 0;
            for (int i = 0; i < n->res[x].njoined; i++)
                sum += n->fsolo[n->res[x].fl[i]];
            n->res_solo[x] = sum;
        }
    }
    if (n->res[r].temporal) {
        int ids[64];
        if (admit(n, r, ids, 64) < 0)
            return -1;
    }
    bool prune = n->prune;
    n->prune = false;
    int rc = recompute(n, &r, 1, NULL, 0, now, q, ev_kind);
    n->prune = prune;
    return rc;
}
