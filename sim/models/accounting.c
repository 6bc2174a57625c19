/* accounting.c — per-GPU state times, joules, carbon and money (accounting.h). */
#include "sim/models/accounting.h"

#include <string.h>

#include "sim/inputs/catalog.h"
#include "sim/inputs/freq.h"

void account_lane_finish(const topology *t, const workload *w, const timing *tm, int l,
                         int64_t compute, int64_t slow, double slow_wns, int64_t comm,
                         lane_account *a)
{
    const gpu_type *g = topo_gpu_type(t, w->lanes[l].gpu);
    a->compute_ns = compute + slow;
    a->comm_ns = comm;
    a->idle_ns = tm->iteration_ns - a->compute_ns - comm;
    double pue = t->sites[t->gpus[w->lanes[l].gpu].site].pue;
    /* without lowered clocks slow_wns is 0 and the sum is the one of before */
    a->energy_j = pue * 1e-9 *
                  (compute * g->tdp_w + comm * gpu_comm_w(g) + a->idle_ns * g->idle_w + slow_wns);
}

static void account_one(const topology *t, const workload *w, const timing *tm, int l,
                        lane_account *a)
{
    const wl_lane *ln = &w->lanes[l];
    const lane_time *lt = &tm->lanes[l];
    const gpu_type *g = topo_gpu_type(t, ln->gpu);
    int64_t compute = ln->opt_ns, comm = lt->sync_comm_ns, cursor = 0, slow = 0;
    double slow_wns = 0; /* watt-ns of ops below the maximum clock (freq.h) */
    for (int id = ln->first_op; id >= 0; id = w->ops[id].next_on_lane) {
        const op_time *ot = &tm->ops[id];
        if (freq_is_max(g, w->ops[id].freq_mhz)) {
            compute += ot->end - ot->start; /* actual duration (jitter) */
        } else {
            slow += ot->end - ot->start;
            slow_wns += (double)(ot->end - ot->start) * freq_compute_w(g, w->ops[id].freq_mhz);
        }
        if (w->ops[id].xfer_bytes > 0 && ot->arrival > cursor) {
            int64_t from = ot->xfer_start > cursor ? ot->xfer_start : cursor;
            int64_t to = ot->arrival < ot->start ? ot->arrival : ot->start;
            if (to > from)
                comm += to - from;
        }
        cursor = ot->end;
    }
    account_lane_finish(t, w, tm, l, compute, slow, slow_wns, comm, a);
}

void account_lanes(const topology *t, const workload *w, const timing *tm, lane_account *out)
{
    for (int l = 0; l < w->nlanes; l++)
        account_one(t, w, tm, l, &out[l]);
}

void account_totals(const topology *t, const workload *w, const timing *tm,
                    const lane_account *la, int charge_unselected, run_totals *out)
{
    memset(out, 0, sizeof *out);
    double kwh_site_carbon = 0, kwh_site_usd = 0;
    for (int l = 0; l < w->nlanes; l++) {
        const topo_site *s = &t->sites[t->gpus[w->lanes[l].gpu].site];
        double j = la[l].energy_j * w->lanes[l].tp;
        out->gpu_energy_j += j;
        kwh_site_carbon += j / 3.6e6 * s->carbon_g_per_kwh;
        kwh_site_usd += j / 3.6e6 * s->price_kwh;
        out->busy_ns += (double)la[l].compute_ns * w->lanes[l].tp;
        out->gpu_ns += (double)tm->iteration_ns * w->lanes[l].tp;
    }
    if (charge_unselected)
        for (int g = 0; g < t->ngpus; g++)
            if (w->lane_of_gpu[g] < 0) {
                const topo_site *s = &t->sites[t->gpus[g].site];
                double j = s->pue * topo_gpu_type(t, g)->idle_w * tm->iteration_ns * 1e-9;
                out->unselected_j += j;
                kwh_site_carbon += j / 3.6e6 * s->carbon_g_per_kwh;
                kwh_site_usd += j / 3.6e6 * s->price_kwh;
            }
    out->network_j = tm->wan_bytes * t->wan_j_per_byte;
    out->energy_j = out->gpu_energy_j + out->unselected_j + out->network_j;
    out->carbon_g = kwh_site_carbon;
    out->usd = kwh_site_usd + tm->wan_bytes / 1e9 * t->egress_usd_per_gb;
}
