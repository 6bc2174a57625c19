/* cmd_validate.c — `geotrain validate`: replay the validation set and report
 * measured vs simulated iteration times (docs/validation.md). The figures are
 * a report, not a test: the exit code is non-zero only on bad input. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/atomic_file.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "sim/base/datadir.h"
#include "sim/validation/validate.h"
#include "sim/validation/validate_memory.h"
#include "sim/validation/validate_report.h"

static const char HELP[] =
    "usage: geotrain validate [--runs FILE | --external] [--memory FILE] [--json FILE|-]\n"
    "                         [--csv FILE] [--fit] [--only PREFIX] [--quiet]\n\n"
    "Replay every representable row of the validation set (validation/runs.csv,\n"
    "derived from published measured training runs; docs/validation.md) and print\n"
    "measured and simulated iteration time and the relative error per row, the rows\n"
    "skipped with the reason, and mean / median / max |error| per GPU type, for the\n"
    "fitting and the held-out rows, and overall; then measured vs simulated peak\n"
    "memory per GPU (validation/memory_runs.csv) with the same statistics.\n\n"
    "  --runs FILE   validation rows (default: the shipped validation/runs.csv)\n"
    "  --external    replay validation/external_runs.csv instead: published runs outside\n"
    "                the validation set, never used for fitting (role=ext)\n"
    "  --memory FILE measured peak-memory rows (default: validation/memory_runs.csv)\n"
    "  --json FILE   the same as JSON (\"-\" = stdout, then without the text report);\n"
    "                key mean_rel_error = overall mean |error|\n"
    "  --csv FILE    one line per row: id,source,gpu,role,measured_s,simulated_s,rel_error,\n"
    "                options (the row's data-parallel options: dp_shard, grad_sync[:bucket],\n"
    "                acc:flushes per step, grad:gradient dtype, tp-overlap, limit:GPU power\n"
    "                limit of the run)\n"
    "  --fit         also fit k_sat per architecture on the role=fit rows (grid), report\n"
    "                the held-out error with the fitted values and a leave-one-source-out\n"
    "                cross-validation of the same procedure\n"
    "  --only PREFIX replay only rows whose id starts with PREFIX\n"
    "  --quiet       no per-row table on stdout\n";

typedef struct opts {
    const char *runs, *json, *csv, *only, *memory;
    int fit, quiet, external;
} opts;

static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = !strcmp(a, "--runs") ? &o->runs
                           : !strcmp(a, "--json") ? &o->json
                           : !strcmp(a, "--csv")  ? &o->csv
                           : !strcmp(a, "--only") ? &o->only
                           : !strcmp(a, "--memory") ? &o->memory
                                                  : NULL;
        if (dst) {
            if (cli_value("validate", argc, argv, &i, dst))
                return EXIT_USAGE;
        } else if (!strcmp(a, "--fit"))
            o->fit = 1;
        else if (!strcmp(a, "--quiet"))
            o->quiet = 1;
        else if (!strcmp(a, "--external"))
            o->external = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(HELP, stdout);
            return -1;
        } else
            return cli_usage_error("validate", "unknown argument '%s'", a);
    }
    if (o->external && o->runs)
        return cli_usage_error("validate", "--external and --runs both name the rows");
    return 0;
}

/* The memory rows: --memory FILE, else the shipped file when it is found
 * (rows of --runs FILE come without one: then no memory section). */
static int load_memory(const opts *o, int runs_given, char *path, size_t cap, mem_row **rows,
                       int *n, gt_err *e)
{
    *rows = NULL;
    *n = 0;
    const char *p = o->memory;
    if (!p) {
        if (runs_given || datadir_find_sub("validation", "memory_runs.csv", path, cap))
            return 0;
        p = path;
    }
    return mem_load(p, rows, n, e);
}

static void print_table(const val_report *rep)
{
    printf("%-22s %-15s %-7s %12s %12s %9s  %s\n", "row", "gpu", "role", "measured_s",
           "simulated_s", "rel_err", "options");
    for (int i = 0; i < rep->n; i++) {
        const val_result *x = &rep->res[i];
        if (!x->done)
            continue;
        char opt[96];
        val_options(x->row, opt, sizeof opt);
        printf("%-22s %-15s %-7s %12.4f %12.4f %+8.1f%%  %s\n", x->row->id, x->row->gpu,
               x->row->role, x->row->measured_s, x->sim_s, 100 * x->rel_err, opt);
    }
}

static void print_skipped(const val_report *rep)
{
    int k = 0;
    for (int i = 0; i < rep->n; i++)
        k += !rep->res[i].done;
    printf("\nskipped %d of %d rows:\n", k, rep->n);
    for (int i = 0; i < rep->n; i++)
        if (!rep->res[i].done)
            printf("  %-22s %s\n", rep->res[i].row->id, rep->res[i].why);
}

static void print_stats(const char *label, const val_stats *s)
{
    if (s->n)
        printf("  %-26s %5d %8.1f%% %8.1f%% %8.1f%% %+8.1f%%\n", label, s->n, 100 * s->mean,
               100 * s->median, 100 * s->max, 100 * s->bias);
}

static void print_summary(const val_report *rep)
{
    printf("\n|relative error| of the iteration time     rows     mean   median      max  "
           "mean signed\n");
    for (int g = 0; g < rep->ngroups; g++)
        print_stats(rep->group_name[g], &rep->by_gpu[g]);
    print_stats("rows used for fitting", &rep->fit);
    print_stats("held-out rows", &rep->holdout);
    print_stats("overall", &rep->overall);
    for (int s = 0; s < rep->nsources; s++) {
        char lab[64];
        snprintf(lab, sizeof lab, "source %s", rep->source_name[s]);
        print_stats(lab, &rep->by_source[s]);
    }
}

static int write_csv(FILE *fp, void *ctx)
{
    const val_report *rep = ctx;
    fprintf(fp, "id,source,gpu,role,measured_s,simulated_s,rel_error,options\n");
    for (int i = 0; i < rep->n; i++) {
        const val_result *x = &rep->res[i];
        char opt[96];
        if (!x->done)
            continue;
        val_options(x->row, opt, sizeof opt);
        fprintf(fp, "%s,%s,%s,%s,%.6g,%.6g,%.6f,%s\n", x->row->id, x->row->source_key,
                x->row->gpu, x->row->role, x->row->measured_s, x->sim_s, x->rel_err, opt);
    }
    return ferror(fp) ? -1 : 0;
}

static int write_json(FILE *fp, void *ctx)
{
    json_t *doc = ctx;
    return json_dumpf(doc, fp, JSON_INDENT(1) | JSON_SORT_KEYS) || fputc('\n', fp) == EOF;
}

int cmd_validate(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    char path[4096], mpath[4096];
    const char *file = o.external ? "external_runs.csv" : "runs.csv";
    int runs_given = o.runs != NULL;
    if (!o.runs) {
        if (datadir_find_sub("validation", file, path, sizeof path)) {
            fprintf(stderr, "error: validation/%s not found (give --runs FILE)\n", file);
            return EXIT_INPUT;
        }
        o.runs = path;
    }
    gt_err e;
    gpu_catalog cat;
    val_row *rows;
    int n;
    if (gpu_catalog_load_default(&cat, &e))
        return cli_input_error(&e);
    if (val_load(o.runs, &rows, &n, &e)) {
        gpu_catalog_free(&cat);
        return cli_input_error(&e);
    }
    mem_row *mrows = NULL;
    int mn = 0;
    mem_report mrep = {0};
    val_report rep;
    rc = EXIT_OK;
    if (!o.external && (load_memory(&o, runs_given, mpath, sizeof mpath, &mrows, &mn, &e) ||
                        (mrows && mem_run(mrows, mn, &mrep, &e)))) {
        rc = cli_input_error(&e);
        goto out;
    }
    if (val_run(rows, n, &cat, o.only, &rep, &e)) {
        rc = cli_input_error(&e);
        goto out;
    }
    val_fit fit = {0};
    if (o.fit && val_fit_run(&rep, &cat, &fit, &e)) {
        rc = cli_input_error(&e);
        val_report_free(&rep);
        goto out;
    }
    int text = !(o.json && !strcmp(o.json, "-")); /* JSON on stdout: nothing else there */
    if (text && !o.quiet)
        print_table(&rep);
    if (text) {
        print_skipped(&rep);
        print_summary(&rep);
        if (o.fit)
            val_fit_print(&fit, stdout);
        if (mrows)
            mem_report_print(&mrep, !o.quiet, stdout);
    }
    if (o.csv && atomic_write(o.csv, write_csv, &rep, &e))
        rc = cli_input_error(&e);
    if (o.json && rc == EXIT_OK) {
        json_t *doc = val_report_json(&rep, o.fit ? &fit : NULL);
        if (doc && mrows)
            json_object_set_new(doc, "memory", mem_report_json(&mrep));
        if (!doc || atomic_write(o.json, write_json, doc, &e))
            rc = doc ? cli_input_error(&e) : (fprintf(stderr, "error: out of memory\n"), 1);
        json_decref(doc);
    }
    val_fit_free(&fit);
    val_report_free(&rep);
out:
    mem_report_free(&mrep);
    free(mrows);
    free(rows);
    gpu_catalog_free(&cat);
    return rc;
}
