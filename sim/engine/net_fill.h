/* net_fill.h — the max-min solver of the fluid network (network.h): which
 * flows a change can reach (the component, pruned of resources that cannot
 * bind) and the canonical progressive filling over them. Internal to
 * sim/engine (network.c is its one caller; tests reach it through network.h).
 *
 * Canonical arithmetic: every rate is a function of the flow set alone, not
 * of the order flows are visited nor of which other flows (sharing no
 * resource) happen to be solved with them. So re-solving any superset of the
 * flows a change can affect gives every rate to the last bit, which is what
 * lets the solver re-solve only the pruned component (see net_fill.c). */
#ifndef GT_NET_FILL_H
#define GT_NET_FILL_H

#include <stdbool.h>
#include "sim/engine/network.h"

/* Relative margin of net_may_bind: the running sums of solo rates drift by
 * about 1e-16 per update, the filling's remaining capacities by about as
 * much per level; 1e-7 is far above both. */
#define NET_BIND_MARGIN 1e-7

/* A resource may bind (limit some flow's rate) unless its capacity exceeds
 * the sum of its flows' solo rates by a margin far above rounding. With
 * pruning off (n->prune false) every resource counts as one that may bind.
 * (Inline: asked for each resource of every flow that starts or ends.) */
static inline bool net_may_bind(const network *n, int r)
{
    if (!n->prune)
        return true;
    return !(n->res_solo[r] * (1 + NET_BIND_MARGIN) < n->res[r].cap);
}
/* Flows are named by their slots here. Marks the flows and resources to
 * re-solve: the seed flows (if joined), the
 * flows of every seed resource, and, transitively, the flows of every
 * resource of theirs that may bind. Returns the number of resources, the
 * flows in *nf (in n->list_f / n->list_r). */
int net_collect(network *n, const int *seed_res, int nseed, const int *seed_flow, int nseed_f,
                int *nf);
/* Canonical progressive filling over what net_collect marked: new_rate[i]
 * is the rate of flow list_f[i]. */
void net_fill(network *n, int nr, int nf, double *new_rate);
/* The rate a flow could get alone: its private cap and its resources'
 * capacities (no NaN among them, so a compare is fmin's value). */
static inline double net_solo_rate(const network *n, int id)
{
    double x = n->fcap[id];
    const int *fr = &n->fres[NET_MAX_RES * id];
    for (int k = 0; k < n->fnres[id]; k++) {
        double c = n->res[fr[k]].cap;
        x = c < x ? c : x;
    }
    return x;
}

#endif
