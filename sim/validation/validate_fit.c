/* validate_fit.c — the one fitted parameter of the compute model, k_sat per
 * architecture, chosen on a grid (docs/validation.md):
 *   1. fitted on the rows with role=fit only; the error on the role=holdout
 *      rows with those values is the held-out figure;
 *   2. leave-one-source-out: for each publication, fit on all other
 *      publications' rows and predict its rows; the pooled error says how
 *      well the procedure generalises to an unseen source.
 * An architecture without fitting rows keeps the catalog's value. Each
 * (row, grid value) pair is simulated once; the folds reuse the table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/validation/validate_report.h"

/* k_sat candidates: steps of 128-512 up to 4096 (and 6144 to see a rising
 * edge); the catalog's prior values are on the grid. */
static const double GRID[VAL_GRID] = {0,    128,  256,  384,  512,  768,  1024, 1280,
                                      1536, 1792, 2048, 2560, 3072, 3584, 4096, 6144};

typedef struct table {
    const val_report *rep;
    int *arch;        /* per result: architecture index, -1 if not replayed */
    double *err;      /* [result][grid] */
    double *prior;    /* per architecture: the catalog's k_sat */
} table;

/* The grid value of architecture a minimising mean |error| over rows with
 * use(i) true; -1 when no such row. */
static int best_grid(const table *t, int a, const char *src_out, const char *role_only,
                     int *rows_used)
{
    double best = INFINITY;
    int arg = -1;
    for (int g = 0; g < VAL_GRID; g++) {
        double sum = 0;
        int k = 0;
        for (int i = 0; i < t->rep->n; i++) {
            const val_row *r = t->rep->res[i].row;
            if (t->arch[i] != a || (src_out && !strcmp(r->source_key, src_out)) ||
                (role_only && strcmp(r->role, role_only)))
                continue;
            sum += fabs(t->err[i * VAL_GRID + g]);
            k++;
        }
        if (k && sum / k < best) {
            best = sum / k;
            arg = g;
        }
        *rows_used = k;
    }
    return arg;
}

/* Error of result i when its architecture uses grid index g (g < 0: the
 * catalog's value, i.e. the plain run). */
static double err_at(const table *t, int i, int g)
{
    return g < 0 ? t->rep->res[i].rel_err : t->err[i * VAL_GRID + g];
}

static int fill(table *t, const gpu_catalog *cat, val_fit *f, gt_err *e)
{
    const val_report *rep = t->rep;
    for (int i = 0; i < rep->n; i++) {
        t->arch[i] = -1;
        if (!rep->res[i].done)
            continue;
        const char *arch = val_arch(rep->res[i].row, cat);
        int a = 0;
        while (a < f->narch && strcmp(f->arch[a], arch))
            a++;
        if (a == f->narch) {
            if (f->narch == 16)
                return gt_fail(e, "more than 16 architectures");
            snprintf(f->arch[f->narch++], sizeof f->arch[0], "%s", arch);
        }
        t->arch[i] = a;
    }
    int bad = 0;
#pragma omp parallel for schedule(dynamic) collapse(2)
    for (int i = 0; i < rep->n; i++)
        for (int g = 0; g < VAL_GRID; g++) {
            if (t->arch[i] < 0)
                continue;
            double s;
            gt_err re;
            if (val_simulate(rep->res[i].row, cat, GRID[g], &s, &re)) {
#pragma omp atomic write
                bad = 1;
                continue;
            }
            t->err[i * VAL_GRID + g] = (s - rep->res[i].row->measured_s) /
                                       rep->res[i].row->measured_s;
        }
    return bad ? gt_fail(e, "a row failed to simulate on the k_sat grid") : 0;
}

/* Errors of the rows of one role with the fitted grid indices gi. */
static void role_stats(const table *t, const int *gi, const char *role, val_stats *out)
{
    double *err = malloc(sizeof *err * (size_t)(t->rep->n + 1));
    int k = 0;
    for (int i = 0; err && i < t->rep->n; i++)
        if (t->arch[i] >= 0 && !strcmp(t->rep->res[i].row->role, role))
            err[k++] = err_at(t, i, gi[t->arch[i]]);
    val_stats_of(err, k, out);
    free(err);
}

static void fitted_holdout(const table *t, val_fit *f)
{
    int gi[16];
    for (int a = 0; a < f->narch; a++) {
        gi[a] = best_grid(t, a, NULL, "fit", &f->fit_rows[a]);
        if (gi[a] < 0)
            f->fit_rows[a] = 0;
        f->fitted[a] = gi[a] < 0 ? t->prior[a] : GRID[gi[a]];
    }
    role_stats(t, gi, "holdout", &f->holdout_fitted);
    role_stats(t, gi, "fit", &f->fit_fitted);
}

static void loso(const table *t, val_fit *f)
{
    const val_report *rep = t->rep;
    double *all = malloc(sizeof *all * (size_t)rep->n), *one = malloc(sizeof *one * (size_t)rep->n);
    int na = 0;
    f->nsrc = rep->nsources;
    for (int s = 0; all && one && s < rep->nsources; s++) {
        const char *out = rep->source_name[s];
        snprintf(f->src[s], sizeof f->src[s], "%s", out);
        int gi[16], used, k = 0;
        for (int a = 0; a < f->narch; a++)
            gi[a] = best_grid(t, a, out, NULL, &used);
        for (int i = 0; i < rep->n; i++)
            if (t->arch[i] >= 0 && !strcmp(rep->res[i].row->source_key, out)) {
                one[k++] = err_at(t, i, gi[t->arch[i]]);
                all[na++] = one[k - 1];
            }
        val_stats_of(one, k, &f->loso_by_src[s]);
    }
    val_stats_of(all, na, &f->loso);
    free(all);
    free(one);
}

int val_fit_run(const val_report *rep, const gpu_catalog *cat, val_fit *f, gt_err *e)
{
    memset(f, 0, sizeof *f);
    table t = {rep, malloc(sizeof(int) * (size_t)(rep->n + 1)),
               calloc((size_t)(rep->n + 1) * VAL_GRID, sizeof(double)),
               calloc(16, sizeof(double))};
    int rc = -1;
    if (!t.arch || !t.err || !t.prior) {
        gt_fail(e, "out of memory");
        goto out;
    }
    if (fill(&t, cat, f, e))
        goto out;
    for (int a = 0; a < f->narch; a++)
        for (int k = 0; k < cat->n; k++)
            if (!strcmp(cat->types[k].arch, f->arch[a]))
                t.prior[a] = cat->types[k].k_sat;
    fitted_holdout(&t, f);
    loso(&t, f);
    rc = 0;
out:
    free(t.arch);
    free(t.err);
    free(t.prior);
    return rc;
}

void val_fit_print(const val_fit *f, FILE *out)
{
    fprintf(out, "\nfit of k_sat per architecture (grid 0..6144) on the role=fit rows:\n");
    for (int a = 0; a < f->narch; a++)
        fprintf(out, "  %-10s k_sat %6.0f  (%s)\n", f->arch[a], f->fitted[a],
                f->fit_rows[a] ? "fitted" : "no fitting rows: catalog value kept");
    const val_stats *h = &f->holdout_fitted, *l = &f->loso, *fr = &f->fit_fitted;
    fprintf(out, "fitting rows with the fitted values: %d rows, mean %.1f%%, median %.1f%%, "
                 "max %.1f%%\n", fr->n, 100 * fr->mean, 100 * fr->median, 100 * fr->max);
    fprintf(out, "held-out rows with the fitted values: %d rows, mean %.1f%%, median %.1f%%, "
                 "max %.1f%%\n", h->n, 100 * h->mean, 100 * h->median, 100 * h->max);
    fprintf(out, "leave-one-source-out (fit on the other sources, all roles): %d rows, mean "
                 "%.1f%%, median %.1f%%, max %.1f%%\n", l->n, 100 * l->mean, 100 * l->median,
            100 * l->max);
    for (int s = 0; s < f->nsrc; s++)
        fprintf(out, "  held out %-10s %4d rows  mean %6.1f%%  max %6.1f%%\n", f->src[s],
                f->loso_by_src[s].n, 100 * f->loso_by_src[s].mean, 100 * f->loso_by_src[s].max);
}

void val_fit_free(val_fit *f)
{
    memset(f, 0, sizeof *f);
}
