/* csv.c — line-oriented CSV reader (see csv.h). */
#include "sim/base/csv.h"
#include "sim/base/grammar.h"
#include "sim/base/infile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 = a line, 0 = end of file, -1 = error (a cap hit: infile.h). */
static int read_line(csv_reader *r, gt_err *e)
{
    int nul = 0;
    int got = infile_getline(r->fp, r->path, r->line + 1, &r->buf, &r->cap, INFILE_MAX_LINE,
                             &r->total, &nul, e);
    if (got == 1) {
        r->line++;
        r->binary |= nul;
    }
    return got;
}

/* A field that starts with '"' (RFC 4180): up to the closing quote, "" for
 * one quote, unquoted in place; *p moves past it. -1 when it is not closed
 * on its line or text follows the closing quote. */
static int unquote(const char *line0, const char *path, int line, char **p, gt_err *e)
{
    char *start = *p, *w = *p, *s = *p + 1;
    for (;; s++) {
        if (*s == '\0')
            return gt_fail(e, "%s:%d:%d: quoted field not closed on its line", path, line,
                           (int)(start - line0) + 1);
        if (*s == '"' && s[1] == '"')
            *w++ = *s++;
        else if (*s == '"')
            break;
        else
            *w++ = *s;
    }
    s++;
    if (*s != ',' && *s != '\0')
        return gt_fail(e, "%s:%d:%d: text after the closing quote of a field", path, line,
                       (int)(s - line0) + 1);
    *w = '\0';
    *p = s;
    return 0;
}

int csv_split(char *buf, const char *path, int line, char **out, int max, int *col,
              gt_err *e)
{
    int n = 0;
    char *p = buf;
    for (;;) {
        if (n == max)
            return gt_fail(e, "%s:%d: more than %d columns", path, line, max);
        if (col)
            col[n] = (int)(p - buf) + 1;
        out[n++] = p;
        char *comma;
        if (*p == '"') {
            char *q = p;
            if (unquote(buf, path, line, &q, e))
                return -1;
            comma = *q == ',' ? q : NULL;
        } else {
            comma = strchr(p, ',');
        }
        if (!comma)
            break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}

static int split(csv_reader *r, char **out, int *col, gt_err *e)
{
    return csv_split(r->buf, r->path, r->line, out, CSV_MAX_FIELDS, col, e);
}

/* The one RFC 4180 writer: `put` receives the field's text in pieces. */
static void quote_field(const char *s, void (*put)(void *, const char *, size_t), void *ctx)
{
    if (!s)
        s = "";
    size_t plain = strcspn(s, ",\"\r\n");
    if (!s[plain]) {
        put(ctx, s, plain);
        return;
    }
    put(ctx, "\"", 1);
    for (const char *q; (q = strchr(s, '"')); s = q + 1)
        put(ctx, s, (size_t)(q - s) + 1), put(ctx, "\"", 1);
    put(ctx, s, strlen(s));
    put(ctx, "\"", 1);
}

static void put_file(void *fp, const char *s, size_t n)
{
    fwrite(s, 1, n, fp);
}

void csv_put_field(FILE *fp, const char *s)
{
    quote_field(s, put_file, fp);
}

typedef struct text_sink {
    char *dst;
    size_t cap, n;
} text_sink;

static void put_text(void *ctx, const char *s, size_t n)
{
    text_sink *t = ctx;
    for (size_t i = 0; i < n; i++, t->n++)
        if (t->n + 1 < t->cap)
            t->dst[t->n] = s[i];
}

size_t csv_format_field(char *dst, size_t cap, const char *s)
{
    text_sink t = {dst, cap, 0};
    quote_field(s, put_text, &t);
    if (cap)
        dst[t.n < cap ? t.n : cap - 1] = '\0';
    return t.n;
}

static int is_skippable(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '\0' || *s == '#';
}

int csv_open(csv_reader *r, const char *path, gt_err *e)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->fp = infile_open(path, INFILE_MAX_BYTES, e);
    if (!r->fp)
        return -1;
    int got;
    while ((got = read_line(r, e)) == 1 && is_skippable(r->buf))
        ;
    if (got != 1) {
        csv_close(r);
        return got < 0 ? -1 : gt_fail(e, "%s:%d: empty file, expected a header row", path,
                                      r->line);
    }
    char *tmp[CSV_MAX_FIELDS];
    int n = split(r, tmp, NULL, e);
    if (n < 0) {
        csv_close(r);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        r->head[i] = strdup(tmp[i]);
        if (!r->head[i]) {
            r->nhead = i;
            csv_close(r);
            return gt_fail(e, "%s: out of memory", path);
        }
    }
    r->nhead = n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(r->head[i], r->head[j]) == 0) {
                gt_fail(e, "%s:%d: column '%s' appears twice in the header (columns %d and %d)",
                        path, r->line, r->head[i], j + 1, i + 1);
                csv_close(r);
                return -1;
            }
    return 0;
}

int csv_next(csv_reader *r, gt_err *e)
{
    int got;
    while ((got = read_line(r, e)) == 1 && is_skippable(r->buf))
        ;
    if (got <= 0)
        return got;
    if (r->binary)
        return gt_fail(e, "%s:%d: binary data (NUL byte), expected text", r->path,
                       r->line);
    int n = split(r, r->field, r->col, e);
    if (n < 0)
        return -1;
    r->nfield = n;
    if (n != r->nhead)
        return gt_fail(e, "%s:%d: %d fields, expected %d (as in the header)", r->path,
                       r->line, n, r->nhead);
    return 1;
}

void csv_close(csv_reader *r)
{
    if (r->fp)
        fclose(r->fp);
    for (int i = 0; i < r->nhead; i++)
        free(r->head[i]);
    free(r->buf);
    memset(r, 0, sizeof *r);
}

int csv_col(const csv_reader *r, const char *name, int required, gt_err *e)
{
    for (int i = 0; i < r->nhead; i++)
        if (strcmp(r->head[i], name) == 0)
            return i;
    if (required)
        return gt_fail(e, "%s:1: missing column '%s'", r->path, name);
    return -1;
}

int csv_fail_at(const csv_reader *r, int col, gt_err *e, const char *fmt, ...)
{
    char why[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    const char *name = col >= 0 && col < r->nhead ? r->head[col] : "?";
    return gt_fail(e, "%s:%d:%d: column '%s': %s", r->path, r->line, csv_col_at(r, col), name,
                   why);
}

int csv_col_at(const csv_reader *r, int col)
{
    /* a short row's missing field "starts" one past the end of the line */
    if (col < 0 || col >= r->nfield)
        return r->buf ? (int)strlen(r->buf) + 1 : 1;
    return r->col[col];
}

const char *csv_get(const csv_reader *r, int col)
{
    if (col < 0 || col >= r->nfield)
        return "";
    return r->field[col];
}

int csv_double(const csv_reader *r, int col, double lo, double hi, int allow_empty,
               double dflt, double *out, gt_err *e)
{
    const char *s = csv_get(r, col);
    if (*s == '\0') {
        if (allow_empty) {
            *out = dflt;
            return 0;
        }
        return csv_fail_at(r, col, e, "empty, expected a number");
    }
    double v;
    if (gram_number(s, &v))
        return csv_fail_at(r, col, e, "'%s' is not a finite number (decimal, e.g. 12.5 or "
                                      "1e-3)", s);
    if (v < lo || v > hi)
        return csv_fail_at(r, col, e, "%g out of range [%g, %g]", v, lo, hi);
    *out = v;
    return 0;
}

int csv_long(const csv_reader *r, int col, long lo, long hi, long *out, gt_err *e)
{
    const char *s = csv_get(r, col);
    long v;
    if (gram_integer(s, &v))
        return csv_fail_at(r, col, e, "'%s' is not an integer (decimal digits, no sign, "
                                      "space or leading zero)", s);
    if (v < lo || v > hi)
        return csv_fail_at(r, col, e, "%ld out of range [%ld, %ld]", v, lo, hi);
    *out = v;
    return 0;
}
