/* validate_report.c — replay all rows and summarise the errors (see
 * validate_report.h). Rows run in parallel; each result lands in its own
 * slot, so the report is the same at any thread count. */
#include "sim/validation/validate_report.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void val_stats_of(const double *err, int n, val_stats *s)
{
    memset(s, 0, sizeof *s);
    if (n <= 0)
        return;
    double *a = malloc(sizeof *a * (size_t)n);
    if (!a)
        return;
    for (int i = 0; i < n; i++) {
        a[i] = fabs(err[i]);
        s->mean += a[i] / n;
        s->bias += err[i] / n;
        s->max = fmax(s->max, a[i]);
    }
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    s->median = n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
    s->n = n;
    free(a);
}

/* Index of name in a group table, added when new (-1 when full). */
static int group_of(char (*names)[32], int *n, const char *name, size_t cap)
{
    for (int i = 0; i < *n; i++)
        if (!strncmp(names[i], name, cap - 1))
            return i;
    if (*n >= VAL_MAX_GROUPS)
        return -1;
    snprintf(names[*n], cap, "%s", name);
    return (*n)++;
}

/* Statistics of the replayed rows for which keep(row, arg) holds. */
static void stats_where(const val_report *rep, int (*keep)(const val_row *, const void *),
                        const void *arg, val_stats *s)
{
    double *err = malloc(sizeof *err * (size_t)(rep->n > 0 ? rep->n : 1));
    int k = 0;
    if (!err) {
        memset(s, 0, sizeof *s);
        return;
    }
    for (int i = 0; i < rep->n; i++)
        if (rep->res[i].done && keep(rep->res[i].row, arg))
            err[k++] = rep->res[i].rel_err;
    val_stats_of(err, k, s);
    free(err);
}

static int keep_gpu(const val_row *r, const void *a) { return !strcmp(r->gpu, a); }
static int keep_src(const val_row *r, const void *a) { return !strcmp(r->source_key, a); }
static int keep_role(const val_row *r, const void *a) { return !strcmp(r->role, a); }
static int keep_all(const val_row *r, const void *a) { (void)r, (void)a; return 1; }

static void summarise(val_report *rep)
{
    for (int i = 0; i < rep->n; i++) {
        if (!rep->res[i].done)
            continue;
        group_of(rep->group_name, &rep->ngroups, rep->res[i].row->gpu, 32);
        group_of(rep->source_name, &rep->nsources, rep->res[i].row->source_key, 32);
    }
    for (int g = 0; g < rep->ngroups; g++)
        stats_where(rep, keep_gpu, rep->group_name[g], &rep->by_gpu[g]);
    for (int s = 0; s < rep->nsources; s++)
        stats_where(rep, keep_src, rep->source_name[s], &rep->by_source[s]);
    stats_where(rep, keep_role, "fit", &rep->fit);
    stats_where(rep, keep_role, "holdout", &rep->holdout);
    stats_where(rep, keep_all, NULL, &rep->overall);
}

int val_run(const val_row *rows, int n, const gpu_catalog *cat, const char *only,
            val_report *rep, gt_err *e)
{
    memset(rep, 0, sizeof *rep);
    rep->res = calloc((size_t)(n > 0 ? n : 1), sizeof *rep->res);
    if (!rep->res)
        return gt_fail(e, "out of memory");
    rep->n = n;
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < n; i++) {
        val_result *x = &rep->res[i];
        x->row = &rows[i];
        if (rows[i].skip[0]) {
            snprintf(x->why, sizeof x->why, "%s", rows[i].skip);
            continue;
        }
        if (only && strncmp(rows[i].id, only, strlen(only))) {
            snprintf(x->why, sizeof x->why, "not selected (--only %s)", only);
            continue;
        }
        gt_err re;
        if (val_simulate(&rows[i], cat, -1, &x->sim_s, &re)) {
            snprintf(x->why, sizeof x->why, "not simulated: %s", re.msg);
            continue;
        }
        x->done = 1;
        x->rel_err = (x->sim_s - rows[i].measured_s) / rows[i].measured_s;
    }
    summarise(rep);
    return 0;
}

void val_report_free(val_report *rep)
{
    free(rep->res);
    memset(rep, 0, sizeof *rep);
}

static json_t *stats_json(const val_stats *s)
{
    return json_pack("{s:i, s:f, s:f, s:f, s:f}", "rows", s->n, "mean_rel_error", s->mean,
                     "median_rel_error", s->median, "max_rel_error", s->max,
                     "mean_signed_rel_error", s->bias);
}

static json_t *rows_json(const val_report *rep)
{
    json_t *rows = json_array(), *skipped = json_array(), *both = json_object();
    for (int i = 0; i < rep->n; i++) {
        const val_result *x = &rep->res[i];
        char opt[96] = "";
        if (x->done)
            val_options(x->row, opt, sizeof opt);
        if (x->done)
            json_array_append_new(
                rows, json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:s}", "id", x->row->id,
                                "source", x->row->source_key, "gpu", x->row->gpu, "role",
                                x->row->role, "measured_s", x->row->measured_s, "simulated_s",
                                x->sim_s, "rel_error", x->rel_err, "options", opt));
        else
            json_array_append_new(skipped,
                                  json_pack("{s:s, s:s}", "id", x->row->id, "reason", x->why));
    }
    json_object_set_new(both, "rows", rows);
    json_object_set_new(both, "skipped", skipped);
    return both;
}

json_t *val_report_json(const val_report *rep, const val_fit *f)
{
    json_t *doc = rows_json(rep), *gpu = json_object(), *src = json_object();
    if (!doc)
        return NULL;
    for (int g = 0; g < rep->ngroups; g++)
        json_object_set_new(gpu, rep->group_name[g], stats_json(&rep->by_gpu[g]));
    for (int s = 0; s < rep->nsources; s++)
        json_object_set_new(src, rep->source_name[s], stats_json(&rep->by_source[s]));
    json_object_set_new(doc, "by_gpu", gpu);
    json_object_set_new(doc, "by_source", src);
    json_object_set_new(doc, "fit_rows", stats_json(&rep->fit));
    json_object_set_new(doc, "holdout_rows", stats_json(&rep->holdout));
    json_object_set_new(doc, "overall", stats_json(&rep->overall));
    json_object_set_new(doc, "mean_rel_error", json_real(rep->overall.mean));
    json_object_set_new(doc, "holdout_mean_rel_error", json_real(rep->holdout.mean));
    if (f) {
        json_t *fj = json_object(), *ks = json_object(), *lo = json_object();
        for (int a = 0; a < f->narch; a++)
            json_object_set_new(ks, f->arch[a], json_pack("{s:f, s:i}", "k_sat", f->fitted[a],
                                                          "fit_rows", f->fit_rows[a]));
        for (int s = 0; s < f->nsrc; s++)
            json_object_set_new(lo, f->src[s], stats_json(&f->loso_by_src[s]));
        json_object_set_new(fj, "k_sat", ks);
        json_object_set_new(fj, "holdout_with_fitted", stats_json(&f->holdout_fitted));
        json_object_set_new(fj, "fit_rows_with_fitted", stats_json(&f->fit_fitted));
        json_object_set_new(fj, "leave_one_source_out", stats_json(&f->loso));
        json_object_set_new(fj, "leave_one_source_out_by_source", lo);
        json_object_set_new(doc, "fit", fj);
    }
    return doc;
}
