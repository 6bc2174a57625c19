/* topo_show.c — the human summary printed by `geotrain topo show`. */
#include <stdio.h>
#include <string.h>

#include "sim/inputs/topology.h"

#define GBPS 125000000.0

static void print_sites(const topology *t, FILE *out)
{
    fprintf(out, "%-16s %-20s %5s %5s %9s %8s %7s  %s\n", "site", "region", "nodes", "gpus",
                 "PFLOPS", "mem GiB", "gCO2/kWh", "GPU types");
    for (int s = 0; s < t->nsites; s++) {
        const topo_site *st = &t->sites[s];
        double flops = 0, mem = 0;
        int count[256] = {0};
        for (int g = st->first_gpu; g < st->first_gpu + st->ngpus; g++) {
            const gpu_type *ty = topo_gpu_type(t, g);
            flops += ty->peak_flops;
            mem += ty->mem_bytes;
            if (t->gpus[g].type < 256)
                count[t->gpus[g].type]++;
        }
        fprintf(out, "%-16s %-20s %5d %5d %9.2f %8.0f %7.0f  ", st->id,
                *st->region ? st->region : "-", st->nnodes, st->ngpus, flops / 1e15,
                mem / 1073741824.0, st->carbon_g_per_kwh);
        for (int k = 0; k < t->ntypes && k < 256; k++)
            if (count[k])
                fprintf(out, "%dx%s ", count[k], t->types[k].id);
        fputc('\n', out);
    }
}

static void print_types(const topology *t, FILE *out)
{
    fprintf(out, "\nGPUs by type:\n");
    for (int k = 0; k < t->ntypes; k++) {
        int n = 0;
        for (int g = 0; g < t->ngpus; g++)
            n += t->gpus[g].type == k;
        if (!n)
            continue;
        const gpu_type *ty = &t->types[k];
        fprintf(out, "  %-16s %5d  x %7.1f TFLOPS (eff %.2f)  %5.0f GiB  %4.0f W\n", ty->id,
                n, ty->peak_flops / 1e12, ty->efficiency, ty->mem_bytes / 1073741824.0,
                ty->tdp_w);
    }
}

static void print_wan(const topology *t, FILE *out)
{
    if (t->nsites < 2)
        return;
    fprintf(out, "\nWAN (Gbps / one-way ms), row -> column:\n%-12s", "");
    for (int b = 0; b < t->nsites; b++)
        fprintf(out, " %12.12s", t->sites[b].id);
    fputc('\n', out);
    for (int a = 0; a < t->nsites; a++) {
        fprintf(out, "%-12.12s", t->sites[a].id);
        for (int b = 0; b < t->nsites; b++) {
            if (a == b) {
                fprintf(out, " %12s", "-");
                continue;
            }
            const topo_link *l = topo_wan(t, a, b);
            char cell[32];
            snprintf(cell, sizeof cell, "%.3g/%.3g", l->bw / GBPS, l->lat_s * 1e3);
            fprintf(out, " %12s", cell);
        }
        fputc('\n', out);
    }
}

void topo_print_summary(const topology *t, FILE *out)
{
    double flops = 0, mem = 0;
    for (int g = 0; g < t->ngpus; g++) {
        flops += topo_gpu_type(t, g)->peak_flops;
        mem += topo_gpu_type(t, g)->mem_bytes;
    }
    fprintf(out, "topology %s: %d sites, %d nodes, %d GPUs, %.2f PFLOPS peak, %.0f GiB\n",
            t->name, t->nsites, t->nnodes, t->ngpus, flops / 1e15, mem / 1073741824.0);
    fprintf(out, "TCP: %d connection(s) x %.3g MB window per WAN transfer\n\n",
            t->tcp_connections, t->tcp_window_bytes / 1e6);
    print_sites(t, out);
    print_types(t, out);
    print_wan(t, out);
}
