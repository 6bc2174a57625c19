/* cmd_topo_gen.c — `geotrain topo gen`: parse the options, print the region
 * table or the fit report, or generate a topology (topologies/gen.h) and
 * write it. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/topogen_options.h"
#include "topologies/gen.h"

#define HOLDOUT_FOLDS 5   /* folds of the held-out error --fit-report prints */


static const char GEN_HELP[] =
    "usage: geotrain topo gen [options] -o FILE\n"
    "\n"
    "Generate a topology (format: docs/formats.md, Topology) on real cloud regions.\n"
    "Sites are regions picked at random from topologies/regions.csv (43 AWS, GCP\n"
    "and Azure regions).\n"
    "Between two regions the WAN is the published measurement where there is one\n"
    "(topologies/wan_measured.csv: Skyplane ping RTT / 2 and iperf3 throughput per\n"
    "direction), else a fit on great-circle distance made on those measurements\n"
    "(topologies/GENERATOR.md; --fit-report prints it and its held-out error).\n"
    "GPUs are spread over the sites, cut into nodes and typed by a mix. Same\n"
    "options + same seed = the same file, byte for byte.\n"
    "\n"
    "Where the sites are:\n"
    "  --sites N              number of sites, one region each (default 4, or every\n"
    "                         region --regions names)\n"
    "  --regions LIST         comma-separated: any, aws, gcp, azure, a continent\n"
    "                         (north-america, europe, asia, oceania, south-america)\n"
    "                         or region ids such as aws:us-east-1 (default any)\n"
    "  --list-regions         print the regions with coordinates and carbon, and exit\n"
    "\n"
    "GPUs:\n"
    "  --gpus N               total GPUs (default 8 per site); every site gets >= 1\n"
    "  --gpus-dist D          how the GPUs spread over sites:\n"
    "                           even|fixed     as equal as possible (default)\n"
    "                           random         one each, the rest uniformly at random\n"
    "                           zipf:S         shares 1/rank^S, random ranks (skewed)\n"
    "                           uniform:LO:HI  each site draws LO..HI GPUs (no --gpus)\n"
    "  --mix SPEC             GPU types and weights, e.g. h100:0.2,a100:0.3,t4:0.5\n"
    "                         (catalog ids of topologies/gpus.csv or the aliases h100,\n"
    "                         h200, a100, a100-40, v100, v100-32, 4090, 3090, a6000;\n"
    "                         a missing weight is 1). Per-site mixes: one SPEC per site\n"
    "                         separated by '/', the k-th for the k-th site in the file,\n"
    "                         e.g. h100:1/a100:1,t4:1/t4:1\n"
    "                         (default " TOPOGEN_DEFAULT_MIX ")\n"
    "  --mix-per node|site    unit that gets one type: each node (default) or each\n"
    "                         site (homogeneous sites); the realised shares are within\n"
    "                         one unit of the weights\n"
    "  --node-size K          GPUs per node (default 8; a site's last node takes the rest)\n"
    "  --nic-gbps X           NIC per node, also the LAN speed (default 100)\n"
    "\n"
    "Network and site parameters:\n"
    "  --bw-scale F           multiply every WAN bandwidth (default 1; the Skyplane\n"
    "                         numbers use 64 TCP connections, a single stream gets\n"
    "                         about 0.05x on long paths)\n"
    "  --bw-jitter F          multiply each direction by U[1-F, 1+F] (default 0)\n"
    "  --tcp-connections K    TCP connections per transfer (default 16)\n"
    "  --tcp-window-mb W      TCP window (default 3)\n"
    "  --pue X                power usage effectiveness of every site (default 1.2,\n"
    "                         an assumption; carbon comes from regions.csv)\n"
    "\n"
    "Output:\n"
    "  --seed S               random seed, 0..4294967295 (default 1)\n"
    "  --name NAME            topology name (default gen-<sites>s-<gpus>g-seed<S>)\n"
    "  -o, --output FILE      where to write (- = standard output); written whole\n"
    "  --fit-report           print the distance fits and their 5-fold held-out error\n"
    "\n"
    "examples:\n"
    "  geotrain topo gen --sites 6 --gpus 48 --seed 7 -o world6.json\n"
    "  geotrain topo gen --regions europe --sites 3 --mix a100:1,t4:1 -o eu.json\n"
    "  geotrain topo gen --regions aws:us-east-1,gcp:europe-west4 --gpus-dist uniform:4:16 \\\n"
    "      --mix h100:1/t4:1 -o two.json\n";

typedef struct gen_cli {
    topogen_opts o;
    const char *out;
    bool list, report;
} gen_cli;

/* 1 = help shown, 0 = parsed, -1 = usage error (printed). */
static int parse_args(gen_cli *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(GEN_HELP, stdout);
            return 1;
        }
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (cli_value("topo gen", argc, argv, &i, &c->out))
                return -1;
        } else if (!strcmp(a, "--list-regions")) {
            c->list = true;
        } else if (!strcmp(a, "--fit-report")) {
            c->report = true;
        } else if ((rc = topogen_take_option(&c->o, "topo gen", true, argc, argv, &i))) {
            if (rc < 0)
                return -1;
        } else {
            cli_unknown("topo gen", a, GEN_HELP);
            return -1;
        }
    }
    if (!c->out && !c->list && !c->report) {
        cli_usage_error("topo gen", "no output file (-o FILE, or -o - for standard output)");
        return -1;
    }
    return 0;
}

static void print_regions(const topogen_data *d)
{
    printf("%-26s %-6s %-14s %7s %7s %8s %s\n", "region", "prov", "continent", "lat", "lon",
           "gCO2/kWh", "measured partners (latency / bandwidth)");
    for (int i = 0; i < d->n; i++) {
        const topogen_region *g = &d->regions[i];
        int nl = 0, nb = 0;
        for (int j = 0; j < d->n; j++) {
            nl += !isnan(d->lat_ms[(size_t)i * d->n + j]);
            nb += !isnan(d->gbps[(size_t)i * d->n + j]);
        }
        printf("%-26s %-6s %-14s %7.1f %7.1f %8.1f%s %d / %d\n", g->id,
               d->providers[g->prov], g->continent, g->lat, g->lon, g->carbon_g_per_kwh,
               g->carbon_estimate ? "*" : " ", nl, nb);
    }
    printf("(* carbon ESTIMATE: mean of the same country's other regions)\n");
}

static void print_error(const char *what, const topogen_fit_error *x)
{
    printf("%s:\n  latency   RMSE %.1f ms, MAE %.1f ms, |rel| median %.1f %%, p90 %.1f %% "
           "(%d pairs)\n  bandwidth RMSE %.3f in ln(Gbps), |rel| median %.1f %%, p90 %.1f %% "
           "(%d directions)\n", what, x->lat_rmse_ms, x->lat_mae_ms, 100 * x->lat_medrel,
           100 * x->lat_p90rel, x->nlat, x->bw_rmse_ln, 100 * x->bw_medrel, 100 * x->bw_p90rel,
           x->nbw);
}

static int print_fit(const topogen_data *d)
{
    const topogen_fit *f = &d->fit;
    topogen_fit_error in, out;
    gt_err e;
    printf("latency:   one-way ms = %.4f + %.6f * km  (%.0f km per ms; least squares weighted "
           "by 1/ms^2 on %d pairs)\n", f->lat_a, f->lat_b, 1 / f->lat_b, f->nlat);
    printf("bandwidth: ln(Gbps) = c + k * km by sending provider (%d directions):\n", f->nbw);
    for (int p = 0; p < d->nprov; p++)
        printf("  %-6s c %.4f (%.2f Gbps at 0 km)  k %.4e per km  (%d directions)\n",
               d->providers[p], f->bw_c[p], exp(f->bw_c[p]), f->bw_k[p], f->bw_n[p]);
    printf("  all    c %.4f (%.2f Gbps at 0 km)  k %.4e per km\n", f->bw_gc, exp(f->bw_gc),
           f->bw_gk);
    if (topogen_fit_holdout(d, HOLDOUT_FOLDS, &out, &e) || topogen_fit_holdout(d, 1, &in, &e))
        return cli_input_error(&e);
    print_error("error on held-out pairs (5-fold cross-validation)", &out);
    print_error("in-sample error (fitted and tested on all pairs)", &in);
    return EXIT_OK;
}

static void print_summary(const topology *t, const char *out)
{
    FILE *fp = strcmp(out, "-") ? stdout : stderr; /* keep stdout clean for the JSON */
    fprintf(fp, "%s: %s, %d sites, %d nodes, %d GPUs (", out, t->name, t->nsites, t->nnodes,
            t->ngpus);
    for (int k = 0, first = 1; k < t->ntypes; k++) {
        int cnt = 0;
        for (int g = 0; g < t->ngpus; g++)
            cnt += t->gpus[g].type == k;
        if (cnt) {
            fprintf(fp, "%s%d %s", first ? "" : ", ", cnt, t->types[k].id);
            first = 0;
        }
    }
    fprintf(fp, ")\n");
}

static int generate_to(const gen_cli *c, const topogen_data *d)
{
    gt_err e;
    topogen_opts o = c->o;
    o.data = d;
    if (topogen_check_usage("topo gen", &o, d))
        return EXIT_USAGE;
    topology t;
    if (topo_generate(&o, &t, &e))
        return cli_input_error(&e);
    int rc = topo_write(&t, c->out, &e) ? cli_input_error(&e) : EXIT_OK;
    if (rc == EXIT_OK)
        print_summary(&t, c->out);
    topo_free(&t);
    return rc;
}

int cmd_topo_gen(int argc, char **argv)
{
    gen_cli c = {.out = NULL};
    topogen_defaults(&c.o);
    int rc = parse_args(&c, argc, argv);
    if (rc)
        return rc > 0 ? EXIT_OK : EXIT_USAGE;
    topogen_data d;
    gt_err e;
    if (topogen_data_load(&d, &e))
        return cli_input_error(&e);
    rc = EXIT_OK;
    if (c.list)
        print_regions(&d);
    if (c.report)
        rc = print_fit(&d);
    if (rc == EXIT_OK && c.out)
        rc = generate_to(&c, &d);
    topogen_data_free(&d);
    return rc;
}
