/* sim_state.c — allocation and per-iteration reset of the replay state
 * (sim_state.h). */
#include "sim/engine/sim_state.h"

#include <stdlib.h>
#include <string.h>

static int count_flows(const workload *w, const group_state *g)
{
    long n = 0;
    for (int i = 0; i < w->nops; i++)
        n += w->ops[i].xfer_bytes > 0;
    for (int k = 0; k < w->ngroups; k++)
        n += g[k].coll.nflows;
    return n > 0x7fffffff ? -1 : (int)n;
}

static int build_lane_groups(sim_state *s)
{
    const workload *w = s->w;
    int total = 0;
    for (int g = 0; g < w->ngroups; g++)
        total += w->groups[g].nmembers;
    s->lane_groups = malloc(sizeof(int) * (size_t)(total > 0 ? total : 1));
    if (!s->lane_groups)
        return -1;
    for (int g = 0; g < w->ngroups; g++)
        for (int m = 0; m < w->groups[g].nmembers; m++)
            s->lane[w->groups[g].members[m]].ngroups++;
    int acc = 0;
    for (int l = 0; l < w->nlanes; l++) {
        s->lane[l].group0 = acc;
        acc += s->lane[l].ngroups;
        s->lane[l].ngroups = 0;
    }
    for (int g = 0; g < w->ngroups; g++)
        for (int m = 0; m < w->groups[g].nmembers; m++) {
            lane_state *ls = &s->lane[w->groups[g].members[m]];
            s->lane_groups[ls->group0 + ls->ngroups++] = g;
        }
    return 0;
}

/* CSR of (op -> groups it readies) from the groups' ready points. */
static int build_ready(sim_state *s)
{
    const workload *w = s->w;
    int total = 0;
    for (int g = 0; g < w->ngroups; g++)
        total += w->groups[g].nmembers;
    s->ready_first = calloc((size_t)w->nops + 1, sizeof *s->ready_first);
    s->ready_group = malloc(sizeof(int) * (size_t)(total > 0 ? total : 1));
    s->ready_frac = malloc(sizeof(double) * (size_t)(total > 0 ? total : 1));
    if (!s->ready_first || !s->ready_group || !s->ready_frac)
        return -1;
    for (int g = 0; g < w->ngroups; g++)
        for (int m = 0; m < w->groups[g].nmembers; m++)
            s->ready_first[w->groups[g].ready_op[m] + 1]++;
    for (int i = 0; i < w->nops; i++)
        s->ready_first[i + 1] += s->ready_first[i];
    int *fill = calloc((size_t)w->nops + 1, sizeof *fill);
    if (!fill)
        return -1;
    for (int g = 0; g < w->ngroups; g++)
        for (int m = 0; m < w->groups[g].nmembers; m++) {
            int op = w->groups[g].ready_op[m], x = s->ready_first[op] + fill[op]++;
            s->ready_group[x] = g;
            s->ready_frac[x] = w->groups[g].ready_frac[m];
        }
    free(fill);
    return 0;
}

int sim_state_init(sim_state *s, const topology *t, const workload *w, sync_kind sync,
                   const sim_options *o, const timing *est, timing *tm, gt_err *e)
{
    memset(s, 0, sizeof *s);
    s->t = t;
    s->w = w;
    s->opt = o;
    s->e = e;
    s->est = est;
    s->tm = tm;
    s->sync = sync;
    s->lane = calloc((size_t)(w->nlanes > 0 ? w->nlanes : 1), sizeof *s->lane);
    s->group = calloc((size_t)(w->ngroups > 0 ? w->ngroups : 1), sizeof *s->group);
    s->input_ready = malloc((size_t)(w->nops > 0 ? w->nops : 1));
    s->dur = malloc(sizeof *s->dur * (size_t)(w->nops > 0 ? w->nops : 1));
    s->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!s->lane || !s->group || !s->input_ready || !s->dur || !s->rng ||
        build_lane_groups(s) || (w->gsync == GSYNC_OVERLAP && build_ready(s))) {
        sim_state_free(s);
        return gt_fail(e, "out of memory for the simulation state");
    }
    gsl_rng_set(s->rng, (unsigned long)o->seed);
    for (int g = 0; g < w->ngroups; g++)
        if (collective_build(&s->group[g].coll, t, w, &w->groups[g], sync, e)) {
            sim_state_free(s);
            return -1;
        }
    s->max_flows = count_flows(w, s->group);
    if (s->max_flows < 0) {
        sim_state_free(s);
        return gt_fail(e, "too many flows to simulate");
    }
    if (eventq_init(&s->q) ||
        eventq_reserve_handles(&s->q, s->max_flows) || /* one handle per flow id */
        net_init(&s->net, t, s->max_flows, o->wan_policy, o->tcp_connections, e)) {
        sim_state_free(s);
        return e->msg[0] ? -1 : gt_fail(e, "out of memory for the event queue");
    }
    if (sim_load_events(s)) {
        sim_state_free(s);
        return -1;
    }
    return 0;
}

void sim_state_free(sim_state *s)
{
    if (s->group)
        for (int g = 0; g < s->w->ngroups; g++)
            collective_free(&s->group[g].coll);
    free(s->lane);
    free(s->group);
    free(s->lane_groups);
    free(s->ready_first);
    free(s->ready_group);
    free(s->ready_frac);
    free(s->input_ready);
    free(s->dur);
    sim_free_events(s);
    if (s->rng)
        gsl_rng_free(s->rng);
    eventq_free(&s->q);
    net_free(&s->net);
    memset(s, 0, sizeof *s);
}

int sim_reset(sim_state *s)
{
    const workload *w = s->w;
    /* a fresh network: flows of the previous iteration are forgotten */
    net_free(&s->net);
    if (net_init(&s->net, s->t, s->max_flows, s->opt->wan_policy, s->opt->tcp_connections, s->e))
        return -1;
    eventq_clear(&s->q);
    s->now = 0;
    for (int l = 0; l < w->nlanes; l++) {
        s->lane[l].cursor = w->lanes[l].first_op;
        s->lane[l].busy = 0;
    }
    for (int i = 0; i < w->nops; i++) {
        s->input_ready[i] = w->ops[i].input < 0;
        s->tm->ops[i] = (op_time){0, 0, 0, 0};
    }
    for (int g = 0; g < w->ngroups; g++) {
        s->group[g].step = 0;
        s->group[g].left = 0;
        s->group[g].waiting = w->groups[g].nmembers;
        s->tm->group_start[g] = s->tm->group_end[g] = 0;
    }
    s->tm->wan_bytes = 0;
    s->tm->iteration_ns = 0;
    return 0;
}
