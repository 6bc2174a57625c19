/* simulator.c — the discrete-event replay of one training iteration
 * (simulator.h, docs/models.md).
 *
 * Events: an op ends; a transfer's latency has passed (its bytes start to
 * move); a flow's bytes are all delivered; a link's bandwidth changes (trace).
 * A GPU starts its next op when it is free and the op's input has arrived;
 * a finished op hands its output to the consumer (directly on the same GPU,
 * else as a flow). When a GPU's last op ends it joins its gradient-sync
 * groups; a group runs its collective step by step once all members are
 * there (overlapped sync: a member is there when the backward that readies
 * the group's gradients has run its share, an EV_GRAD_READY event). The optimizer follows each GPU's last sync (timing_finish_lanes).
 * Several iterations repeat the replay with fresh jitter draws; reports
 * average them. */
#include "sim/engine/simulator.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/models/collective.h"
#include "sim/models/cost.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/eventq.h"
#include "sim/engine/network.h"
#include "sim/engine/sim_state.h"

enum { EV_OP_END = 1, EV_FLOW_LAT = 2, EV_FLOW_DONE = 3, EV_CAPACITY = 4, EV_PREEMPT = 5,
       EV_GRAD_READY = 6 };
enum { OWN_OP = NET_OWNER_OP, OWN_COLL = NET_OWNER_COLL };

void sim_options_default(sim_options *o)
{
    memset(o, 0, sizeof *o);
    o->wan_policy = -1;
    o->iterations = 1;
    o->seed = 1;
    o->straggler_factor = 1.5;
}

/* --- ops ------------------------------------------------------------------ */

static int try_start(sim_state *s, int lane)
{
    lane_state *ls = &s->lane[lane];
    if (ls->busy || ls->cursor < 0)
        return 0;
    int id = ls->cursor;
    if (!s->input_ready[id])
        return 0;
    op_time *ot = &s->tm->ops[id];
    ot->start = s->now;
    ot->end = s->now + s->dur[id];
    ls->busy = 1;
    /* overlapped sync: buckets this backward readies, part of the way through */
    if (s->ready_first)
        for (int x = s->ready_first[id]; x < s->ready_first[id + 1]; x++)
            if (eventq_push(&s->q, s->now + llround(s->ready_frac[x] * (double)s->dur[id]),
                            EV_GRAD_READY, s->ready_group[x], 0))
                return -1;
    return eventq_push(&s->q, ot->end, EV_OP_END, id, 0);
}

static int start_flow(sim_state *s, int src_lane, int dst_lane, double bytes, double prio,
                      int owner_kind, int owner_id)
{
    int a = s->w->lanes[src_lane].gpu, b = s->w->lanes[dst_lane].gpu;
    int f = net_flow_new(&s->net, a, b, bytes, prio, s->now);
    if (f < 0)
        return gt_fail(s->e, "flow pool exhausted (%d flows)", s->net.cap_flows);
    s->net.flows[f].owner_kind = owner_kind;
    s->net.flows[f].owner_id = owner_id;
    if (s->t->gpus[a].site != s->t->gpus[b].site)
        s->tm->wan_bytes += bytes;
    return eventq_push(&s->q, s->now + cost_ns(net_flow_latency(&s->net, f)), EV_FLOW_LAT, f, 0);
}

static int deliver_input(sim_state *s, int consumer)
{
    s->input_ready[consumer] = 1;
    s->tm->ops[consumer].arrival = s->now;
    return try_start(s, s->w->ops[consumer].lane);
}

static int lane_finished(sim_state *s, int lane);

static int on_op_end(sim_state *s, int id)
{
    const wl_op *o = &s->w->ops[id];
    lane_state *ls = &s->lane[o->lane];
    ls->busy = 0;
    ls->cursor = o->next_on_lane;
    if (o->consumer >= 0) {
        const wl_op *c = &s->w->ops[o->consumer];
        s->tm->ops[o->consumer].xfer_start = s->now;
        if (c->xfer_bytes > 0) {
            /* the priority is read on temporal links only, which have the op times */
            double prio = s->est->ops ? (double)s->est->ops[o->consumer].start : 0;
            if (start_flow(s, o->lane, c->lane, c->xfer_bytes, prio, OWN_OP, o->consumer))
                return -1;
        } else if (deliver_input(s, o->consumer)) {
            return -1;
        }
    }
    if (ls->cursor < 0)
        return lane_finished(s, o->lane);
    return try_start(s, o->lane);
}

/* --- gradient sync ---------------------------------------------------------- */

static int start_step(sim_state *s, int g)
{
    group_state *gs = &s->group[g];
    const coll_plan *c = &gs->coll;
    if (gs->step == c->nsteps) {
        s->tm->group_end[g] = s->now;
        s->open--;
        return 0;
    }
    int first = c->step_first[gs->step], last = c->step_first[gs->step + 1];
    gs->left = last - first;
    double prio = (double)s->est->group_start[g] + gs->step;
    for (int f = first; f < last; f++)
        if (start_flow(s, c->flows[f].src_lane, c->flows[f].dst_lane, c->flows[f].bytes, prio,
                       OWN_COLL, g))
            return -1;
    return 0;
}

/* One member of group g has its gradients: the last one starts the sync. */
static int member_ready(sim_state *s, int g)
{
    if (--s->group[g].waiting > 0)
        return 0;
    s->tm->group_start[g] = s->now;
    return start_step(s, g);
}

static int lane_finished(sim_state *s, int lane)
{
    s->tm->lanes[lane].bwd_end = s->now;
    s->open--;
    if (s->ready_first) /* overlapped sync: the groups wait for EV_GRAD_READY */
        return 0;
    for (int k = 0; k < s->lane[lane].ngroups; k++)
        if (member_ready(s, s->lane_groups[s->lane[lane].group0 + k]))
            return -1;
    return 0;
}

static int on_flow_done(sim_state *s, int f)
{
    const net_flow *fl = &s->net.flows[f];
    if (fl->owner_kind == OWN_OP)
        return deliver_input(s, fl->owner_id);
    group_state *gs = &s->group[fl->owner_id];
    if (--gs->left > 0)
        return 0;
    gs->step++;
    return start_step(s, fl->owner_id);
}

/* --- the loop --------------------------------------------------------------- */

static int dispatch(sim_state *s, const event *ev)
{
    switch (ev->kind) {
    case EV_OP_END:
        return on_op_end(s, ev->id);
    case EV_FLOW_LAT:
        return net_flow_start(&s->net, ev->id, s->now, &s->q, EV_FLOW_DONE);
    case EV_FLOW_DONE: {
        int r = net_flow_done_event(&s->net, ev->id, ev->version, s->now, &s->q, EV_FLOW_DONE);
        return r < 0 ? -1 : r ? on_flow_done(s, ev->id) : 0;
    }
    case EV_CAPACITY:
        return sim_capacity_event(s, ev->id);
    case EV_PREEMPT:
        return sim_preempt_event(s, ev->id);
    case EV_GRAD_READY:
        return member_ready(s, ev->id);
    }
    return 0;
}

static int run_loop(sim_state *s)
{
    for (int l = 0; l < s->w->nlanes; l++)
        if (try_start(s, l))
            return gt_fail(s->e, "out of memory in the event queue");
    if (sim_schedule_traces(s))
        return -1;
    event ev;
    int got;
    net_defer(&s->net, true); /* one re-solve per nanosecond (net_settle) */
    while ((got = eventq_pop(&s->q, &ev)) > 0) {
        s->now = ev.time;
        s->events++;
        if (t_over(ev.time))
            return t_cap_fail(s->e, s->t->path, "the simulated clock");
        if (dispatch(s, &ev) ||
            (eventq_peek_time(&s->q) != ev.time &&
             net_settle(&s->net, ev.time, &s->q, EV_FLOW_DONE)))
            return s->e->msg[0] ? -1 : gt_fail(s->e, "out of memory in the event loop");
        if (s->preempted)
            return 0;
        if (s->open == 0)
            break; /* only trace and preemption events are left */
    }
    if (got < 0)
        return gt_fail(s->e, "out of memory in the event queue");
    for (int l = 0; l < s->w->nlanes; l++)
        if (s->lane[l].cursor >= 0)
            return gt_fail(s->e, "simulation stalled: GPU lane %d never finished", l);
    for (int g = 0; g < s->w->ngroups; g++)
        if (s->group[g].step < s->group[g].coll.nsteps || s->group[g].waiting > 0)
            return gt_fail(s->e, "simulation stalled: sync group %d never finished", g);
    return timing_finish_lanes(s->tm, s->w) ? gt_fail(s->e, "out of memory") : 0;
}

/* Durations of this iteration: the cost model's, times jitter and
 * stragglers drawn from the seeded generator in op order. */
static void draw_durations(sim_state *s)
{
    const sim_options *o = s->opt;
    double sigma = o->jitter_cv > 0 ? sqrt(log(1 + o->jitter_cv * o->jitter_cv)) : 0;
    for (int l = 0; l < s->w->nlanes; l++)
        s->lane[l].slow = (o->straggler_prob > 0 && gsl_rng_uniform(s->rng) < o->straggler_prob)
                              ? o->straggler_factor : 1.0;
    for (int i = 0; i < s->w->nops; i++) {
        double f = s->lane[s->w->ops[i].lane].slow;
        if (sigma > 0) /* lognormal with mean 1 */
            f *= gsl_ran_lognormal(s->rng, -sigma * sigma / 2, sigma);
        s->dur[i] = f == 1.0 ? s->w->ops[i].dur_ns : cost_ns(s->w->ops[i].dur_ns * f * 1e-9);
    }
}

int sim_run_iteration(sim_state *s)
{
    if (sim_reset(s))
        return -1;
    s->open = s->w->nlanes + s->w->ngroups;
    draw_durations(s);
    return run_loop(s);
}
