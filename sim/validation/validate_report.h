/* validate_report.h — replaying all rows of the validation set, the error
 * statistics (per GPU type, per source, fitting / held-out rows, overall),
 * their JSON form, and the fit of k_sat with its held-out checks
 * (sim/validation/validate_fit.c). */
#ifndef GT_VALIDATE_REPORT_H
#define GT_VALIDATE_REPORT_H

#include <stdio.h>

#include "sim/validation/validate.h"

typedef struct val_result {
    const val_row *row;
    int done;               /* replayed */
    double sim_s, rel_err;  /* (simulated - measured) / measured */
    char why[200];          /* reason when not replayed */
} val_result;

typedef struct val_stats {
    int n;
    double mean, median, max, bias;   /* of |rel_err|; bias = mean signed */
} val_stats;

#define VAL_MAX_GROUPS 64

typedef struct val_report {
    val_result *res;
    int n;
    int ngroups, nsources;
    char group_name[VAL_MAX_GROUPS][32];
    char source_name[VAL_MAX_GROUPS][32];
    val_stats by_gpu[VAL_MAX_GROUPS], by_source[VAL_MAX_GROUPS];
    val_stats fit, holdout, overall;
} val_report;

/* Replay rows (only those whose id starts with `only`, if given). */
int val_run(const val_row *rows, int n, const gpu_catalog *cat, const char *only,
            val_report *rep, gt_err *e);
void val_report_free(val_report *rep);
/* Statistics of the errors err[0..n-1] (input is not modified). */
void val_stats_of(const double *err, int n, val_stats *s);

#define VAL_GRID 16
typedef struct val_fit {
    int narch;
    char arch[16][16];
    double fitted[16];          /* k_sat fitted on the role=fit rows */
    int fit_rows[16];           /* how many rows each was fitted on (0 = prior kept) */
    val_stats holdout_fitted;   /* held-out rows with the fitted values */
    val_stats fit_fitted;       /* the fitting rows themselves with those values */
    val_stats loso;             /* leave-one-source-out, all rows */
    int nsrc;
    char src[VAL_MAX_GROUPS][32];
    val_stats loso_by_src[VAL_MAX_GROUPS];
} val_fit;

int val_fit_run(const val_report *rep, const gpu_catalog *cat, val_fit *f, gt_err *e);
void val_fit_print(const val_fit *f, FILE *out);
void val_fit_free(val_fit *f);
struct json_t *val_report_json(const val_report *rep, const val_fit *f);

#endif
