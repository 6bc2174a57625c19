/* sim_events.c — inputs that vary over time during a replay.
 *
 * Bandwidth traces: a WAN link's "trace" (traces/README.md) replaces its
 * constant rate; the capacity follows the trace's steps, one pending change
 * event per traced link at a time. Paths resolve as given, then beside the
 * topology file, then under the shipped traces/ folder. Only shared links
 * can carry a trace (a per_pair link has no shared capacity to vary). The
 * estimator keeps the constant rate of the topology file.
 *
 * Preemption: the availability trace's nodes, in order of first appearance,
 * stand for the topology's nodes in file order. A "remove" of a node that
 * hosts a GPU of the plan ends the replay at that instant with a report; a
 * trace naming more nodes than the topology has is refused (not ignored);
 * times count from the start of the first simulated iteration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/datadir.h"
#include "sim/engine/sim_state.h"
#include "sim/inputs/topo_traces.h"
#include "sim/inputs/trace.h"

enum { EV_CAPACITY = 4, EV_PREEMPT = 5, EV_FLOW_DONE = 3 };

static int load_link_trace(sim_state *s, int a, int b)
{
    const topology *t = s->t;
    const topo_link *l = topo_wan(t, a, b);
    char path[4096];
    if (topo_trace_resolve(t->path, l->trace, path, sizeof path))
        return gt_fail(s->e, "%s: link \"%s\"->\"%s\": trace file \"%s\" not found", t->path,
                       t->sites[a].id, t->sites[b].id, l->trace);
    int r = net_wan_resource(&s->net, a, b);
    if (r < 0)
        return gt_fail(s->e, "%s: link \"%s\"->\"%s\": a bandwidth trace needs a shared link "
                             "(not \"per_pair\")", t->path, t->sites[a].id, t->sites[b].id);
    sim_trace *st = &s->traces[s->ntraces];
    if (bwtrace_load(path, &st->tr, s->e))
        return -1;
    st->res = r;
    s->ntraces++;
    return 0;
}

static int load_avail(sim_state *s)
{
    avail_trace av = {0};
    if (avail_load(s->opt->avail_trace, &av, s->e))
        return -1;
    if (av.nnodes > s->t->nnodes) { /* a node beyond the topology would be ignored */
        gt_fail(s->e, "%s:%d:%d: column 'node': node \"%s\" is the trace's node %d but the "
                      "topology %s has %d nodes (the trace names %d)",
                s->opt->avail_trace, av.node_at[s->t->nnodes][0], av.node_at[s->t->nnodes][1],
                av.nodes[s->t->nnodes], s->t->nnodes + 1, s->t->path, s->t->nnodes,
                av.nnodes);
        avail_free(&av);
        return -1;
    }
    s->preempts = malloc(sizeof *s->preempts * (size_t)(av.n > 0 ? av.n : 1));
    if (!s->preempts) {
        avail_free(&av);
        return gt_fail(s->e, "out of memory");
    }
    for (int i = 0; i < av.n; i++)
        if (av.ev[i].kind == AVAIL_REMOVE && av.ev[i].node < s->t->nnodes) {
            preempt_event *p = &s->preempts[s->npreempts++];
            p->time = av.ev[i].t_ns;
            p->node = av.ev[i].node;
            snprintf(p->name, sizeof p->name, "%s", av.nodes[av.ev[i].node]);
        }
    avail_free(&av);
    return 0;
}

int sim_load_events(sim_state *s)
{
    const topology *t = s->t;
    s->traces = calloc((size_t)t->nsites * t->nsites + 1, sizeof *s->traces);
    if (!s->traces)
        return gt_fail(s->e, "out of memory");
    for (int a = 0; a < t->nsites; a++)
        for (int b = 0; b < t->nsites; b++)
            if (a != b && topo_wan(t, a, b)->trace[0] && load_link_trace(s, a, b))
                return -1;
    return s->opt->avail_trace ? load_avail(s) : 0;
}

void sim_free_events(sim_state *s)
{
    for (int i = 0; i < s->ntraces; i++)
        bwtrace_free(&s->traces[i].tr);
    free(s->traces);
    free(s->preempts);
    s->traces = NULL;
    s->preempts = NULL;
}

/* Called at the start of each iteration (after the network was reset). */
int sim_schedule_traces(sim_state *s)
{
    for (int i = 0; i < s->ntraces; i++) {
        sim_trace *st = &s->traces[i];
        s->net.res[st->res].cap = bwtrace_at(&st->tr, s->t0);
        int64_t next = bwtrace_next_change(&st->tr, s->t0);
        if (next != INT64_MAX && eventq_push(&s->q, next - s->t0, EV_CAPACITY, i, 0))
            return gt_fail(s->e, "out of memory");
    }
    for (int i = 0; i < s->npreempts; i++) {
        int64_t rel = s->preempts[i].time - s->t0;
        if (rel >= 0 && eventq_push(&s->q, rel, EV_PREEMPT, i, 0))
            return gt_fail(s->e, "out of memory");
    }
    return 0;
}

int sim_capacity_event(sim_state *s, int idx)
{
    sim_trace *st = &s->traces[idx];
    int64_t abs_now = s->t0 + s->now;
    if (net_set_capacity(&s->net, st->res, bwtrace_at(&st->tr, abs_now), s->now, &s->q,
                         EV_FLOW_DONE))
        return -1;
    int64_t next = bwtrace_next_change(&st->tr, abs_now);
    if (next != INT64_MAX && eventq_push(&s->q, next - s->t0, EV_CAPACITY, idx, 0))
        return -1;
    return 0;
}

/* A preemption event: does the removed node host a GPU of the plan? */
int sim_preempt_event(sim_state *s, int idx)
{
    const preempt_event *p = &s->preempts[idx];
    const topo_node *nd = &s->t->nodes[p->node];
    for (int g = nd->first_gpu; g < nd->first_gpu + nd->ngpus; g++)
        if (s->w->lane_of_gpu[g] >= 0) {
            char name[160];
            topo_gpu_name(s->t, g, name, sizeof name);
            s->preempted = true;
            snprintf(s->preempt_msg, sizeof s->preempt_msg,
                     "at t = %.3f s node \"%s\" of the availability trace (topology node of "
                     "GPU %s) was removed while the plan uses it; the iteration did not finish",
                     (s->t0 + s->now) * 1e-9, p->name, name);
            return 0;
        }
    return 0;
}
