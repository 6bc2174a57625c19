/* exact_rows.c — the exact referee's bound of a pipeline by layer
 * granularity and memory (exact_space.h): every stage holds a whole layer
 * at least and at most as many as fit in its GPU's memory (layer_cap), and
 * a stage of l layers on a GPU of type y takes at least l x layer_s[bi][y]
 * per microbatch (the least per-layer time of any stage range the cost model
 * gives that type, exact_space.c). So a pipeline passes its microbatches
 * through a bottleneck no smaller than the best integral split's for its
 * GPUs under those caps, and a pipeline whose GPUs cannot hold the model at
 * a microbatch size has no plan at that size (the unit bound, exact_space.c,
 * is then infinite). And the rows share the unit's microbatches: a row's
 * last stage starts after one trip's forward half and its last backward
 * still has the backward half to go, so a row passing m of them takes at
 * least its round trip plus m - 1 times its last stage's least time, and m
 * times its bottleneck (exact_rows_fill). */
#include <math.h>
#include <stdlib.h>

#include "exact_space.h"
#include "sim/models/memory.h"

/* Per microbatch size and type, the most layers a stage can hold: the
 * stage's need (enc_stage_need) is at least n x (a layer's state and one
 * microbatch's activations, at least one in flight) plus the least of what
 * the first and last stage add, plus the runtime overhead. */
int exact_rows_init(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    sp->layer_cap = malloc(sizeof *sp->layer_cap * (size_t)(pr->nb * pr->ntypes));
    if (!sp->layer_cap)
        return -1;
    for (int bi = 0; bi < pr->nb; bi++)
        for (int ty = 0; ty < pr->ntypes; ty++) {
            int f = pr->ty_fused[ty]; /* the attention kernel this type runs */
            double per = pr->mem_layer + pr->act_layer[bi][f];
            double extra = fmin(0, pr->mem_emb) +
                           fmin(pr->tmp_mid[bi][f], pr->mem_head + pr->tmp_last[bi][f]);
            double room = pr->t->types[ty].mem_bytes - COST_RUNTIME_OVERHEAD_BYTES - extra;
            double n = per > 0 ? floor(room / per * (1 + 1e-9) + 1e-9) : pr->L;
            sp->layer_cap[bi * pr->ntypes + ty] = n >= pr->L ? pr->L : n < 0 ? 0 : (int)n;
        }
    return 0;
}

double exact_least_bottleneck(const double *c, const int *cap, int S, int L)
{
    double lo = 0, hi = 0;
    long room = 0;
    for (int k = 0; k < S; k++) {
        int m = cap ? cap[k] : L;
        if (m < 1)
            return INFINITY; /* a stage that cannot hold a layer */
        room += m;
        if (!(c[k] > 0))
            return 0; /* a free stage: no bound */
        hi = fmax(hi, c[k]);
    }
    if (room < L)
        return INFINITY; /* the stages cannot hold the model */
    lo = hi * (1 - 1e-12); /* every stage holds a layer: >= the slowest one's */
    hi *= L;
    for (int it = 0; it < 60; it++) {
        double mid = 0.5 * (lo + hi);
        long n = 0;
        for (int k = 0; k < S; k++) {
            long f = (long)floor(mid / c[k]);
            n += cap && f > cap[k] ? cap[k] : f;
        }
        if (n >= L)
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

double exact_rows_fill(const double *rt, const double *cl, const double *bn, int D, int m)
{
    double lo = 0, hi = 0;
    for (int r = 0; r < D; r++) { /* every row passes one microbatch at least */
        lo = fmax(lo, rt[r]);
        hi = fmax(hi, rt[r] + (m - 1) * cl[r] + m * bn[r]);
    }
    for (int it = 0; it < 50; it++) {
        double T = 0.5 * (lo + hi);
        long n = 0;
        for (int r = 0; r < D && n < m; r++) {
            if (T < rt[r])
                continue;
            double a = cl[r] > 0 ? floor((T - rt[r]) / cl[r]) + 1 : m;
            double b = bn[r] > 0 ? floor(T / bn[r]) : m;
            n += (long)fmin(fmin(a, b), m);
        }
        if (n >= m)
            hi = T;
        else
            lo = T;
    }
    return lo * (1 - 1e-12);
}
