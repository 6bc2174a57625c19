/* syncgroup.c — gradient sync groups from layer ownership (syncgroup.h). */
#include "syncgroup.h"

#include <stdlib.h>
#include <string.h>

#include "cost.h"

/* lane holding layer l in pipeline pi */
static int lane_of_layer(const plan *p, int pi, int lane0, int l)
{
    const plan_pipeline *pp = &p->pipes[pi];
    int S = plan_physical_stages(p, pi);
    for (int k = 0; k < pp->nstages; k++)
        if (pp->stages[k].first <= l && l <= pp->stages[k].last)
            return lane0 + k % S;
    return -1;
}

static double layer_grad_bytes(const model_spec *m, int l)
{
    return cost_grad_bytes(m, l, l);
}

int syncgroups_build(workload *w, const job *j, const plan *p, gt_err *e)
{
    int D = p->npipes, L = j->model.layers;
    w->ngroups = 0;
    if (D < 2)
        return 0;
    int *owners = malloc(sizeof *owners * (size_t)L * (size_t)D);
    int *lane0 = malloc(sizeof *lane0 * (size_t)D);
    w->groups = calloc((size_t)L, sizeof *w->groups);
    w->group_members = malloc(sizeof *w->group_members * (size_t)L * (size_t)D);
    if (!owners || !lane0 || !w->groups || !w->group_members) {
        free(owners);
        free(lane0);
        return gt_fail(e, "out of memory");
    }
    for (int pi = 0, acc = 0; pi < D; pi++) {
        lane0[pi] = acc;
        acc += plan_physical_stages(p, pi);
    }
    for (int l = 0; l < L; l++)
        for (int pi = 0; pi < D; pi++)
            owners[l * D + pi] = lane_of_layer(p, pi, lane0[pi], l);
    int used = 0;
    for (int l = 0; l < L;) {
        int r = l + 1;
        while (r < L && !memcmp(&owners[r * D], &owners[l * D], sizeof(int) * (size_t)D))
            r++;
        sync_group *g = &w->groups[w->ngroups++];
        g->members = &w->group_members[used];
        g->nmembers = D;
        memcpy(g->members, &owners[l * D], sizeof(int) * (size_t)D);
        used += D;
        g->bytes = 0;
        for (int x = l; x < r; x++)
            g->bytes += layer_grad_bytes(&j->model, x);
        g->bytes /= w->lanes[g->members[0]].tp;
        l = r;
    }
    free(owners);
    free(lane0);
    return 0;
}
