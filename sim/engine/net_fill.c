/* net_fill.c — the component walk and the canonical progressive filling of
 * the fluid network (net_fill.h).
 *
 * Why the filling is canonical. At each level x (the least fair share
 * left/unfrozen of a resource, or the least private cap of a flow) the flows
 * that bind are those with cap == x or with a resource whose share == x,
 * compared exactly. All of them get rate x (x is the minimum, so no bound
 * flow's cap is below it). Only after the pass does each resource give up
 * its capacity, once per level: left -= (flows of it frozen at this level)
 * x x. So a resource's numbers depend on the levels at which its own flows
 * froze and on how many, never on the order flows are visited; and a level
 * of an unrelated part of the component leaves a resource untouched unless
 * its own share equals that level exactly, in which case that level is its
 * own next level too. Solving two parts together or apart, in any order,
 * gives the same bits.
 *
 * Why pruning is exact. A resource whose capacity exceeds the sum of its
 * flows' solo rates (net_solo_rate) by a margin cannot bind: every flow's
 * rate is at most its solo rate, so its share stays above every level by
 * that margin, far beyond rounding. Leaving it out of the component changes
 * nothing in the filling except which flows are solved together, and by the
 * above that changes no bit. The 1,024-GPU bench case shows why it matters:
 * a node's NIC carries at most 16 TCP-capped WAN flows (77 of 100 Gbit/s),
 * never binds, yet joined every WAN link into one component. */
#include "sim/engine/net_fill.h"

#include <math.h>

static inline void mark_res(network *n, int r, int stamp, int *nr)
{
    if (n->mark_r[r] != stamp) {
        n->mark_r[r] = stamp;
        n->list_r[(*nr)++] = r;
    }
}

static inline void mark_flow(network *n, int id, int stamp, int *nf)
{
    if (n->mark_f[id] != stamp) {
        n->mark_f[id] = stamp;
        n->list_f[(*nf)++] = id;
    }
}

int net_collect(network *n, const int *seed_res, int nseed, const int *seed_flow, int nseed_f,
                int *nf)
{
    int stamp = ++n->stamp, nr = 0, fcount = 0;
    for (int i = 0; i < nseed; i++)
        mark_res(n, seed_res[i], stamp, &nr);
    for (int i = 0; i < nseed_f; i++)
        if (n->live[seed_flow[i]].joined)
            mark_flow(n, seed_flow[i], stamp, &fcount);
    int ri = 0, fi = 0;
    while (ri < nr || fi < fcount) {
        for (; ri < nr; ri++) { /* every flow of a marked resource */
            const net_resource *r = &n->res[n->list_r[ri]];
            for (int j = 0; j < r->njoined; j++)
                mark_flow(n, r->fl[j], stamp, &fcount);
        }
        for (; fi < fcount; fi++) { /* every resource of theirs that may bind */
            int id = n->list_f[fi];
            const int *fr = &n->fres[NET_MAX_RES * id];
            for (int k = 0; k < n->fnres[id]; k++)
                if (n->mark_r[fr[k]] != stamp && net_may_bind(n, fr[k]))
                    mark_res(n, fr[k], stamp, &nr);
        }
    }
    *nf = fcount;
    return nr;
}

/* The next level: the least share of a resource with unfrozen flows, or the
 * least private cap of an unfrozen flow (a minimum: any scan order). */
static double fill_level(network *n, int na, int left)
{
    double x = INFINITY;
    for (int i = 0; i < na; i++) {
        int r = n->act_r[i];
        double share = n->res_left[r] / n->res_unfrozen[r];
        n->res_share[r] = share;
        x = share < x ? share : x;
    }
    for (int i = 0; i < left; i++) {
        double cap = n->fcap[n->list_f[n->act_f[i]]];
        x = cap < x ? cap : x;
    }
    return x < 0 ? 0 : x;
}

/* Freeze the unfrozen flows level x binds (exact comparisons), counting per
 * resource how many froze; returns how many stay unfrozen. */
static int freeze_level(network *n, double x, int left, double *new_rate)
{
    int stamp = n->stamp, kept = 0;
    for (int a = 0; a < left; a++) {
        int i = n->act_f[a], id = n->list_f[i], nres = n->fnres[id];
        const int *fr = &n->fres[NET_MAX_RES * id];
        bool bind = n->fcap[id] <= x;
        for (int k = 0; k < nres && !bind; k++)
            bind = n->mark_r[fr[k]] == stamp && n->res_share[fr[k]] <= x;
        if (!bind) {
            n->act_f[kept++] = i;
            continue;
        }
        new_rate[i] = x;
        for (int k = 0; k < nres; k++)
            if (n->mark_r[fr[k]] == stamp)
                n->res_frozen[fr[k]]++;
    }
    return kept;
}

/* The common case of one resource holding every flow of the component (a
 * shared link, its NICs pruned) whose share no private cap undercuts: one
 * level, every flow at cap / flows — the bits the general filling gives
 * (its level is that share, or a cap equal to it). Returns false when the
 * case does not apply. */
static bool fill_one_level(network *n, int nr, int nf, double *new_rate)
{
    if (nr != 1 || n->res[n->list_r[0]].njoined != nf)
        return false;
    double share = n->res[n->list_r[0]].cap / nf;
    for (int i = 0; i < nf; i++)
        if (n->fcap[n->list_f[i]] < share)
            return false;
    share = share < 0 ? 0 : share;
    for (int i = 0; i < nf; i++)
        new_rate[i] = share;
    return true;
}

void net_fill(network *n, int nr, int nf, double *new_rate)
{
    if (fill_one_level(n, nr, nf, new_rate))
        return;
    int na = 0;
    for (int i = 0; i < nr; i++) {
        int r = n->list_r[i];
        n->res_left[r] = n->res[r].cap;
        n->res_unfrozen[r] = n->res[r].njoined;
        n->res_frozen[r] = 0;
        if (n->res_unfrozen[r] > 0)
            n->act_r[na++] = r;
    }
    for (int i = 0; i < nf; i++)
        n->act_f[i] = i;
    int left = nf;
    while (left > 0) {
        double x = fill_level(n, na, left);
        left = freeze_level(n, x, left, new_rate);
        int nk = 0;
        for (int j = 0; j < na; j++) { /* one capacity update per resource and level */
            int r = n->act_r[j], k = n->res_frozen[r];
            if (k > 0) {
                n->res_left[r] -= (double)k * x;
                n->res_unfrozen[r] -= k;
                n->res_frozen[r] = 0;
            }
            if (n->res_unfrozen[r] > 0)
                n->act_r[nk++] = r;
        }
        na = nk;
    }
}
