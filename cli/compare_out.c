/* compare_out.c — the output of `geotrain compare` (compare_out.h): the
 * table with its notes, the --json report and the --csv rows (docs/cli.md,
 * Outputs). An interrupted comparison prints its rows and writes no file. */
#include "compare_out.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/version.h"
#include "sim/base/atomic_file.h"
#include "sim/base/csv.h"
#include "sim/base/jsonio.h"


static void shape_text(const planner_run *r, char *buf, size_t cap)
{
    if (r->smin == r->smax)
        snprintf(buf, cap, "%d x %d", r->smin, r->pipes);
    else
        snprintf(buf, cap, "%d-%d x %d", r->smin, r->smax, r->pipes);
}

static void print_row(const report *rp, const row *rw, FILE *out)
{
    const char *err = compare_row_error(rw);
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
    if (compare_obj_ok(rw))
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
        const char *err = rw->nok && rw->nok < rw->nruns ? compare_row_error(rw) : NULL;
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
    const char *err = compare_row_error(rw);
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
    json_object_set_new(o, "objective_value", num_or_null(compare_obj_ok(rw), rw->obj));
    json_object_set_new(o, "objective_feasible", json_boolean(compare_obj_ok(rw)));
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
        csv_num(fp, compare_obj_ok(rw), rw->obj);
        csv_num(fp, ok, rw->rel);
        csv_num(fp, ok, rw->dtfm_cost);
        csv_text(fp, compare_row_error(rw));
        if (rp->co->freq) {
            csv_num(fp, ok, rw->time_fmax);
            csv_num(fp, ok, rw->energy_fmax);
        }
        fputc('\n', fp);
    }
    return ferror(fp) ? -1 : 0;
}

int compare_write_outputs(const report *rp)
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
