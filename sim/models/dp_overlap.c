/* dp_overlap.c — compute slowdown beside sharded data-parallel collectives
 * (dp_overlap.h). */
#include "sim/models/dp_overlap.h"

#include <math.h>
#include <stdlib.h>

#include "sim/models/collective.h"
#include "sim/models/dp_sync.h"
#include "sim/models/path.h"

/* The GPU of pipeline q that holds `layer` (its stage's first GPU), -1 if
 * no stage of q holds it. */
static int holder(const plan *p, int q, int layer)
{
    const plan_pipeline *pp = &p->pipes[q];
    for (int k = 0; k < pp->nstages; k++)
        if (pp->stages[k].first <= layer && layer <= pp->stages[k].last)
            return pp->stages[k].gpus[0];
    return -1;
}

/* One ring phase (reduce-scatter or all-gather) of `bytes` per member over
 * ring[0..n): n - 1 steps, each as long as its slowest hop moving 1/n. */
static double ring_phase_s(const topology *t, const coll_member *ring, int n, double bytes)
{
    double step = 0;
    for (int i = 0; i < n; i++) {
        double lat, rate;
        path_lone(t, ring[i].gpu, ring[(i + 1) % n].gpu, &lat, &rate);
        if (!(rate > 0))
            return 0; /* no usable rate: nothing to charge (the sync itself stalls) */
        double s = lat + bytes / n / rate;
        step = s > step ? s : step;
    }
    return (n - 1) * step;
}

int dp_overlap_applies(const plan *p)
{
    shard_kind sh = p->dp_shard;
    return p->npipes > 1 && (sh == SHARD_ZERO2 || sh == SHARD_ZERO3 || sh == SHARD_FSDP);
}

int dp_overlap_traffic_s(const topology *t, const job *j, const plan *p, int pi, int k,
                         double c[2])
{
    shard_kind sh = p->dp_shard;
    int gathers = sh == SHARD_ZERO3 || sh == SHARD_FSDP;
    if (!dp_overlap_applies(p)) {
        c[0] = c[1] = 0;
        return 0;
    }
    const plan_stage *st = &p->pipes[pi].stages[k];
    /* the members in the collective's order */
    coll_member *ring = malloc(sizeof *ring * (size_t)p->npipes);
    if (!ring)
        return -1;
    int n = 0;
    for (int q = 0; q < p->npipes; q++) {
        int g = holder(p, q, st->first);
        if (g >= 0)
            ring[n++] = (coll_member){q, t->gpus[g].site, g};
    }
    collective_order(ring, n);
    /* forward: the weights' all-gather (ZeRO-3 / FSDP); backward: the
     * all-gather again and the gradients' reduce-scatter */
    double gather = 0, scatter = 0;
    if (n > 1) {
        if (gathers)
            gather = ring_phase_s(t, ring, n, dp_weight_bytes(j, st->first, st->last, st->ngpus));
        scatter = ring_phase_s(t, ring, n, dp_grad_bytes(j, st->first, st->last, st->ngpus));
    }
    free(ring);
    c[0] = gather;
    c[1] = gather + scatter;
    return 0;
}

int64_t dp_overlap_ns(int64_t ns, double traffic_s)
{
    if (!(traffic_s > 0) || ns <= 0)
        return ns;
    double c_ns = traffic_s * 1e9, d = (double)ns;
    return ns + llround(DP_OVERLAP_SLOWDOWN * (c_ns < d ? c_ns : d));
}
