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
 * flag is this command's one piece of global mutable state.
 *
 * With --freq every run's plan, baselines' included, gets the per-stage SM
 * clocks of planner/freq_assign.h (no estimated slowdown) and is replayed
 * again: the rows compare clocked plans with clocked plans, and each row also
 * reports its energy and time at maximum clocks (planner_run_freq). */
#include <jansson.h>
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
#include "sim/atomic_file.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/signals.h"
#include "cli/version.h"
#include "sim/csv.h"
#include "sim/jsonio.h"
#include "sim/simulator.h"

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
typedef struct run_rec {
    bool ok;                   /* planned and replayed */
    planner_run run;
    double dtfm_cost;          /* NAN unless --dtfm-cost and a grid plan */
    int tp;                    /* tensor-parallel degree of the plan (ok runs) */
    double peak_mem;           /* bytes on the fullest GPU (ok runs) */
    sim_result fmax;           /* --freq: the replay at maximum clocks (ok runs) */
} run_rec;

typedef struct row {
    const planner_def *def;
    run_rec *runs;
    int nruns, nok, best;      /* best = ok run with the lowest objective */
    double time_s, time_min, time_max, energy_j, energy_min, energy_max;
    double carbon_g, usd, plan_s, obj, dtfm_cost;
    double time_fmax, energy_fmax; /* --freq: means at maximum clocks */
    double rel;                /* obj / best baseline's obj - 1 (NAN if none) */
} row;

typedef struct cmp_opts {
    const char *planners, *objective, *json, *csv;
    long seeds, seed, threads;
    double budget_s;
    bool dtfm_cost, quiet, freq;
    int wan_policy;
    volatile int *stop;        /* the signal that asked to stop, 0 = none */
    const char *inputs[3];     /* topology, model, profile: for the provenance */
} cmp_opts;

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
        if (strcmp(v, "fair") && strcmp(v, "temporal")) {
            cli_usage_error(cmd, "--wan-policy expects fair or temporal, got '%s'", v);
            return -1;
        }
        o->wan_policy = !strcmp(v, "fair") ? WAN_FAIR : WAN_TEMPORAL;
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
    if (r->ok && !plan_memory_all(&p, j, t->ngpus, &mem))
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

/* False when no run is feasible, or the objective rules the row out
 * (energy-within:X: over the time limit). */
static bool obj_ok(const row *rw)
{
    return rw->nok > 0 && rw->obj < OBJ_INFEASIBLE;
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
        if (obj_ok(&rows[i]) && rows[i].def->baseline &&
            (best < 0 || rows[i].obj < rows[best].obj))
            best = i;
    }
    for (int i = 0; i < n; i++)
        rows[i].rel = best >= 0 && obj_ok(&rows[i]) && obj_ok(&rows[best]) &&
                              rows[best].obj != 0
                          ? rows[i].obj / rows[best].obj - 1 : NAN;
    return best;
}

/* The first failure of a row (for rows and notes). */
static const char *row_error(const row *rw)
{
    for (int s = 0; s < rw->nruns; s++)
        if (!rw->runs[s].ok)
            return rw->runs[s].run.err;
    return NULL;
}

/* --- output ---------------------------------------------------------------- */

typedef struct report {
    const topology *t;
    const job *j;
    const cmp_opts *co;
    const objective *ob;
    row *rows;
    int n, best;
    double tokens;
    long done, total;          /* runs done (kept) and asked for */
    bool interrupted;          /* a signal stopped a run or skipped some */
} report;

static void shape_text(const planner_run *r, char *buf, size_t cap)
{
    if (r->smin == r->smax)
        snprintf(buf, cap, "%d x %d", r->smin, r->pipes);
    else
        snprintf(buf, cap, "%d-%d x %d", r->smin, r->smax, r->pipes);
}

static void print_row(const report *rp, const row *rw, FILE *out)
{
    const char *err = row_error(rw);
    if (!rw->nok) {
        fprintf(out, "%-17s infeasible: %s\n", rw->def->name, err ? err : "no plan");
        return;
    }
    const run_rec *b = &rw->runs[rw->best];
    char shape[32], rel[24], range[40] = "";
    shape_text(&b->run, shape, sizeof shape);
    if (isnan(rw->rel))
        snprintf(rel, sizeof rel, "-");
    else
        snprintf(rel, sizeof rel, "%+.1f %%", 100 * rw->rel);
    if (rp->co->seeds > 1)
        snprintf(range, sizeof range, " %9.4g-%-9.4g", rw->time_min, rw->time_max);
    char obj[24];
    if (obj_ok(rw))
        snprintf(obj, sizeof obj, "%.5g", rw->obj);
    else
        snprintf(obj, sizeof obj, "over limit");
    fprintf(out, "%-17s %5d %9s %11.4g%s %11.4g %9.3g %9.4g %9.3g %11s %9s", rw->def->name,
            b->run.gpus, shape, rw->time_s, range, rw->energy_j / 1e3, rw->energy_j / rp->tokens,
            rw->carbon_g, rw->plan_s, obj, rel);
    if (rp->co->dtfm_cost) {
        if (isnan(rw->dtfm_cost))
            fprintf(out, " %10s", "-");
        else
            fprintf(out, " %10.4g", rw->dtfm_cost);
    }
    if (rp->co->freq)
        fprintf(out, " %+8.2f %% %+8.3f %%", 100 * (rw->energy_j / rw->energy_fmax - 1),
                100 * (rw->time_s / rw->time_fmax - 1));
    if (rw->nok < rw->nruns)
        fprintf(out, "  (%d of %d seeds failed)", rw->nruns - rw->nok, rw->nruns);
    fputc('\n', out);
}

/* Whether a run of the row was cut short by the interrupt. */
static bool row_stopped(const row *rw)
{
    for (int s = 0; s < rw->nruns; s++)
        if (rw->runs[s].run.stopped)
            return true;
    return false;
}

/* Planner notes, failed seeds, and what an interrupt cut short. */
static void print_notes(const report *rp, FILE *out)
{
    bool head = false;
    for (int i = 0; i < rp->n; i++) {
        const row *rw = &rp->rows[i];
        const char *note = rw->best >= 0 ? rw->runs[rw->best].run.st.note : "";
        const char *err = rw->nok && rw->nok < rw->nruns ? row_error(rw) : NULL;
        bool cut = rw->nruns && rw->nruns < rp->co->seeds, stopped = row_stopped(rw);
        char seeds[64];
        snprintf(seeds, sizeof seeds, "%d of %ld seeds run", rw->nruns, rp->co->seeds);
        if (!*note && !err && !cut && !stopped)
            continue;
        if (!head)
            fprintf(out, "\nnotes:\n");
        head = true;
        if (*note)
            fprintf(out, "  %-15s %s\n", rw->def->name, note);
        if (err)
            fprintf(out, "  %-15s a seed failed: %s\n", rw->def->name, err);
        if (cut || stopped)
            fprintf(out, "  %-15s interrupted: %s%s\n", rw->def->name, cut ? seeds : "",
                    !stopped ? "" : cut ? ", the last stopped early (its best plan so far)"
                                        : "stopped early (its best plan so far)");
    }
}

static void print_table(const report *rp, FILE *out)
{
    const job *j = rp->j;
    fprintf(out, "compare: %s, %s, batch %d x seq %d (microbatch %d, recompute %s), "
                 "objective %s, %ld seed%s\n\n",
            rp->t->name, j->model.id, j->batch, j->seq, j->microbatch,
            j->recompute == RECOMPUTE_FULL ? "full" : "none", rp->ob->text, rp->co->seeds,
            rp->co->seeds > 1 ? "s (means)" : "");
    if (rp->co->freq)
        fprintf(out, "every plan with per-stage SM clocks (no estimated slowdown); "
                     "'vs f_max': energy and time against the same plan at maximum clocks\n\n");
    fprintf(out, "%-17s %5s %9s %11s%s %11s %9s %9s %9s %11s %9s%s%s\n", "planner", "GPUs",
            "S x D", "iter (s)", rp->co->seeds > 1 ? "   min-max (s)      " : "",
            "energy (kJ)", "J/token", "gCO2e", "plan (s)", "objective", "vs best",
            rp->co->dtfm_cost ? "  DT-FM (s)" : "", rp->co->freq ? "  E vs f_max  t vs f_max" : "");
    for (int i = 0; i < rp->n; i++)
        if (rp->rows[i].nruns) /* after an interrupt, planners not run have no row */
            print_row(rp, &rp->rows[i], out);
    if (rp->best >= 0)
        fprintf(out, "\nbest baseline: %s (objective %s, %s)\n", rp->rows[rp->best].def->name,
                rp->ob->text, objective_unit(rp->ob));
    print_notes(rp, out);
    if (rp->interrupted)
        fprintf(out, "\ninterrupted: %ld of %ld runs done%s\n", rp->done, rp->total,
                rp->co->json || rp->co->csv ? "; --json/--csv not written (incomplete)" : "");
}

static json_t *num_or_null(bool ok, double v)
{
    return ok && isfinite(v) ? json_real(v) : json_null();
}

static json_t *row_json(const report *rp, const row *rw)
{
    json_t *o = json_object();
    bool ok = rw->nok > 0;
    const run_rec *b = ok ? &rw->runs[rw->best] : NULL;
    const char *err = row_error(rw);
    json_object_set_new(o, "planner", json_string(rw->def->name));
    json_object_set_new(o, "baseline", json_boolean(rw->def->baseline));
    json_object_set_new(o, "feasible", json_boolean(ok));
    json_object_set_new(o, "runs", json_integer(rw->nruns));
    json_object_set_new(o, "runs_ok", json_integer(rw->nok));
    json_object_set_new(o, "gpus_used", ok ? json_integer(b->run.gpus) : json_null());
    json_object_set_new(o, "stages", ok ? json_integer(b->run.smax) : json_null());
    json_object_set_new(o, "stages_min", ok ? json_integer(b->run.smin) : json_null());
    json_object_set_new(o, "pipelines", ok ? json_integer(b->run.pipes) : json_null());
    json_object_set_new(o, "iteration_time_s", num_or_null(ok, rw->time_s));
    json_object_set_new(o, "iteration_time_s_min", num_or_null(ok, rw->time_min));
    json_object_set_new(o, "iteration_time_s_max", num_or_null(ok, rw->time_max));
    json_object_set_new(o, "energy_j", num_or_null(ok, rw->energy_j));
    json_object_set_new(o, "energy_j_min", num_or_null(ok, rw->energy_min));
    json_object_set_new(o, "energy_j_max", num_or_null(ok, rw->energy_max));
    json_object_set_new(o, "energy_j_per_token", num_or_null(ok, rw->energy_j / rp->tokens));
    json_object_set_new(o, "tokens_per_s", num_or_null(ok, rp->tokens / rw->time_s));
    json_object_set_new(o, "carbon_g", num_or_null(ok, rw->carbon_g));
    json_object_set_new(o, "usd", num_or_null(ok, rw->usd));
    json_object_set_new(o, "plan_time_s", json_real(rw->plan_s));
    json_object_set_new(o, "objective_value", num_or_null(obj_ok(rw), rw->obj));
    json_object_set_new(o, "objective_feasible", json_boolean(obj_ok(rw)));
    json_object_set_new(o, "relative_to_best_baseline", num_or_null(ok, rw->rel));
    if (rp->co->dtfm_cost)
        json_object_set_new(o, "dtfm_cost_s", num_or_null(ok, rw->dtfm_cost));
    if (rp->co->freq) {
        json_object_set_new(o, "iteration_time_s_max_clocks", num_or_null(ok, rw->time_fmax));
        json_object_set_new(o, "energy_j_max_clocks", num_or_null(ok, rw->energy_fmax));
    }
    json_object_set_new(o, "error", err ? json_string(err) : json_null());
    json_object_set_new(o, "note", json_string(ok ? b->run.st.note : ""));
    return o;
}

static json_t *report_json(const report *rp)
{
    json_t *root = json_object(), *rows = json_array();
    json_object_set_new(root, "topology", json_string(rp->t->name));
    json_object_set_new(root, "model", json_string(rp->j->model.id));
    json_object_set_new(root, "batch", json_integer(rp->j->batch));
    json_object_set_new(root, "microbatch", json_integer(rp->j->microbatch));
    json_object_set_new(root, "seq", json_integer(rp->j->seq));
    json_object_set_new(root, "recompute",
                        json_string(rp->j->recompute == RECOMPUTE_FULL ? "full" : "none"));
    json_object_set_new(root, "objective", json_string(rp->ob->text));
    json_object_set_new(root, "seeds", json_integer(rp->co->seeds));
    json_object_set_new(root, "seed", json_integer(rp->co->seed));
    json_object_set_new(root, "freq", json_boolean(rp->co->freq));
    json_object_set_new(root, "best_baseline",
                        rp->best >= 0 ? json_string(rp->rows[rp->best].def->name) : json_null());
    for (int i = 0; i < rp->n; i++)
        json_array_append_new(rows, row_json(rp, &rp->rows[i]));
    json_object_set_new(root, "rows", rows);
    return root;
}

static void csv_num(FILE *fp, bool ok, double v)
{
    if (ok && isfinite(v))
        fprintf(fp, ",%.9g", v);
    else
        fputs(",", fp);
}

static void csv_text(FILE *fp, const char *s)
{
    fputc(',', fp);
    csv_put_field(fp, s);
}

static int write_csv(FILE *fp, void *ctx)
{
    const report *rp = ctx;
    fprintf(fp, "planner,baseline,feasible,runs,runs_ok,gpus_used,stages,pipelines,"
                "tp_degree,peak_memory_bytes,iteration_time_s,iteration_time_s_min,iteration_time_s_max,energy_j,"
                "energy_j_per_token,carbon_g,usd,plan_time_s,objective,objective_value,"
                "relative_to_best_baseline,dtfm_cost_s,error%s\n",
            rp->co->freq ? ",iteration_time_s_max_clocks,energy_j_max_clocks" : "");
    for (int i = 0; i < rp->n; i++) {
        const row *rw = &rp->rows[i];
        bool ok = rw->nok > 0;
        const run_rec *b = ok ? &rw->runs[rw->best] : NULL;
        csv_put_field(fp, rw->def->name);
        fprintf(fp, ",%d,%d,%d,%d", rw->def->baseline, ok, rw->nruns, rw->nok);
        if (ok)
            fprintf(fp, ",%d,%d,%d,%d,%.0f", b->run.gpus, b->run.smax, b->run.pipes, b->tp,
                    b->peak_mem);
        else
            fputs(",,,,,", fp);
        csv_num(fp, ok, rw->time_s);
        csv_num(fp, ok, rw->time_min);
        csv_num(fp, ok, rw->time_max);
        csv_num(fp, ok, rw->energy_j);
        csv_num(fp, ok, rw->energy_j / rp->tokens);
        csv_num(fp, ok, rw->carbon_g);
        csv_num(fp, ok, rw->usd);
        csv_num(fp, true, rw->plan_s);
        csv_text(fp, rp->ob->text);
        csv_num(fp, obj_ok(rw), rw->obj);
        csv_num(fp, ok, rw->rel);
        csv_num(fp, ok, rw->dtfm_cost);
        csv_text(fp, row_error(rw));
        if (rp->co->freq) {
            csv_num(fp, ok, rw->time_fmax);
            csv_num(fp, ok, rw->energy_fmax);
        }
        fputc('\n', fp);
    }
    return ferror(fp) ? -1 : 0;
}

static int write_outputs(const report *rp)
{
    gt_err e;
    bool stdout_taken = (rp->co->json && !strcmp(rp->co->json, "-")) ||
                        (rp->co->csv && !strcmp(rp->co->csv, "-"));
    if (rp->interrupted) {
        /* the rows done are for the user to see, wherever stdout goes; no
         * file gets part of a comparison */
        print_table(rp, stdout_taken ? stderr : stdout);
        return EXIT_OK;
    }
    if (!stdout_taken)
        print_table(rp, stdout);
    if (rp->co->json) {
        json_t *root = report_json(rp);
        cli_add_provenance(root, rp->co->inputs, 3);
        int rc = json_write_atomic(root, rp->co->json, &e);
        json_decref(root);
        if (rc)
            return cli_input_error(&e);
    }
    if (rp->co->csv && atomic_write(rp->co->csv, write_csv, (void *)rp, &e))
        return cli_input_error(&e);
    return EXIT_OK;
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
    int rc = write_outputs(&rp);
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
