/* plan_view.c — a plan's stages, lanes, in-flight counts and GPU lookup,
 * resolved once (plan_view.h). */
#include "sim/models/plan_view.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"

int plan_physical_stages(const plan *p, int pipe)
{
    const plan_pipeline *pp = &p->pipes[pipe];
    if (p->schedule != SCHED_INTERLEAVED)
        return pp->nstages;
    for (int k = 1; k < pp->nstages; k++)
        if (pp->stages[k].gpus[0] == pp->stages[0].gpus[0])
            return k;
    return pp->nstages;
}

int plan_in_flight(const plan *p, int pipe, int k)
{
    const plan_pipeline *pp = &p->pipes[pipe];
    int S = plan_physical_stages(p, pipe);
    return plan_in_flight_rule(p->schedule, S, S ? pp->nstages / S : 1, S ? k % S : 0,
                               pp->microbatches);
}

void plan_view_free(plan_view *v)
{
    free(v->S);
    free(v->in_flight);
    free(v->gpu_pipe);
    memset(v, 0, sizeof *v);
}

int plan_view_build(plan_view *v, const plan *p, int ngpus, gt_err *e)
{
    memset(v, 0, sizeof *v);
    return plan_view_rebuild(v, p, ngpus, e);
}

int plan_view_rebuild(plan_view *v, const plan *p, int ngpus, gt_err *e)
{
    size_t D = (size_t)(p->npipes > 0 ? p->npipes : 0), listed = 0;
    for (size_t pi = 0; pi < D; pi++)
        listed += (size_t)p->pipes[pi].nstages;
    v->npipes = (int)D;
    v->ngpus = ngpus > 0 ? ngpus : 0;
    /* one block per element size: S, v, lane0, mb, stage0 (D + 1) */
    if (gt_grow(&v->S, &v->cap[0], 5 * D + 1, sizeof(int)) ||
        gt_grow(&v->in_flight, &v->cap[1], listed + 1, sizeof(int)) ||
        gt_grow(&v->gpu_pipe, &v->cap[2], 2 * (size_t)v->ngpus + 1, sizeof(int))) {
        plan_view_free(v);
        return gt_fail(e, "out of memory for a plan of %zu stages", listed);
    }
    v->v = v->S + D;
    v->lane0 = v->v + D;
    v->mb = v->lane0 + D;
    v->stage0 = v->mb + D;
    v->gpu_stage = v->gpu_pipe + v->ngpus;
    for (int g = 0; g < 2 * v->ngpus; g++)
        v->gpu_pipe[g] = -1;
    int lane = 0, stage = 0;
    for (int pi = 0; pi < v->npipes; pi++) {
        const plan_pipeline *pp = &p->pipes[pi];
        int S = plan_physical_stages(p, pi);
        v->S[pi] = S;
        v->v[pi] = S ? pp->nstages / S : 1;
        v->lane0[pi] = lane;
        v->mb[pi] = pp->microbatches;
        v->stage0[pi] = stage;
        for (int k = 0; k < pp->nstages; k++) {
            v->in_flight[stage + k] =
                plan_in_flight_rule(p->schedule, S, v->v[pi], k % S, pp->microbatches);
            const plan_stage *st = &pp->stages[k];
            for (int x = 0; x < st->ngpus; x++)
                if (st->gpus[x] >= 0 && st->gpus[x] < v->ngpus && v->gpu_pipe[st->gpus[x]] < 0) {
                    v->gpu_pipe[st->gpus[x]] = pi;
                    v->gpu_stage[st->gpus[x]] = k % S;
                }
        }
        lane += S;
        stage += pp->nstages;
    }
    v->stage0[v->npipes] = stage;
    v->nlanes = lane;
    return 0;
}
