/* timeline_net.c — the network in the timeline (timeline_int.h):
 *   link tracks   one per WAN link (site -> site), LAN path (node -> node in a
 *                 site) and NVLink path (GPU -> GPU in a node), each transfer a
 *                 slice; overlapping transfers go to extra rows;
 *   flows         an arrow from the op whose output is sent, through its
 *                 transfer's slice, to the op that receives it, so a GPU that
 *                 waits shows what it waits for;
 *   WAN counters  throughput (Gbit/s) and utilisation of each WAN link. */
#include "sim/outputs/timeline_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 64

enum { LINK_WAN, LINK_LAN, LINK_NVLINK };

typedef struct track {
    int kind, a, b;
    int64_t row_free[ROWS];
    unsigned char named[ROWS];
} track;

static int link_kind(const topology *t, const net_flow *f, int *a, int *b)
{
    const topo_gpu *ga = &t->gpus[f->src_gpu], *gb = &t->gpus[f->dst_gpu];
    if (f->wan_a >= 0) {
        *a = f->wan_a;
        *b = f->wan_b;
        return LINK_WAN;
    }
    if (ga->node != gb->node) {
        *a = ga->node;
        *b = gb->node;
        return LINK_LAN;
    }
    *a = f->src_gpu;
    *b = f->dst_gpu;
    return LINK_NVLINK;
}

static void track_name(const topology *t, const track *k, int row, char *out, size_t cap)
{
    char x[160], y[160];
    if (k->kind == LINK_WAN) {
        snprintf(out, cap, "%s -> %s #%d", t->sites[k->a].id, t->sites[k->b].id, row);
        return;
    }
    if (k->kind == LINK_LAN) {
        const topo_node *na = &t->nodes[k->a], *nb = &t->nodes[k->b];
        snprintf(out, cap, "%s node %d -> node %d #%d", t->sites[na->site].id,
                 na->index_in_site, nb->index_in_site, row);
        return;
    }
    topo_gpu_name(t, k->a, x, sizeof x);
    topo_gpu_name(t, k->b, y, sizeof y);
    snprintf(out, cap, "%s -> %s #%d", x, y, row);
}

static int find_track(track **v, int *n, int kind, int a, int b)
{
    for (int i = 0; i < *n; i++)
        if ((*v)[i].kind == kind && (*v)[i].a == a && (*v)[i].b == b)
            return i;
    track *nv = realloc(*v, (size_t)(*n + 1) * sizeof *nv);
    if (!nv)
        return -1;
    *v = nv;
    memset(&nv[*n], 0, sizeof *nv);
    nv[*n].kind = kind;
    nv[*n].a = a;
    nv[*n].b = b;
    return (*n)++;
}

void tl_link_tracks(tl_ctx *c)
{
    static const int PID[] = {PID_WAN, PID_LAN, PID_NVLINK};
    static const char *const PNAME[] = {"WAN links", "LAN (between nodes of a site)",
                                        "NVLink / PCIe (inside a node)"};
    static const char *const CAT[] = {"wan", "lan", "nvlink"};
    const sim_detail *d = c->d;
    track *tr = NULL;
    int ntr = 0;
    c->flow_pid = calloc((size_t)d->nflows + 1, sizeof *c->flow_pid);
    c->flow_tid = calloc((size_t)d->nflows + 1, sizeof *c->flow_tid);
    if (!c->flow_pid || !c->flow_tid)
        return;
    for (int i = 0; i < 3; i++)
        tl_meta(c, PID[i], 0, "process_name", PNAME[i]);
    for (int f = 0; f < d->nflows; f++) {
        const net_flow *fl = &d->flows[f];
        int a, b, kind = link_kind(c->t, fl, &a, &b);
        int k = find_track(&tr, &ntr, kind, a, b), row = 0;
        if (k < 0)
            break;
        while (row < ROWS - 1 && tr[k].row_free[row] > fl->start)
            row++;
        tr[k].row_free[row] = fl->end;
        int tid = k * ROWS + row;
        if (!tr[k].named[row]) {
            char name[400];
            track_name(c->t, &tr[k], row, name, sizeof name);
            tl_meta(c, PID[kind], tid, "thread_name", name);
            tr[k].named[row] = 1;
        }
        char args[160];
        snprintf(args, sizeof args, "\"bytes\":%.0f,\"latency_end_us\":%.3f,\"flow\":%d",
                 fl->bytes, fl->bytes_start / 1e3, f + 1);
        tl_span(c, PID[kind], tid, fl->owner_kind == 1 ? "activation" : "sync", CAT[kind],
                fl->start, fl->end, args);
        c->flow_pid[f] = PID[kind];
        c->flow_tid[f] = tid;
    }
    free(tr);
}

static void flow_event(tl_ctx *c, char ph, int id, int pid, int tid, int64_t ts)
{
    tl_sep(c);
    gzprintf(c->gz,
             "{\"ph\":\"%c\",\"cat\":\"transfer\",\"name\":\"activation\",\"id\":%d,"
             "\"pid\":%d,\"tid\":%d,\"ts\":%.3f%s}",
             ph, id, pid, tid, ts / 1e3, ph == 'f' ? ",\"bp\":\"e\"" : "");
}

/* Activation flows only (owner_kind 1 = an op's input); gradient sync flows
 * end in a collective, not in one op. The start sits 1 ns before the
 * producer's end so that it lies inside the producer's slice. */
void tl_flows(tl_ctx *c)
{
    const sim_detail *d = c->d;
    const workload *w = &d->w;
    if (!c->flow_pid)
        return;
    for (int f = 0; f < d->nflows; f++) {
        const net_flow *fl = &d->flows[f];
        if (fl->owner_kind != 1 || fl->owner_id < 0 || fl->owner_id >= w->nops)
            continue;
        int consumer = fl->owner_id, producer = w->ops[consumer].input;
        if (producer < 0)
            continue;
        const op_time *po = &d->tm.ops[producer], *co = &d->tm.ops[consumer];
        int64_t s = po->end - 1 > po->start ? po->end - 1 : po->start;
        flow_event(c, 's', f + 1, PID_GPU, w->ops[producer].lane, s);
        flow_event(c, 't', f + 1, c->flow_pid[f], c->flow_tid[f], fl->start);
        flow_event(c, 'f', f + 1, PID_GPU, w->ops[consumer].lane, co->start);
    }
}

/* Each transfer adds its mean rate (bytes over [bytes_start, end], after the
 * latency) while it moves, so the counter's integral over time is exactly the
 * bytes the link carried; the instantaneous max-min share is not kept. */
static void wan_link_counter(tl_ctx *c, int a, int b)
{
    const sim_detail *d = c->d;
    size_t n = 0;
    tl_step *st = malloc(sizeof *st * (2 * (size_t)d->nflows + 1));
    if (!st)
        return;
    for (int f = 0; f < d->nflows; f++) {
        const net_flow *fl = &d->flows[f];
        if (fl->wan_a != a || fl->wan_b != b || fl->end <= fl->bytes_start || fl->bytes <= 0)
            continue;
        double rate = fl->bytes / ((fl->end - fl->bytes_start) * 1e-9);   /* bytes/s */
        st[n++] = (tl_step){fl->bytes_start, rate, 1, 0};
        st[n++] = (tl_step){fl->end, -rate, -1, 0};
    }
    if (n) {
        tl_sort_steps(st, n);
        char name[200];
        snprintf(name, sizeof name, "%s -> %s", c->t->sites[a].id, c->t->sites[b].id);
        double cap = topo_wan(c->t, a, b)->bw, sum = 0;
        int open = 0;
        tl_counter(c, PID_WAN_RATE, name, 0, "Gbps", 0);
        for (size_t i = 0; i < n; i++) {
            sum += st[i].delta;
            open += st[i].count;
            if (!open)
                sum = 0;   /* no drift left behind by the float sums */
            if (i + 1 < n && st[i + 1].t == st[i].t)
                continue;
            tl_counter(c, PID_WAN_RATE, name, st[i].t, "Gbps", sum * 8e-9);
            if (cap > 0)
                tl_counter(c, PID_WAN_RATE, name, st[i].t, "utilisation", sum / cap);
        }
    }
    free(st);
}

void tl_wan_counters(tl_ctx *c)
{
    const topology *t = c->t;
    tl_meta(c, PID_WAN_RATE, 0, "process_name", "WAN throughput");
    for (int a = 0; a < t->nsites; a++)
        for (int b = 0; b < t->nsites; b++)
            if (a != b && c->d->wan_link_bytes[a * t->nsites + b] > 0)
                wan_link_counter(c, a, b);
}
