/* study_state.h — what study.c (the runs) and study_file.c (the CSV file:
 * reading, resuming, appending, ordering) share; private to study/. */
#ifndef GT_STUDY_STATE_H
#define GT_STUDY_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/objective.h"
#include "study/study.h"

/* The columns (study.c's STUDY_HEADER); key columns and the input part. */
enum { C_TOPO = 0, C_JOB = 6, C_PLANNER = 11, C_SEED = 12, C_STATUS = 14, NINPUT = 14,
       NCOLS = 28 };
#define ROW_CAP 4096
#define MAX_RUNS 100000000L

enum { TAG_ROW = 1, TAG_DONE = 2, TAG_FAIL = 3 };

extern const char STUDY_HEADER[];
/* The status column, indexed by planner_run_status. */
extern const char *const STUDY_STATUS[];

typedef struct topo_info {
    bool ready;
    unsigned long seed;
    char name[128];
    int sites, gpus;
    char mix[512];           /* "h100_sxm:8 t4:8", catalog order */
} topo_info;

typedef struct study {
    const study_spec *sp;
    const gt_par *par;
    topogen_data data;
    objective ob;
    const char *objtext;
    long total;
    unsigned char *done;     /* [total] */
    topo_info *info;         /* [ntopos] */
    int fd;                  /* rank 0: the CSV opened for appending */
    study_summary *sum;
    double t0;
    char current[192];
    gt_err fail;             /* rank 0: first failure reported by a rank */
    bool failed;
} study;

typedef struct run_key {
    int topo, job, planner, seed;   /* seed: 0-based index */
} run_key;

/* Index of a run in the study's order; the progress callback. */
long study_run_index(const study *s, run_key k);
void study_report_progress(study *s, bool finished);
/* Generate topology i's summary columns into s->info[i] (once). 0 or -1. */
int study_topo_info(study *s, int i, gt_err *e);
/* The input columns of a row (topology .. objective), each after a comma. */
struct sbuf;
void study_row_inputs(const study *s, run_key k, struct sbuf *b);

/* A bounded text buffer for one CSV row. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A text field (RFC 4180 by sim/base/csv.c; line breaks become spaces). */
void sb_field(sbuf *b, const char *s);
/* A number field (empty unless ok and finite). */
void sb_num(sbuf *b, bool ok, double v);

/* study_file.c (rank 0): open (check or create the header, keep the rows
 * already there, drop a partial last line), append one row, and rewrite the
 * file in run order at the end. 0 or -1 (e). */
int study_file_open(study *s, gt_err *e);
int study_file_record(study *s, const char *row, size_t len, gt_err *e);
int study_file_order(study *s, gt_err *e);

#endif
