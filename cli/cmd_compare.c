/* cmd_compare.c — `geotrain compare`: run planners on one topology and job,
 * replay every plan in the simulator (simulate_plan, the referee) and
 * tabulate iteration time, joules, carbon, planning time and the objective,
 * each row relative to the best baseline (docs/cli.md, Outputs).
 *
 * With --seeds N every planner runs with seeds S..S+N-1 (S = --seed, default
 * 1) and a row reports the mean, with min and max of the iteration time and
 * energy. A planner that cannot produce a feasible plan gets a row with the
 * reason (iteration_time_s null in JSON). The objective column uses
 * planner/objective.h; weighted:W takes its references from the fastest
 * baseline row, energy-within:X its time limit from the fastest row.
 *
 * SIGINT or SIGTERM stops the comparison: the running planner returns its
 * best plan so far (replayed and kept), the other runs are skipped, the rows
 * done are printed with "interrupted: N of M runs done" and the exit code is
 * 128 + the signal (130 for Ctrl-C). --json and --csv are written only for a
 * complete comparison, so that a script never reads part of one as the
 * whole; a file from an earlier run stays as it was. A second signal ends
 * the process at once (removing a half-written temporary file). The signal
 * flag is this command's one piece of global mutable state. The table and
 * the files are written by cli/compare_out.c.
 *
 * With --freq every run's plan, baselines' included, gets the per-stage SM
 * clocks of planner/freq_assign.h (no estimated slowdown) and is replayed
 * again: the rows compare clocked plans with clocked plans, and each row also
 * reports its energy and time at maximum clocks (planner_run_freq). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/baselines/dtfm.h"
#include "cli/commands.h"
#include "planner/objective.h"
#include "planner/planner.h"
#include "planner/planner_run.h"
#include "sim/base/atomic_file.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/signals.h"
#include "cli/version.h"
#include "sim/engine/simulator.h"
#include "sim/models/plan_check.h"

#define SMALL_FOR_EXACT 10  /* `all` runs exact only up to this many GPUs */

static const char HELP[] =
    "usage: geotrain compare -t TOPO -m MODEL [JOB] [--planners all|a,b,c] [--seeds N]\n"
    "                        [--seed S] [--objective OBJ] [--budget-s SEC] [--threads N]\n"
    "                        [--json FILE|-] [--csv FILE|-] [--dtfm-cost]\n"
    "                        [--wan-policy fair|temporal] [--freq]\n\n"
    "Run planners on one topology and job, replay every plan in the simulator and\n"
    "print one row per planner: GPUs used, stages x pipelines, iteration time,\n"
    "joules, J/token, gCO2e, planning time, the objective and each row relative to\n"
    "the best baseline. A planner that finds no feasible plan gets a row saying why.\n\n"
    "  --planners LIST     'all' (default: every planner; exact only up to %d GPUs)\n"
    "                      or a comma-separated list of:%s\n"
    "  --seeds N           run each planner with N seeds (mean, min, max; default 1)\n"
    "  --seed S            first seed (default 1)\n"
    "  --objective OBJ     time (default), energy, weighted:W, energy-within:X,\n"
    "                      carbon, cost, pareto; passed to the planners\n"
    "  --budget-s SEC      wall-clock budget per planner run (0 = planner default)\n"
    "  --threads N         threads for planners that use them (0 = default)\n"
    "  --json FILE|-       rows[] with planner, gpus_used, iteration_time_s, energy_j,\n"
    "                      plan_time_s, ... ('-' = standard output, no table)\n"
    "  --csv FILE|-        the same rows as CSV\n"
    "  -q, --quiet         no progress on stderr (by default a line per run, on a\n"
    "                      non-terminal at most every 5 s, with an ETA)\n"
    "  --dtfm-cost         add DT-FM's native cost (DataPCost + 2 PipelinePCost) of\n"
    "                      every plan that is a grid of single-GPU stages\n"
    "  --wan-policy P      WAN sharing in the replay (default: as the topology says)\n"
    "  --freq              per-stage SM clocks (geotrain freq, no slowdown) on every\n"
    "                      planner's plan, baselines too; rows are the clocked replays,\n"
    "                      'vs f_max' the energy and time change against the same\n"
    "                      plan at maximum clocks (both replayed)\n\n"
    "Ctrl-C (or SIGTERM) stops the running planner, whose best plan so far is\n"
    "replayed, skips the remaining runs and prints the rows done with a note\n"
    "'interrupted: N of M runs done' (on standard error when --json - or --csv -\n"
    "holds standard output); exit 130 (143 for SIGTERM). --json and --csv are\n"
    "written only when every run is done: an interrupted comparison writes\n"
    "neither, and an earlier file stays as it was. A second signal ends at once.\n\n%s";

/* One planner run (one seed) and its replay. */
#include "cli/compare_out.h"

/* --- arguments ------------------------------------------------------------ */

static void planner_names(char *buf, size_t cap)
{
    planner_run_names(buf, cap, 6, 22);
}

static int print_help(void)
{
    char names[2048];
    planner_names(names, sizeof names);
    printf(HELP, SMALL_FOR_EXACT, names, CLI_JOB_HELP);
    return EXIT_OK;
}

/* Our own options; 1 consumed, 0 not ours, -1 usage error (printed). */
static int take_option(cmp_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    const char *cmd = "compare";
    if (!strcmp(a, "--planners"))
        return cli_value(cmd, argc, argv, i, &o->planners) ? -1 : 1;
    if (!strcmp(a, "--objective"))
        return cli_value(cmd, argc, argv, i, &o->objective) ? -1 : 1;
    if (!strcmp(a, "--json"))
        return cli_value(cmd, argc, argv, i, &o->json) ? -1 : 1;
    if (!strcmp(a, "--csv"))
        return cli_value(cmd, argc, argv, i, &o->csv) ? -1 : 1;
    if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
        o->quiet = true;
        return 1;
    }
    if (!strcmp(a, "--dtfm-cost")) {
        o->dtfm_cost = true;
        return 1;
    }
    if (!strcmp(a, "--freq")) {
        o->freq = true;
        return 1;
    }
    if (!strcmp(a, "--seeds"))
        return cli_value(cmd, argc, argv, i, &v) || cli_long(cmd, a, v, 1, 10000, &o->seeds)
                   ? -1 : 1;
    if (!strcmp(a, "--seed"))
        return cli_value(cmd, argc, argv, i, &v) ||
                       cli_long(cmd, a, v, 0, 2147483647L, &o->seed) ? -1 : 1;
    if (!strcmp(a, "--threads"))
        return cli_value(cmd, argc, argv, i, &v) || cli_long(cmd, a, v, 0, 4096, &o->threads)
                   ? -1 : 1;
    if (!strcmp(a, "--budget-s"))
        return cli_value(cmd, argc, argv, i, &v) ||
                       cli_double(cmd, a, v, 0, 1e9, &o->budget_s) ? -1 : 1;
    if (!strcmp(a, "--wan-policy")) {
        if (cli_value(cmd, argc, argv, i, &v))
            return -1;
        wan_policy pol;
        if (wan_policy_parse(v, &pol)) {
            char names[128];
            wan_policy_list(names, sizeof names, "");
            cli_usage_error(cmd, "--wan-policy expects %s, got '%s'", names, v);
            return -1;
        }
        o->wan_policy = (int)pol;
        return 1;
    }
    return 0;
}

/* The planners to run, in registry order for `all`, else as listed. */
static int select_planners(const char *spec, int ngpus, const planner_def ***out, int *n)
{
    if (strcmp(spec, "all") && cli_check_list("compare", "--planners", spec))
        return EXIT_USAGE;
    int total;
    const planner_def *all = planner_all(&total);
    const planner_def **sel = calloc((size_t)total + 1, sizeof *sel);
    if (!sel)
        return cli_usage_error("compare", "out of memory");
    *n = 0;
    if (!strcmp(spec, "all")) {
        for (int i = 0; i < total; i++)
            if (strcmp(all[i].name, "exact") || ngpus <= SMALL_FOR_EXACT)
                sel[(*n)++] = &all[i];
    } else {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", spec);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            const planner_def *d = planner_find(tok);
            if (!d) {
                free(sel);
                char names[2048];
                planner_names(names, sizeof names);
                return cli_usage_error("compare", "unknown planner '%s'; known:%s", tok, names);
            }
            bool dup = false;
            for (int k = 0; k < *n; k++)
                dup |= sel[k] == d;
            if (!dup && *n < total)
                sel[(*n)++] = d;
        }
    }
    if (!*n) {
        free(sel);
        return cli_usage_error("compare", "no planner selected by '%s'", spec);
    }
    *out = sel;
    return 0;
}

/* --- running -------------------------------------------------------------- */

/* One run; false when it is to be dropped (a stop came before any plan). */
static bool run_one(const planner_def *d, const topology *t, const job *j, const cmp_opts *co,
                    long seed, run_rec *r)
{
    planner_opts po = {.objective = co->objective, .seed = (uint64_t)seed,
                       .budget_s = co->budget_s, .threads = (int)co->threads,
                       .stop = co->stop};
    plan p;
    planner_run_replay(d, t, j, &po, co->wan_policy, &r->run, &p);
    if (co->freq)
        planner_run_freq(t, j, &p, po.seed, co->wan_policy, &r->run, &r->fmax);
    r->ok = r->run.status == PLANNER_RUN_OK;
    r->dtfm_cost = NAN;
    double c;
    if (r->ok && co->dtfm_cost && !dtfm_plan_cost(t, j, &p, &c, NULL))
        r->dtfm_cost = c;
    if (r->ok && r->run.sim.gpus_used)
        r->run.gpus = r->run.sim.gpus_used;
    r->tp = 0;
    r->peak_mem = 0;
    double *mem = NULL;
    if (r->ok && p.npipes > 0 && p.pipes[0].nstages > 0)
        r->tp = p.pipes[0].stages[0].ngpus;
    if (r->ok && !plan_memory_all(&p, t, j, t->ngpus, &mem))
        for (int g = 0; g < t->ngpus; g++)
            r->peak_mem = mem[g] > r->peak_mem ? mem[g] : r->peak_mem;
    free(mem);
    plan_free(&p);
    return !(r->run.stopped && r->run.status == PLANNER_RUN_INFEASIBLE);
}

/* --- aggregation ----------------------------------------------------------- */

static obj_metrics metrics_of(const run_rec *r)
{
    return obj_from_sim(&r->run.sim);
}

/* Means, ranges and each row's objective (after the references are set). */
static void aggregate(row *rw, const objective *ob)
{
    rw->nok = 0;
    rw->best = -1;
    double bestv = INFINITY;
    rw->time_s = rw->energy_j = rw->carbon_g = rw->usd = rw->plan_s = rw->obj = 0;
    rw->dtfm_cost = rw->time_fmax = rw->energy_fmax = 0;
    rw->time_min = rw->energy_min = INFINITY;
    rw->time_max = rw->energy_max = -INFINITY;
    for (int s = 0; s < rw->nruns; s++) {
        const run_rec *r = &rw->runs[s];
        rw->plan_s += r->run.plan_s / rw->nruns;
        if (!r->ok)
            continue;
        rw->nok++;
        obj_metrics m = metrics_of(r);
        double v = objective_value(ob, &m);
        rw->time_s += m.time_s;
        rw->energy_j += m.energy_j;
        rw->carbon_g += m.carbon_g;
        rw->usd += m.usd;
        rw->obj += v;
        rw->dtfm_cost += r->dtfm_cost;
        rw->time_fmax += r->fmax.iteration_s;
        rw->energy_fmax += r->fmax.energy_j;
        rw->time_min = fmin(rw->time_min, m.time_s);
        rw->time_max = fmax(rw->time_max, m.time_s);
        rw->energy_min = fmin(rw->energy_min, m.energy_j);
        rw->energy_max = fmax(rw->energy_max, m.energy_j);
        if (v < bestv) {
            bestv = v;
            rw->best = s;
        }
    }
    if (rw->nok) {
        rw->time_s /= rw->nok;
        rw->energy_j /= rw->nok;
        rw->carbon_g /= rw->nok;
        rw->usd /= rw->nok;
        rw->obj /= rw->nok;
        rw->dtfm_cost /= rw->nok;
        rw->time_fmax /= rw->nok;
        rw->energy_fmax /= rw->nok;
    }
}


/* References for weighted / energy-within, then every row's objective and
 * its ratio to the best baseline. Returns the best baseline's index. */
static int finish_rows(row *rows, int n, objective *ob)
{
    int fastest = -1, fastest_base = -1;
    for (int i = 0; i < n; i++) {
        aggregate(&rows[i], ob); /* time means (objective not yet final) */
        if (!rows[i].nok)
            continue;
        if (fastest < 0 || rows[i].time_s < rows[fastest].time_s)
            fastest = i;
        if (rows[i].def->baseline &&
            (fastest_base < 0 || rows[i].time_s < rows[fastest_base].time_s))
            fastest_base = i;
    }
    int ref = fastest_base >= 0 ? fastest_base : fastest;
    if (ref >= 0 && objective_needs_refs(ob)) {
        obj_metrics m = {rows[ref].time_s, rows[ref].energy_j, rows[ref].carbon_g, rows[ref].usd};
        objective_set_refs(ob, &m);
    }
    if (fastest >= 0 && objective_needs_fastest(ob))
        objective_set_fastest(ob, rows[fastest].time_min);
    int best = -1;
    for (int i = 0; i < n; i++) {
        aggregate(&rows[i], ob);
        if (compare_obj_ok(&rows[i]) && rows[i].def->baseline &&
            (best < 0 || rows[i].obj < rows[best].obj))
            best = i;
    }
    for (int i = 0; i < n; i++)
        rows[i].rel = best >= 0 && compare_obj_ok(&rows[i]) && compare_obj_ok(&rows[best]) &&
                              rows[best].obj != 0
                          ? rows[i].obj / rows[best].obj - 1 : NAN;
    return best;
}


/* --- the command ----------------------------------------------------------- */

static int parse_args(int argc, char **argv, cli_common *c, cmp_opts *co, bool *help)
{
    *help = false;
    for (int i = 1; i < argc; i++) {
        int r = cli_take_common(c, argc, argv, &i);
        if (r < 0)
            return EXIT_USAGE;
        if (r)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            *help = true;
            return EXIT_OK;
        }
        r = take_option(co, argc, argv, &i);
        if (r < 0)
            return EXIT_USAGE;
        if (!r)
            return cli_unknown(c->cmd, argv[i], HELP);
    }
    if (!c->topo_path || !c->model_arg)
        return cli_usage_error(c->cmd, "need -t TOPO and -m MODEL");
    const char *ins[3] = {c->topo_path, c->model_arg, c->profile_path};
    const char *outs[2] = {co->json, co->csv};
    if (cli_check_outputs(c->cmd, outs, 2, ins, 3))
        return EXIT_USAGE;
    memcpy(co->inputs, ins, sizeof ins);
    return EXIT_OK;
}

/* Every planner with every seed, until done or stopped; the runs kept. */
static long run_all(row *rows, int n, const topology *t, const job *j, const cmp_opts *co)
{
    cli_progress pr;
    cli_progress_init(&pr, !co->quiet);
    long done = 0;
    for (int i = 0; i < n && !*co->stop; i++)
        for (long s = 0; s < co->seeds && !*co->stop; s++) {
            char what[64];
            if (co->seeds > 1)
                snprintf(what, sizeof what, "%s seed %ld/%ld", rows[i].def->name, s + 1,
                         co->seeds);
            else
                snprintf(what, sizeof what, "%s", rows[i].def->name);
            cli_progress_show(&pr, "compare", what, (long)i * co->seeds + s,
                              (long)n * co->seeds);
            row *rw = &rows[i];
            if (run_one(rw->def, t, j, co, co->seed + s, &rw->runs[rw->nruns])) {
                rw->nruns++;
                done++;
            }
        }
    cli_progress_end(&pr);
    return done;
}

/* Run, tabulate, write; the exit code. */
static int compare_rows(row *rows, int n, const topology *t, const job *j, cmp_opts *co,
                        objective *ob)
{
    cli_signals sig;
    co->stop = cli_signals_catch(&sig);
    report rp = {t, j, co, ob, rows, n, -1, (double)j->batch * j->seq, 0,
                 (long)n * co->seeds, false};
    rp.done = run_all(rows, n, t, j, co);
    rp.interrupted = cli_signals_caught() != 0;
    rp.best = finish_rows(rows, n, ob);
    int rc = compare_write_outputs(&rp);
    bool any = false;
    for (int i = 0; i < n; i++)
        any |= rows[i].nok > 0;
    if (!rc && !any && !rp.interrupted) {
        fflush(stdout); /* the table first, then why the command fails */
        fprintf(stderr, "error: no planner produced a feasible plan (see the rows)\n");
        rc = EXIT_INPUT;
    }
    cli_signals_restore(&sig);
    /* a signal during the writing leaves whole files, but was still a request to stop */
    return cli_signals_caught() && !rc ? cli_signals_exit_code() : rc;
}

int cmd_compare(int argc, char **argv)
{
    cli_common c;
    cli_init(&c, "compare");
    cmp_opts co = {.planners = "all", .objective = "time", .seeds = 1, .seed = 1,
                   .wan_policy = -1};
    bool help;
    int rc = parse_args(argc, argv, &c, &co, &help);
    if (help)
        return print_help();
    if (rc)
        return rc;
    objective ob;
    gt_err e;
    if (objective_parse(co.objective, &ob, &e))
        return cli_usage_error(c.cmd, "%s", e.msg);
    topology t;
    job j;
    if (cli_load_job(&c, &j, &e) || cli_job_plannable(&j, &e) || cli_load_topology(&c, &t, &e))
        return cli_input_error(&e);
    const planner_def **sel = NULL;
    int n = 0;
    if ((rc = select_planners(co.planners, t.ngpus, &sel, &n))) {
        topo_free(&t);
        return rc;
    }
    row *rows = calloc((size_t)n, sizeof *rows);
    run_rec *runs = calloc((size_t)n * (size_t)co.seeds, sizeof *runs);
    if (rows && runs) {
        for (int i = 0; i < n; i++)
            rows[i] = (row){.def = sel[i], .runs = runs + (size_t)i * (size_t)co.seeds};
        rc = compare_rows(rows, n, &t, &j, &co, &ob);
    } else {
        rc = cli_input_error(&(gt_err){"out of memory"});
    }
    free(rows);
    free(runs);
    free(sel);
    topo_free(&t);
    return rc;
}
