/* cmd_freq.c — `geotrain freq`: SM clocks for a fixed plan, and its
 * time-energy front over clocks (docs/energy-model.md, planner/freq_assign.h). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "planner/freq_assign.h"
#include "sim/base/atomic_file.h"
#include "cli/cli.h"

static const char HELP[] =
    "usage: geotrain freq -t TOPO -m MODEL [JOB] PLAN [options]\n\n"
    "Choose each stage's SM clock (freq_mhz) for a fixed plan so that the estimated\n"
    "energy is lowest while the iteration time stays within the slowdown budget of\n"
    "the time at maximum clocks (stages with slack slow down, the critical stage\n"
    "does not). With --front, the time-energy front over clocks (Perseus's frontier).\n\n"
    "  --slowdown X   allowed slowdown, fraction (default 0: the critical path's time)\n"
    "  -o FILE        write the plan with its clocks (JSON)\n"
    "  --front        sweep budgets 0 .. 50 %% and print the non-dominated points\n"
    "  --csv FILE|-   the front as CSV: point,budget,iteration_time_s,energy_j,\n"
    "                 slowdown_pct,energy_saved_pct\n\n%s";

static const double BUDGETS[] = {0, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5};
#define NBUDGETS ((int)(sizeof BUDGETS / sizeof *BUDGETS))

typedef struct front_out {
    const est_summary *pts, *base;
    int n;
} front_out;

static int write_front(FILE *fp, void *ctx)
{
    const front_out *f = ctx;
    fprintf(fp, "point,iteration_time_s,energy_j,slowdown_pct,energy_saved_pct\n");
    for (int i = 0; i < f->n; i++)
        fprintf(fp, "%d,%.9g,%.9g,%.4f,%.4f\n", i, f->pts[i].iteration_s, f->pts[i].energy_j,
                100 * (f->pts[i].iteration_s / f->base->iteration_s - 1),
                100 * (1 - f->pts[i].energy_j / f->base->energy_j));
    return ferror(fp) ? -1 : 0;
}

static void print_clocks(const topology *t, const plan *p)
{
    for (int pi = 0; pi < p->npipes; pi++)
        for (int s = 0; s < p->pipes[pi].nstages; s++) {
            const plan_stage *st = &p->pipes[pi].stages[s];
            const gpu_type *g = topo_gpu_type(t, st->gpus[0]);
            int f = st->freq_fwd_mhz ? st->freq_fwd_mhz : g->freq.f_max_mhz;
            printf("  pipeline %d stage %d (%s, layers %d-%d): %d MHz%s\n", pi, s, g->id,
                   st->first, st->last, f, st->freq_fwd_mhz ? "" : " (max)");
        }
}

static int run_front(const topology *t, const job *j, const plan *p, const char *csv,
                     gt_err *e)
{
    plan plans[NBUDGETS];
    est_summary pts[NBUDGETS], base;
    plan q;
    if (plan_copy(&q, p))
        return gt_fail(e, "out of memory");
    int rc = freq_assign(t, j, &q, 0, &base, NULL, NULL, e);
    plan_free(&q);
    if (rc)
        return -1;
    int n = freq_front(t, j, p, BUDGETS, NBUDGETS, plans, pts, e);
    if (n < 0)
        return -1;
    printf("time-energy front over SM clocks (%d points; max clocks: %.6g s, %.6g J)\n", n,
           base.iteration_s, base.energy_j);
    for (int i = 0; i < n; i++) {
        printf("  %d: %.6g s (%+.2f %%), %.6g J (%+.2f %%)\n", i, pts[i].iteration_s,
               100 * (pts[i].iteration_s / base.iteration_s - 1), pts[i].energy_j,
               100 * (pts[i].energy_j / base.energy_j - 1));
        plan_free(&plans[i]);
    }
    front_out fo = {pts, &base, n};
    return csv ? atomic_write(csv, write_front, &fo, e) : 0;
}

static int run_assign(const topology *t, const job *j, plan *p, double slowdown,
                      const char *out, gt_err *e)
{
    est_summary before, after;
    long evals = 0;
    if (freq_assign(t, j, p, slowdown, &before, &after, &evals, e))
        return -1;
    printf("max clocks: %.6g s, %.6g J\nassigned:   %.6g s (%+.3f %%), %.6g J (%+.2f %%), "
           "%ld estimates\n", before.iteration_s, before.energy_j, after.iteration_s,
           100 * (after.iteration_s / before.iteration_s - 1), after.energy_j,
           100 * (after.energy_j / before.energy_j - 1), evals);
    print_clocks(t, p);
    return out ? plan_write(p, t, out, e) : 0;
}

int cmd_freq(int argc, char **argv)
{
    cli_common c;
    cli_init(&c, "freq");
    const char *plan_path = NULL, *out = NULL, *csv = NULL, *v;
    double slowdown = 0;
    int front = 0;
    for (int i = 1; i < argc; i++) {
        int r = cli_take_common(&c, argc, argv, &i);
        if (r < 0)
            return EXIT_USAGE;
        if (r)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(HELP, CLI_JOB_HELP);
            return EXIT_OK;
        } else if (!strcmp(argv[i], "--slowdown")) {
            if (cli_value(c.cmd, argc, argv, &i, &v) ||
                cli_double(c.cmd, "--slowdown", v, 0, 10, &slowdown))
                return EXIT_USAGE;
        } else if (!strcmp(argv[i], "-o")) {
            if (cli_value(c.cmd, argc, argv, &i, &out))
                return EXIT_USAGE;
        } else if (!strcmp(argv[i], "--csv")) {
            if (cli_value(c.cmd, argc, argv, &i, &csv))
                return EXIT_USAGE;
        } else if (!strcmp(argv[i], "--front")) {
            front = 1;
        } else if (argv[i][0] == '-') {
            return cli_unknown(c.cmd, argv[i], HELP);
        } else if (plan_path) {
            return cli_usage_error(c.cmd, "unexpected argument '%s'", argv[i]);
        } else {
            plan_path = argv[i];
        }
    }
    if (!plan_path || !c.topo_path || !c.model_arg)
        return cli_usage_error(c.cmd, "need -t TOPO, -m MODEL and a PLAN file");
    if (csv && !front)
        return cli_usage_error(c.cmd, "--csv needs --front");
    topology t;
    job j;
    plan p;
    gt_err e;
    if (cli_load_world_plan(&c, plan_path, &j, &t, &p, &e))
        return cli_input_error(&e);
    int rc = EXIT_OK;
    if (front ? run_front(&t, &j, &p, csv, &e) : run_assign(&t, &j, &p, slowdown, out, &e))
        rc = cli_input_error(&e);
    plan_free(&p);
    topo_free(&t);
    cli_free(&c);
    return rc;
}
