/* syncgroup.c — gradient sync groups from layer ownership (syncgroup.h). */
#include "sim/models/syncgroup.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"
#include "sim/models/cost.h"
#include "sim/models/dp_sync.h"

/* stage[l*D + pi]: the listed stage of pipeline pi holding layer l (the
 * first one listed if several do), -1 if none: each stage writes its
 * layers, the last listed first, so the first listed is left. */
static void stages_of_layers(const plan *p, int pi, int D, int L, int *stage)
{
    const plan_pipeline *pp = &p->pipes[pi];
    for (int l = 0; l < L; l++)
        stage[l * D + pi] = -1;
    for (int k = pp->nstages - 1; k >= 0; k--) {
        int lo = pp->stages[k].first > 0 ? pp->stages[k].first : 0;
        int hi = pp->stages[k].last < L - 1 ? pp->stages[k].last : L - 1;
        for (int l = lo; l <= hi; l++)
            stage[l * D + pi] = k;
    }
}

typedef struct sg_ctx {
    workload *w;
    const job *j;
    const plan *p;
    int D, L;
    int *owners;   /* [l*D + pi] lane holding layer l in pipeline pi */
    int *stage;    /* [l*D + pi] listed stage holding it */
    int *lane0;    /* first lane of each pipeline */
    int *base;     /* first op of each pipeline */
    int used;      /* members stored so far */
} sg_ctx;

/* Where member pi's gradients of layers [lo, ...] of its stage are ready:
 * the stage's backward runs the head, then its layers from the last down,
 * so they are ready once the backward FLOPs of layers [lo, last] (and the
 * head) are done; the last microbatch of the last flush carries them. */
static void ready_point(const sg_ctx *c, int pi, int lo, int *op, double *frac)
{
    const plan_pipeline *pp = &c->p->pipes[pi];
    int k = c->stage[lo * c->D + pi];
    const plan_stage *st = &pp->stages[k];
    int M = pp->microbatches * c->w->accumulation, b = c->p->microbatch_size;
    *op = c->base[pi] + (k * M + M - 1) * 2 + OP_BWD;
    *frac = lo == st->first ? 1.0
                            : cost_stage_bwd_flops(c->j, b, lo, st->last) /
                                  cost_stage_bwd_flops(c->j, b, st->first, st->last);
}

/* One group of layers [lo, hi] held by the owners of lo. */
static void add_group(sg_ctx *c, int lo, int hi)
{
    workload *w = c->w;
    int D = c->D;
    sync_group *g = &w->groups[w->ngroups++];
    g->members = &w->group_members[c->used];
    g->nmembers = D;
    memcpy(g->members, &c->owners[lo * D], sizeof(int) * (size_t)D);
    g->bytes = g->weights = 0;
    for (int x = lo; x <= hi; x++) {
        g->bytes += dp_grad_bytes(c->j, x, x, 1);
        g->weights += dp_weight_bytes(c->j, x, x, 1);
    }
    g->bytes /= w->lanes[g->members[0]].tp;
    g->weights /= w->lanes[g->members[0]].tp;
    /* a collective needs every member: the replica with the most passes
     * sets how many gathers all of them join */
    g->passes = 0;
    for (int pi = 0; pi < D; pi++) {
        int mb = c->p->pipes[pi].microbatches * w->accumulation;
        g->passes = mb > g->passes ? mb : g->passes;
    }
    if (w->gsync == GSYNC_OVERLAP) {
        g->ready_op = &w->group_ready_op[c->used];
        g->ready_frac = &w->group_ready_frac[c->used];
        for (int pi = 0; pi < D; pi++)
            ready_point(c, pi, lo, &g->ready_op[pi], &g->ready_frac[pi]);
    }
    c->used += D;
}

/* Layers [l, r) share their owners. After-backward sync: one group. With
 * overlap: buckets of whole layers of at most `cap` gradient bytes, filled
 * from the last layer down as the backward produces them (PyTorch DDP's
 * bucketing), never across a stage boundary of any pipeline. */
static void add_run(sg_ctx *c, int l, int r)
{
    if (c->w->gsync != GSYNC_OVERLAP) {
        add_group(c, l, r - 1);
        return;
    }
    double cap = plan_bucket_bytes(c->p);
    int hi = r - 1;
    while (hi >= l) {
        int lo = hi;
        double bytes = dp_grad_bytes(c->j, hi, hi, 1);
        while (lo > l && !memcmp(&c->stage[(lo - 1) * c->D], &c->stage[lo * c->D],
                                 sizeof(int) * (size_t)c->D)) {
            double more = dp_grad_bytes(c->j, lo - 1, lo - 1, 1);
            if (bytes + more > cap)
                break;
            bytes += more;
            lo--;
        }
        add_group(c, lo, hi);
        hi = lo - 1;
    }
}

int syncgroups_build(workload *w, const job *j, const plan *p, gt_err *e)
{
    int D = p->npipes, L = j->model.layers;
    w->ngroups = 0;
    if (D < 2)
        return 0;
    size_t cells = (size_t)L * (size_t)D;
    /* the workload's buffers, grown when too small (workload_rebuild) */
    int overlap = w->gsync == GSYNC_OVERLAP;
    if (gt_grow(&w->sg_scratch, &w->cap.sg_scratch, 2 * cells + 2 * (size_t)D, sizeof(int)) ||
        gt_grow(&w->groups, &w->cap.groups, (size_t)L, sizeof *w->groups) ||
        gt_grow(&w->group_members, &w->cap.members, cells, sizeof *w->group_members) ||
        (overlap && (gt_grow(&w->group_ready_op, &w->cap.ready_op, cells, sizeof(int)) ||
                     gt_grow(&w->group_ready_frac, &w->cap.ready_frac, cells, sizeof(double)))))
        return gt_fail(e, "out of memory");
    memset(w->groups, 0, sizeof *w->groups * (size_t)L);
    int *scratch = w->sg_scratch;
    sg_ctx c = {w, j, p, D, L, scratch, scratch + cells, scratch + 2 * cells,
                scratch + 2 * cells + D, 0};
    for (int pi = 0, ops = 0; pi < D; pi++) {
        c.lane0[pi] = w->view.lane0[pi];
        c.base[pi] = ops;
        ops += 2 * p->pipes[pi].nstages * p->pipes[pi].microbatches * w->accumulation;
    }
    for (int pi = 0; pi < D; pi++)
        stages_of_layers(p, pi, D, L, c.stage);
    for (int l = 0; l < L; l++)
        for (int pi = 0; pi < D; pi++) {
            int k = c.stage[l * D + pi];
            c.owners[l * D + pi] = k < 0 ? -1 : c.lane0[pi] + k % w->view.S[pi];
        }
    for (int l = 0; l < L;) {
        int r = l + 1;
        while (r < L && !memcmp(&c.owners[r * D], &c.owners[l * D], sizeof(int) * (size_t)D))
            r++;
        add_run(&c, l, r);
        l = r;
    }
    return 0;
}
