/* network.c — max-min fair fluid flows and temporal WAN sharing (network.h). */
#include "sim/engine/network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine/net_fill.h"
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

/* The per-slot arrays (solver state of live flows), doubled together. A
 * slot is taken when a flow is made and given back when it ends, so they
 * hold the flows alive at once, not every flow of the run. */
static int grow_slots(network *n)
{
    int nc = n->cap_slots ? 2 * n->cap_slots : 256;
#define GROW(p, per)                                                        \
    do {                                                                    \
        void *x_ = realloc(p, sizeof *(p) * (per) * (size_t)nc);           \
        if (!x_)                                                            \
            return -1;                                                      \
        p = x_;                                                             \
    } while (0)
    GROW(n->live, 1);
    GROW(n->fres, NET_MAX_RES);
    GROW(n->fslot, NET_MAX_RES);
    GROW(n->fnres, 1);
    GROW(n->fcap, 1);
    GROW(n->fsolo, 1);
    GROW(n->new_rate, 1);
    GROW(n->mark_f, 1);
    GROW(n->list_f, 1);
    GROW(n->act_f, 1);
    GROW(n->pend_f, 1);
    GROW(n->wait_next, 1);
    GROW(n->free_slot, 1);
#undef GROW
    memset(n->mark_f + n->cap_slots, 0, sizeof *n->mark_f * (size_t)(nc - n->cap_slots));
    for (int sl = nc - 1; sl >= n->cap_slots; sl--) /* lowest slot taken first */
        n->free_slot[n->nfree++] = sl;
    n->cap_slots = nc;
    return 0;
}

/* Does the shared link a -> b serve its flows in priority order? */
static bool link_temporal(const topology *t, int policy, int a, int b)
{
    const topo_link *l = topo_wan(t, a, b);
    wan_policy pol = policy >= 0 ? (wan_policy)policy : (l->policy_set ? l->policy : WAN_FAIR);
    return pol == WAN_TEMPORAL;
}

bool net_any_temporal(const topology *t, int policy)
{
    for (int a = 0; a < t->nsites; a++)
        for (int b = 0; b < t->nsites; b++)
            if (a != b && link_temporal(t, policy, a, b))
                return true;
    return false;
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
    n->flows = malloc(sizeof *n->flows * (size_t)n->cap_flows);
    n->slot_of = malloc(sizeof(int) * (size_t)n->cap_flows);
    n->mark_r = calloc((size_t)room, sizeof(int));
    n->list_r = malloc(sizeof(int) * (size_t)room);
    n->res_left = malloc(sizeof(double) * (size_t)room);
    n->res_unfrozen = malloc(sizeof(int) * (size_t)room);
    n->act_r = malloc(sizeof(int) * (size_t)room);
    n->res_share = malloc(sizeof(double) * (size_t)room);
    n->res_solo = calloc((size_t)room, sizeof(double));
    n->res_frozen = calloc((size_t)room, sizeof(int));
    n->pend_r = malloc(sizeof(int) * (size_t)room);
    n->pend_mark = calloc((size_t)room, 1);
    n->prune = true;
    if (!n->res || !n->flows || !n->slot_of || !n->mark_r || !n->list_r || !n->res_left ||
        !n->res_unfrozen || !n->act_r || !n->res_share || !n->res_solo || !n->res_frozen ||
        !n->pend_r || !n->pend_mark || grow_slots(n)) {
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
            net_resource *r = &n->res[n->wan_res0 + a * t->nsites + b];
            r->cap = path_dense_cap(t, n->wan_res0 + a * t->nsites + b);
            r->temporal = link_temporal(t, policy, a, b);
        }
    return 0;
}

void net_free(network *n)
{
    for (int r = 0; n->res && r < n->nres; r++)
        free(n->res[r].fl);
    void *arrays[] = {n->res, n->flows, n->slot_of, n->mark_r, n->list_r, n->res_left,
                      n->res_unfrozen, n->act_r, n->res_share, n->res_solo, n->res_frozen,
                      n->pend_r, n->pend_mark, n->live, n->fres, n->fslot, n->fnres, n->fcap,
                      n->fsolo, n->new_rate, n->mark_f, n->list_f, n->act_f, n->pend_f,
                      n->wait_next, n->free_slot};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        free(arrays[i]);
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
    if (n->nflows == n->cap_flows || (n->nfree == 0 && grow_slots(n)))
        return NONE;
    int id = n->nflows++, sl = n->free_slot[--n->nfree];
    n->slot_of[id] = sl;
    const topology *t = n->t;
    const topo_gpu *ga = &t->gpus[a], *gb = &t->gpus[b];
    n->flows[id] = (net_flow){.src_gpu = a, .dst_gpu = b, .wan_a = NONE, .wan_b = NONE,
                              .bytes = bytes, .start = now};
    n->live[sl] = (net_live){.remaining = bytes, .priority = priority, .finish = INT64_MAX,
                             .sched = -1, .id = id, .wan_res = NONE};
    int *res = &n->fres[NET_MAX_RES * sl], nres = 0;
    /* the path's resources (dense keys are indices) and private cap */
    path_res pr[PATH_MAX_RES];
    int k = path_resources(t, a, b, pr);
    for (int i = 0; i < k; i++) /* per-pair: fair sharing only, never temporal */
        res[nres++] = pr[i].key < n->pair_res0 ? (int)pr[i].key : pair_resource(n, &pr[i]);
    double cap = path_private_cap(t, a, b, n->tcp_connections);
    if (k == 3) {
        n->flows[id].wan_a = ga->site;
        n->flows[id].wan_b = gb->site;
        n->live[sl].wan_res = res[2];
    }
    n->fnres[sl] = (uint8_t)nres;
    n->fcap[sl] = cap;
    return id;
}

/* The flow's slot is free again (it ended): only its record stays. */
static void release(network *n, int id)
{
    n->free_slot[n->nfree++] = n->slot_of[id];
    n->slot_of[id] = NONE;
}

const net_live *net_flow_live(const network *n, int id)
{
    return n->slot_of[id] >= 0 ? &n->live[n->slot_of[id]] : NULL;
}

int net_flow_path(const network *n, int id, int res[NET_MAX_RES], double *cap)
{
    int sl = n->slot_of[id];
    if (sl < 0)
        return 0;
    memcpy(res, &n->fres[NET_MAX_RES * sl], sizeof(int) * n->fnres[sl]);
    *cap = n->fcap[sl];
    return n->fnres[sl];
}

double net_flow_latency(const network *n, int id)
{
    return path_latency(n->t, n->flows[id].src_gpu, n->flows[id].dst_gpu);
}

/* --- joining and leaving resources -------------------------------------- */

/* Each resource keeps the slots of its flows in a dense array in no
 * particular order (the filling is canonical: the order fixes no bit), and
 * each flow knows its index in each of its resources, so leaving is a swap
 * with the last entry. Returns -1 when growing an array failed. */
static int join(network *n, int sl)
{
    const int *fr = &n->fres[NET_MAX_RES * sl];
    int nr = n->fnres[sl]; /* read once: the int stores below could alias a byte */
    for (int k = 0; k < nr; k++) {
        net_resource *r = &n->res[fr[k]];
        if (r->njoined == r->cap_fl) {
            int nc = r->cap_fl ? 2 * r->cap_fl : 8;
            int *x = realloc(r->fl, sizeof *x * (size_t)nc);
            if (!x)
                return -1;
            r->fl = x;
            r->cap_fl = nc;
        }
        n->fslot[NET_MAX_RES * sl + k] = r->njoined;
        r->fl[r->njoined++] = sl;
    }
    double solo = net_solo_rate(n, sl);
    n->fsolo[sl] = solo;
    for (int k = 0; k < nr; k++)
        n->res_solo[fr[k]] += solo;
    n->live[sl].joined = true;
    return 0;
}

static void leave(network *n, int sl)
{
    const int *fr = &n->fres[NET_MAX_RES * sl];
    int nr = n->fnres[sl]; /* read once: the int stores below could alias a byte */
    for (int k = 0; k < nr; k++) {
        int ri = fr[k];
        net_resource *r = &n->res[ri];
        int i = n->fslot[NET_MAX_RES * sl + k], last = r->fl[--r->njoined];
        r->fl[i] = last;
        const int *lr = &n->fres[NET_MAX_RES * last];
        int *ls = &n->fslot[NET_MAX_RES * last], nl = n->fnres[last];
        for (int j = 0; j < nl; j++) /* the moved flow's index there */
            if (lr[j] == ri)
                ls[j] = i;
        /* the running sum is only a pruning test (net_may_bind): an empty
         * resource restarts it at exactly zero */
        n->res_solo[ri] = r->njoined ? n->res_solo[ri] - n->fsolo[sl] : 0;
    }
    n->live[sl].joined = false;
}

/* Settle the bytes moved at the old rate and set the new rate. The flow's
 * one completion event (handle = flow id) moves to the new finish at once,
 * earlier or later, so no event ever fires before its flow is done; only a
 * stalled flow (rate 0, finish "never") leaves its old event to fire
 * early and be counted as stale. */
static int reschedule(network *n, int sl, double rate, int64_t now, eventq *q, int ev_kind,
                      int64_t batch)
{
    net_live *f = &n->live[sl];
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
    n->moved_events++;
    /* replaces a pending one */
    return eventq_set_batch(q, batch, f->id, f->finish, ev_kind, f->id, f->version);
}

/* Re-solve what the seeds can reach (net_collect) and move the completion
 * events of the flows whose rate changed, as one batch of the event queue:
 * same-instant completions among them pop in flow-id order. Which flows
 * change does not depend on how much was re-solved (the filling is
 * canonical), and with the id order neither does the order of their
 * same-nanosecond completions. */
static int recompute(network *n, const int *seed_res, int nseed, const int *seed_slot,
                     int nseed_f, int64_t now, eventq *q, int ev_kind)
{
    int nf, nr = net_collect(n, seed_res, nseed, seed_slot, nseed_f, &nf);
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

/* Seeds of a change at a flow: its resources that may bind (tested before
 * it leaves, or after it joins: with the larger flow set either way) and a
 * temporal WAN link always (flows it admitted must be solved). Returns how
 * many were written to seeds (room NET_MAX_RES). */
static int change_seeds(const network *n, int sl, int *seeds)
{
    const int *fr = &n->fres[NET_MAX_RES * sl];
    int nr = n->fnres[sl], ns = 0; /* read once: the stores to seeds could alias it */
    for (int k = 0; k < nr; k++) {
        int r = fr[k];
        if (net_may_bind(n, r) || n->res[r].temporal)
            seeds[ns++] = r;
    }
    return ns;
}

/* Re-solve now, or (deferred mode) remember the seeds for net_settle. */
static int solve_or_defer(network *n, const int *seed_res, int nseed, const int *seed_slot,
                          int nseed_f, int64_t now, eventq *q, int ev_kind)
{
    if (!n->defer)
        return recompute(n, seed_res, nseed, seed_slot, nseed_f, now, q, ev_kind);
    for (int i = 0; i < nseed; i++)
        if (!n->pend_mark[seed_res[i]]) {
            n->pend_mark[seed_res[i]] = 1;
            n->pend_r[n->npend_r++] = seed_res[i];
        }
    for (int i = 0; i < nseed_f; i++) /* a flow arrives once: no duplicates */
        n->pend_f[n->npend_f++] = seed_slot[i];
    return 0;
}

/* Why one re-solve after a batch gives what re-solving after each change
 * would: every resource whose flow set changed and that could bind at the
 * moment of the change (with the larger of its two flow sets) is a seed, so
 * the final state's components that differ from the initial state's all
 * contain a seed; the others are unchanged, and so are their canonical
 * rates. A pending arrival that ended within the batch (a zero-length
 * life) gave its slot back: the walk skips slots that are not joined. */
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

/* Insert slot sl into r's queue, ordered by (priority, flow id). */
static void enqueue_waiting(network *n, int r, int sl)
{
    int *pp = &n->res[r].wait_head;
    const net_live *f = &n->live[sl];
    while (*pp != NONE) {
        const net_live *g = &n->live[*pp];
        if (f->priority < g->priority || (f->priority == g->priority && f->id < g->id))
            break;
        pp = &n->wait_next[*pp];
    }
    n->wait_next[sl] = *pp;
    *pp = sl;
}

/* Admit waiting flows in order while the admitted ones leave room. Returns
 * how many joined, or -1 when out of memory. */
static int admit(network *n, int r, int max_ids)
{
    double used = 0;
    for (int j = n->res[r].njoined - 1; j >= 0; j--)
        used += net_solo_rate(n, n->res[r].fl[j]);
    int count = 0;
    while (n->res[r].wait_head != NONE && used < n->res[r].cap * (1 - 1e-9) && count < max_ids) {
        int sl = n->res[r].wait_head;
        n->res[r].wait_head = n->wait_next[sl];
        n->live[sl].waiting = false;
        if (join(n, sl))
            return -1;
        used += net_solo_rate(n, sl);
        count++;
    }
    return count;
}

int net_flow_start(network *n, int id, int64_t now, eventq *q, int ev_kind)
{
    int sl = n->slot_of[id];
    net_live *f = &n->live[sl];
    n->flows[id].bytes_start = now;
    f->last_update = now;
    f->rate = 0;
    if (n->flows[id].bytes <= 0) {
        f->version++;
        f->finish = f->sched = now;
        return eventq_set(q, id, now, ev_kind, id, f->version);
    }
    if (f->wan_res >= 0 && n->res[f->wan_res].temporal) {
        f->waiting = true;
        enqueue_waiting(n, f->wan_res, sl);
        int k = admit(n, f->wan_res, 64);
        if (k <= 0)
            return k;
    } else if (join(n, sl)) {
        return -1;
    }
    int seeds[NET_MAX_RES];
    int ns = change_seeds(n, sl, seeds);
    return solve_or_defer(n, seeds, ns, &sl, 1, now, q, ev_kind);
}

int net_flow_done_event(network *n, int id, uint32_t version, int64_t now, eventq *q,
                        int ev_kind)
{
    int sl = n->slot_of[id];
    if (sl < 0 || version != n->live[sl].version)
        return 0; /* ended already, or a superseded event */
    net_live *f = &n->live[sl];
    f->sched = -1;
    if (now < f->finish) { /* the rate dropped since this event was scheduled */
        n->stale_events++;
        if (f->finish == INT64_MAX)
            return 0; /* stalled (temporal queue or zero capacity) */
        f->version++;
        f->sched = f->finish;
        return eventq_set(q, id, f->finish, ev_kind, id, f->version) ? -1 : 0;
    }
    net_flow *rec = &n->flows[id];
    rec->end = now;
    int wan_res = f->wan_res;
    if (wan_res >= 0)
        n->res[wan_res].wan_bytes += rec->bytes;
    if (!f->joined) { /* zero-byte flow */
        release(n, id);
        return 1;
    }
    int seeds[NET_MAX_RES];
    int ns = change_seeds(n, sl, seeds); /* before it leaves */
    leave(n, sl);
    release(n, id);
    if (wan_res >= 0 && n->res[wan_res].temporal && admit(n, wan_res, 64) < 0)
        return -1;
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
        int sl = n->res[r].fl[j];
        for (int k = 0; k < n->fnres[sl]; k++) {
            int x = n->fres[NET_MAX_RES * sl + k];
            if (n->mark_r[x] == stamp)
                continue;
            n->mark_r[x] = stamp;
            double sum = 0;
            for (int i = 0; i < n->res[x].njoined; i++)
                sum += n->fsolo[n->res[x].fl[i]];
            n->res_solo[x] = sum;
        }
    }
    if (n->res[r].temporal && admit(n, r, 64) < 0)
        return -1;
    bool prune = n->prune;
    n->prune = false;
    int rc = recompute(n, &r, 1, NULL, 0, now, q, ev_kind);
    n->prune = prune;
    return rc;
}
