/* study_file.c — the study's CSV (see study_state.h): CSV text helpers, the
 * key of a row, reading and checking the rows already in the file when a
 * study resumes, appending rows, and putting them in run order at the end. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "planner/planner_run.h"
#include "sim/base/atomic_file.h"
#include "sim/base/csv.h"
#include "sim/base/grammar.h"
#include "sim/base/infile.h"
#include "study/study_state.h"

/* --- CSV text ------------------------------------------------------------------ */

void sb_add(sbuf *b, const char *fmt, ...)
{
    if (b->n >= b->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n = k < 0 ? b->cap : b->n + (size_t)k;
}

/* A text field, RFC 4180-quoted by sim/base/csv.c's writer. Line breaks become
 * spaces first: the study file is read back one line per row. */
void sb_field(sbuf *b, const char *s)
{
    char flat[ROW_CAP];
    snprintf(flat, sizeof flat, "%s", s);
    for (char *c = flat; (c = strpbrk(c, "\r\n"));)
        *c = ' ';
    sb_add(b, ",");
    if (b->n < b->cap) {
        size_t need = csv_format_field(b->s + b->n, b->cap - b->n, flat);
        b->n = need < b->cap - b->n ? b->n + need : b->cap;
    }
}

void sb_num(sbuf *b, bool ok, double v)
{
    if (ok && isfinite(v))
        sb_add(b, ",%.9g", v);
    else
        sb_add(b, ",");
}

/* Parse a row's key; -1 (with why in e) when it is not one of this study's. */
static int parse_key(const study *s, char **f, int nf, run_key *k, gt_err *e)
{
    const study_spec *sp = s->sp;
    if (nf != NCOLS)
        return gt_fail(e, "%d fields, expected %d", nf, NCOLS);
    /* numbers as everywhere else (sim/base/grammar.h): '+1', ' 1', '0x1' are not keys */
    long t, jb;
    if (gram_integer(f[C_TOPO], &t) || t < 0 || t >= sp->ntopos)
        return gt_fail(e, "topology '%s' is not in 0..%d", f[C_TOPO], sp->ntopos - 1);
    if (gram_integer(f[C_JOB], &jb) || jb < 0 || jb >= sp->njobs)
        return gt_fail(e, "job '%s' is not in 0..%d", f[C_JOB], sp->njobs - 1);
    k->topo = (int)t;
    k->job = (int)jb;
    k->planner = -1;
    for (int p = 0; p < sp->nplanners; p++)
        if (!strcmp(sp->planners[p]->name, f[C_PLANNER]))
            k->planner = p;
    if (k->planner < 0)
        return gt_fail(e, "planner '%s' is not in --planners", f[C_PLANNER]);
    long long sd;
    if (gram_long(f[C_SEED], &sd) || sd < 0 || (uint64_t)sd < sp->first_seed ||
        (uint64_t)sd - sp->first_seed >= (uint64_t)sp->nseeds)
        return gt_fail(e, "seed '%s' is not one of this study's seeds", f[C_SEED]);
    k->seed = (int)(sd - sp->first_seed);
    return 0;
}

/* Key of a row line (no newline); the line is copied, not changed. */
static int line_key(const study *s, const char *line, run_key *k, bool *ok, gt_err *e)
{
    char buf[ROW_CAP], *f[NCOLS + 1];
    if (strlen(line) >= sizeof buf)
        return gt_fail(e, "line longer than %d characters", ROW_CAP);
    strcpy(buf, line);
    gt_err qe; /* the caller names file and line: keep only the reason */
    int nf = csv_split(buf, "row", 0, f, NCOLS + 1, NULL, &qe);
    if (nf < 0)
        return gt_fail(e, "broken CSV quoting");
    if (parse_key(s, f, nf, k, e))
        return -1;
    if (ok)
        *ok = !strcmp(f[C_STATUS], STUDY_STATUS[PLANNER_RUN_OK]);
    return 0;
}

/* --- the file (rank 0) -------------------------------------------------------------------- */

static int write_header(FILE *fp, void *ctx)
{
    (void)ctx;
    fprintf(fp, "%s\n", STUDY_HEADER);
    return ferror(fp) ? -1 : 0;
}

/* 1 when the file does not exist yet; caps and non-regular files: infile.h. */
static int read_all(const char *path, char **buf, size_t *len, gt_err *e)
{
    return infile_read_all(path, INFILE_MAX_BYTES, 1, buf, len, e);
}

/* One row of an existing file: part of this study, same inputs, new key. */
static int check_row(study *s, const char *line, int lineno, gt_err *e)
{
    const char *path = s->sp->out;
    run_key k;
    if (line_key(s, line, &k, NULL, e))
        return gt_prefix(e, "%s:%d: not a row of this study", path, lineno);
    if (study_topo_info(s, k.topo, e))
        return -1;
    char want[ROW_CAP];
    sbuf b = {want, 0, sizeof want};
    study_row_inputs(s, k, &b);
    if (strncmp(line, want, b.n) || line[b.n] != ',')
        return gt_fail(e, "%s:%d: this row was written with other options (expected it to "
                          "begin '%s'); rerun with the original arguments or another -o",
                       path, lineno, want);
    long idx = study_run_index(s, k);
    if (s->done[idx])
        return gt_fail(e, "%s:%d: run (topology %d, job %d, %s, seed %llu) appears twice", path,
                       lineno, k.topo, k.job, s->sp->planners[k.planner]->name,
                       (unsigned long long)(s->sp->first_seed + (uint64_t)k.seed));
    s->done[idx] = 1;
    s->sum->skipped++;
    return 0;
}

/* The first line must be this version's header. Returns 0 (it is), 1 (the
 * file is empty or holds part of the header: start over), -1 (another file). */
static int check_header(study *s, const char *buf, size_t len, gt_err *e)
{
    const char *nl = memchr(buf, '\n', len);
    size_t n = nl ? (size_t)(nl - buf) : len, hl = strlen(STUDY_HEADER);
    if (!nl && n < hl && !strncmp(buf, STUDY_HEADER, n)) {
        s->sum->dropped_partial = len > 0;
        return 1;
    }
    if (n != hl || strncmp(buf, STUDY_HEADER, hl))
        return gt_fail(e, "%s: not a study CSV (its first line is not this version's header "
                          "'%.60s...'); use another -o", s->sp->out, STUDY_HEADER);
    return 0;
}

/* Drop a partial last line (the header is known to be whole). */
static int drop_partial(study *s, char *buf, size_t *len, gt_err *e)
{
    if (buf[*len - 1] == '\n')
        return 0;
    size_t keep = (size_t)(strrchr(buf, '\n') - buf) + 1;
    if (truncate(s->sp->out, (off_t)keep))
        return gt_fail(e, "%s: cannot drop the partial last line: %s", s->sp->out,
                       strerror(errno));
    buf[keep] = '\0';
    *len = keep;
    s->sum->dropped_partial = true;
    return 0;
}

/* Every row after the header. */
static int check_rows(study *s, char *buf, gt_err *e)
{
    const char *path = s->sp->out;
    int lineno = 2;
    for (char *p = strchr(buf, '\n') + 1; *p; lineno++) {
        char *nl = strchr(p, '\n');
        *nl = '\0';
        if (!*p)
            return gt_fail(e, "%s:%d: empty line", path, lineno);
        if (check_row(s, p, lineno, e))
            return -1;
        p = nl + 1;
    }
    return 0;
}

/* Read or create the CSV; mark the runs it holds. */
int study_file_open(study *s, gt_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = read_all(s->sp->out, &buf, &len, e); /* 1: no such file */
    if (rc == 0)
        rc = check_header(s, buf, len, e);
    if (rc == 0)
        rc = drop_partial(s, buf, &len, e);
    if (rc == 0)
        rc = check_rows(s, buf, e);
    free(buf);
    if (rc < 0)
        return -1;
    if (rc == 1 && atomic_write(s->sp->out, write_header, NULL, e))
        return -1;
    s->fd = open(s->sp->out, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (s->fd < 0)
        return gt_fail(e, "%s: cannot append: %s", s->sp->out, strerror(errno));
    return 0;
}

static int append_row(study *s, const char *row, size_t len, gt_err *e)
{
    /* one write() per row; a partial write leaves a partial last line, which
     * the next run drops */
    size_t at = 0;
    while (at < len) {
        ssize_t w = write(s->fd, row + at, len - at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return gt_fail(e, "%s: write failed: %s", s->sp->out, strerror(errno));
        at += (size_t)w;
    }
    if (fsync(s->fd) && errno != EINVAL)
        return gt_fail(e, "%s: fsync failed: %s", s->sp->out, strerror(errno));
    return 0;
}

/* A finished row (from this rank or another): into the file, counted. */
int study_file_record(study *s, const char *row, size_t len, gt_err *e)
{
    char line[ROW_CAP];
    run_key k;
    bool ok;
    size_t n = len && row[len - 1] == '\n' ? len - 1 : len;
    if (n >= sizeof line)
        return gt_fail(e, "row too long");
    memcpy(line, row, n);
    line[n] = '\0';
    if (line_key(s, line, &k, &ok, e))
        return gt_prefix(e, "a rank sent a bad row");
    if (append_row(s, row, len, e))
        return -1;
    s->done[study_run_index(s, k)] = 1;
    s->sum->ran++;
    s->sum->ok += ok;
    study_report_progress(s, false);
    return 0;
}

/* --- order at the end ---------------------------------------------------------------------- */

typedef struct keyed_line {
    long idx;
    const char *line;
} keyed_line;

typedef struct ordered {
    keyed_line *rows;
    long n;
} ordered;

static int by_idx(const void *a, const void *b)
{
    long x = ((const keyed_line *)a)->idx, y = ((const keyed_line *)b)->idx;
    return (x > y) - (x < y);
}

static int write_ordered(FILE *fp, void *ctx)
{
    const ordered *o = ctx;
    fprintf(fp, "%s\n", STUDY_HEADER);
    for (long i = 0; i < o->n; i++)
        fprintf(fp, "%s\n", o->rows[i].line);
    return ferror(fp) ? -1 : 0;
}

/* Rewrite the finished file in run order when it is not. */
int study_file_order(study *s, gt_err *e)
{
    char *buf;
    size_t len;
    if (read_all(s->sp->out, &buf, &len, e))
        return -1;
    ordered o = {calloc((size_t)s->total + 1, sizeof *o.rows), 0};
    int rc = o.rows ? 0 : gt_fail(e, "out of memory");
    bool sorted = true;
    char *save = NULL;
    strtok_r(buf, "\n", &save);
    for (char *line; !rc && (line = strtok_r(NULL, "\n", &save));) {
        run_key k;
        if (o.n >= s->total || line_key(s, line, &k, NULL, e)) {
            rc = gt_fail(e, "%s: changed while the study ran", s->sp->out);
            break;
        }
        o.rows[o.n] = (keyed_line){study_run_index(s, k), line};
        sorted &= o.n == 0 || o.rows[o.n - 1].idx < o.rows[o.n].idx;
        o.n++;
    }
    if (!rc && !sorted) {
        qsort(o.rows, (size_t)o.n, sizeof *o.rows, by_idx);
        rc = atomic_write(s->sp->out, write_ordered, &o, e);
        s->sum->reordered = rc == 0;
    }
    free(o.rows);
    free(buf);
    return rc;
}

