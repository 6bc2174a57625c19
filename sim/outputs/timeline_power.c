/* timeline_power.c — one power counter (W) per GPU track in the timeline.
 *
 * The states are the accounting's (accounting.h): computing (an op or the
 * optimizer: TDP), blocked on communication (its next op's input in flight,
 * or one of its gradient-sync groups running: gpu_comm_w) and idle (idle_w).
 * The counter is one GPU's electrical draw, before the site's PUE, so its
 * integral over the iteration times PUE is the lane's energy_j of
 * account_lanes() for the same timing (tests/test_timeline.c checks it). */
#include "sim/outputs/timeline_int.h"

#include <stdio.h>
#include <stdlib.h>

#include "sim/inputs/catalog.h"

enum { LEVEL_COMM = 1, LEVEL_COMPUTE = 2 };

/* The same waits account_one() counts as comm, as intervals. */
static size_t lane_steps(const sim_detail *d, int l, tl_step *st)
{
    const workload *w = &d->w;
    const timing *tm = &d->tm;
    size_t n = 0;
    int64_t cursor = 0;
    for (int id = w->lanes[l].first_op; id >= 0; id = w->ops[id].next_on_lane) {
        const op_time *ot = &tm->ops[id];
        if (w->ops[id].xfer_bytes > 0 && ot->arrival > cursor) {
            int64_t from = ot->xfer_start > cursor ? ot->xfer_start : cursor;
            int64_t to = ot->arrival < ot->start ? ot->arrival : ot->start;
            if (to > from) {
                st[n++] = (tl_step){from, 0, 1, LEVEL_COMM};
                st[n++] = (tl_step){to, 0, -1, LEVEL_COMM};
            }
        }
        st[n++] = (tl_step){ot->start, 0, 1, LEVEL_COMPUTE};
        st[n++] = (tl_step){ot->end, 0, -1, LEVEL_COMPUTE};
        cursor = ot->end;
    }
    for (int g = 0; g < w->ngroups; g++)
        for (int m = 0; m < w->groups[g].nmembers; m++)
            if (w->groups[g].members[m] == l && tm->group_end[g] > tm->group_start[g]) {
                st[n++] = (tl_step){tm->group_start[g], 0, 1, LEVEL_COMM};
                st[n++] = (tl_step){tm->group_end[g], 0, -1, LEVEL_COMM};
            }
    const lane_time *lt = &tm->lanes[l];
    if (lt->opt_end > lt->opt_start) {
        st[n++] = (tl_step){lt->opt_start, 0, 1, LEVEL_COMPUTE};
        st[n++] = (tl_step){lt->opt_end, 0, -1, LEVEL_COMPUTE};
    }
    return n;
}

static size_t lane_max_steps(const sim_detail *d, int l)
{
    const workload *w = &d->w;
    size_t n = 2 * (size_t)w->lanes[l].nops * 2 + 2;
    for (int g = 0; g < w->ngroups; g++)
        n += 2 * (size_t)w->groups[g].nmembers;
    return n;
}

static void lane_counter(tl_ctx *c, int l)
{
    const sim_detail *d = c->d;
    const gpu_type *g = topo_gpu_type(c->t, d->w.lanes[l].gpu);
    tl_step *st = malloc(sizeof *st * lane_max_steps(d, l));
    if (!st)
        return;
    size_t n = lane_steps(d, l, st);
    tl_sort_steps(st, n);
    char gpu[160], name[256];
    topo_gpu_name(c->t, d->w.lanes[l].gpu, gpu, sizeof gpu);
    snprintf(name, sizeof name, "%s power", gpu);
    int open[3] = {0, 0, 0};
    double last = -1;
    tl_counter(c, PID_POWER, name, 0, "W", last = g->idle_w);
    for (size_t i = 0; i < n; i++) {
        open[st[i].level] += st[i].count;
        if (i + 1 < n && st[i + 1].t == st[i].t)
            continue;
        double w = open[LEVEL_COMPUTE] > 0 ? g->tdp_w
                   : open[LEVEL_COMM] > 0  ? gpu_comm_w(g)
                                           : g->idle_w;
        if (w != last)
            tl_counter(c, PID_POWER, name, st[i].t, "W", last = w);
    }
    /* a last sample at the iteration's end closes the series */
    tl_counter(c, PID_POWER, name, d->tm.iteration_ns, "W", last);
    free(st);
}

void tl_power_counters(tl_ctx *c)
{
    tl_meta(c, PID_POWER, 0, "process_name", "GPU power (W, one GPU per stage, before PUE)");
    for (int l = 0; l < c->d->w.nlanes; l++)
        lane_counter(c, l);
}
