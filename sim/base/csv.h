/* csv.h — a small reader for the project's comma-separated catalogs and traces.
 *
 * Fields split on ','; a field may be quoted as in RFC 4180 ("a,b", "say
 * ""hi""") but must end on its line (no line breaks inside). Lines starting with '#' and
 * blank lines are skipped. The reader keeps the header so that callers look up
 * columns by name and report errors as "file:line:col: column 'x': ...". */
#ifndef GT_CSV_H
#define GT_CSV_H

#include <stdio.h>
#include "sim/base/error.h"

#define CSV_MAX_FIELDS 64

typedef struct csv_reader {
    FILE *fp;
    const char *path;
    int line;                     /* 1-based number of the current line */
    char *buf;                    /* current line, split in place */
    size_t cap;
    size_t total;                 /* bytes read so far (the file-size cap) */
    int binary;                   /* a NUL byte was seen */
    int nhead;
    char *head[CSV_MAX_FIELDS];   /* column names (owned copies) */
    int nfield;
    char *field[CSV_MAX_FIELDS];  /* fields of the current row */
    int col[CSV_MAX_FIELDS];      /* 1-based character column where each field starts */
} csv_reader;

/* Open and read the header row. */
int csv_open(csv_reader *r, const char *path, gt_err *e);
/* Read the next data row: 1 = a row, 0 = end of file, -1 = error. */
int csv_next(csv_reader *r, gt_err *e);
void csv_close(csv_reader *r);
/* Write one field, quoted (RFC 4180) when it holds a comma, a quote or a line
 * break; NULL = empty. */
void csv_put_field(FILE *fp, const char *s);
/* The same field into dst (snprintf-like: returns the length it needs, writes
 * at most cap - 1 characters and a NUL). */
size_t csv_format_field(char *dst, size_t cap, const char *s);
/* Split one line (no newline) in place into at most `max` fields, RFC 4180
 * quotes undone; col[i] (when col is not NULL) gets the 1-based character
 * column where field i starts. Returns the count, or -1 with an error naming
 * path:line:column. */
int csv_split(char *line, const char *path, int lineno, char **out, int max, int *col,
              gt_err *e);

/* Column index by name, or -1 (with an error naming the file) when required. */
int csv_col(const csv_reader *r, const char *name, int required, gt_err *e);
/* "FILE:LINE:COL: column 'name': " then fmt, into e; returns -1. The error of
 * every reader about one field of the current row. */
int csv_fail_at(const csv_reader *r, int col, gt_err *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* 1-based character column where field `col` of the current row starts
 * (for errors that say file:line:column). */
int csv_col_at(const csv_reader *r, int col);
/* Field of the current row by column index ("" if the row is short). */
const char *csv_get(const csv_reader *r, int col);
/* Parse the field as a finite double / integer within [lo, hi]; errors name
 * file, line and column. An empty field gives `dflt` when allow_empty. */
int csv_double(const csv_reader *r, int col, double lo, double hi, int allow_empty,
               double dflt, double *out, gt_err *e);
int csv_long(const csv_reader *r, int col, long lo, long hi, long *out, gt_err *e);

#endif
