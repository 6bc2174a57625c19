/* sim_events.c — inputs that vary over time during a replay: link bandwidth
 * traces (capacity changes at the trace's breakpoints) and preemption events
 * from an availability trace (the iteration stops with a report). */
#include <stdlib.h>
#include <string.h>

#include "sim_state.h"

int sim_load_events(sim_state *s)
{
    const topology *t = s->t;
    for (int a = 0; a < t->nsites; a++)
        for (int b = 0; b < t->nsites; b++)
            if (a != b && topo_wan(t, a, b)->trace[0])
                return gt_fail(s->e, "%s: link \"%s\"->\"%s\": bandwidth traces are not "
                                     "supported by this build yet",
                               t->path, t->sites[a].id, t->sites[b].id);
    if (s->opt->avail_trace)
        return gt_fail(s->e, "%s: availability traces are not supported by this build yet",
                       s->opt->avail_trace);
    return 0;
}

int sim_schedule_traces(sim_state *s)
{
    for (int i = 0; i < s->nchanges; i++) {
        int64_t rel = s->changes[i].time - s->t0;
        if (rel > 0 && eventq_push(&s->q, rel, 4, i, 0))
            return gt_fail(s->e, "out of memory");
    }
    return 0;
}

int sim_capacity_event(sim_state *s, int idx)
{
    const cap_change *c = &s->changes[idx];
    return net_set_capacity(&s->net, c->res, c->cap, s->now, &s->q, 3);
}

bool sim_preempted(sim_state *s, int64_t now)
{
    (void)now;
    return s->preempted;
}
