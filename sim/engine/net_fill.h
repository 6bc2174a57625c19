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

/* A resource may bind (limit some flow's rate) unless its capacity exceeds
 * the sum of its flows' solo rates by a margin far above rounding. With
 * pruning off (n->prune false) every resource counts as one that may bind. */
bool net_may_bind(const network *n, int r);
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
 * capacities. */
double net_solo_rate(const network *n, int id);

#endif
