/* report.c — simulation reports (report.h). */
#include "sim/outputs/report.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/inputs/catalog.h"
#include "sim/models/cost.h"
#include "sim/base/csv.h"
#include "sim/base/res_table.h"
#include "sim/models/path.h"
#include "sim/models/plan_check.h"

#define GIB 1073741824.0
#define GBPS 125000000.0

/* Achieved model FLOP/s and MFU over the selected GPUs' peaks. */
static void flops_figures(const topology *t, const sim_detail *d, double *tflops, double *mfu)
{
    double peak = 0;
    for (int l = 0; l < d->w.nlanes; l++)
        peak += d->w.lanes[l].tp * topo_gpu_type(t, d->w.lanes[l].gpu)->peak_flops;
    double T = d->res.iteration_s;
    *tflops = T > 0 ? d->w.flops / T / 1e12 : 0;
    *mfu = peak > 0 && T > 0 ? d->w.flops / T / peak : 0;
}

static json_t *gpu_json(const topology *t, const job *j, const plan *p, const sim_detail *d,
                        int g, int l)
{
    json_t *o = json_object();
    char name[160];
    topo_gpu_name(t, g, name, sizeof name);
    const lane_account *a = &d->acc[l];
    json_object_set_new(o, "gpu", json_string(name));
    json_object_set_new(o, "type", json_string(topo_gpu_type(t, g)->id));
    json_object_set_new(o, "pipeline", json_integer(d->w.lanes[l].pipe));
    json_object_set_new(o, "compute_s", json_real(a->compute_ns * 1e-9));
    json_object_set_new(o, "comm_s", json_real(a->comm_ns * 1e-9));
    json_object_set_new(o, "idle_s", json_real(a->idle_ns * 1e-9));
    json_object_set_new(o, "energy_j", json_real(a->energy_j));
    json_object_set_new(o, "peak_mem_gib", json_real(plan_gpu_memory(p, t, j, g) / GIB));
    return o;
}

/* Per site pair of a per_pair link: the bytes of its busiest endpoint pair
 * (the link's rate is each pair's capacity, so that is what utilization
 * measures) and how many endpoint pairs it carried. Returns -1 when out of
 * memory. */
static int pair_peaks(const topology *t, const sim_detail *d, double *peak, int *npairs)
{
    res_table h = {0};
    double *bytes = malloc(sizeof *bytes * (size_t)(d->nflows > 0 ? d->nflows : 1));
    if (!bytes || res_table_init(&h, d->nflows)) {
        free(bytes);
        return -1;
    }
    int m = 0;
    for (int f = 0; f < d->nflows; f++) {
        const net_flow *fl = &d->flows[f];
        if (fl->wan_a < 0 || !topo_wan(t, fl->wan_a, fl->wan_b)->per_pair)
            continue;
        bool added;
        int i = res_table_index(&h, path_pair_key(t, fl->src_gpu, fl->dst_gpu), m, &added);
        if (added) {
            bytes[m++] = 0;
            npairs[fl->wan_a * t->nsites + fl->wan_b]++;
        }
        bytes[i] += fl->bytes;
        double *p = &peak[fl->wan_a * t->nsites + fl->wan_b];
        *p = fmax(*p, bytes[i]);
    }
    res_table_free(&h);
    free(bytes);
    return 0;
}

static json_t *links_json(const topology *t, const sim_detail *d)
{
    json_t *arr = json_array();
    double T = d->tm.iteration_ns * 1e-9;
    size_t S2 = (size_t)t->nsites * (size_t)t->nsites;
    double *peak = calloc(S2, sizeof *peak);
    int *npairs = calloc(S2, sizeof *npairs);
    if (!peak || !npairs || pair_peaks(t, d, peak, npairs)) {
        free(peak);
        free(npairs);
        json_decref(arr);
        return NULL;
    }
    for (int a = 0; a < t->nsites; a++)
        for (int b = 0; b < t->nsites; b++) {
            double bytes = a == b ? 0 : d->wan_link_bytes[a * t->nsites + b];
            if (bytes <= 0)
                continue;
            const topo_link *l = topo_wan(t, a, b);
            double busiest = l->per_pair ? peak[a * t->nsites + b] : bytes;
            json_t *o = json_object();
            json_object_set_new(o, "from", json_string(t->sites[a].id));
            json_object_set_new(o, "to", json_string(t->sites[b].id));
            json_object_set_new(o, "bytes", json_real(bytes));
            if (l->per_pair) { /* the rate is each endpoint pair's, not the sum's */
                json_object_set_new(o, "sharing", json_string("per_pair"));
                json_object_set_new(o, "pairs", json_integer(npairs[a * t->nsites + b]));
                json_object_set_new(o, "busiest_pair_bytes", json_real(busiest));
            }
            json_object_set_new(o, "utilization",
                                json_real(T > 0 ? busiest / (l->bw * T) : 0));
            json_array_append_new(arr, o);
        }
    free(peak);
    free(npairs);
    return arr;
}

static json_t *estimate_json(const sim_detail *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "iteration_time_s", json_real(d->res.est_iteration_s));
    json_object_set_new(o, "energy_j", json_real(d->res.est_energy_j));
    double gap = d->res.est_iteration_s > 0
                     ? d->res.iteration_s / d->res.est_iteration_s - 1 : 0;
    json_object_set_new(o, "gap", json_real(gap));
    return o;
}

json_t *report_json(const topology *t, const job *j, const plan *p, const sim_detail *d)
{
    const sim_result *r = &d->res;
    json_t *o = json_object();
    double tflops, mfu;
    flops_figures(t, d, &tflops, &mfu);
    json_object_set_new(o, "topology", json_string(t->name));
    json_object_set_new(o, "model", json_string(j->model.id));
    json_object_set_new(o, "iterations", json_integer(d->iterations_done));
    /* the plan's settings as used: defaults (1f1b, ring, 1) are reported too */
    json_object_set_new(o, "schedule", json_string(sched_name(p->schedule)));
    json_object_set_new(o, "dp_sync", json_string(sync_name(p->sync)));
    json_object_set_new(o, "microbatch_size", json_integer(p->microbatch_size));
    json_object_set_new(o, "iteration_time_s", json_real(r->iteration_s));
    json_object_set_new(o, "energy_j", json_real(r->energy_j));
    json_object_set_new(o, "gpu_energy_j", json_real(d->tot.gpu_energy_j));
    json_object_set_new(o, "network_energy_j", json_real(d->tot.network_j));
    json_object_set_new(o, "unselected_energy_j", json_real(d->tot.unselected_j));
    json_object_set_new(o, "energy_j_per_token", json_real(r->energy_j / d->w.tokens));
    json_object_set_new(o, "tokens_per_s", json_real(r->tokens_per_s));
    json_object_set_new(o, "achieved_tflops", json_real(tflops));
    json_object_set_new(o, "mfu", json_real(mfu));
    json_object_set_new(o, "gpus_used", json_integer(r->gpus_used));
    json_object_set_new(o, "utilization", json_real(r->utilization));
    json_object_set_new(o, "bubble_fraction", json_real(r->bubble_fraction));
    json_object_set_new(o, "carbon_g", json_real(r->carbon_g));
    json_object_set_new(o, "usd", json_real(r->usd));
    json_object_set_new(o, "wan_bytes", json_real(d->tm.wan_bytes));
    json_object_set_new(o, "preempted", json_boolean(r->preempted));
    if (r->preempted)
        json_object_set_new(o, "preemption", json_string(r->preempt_msg));
    json_object_set_new(o, "estimate", estimate_json(d));
    json_t *gpus = json_array();
    for (int g = 0; g < t->ngpus; g++)
        if (d->w.lane_of_gpu[g] >= 0)
            json_array_append_new(gpus, gpu_json(t, j, p, d, g, d->w.lane_of_gpu[g]));
    json_object_set_new(o, "per_gpu", gpus);
    json_object_set_new(o, "wan_links", links_json(t, d));
    return o;
}

void report_human(FILE *out, const topology *t, const job *j, const plan *p, const sim_detail *d)
{
    const sim_result *r = &d->res;
    double tflops, mfu;
    flops_figures(t, d, &tflops, &mfu);
    fprintf(out, "plan %s (%s, %s sync) on %s: %d pipelines, %d of %d GPUs\n", p->planner,
            sched_name(p->schedule), sync_name(p->sync), t->name, p->npipes, r->gpus_used,
            t->ngpus);
    fprintf(out, "model %s: batch %d x seq %d, microbatch %d\n\n", j->model.id, j->batch, j->seq,
            p->microbatch_size);
    fprintf(out, "%-26s %14s %14s\n", "", "simulated", "estimated");
    fprintf(out, "%-26s %14.6f %14.6f  (gap %+.3f %%)\n", "iteration time (s)", r->iteration_s,
            r->est_iteration_s, 100 * (r->iteration_s / r->est_iteration_s - 1));
    fprintf(out, "%-26s %14.1f %14.1f\n", "energy (J)", r->energy_j, r->est_energy_j);
    fprintf(out, "%-26s %14.4f\n", "energy per token (J)", r->energy_j / d->w.tokens);
    fprintf(out, "%-26s %14.0f\n", "tokens/s", r->tokens_per_s);
    fprintf(out, "%-26s %14.1f  (MFU %.1f %%)\n", "achieved TFLOPS", tflops, 100 * mfu);
    fprintf(out, "%-26s %13.1f %%\n", "GPU utilisation", 100 * r->utilization);
    fprintf(out, "%-26s %13.1f %%\n", "bubble (idle) fraction", 100 * r->bubble_fraction);
    fprintf(out, "%-26s %14.3f\n", "carbon (gCO2e)", r->carbon_g);
    fprintf(out, "%-26s %14.6f\n", "cost (USD)", r->usd);
    fprintf(out, "%-26s %14.3f\n", "WAN traffic (GB)", d->tm.wan_bytes / 1e9);
    fprintf(out, "%-26s %14ld  (%.3f s wall, %.2f M events/s)\n", "events", d->events,
            d->wall_s, d->wall_s > 0 ? d->events / d->wall_s / 1e6 : 0);
    if (r->preempted)
        fprintf(out, "\nPREEMPTED: %s\n", r->preempt_msg);
    fprintf(out, "\n%-22s %-14s %9s %9s %9s %11s %8s\n", "GPU", "type", "compute s", "comm s",
            "idle s", "energy J", "mem GiB");
    int shown = 0;
    for (int g = 0; g < t->ngpus; g++) {
        int l = d->w.lane_of_gpu[g];
        if (l < 0)
            continue;
        if (++shown > 64) {
            fprintf(out, "... (%d GPUs in total; --json lists all)\n", r->gpus_used);
            break;
        }
        char name[160];
        topo_gpu_name(t, g, name, sizeof name);
        const lane_account *a = &d->acc[l];
        fprintf(out, "%-22s %-14s %9.4f %9.4f %9.4f %11.1f %8.2f\n", name,
                topo_gpu_type(t, g)->id, a->compute_ns * 1e-9, a->comm_ns * 1e-9,
                a->idle_ns * 1e-9, a->energy_j, plan_gpu_memory(p, t, j, g) / GIB);
    }
}

int report_csv_write(FILE *out, const topology *t, const plan *p, const sim_detail *d)
{
    (void)p;
    fprintf(out, "gpu,type,site,pipeline,compute_s,comm_s,idle_s,energy_j\n");
    for (int g = 0; g < t->ngpus; g++) {
        int l = d->w.lane_of_gpu[g];
        if (l < 0)
            continue;
        char name[160];
        topo_gpu_name(t, g, name, sizeof name);
        const lane_account *a = &d->acc[l];
        csv_put_field(out, name);
        fputc(',', out);
        csv_put_field(out, topo_gpu_type(t, g)->id);
        fputc(',', out);
        csv_put_field(out, t->sites[t->gpus[g].site].id);
        fprintf(out, ",%d,%.9f,%.9f,%.9f,%.6f\n", d->w.lanes[l].pipe, a->compute_ns * 1e-9,
                a->comm_ns * 1e-9, a->idle_ns * 1e-9, a->energy_j);
    }
    /* one kind of row per file: the total energy is in the JSON (energy_j) */
    return ferror(out) ? -1 : 0;
}
