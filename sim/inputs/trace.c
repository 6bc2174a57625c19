/* trace.c — strict readers of the traces/ formats (see trace.h and
 * traces/README.md). Each reader checks the header, then every row, and stops
 * at the first problem with "file:line: column 'x': ..." in the error. */
#include "sim/inputs/trace.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/csv.h"
#include "sim/base/infile.h"

/* --- shared helpers ------------------------------------------------------- */

/* Grow an array of `size`-byte elements so that it holds at least `need`. */
static int grow(void **p, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int ncap = *cap ? *cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, (size_t)ncap * size);
    if (!np)
        return -1;
    *p = np;
    *cap = ncap;
    return 0;
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Append the text of one "# source: ..." line to out (joined by " | "). */
static void add_source(char *out, size_t cap, const char *text)
{
    size_t len = strlen(text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        len--;
    size_t used = strlen(out);
    if (used && used + 3 < cap) {
        memcpy(out + used, " | ", 4);
        used += 3;
    }
    if (used + len >= cap)
        len = cap - used - 1;
    memcpy(out + used, text, len);
    out[used + len] = '\0';
}

/* Collect the "# source:" comment lines that precede the header. The reason
 * for insisting: every number GeoTrain uses must say where it comes from. */
static int read_sources(const char *path, char *out, size_t cap, gt_err *e)
{
    FILE *fp = infile_open(path, INFILE_MAX_BYTES, e);
    if (!fp)
        return -1;
    out[0] = '\0';
    char *line = NULL;
    size_t lcap = 0, total = 0;
    int got, nul, lineno = 0;
    while ((got = infile_getline(fp, path, ++lineno, &line, &lcap, INFILE_MAX_LINE, &total,
                                 &nul, e)) == 1) {
        const char *s = skip_ws(line);
        if (*s == '\0')
            continue;
        if (*s != '#')
            break; /* the header: sources come before it */
        s = skip_ws(s + 1);
        if (strncmp(s, "source:", 7) == 0)
            add_source(out, cap, skip_ws(s + 7));
    }
    free(line);
    fclose(fp);
    if (got < 0)
        return -1;
    if (!*out)
        return gt_fail(e, "%s:1: no '# source: ...' comment line before the header "
                          "(every trace must name where its numbers come from)", path);
    return 0;
}

/* The header must hold exactly the columns `want` (any order); returns their
 * indices in cols[]. Unknown columns are refused so that a typo is not ignored. */
static int expect_columns(const csv_reader *r, const char *const *want, int *cols,
                          gt_err *e)
{
    int n = 0;
    for (; want[n]; n++)
        if ((cols[n] = csv_col(r, want[n], 1, e)) < 0)
            return -1;
    for (int i = 0; i < r->nhead; i++) {
        int known = 0;
        for (int k = 0; k < n; k++)
            known |= strcmp(r->head[i], want[k]) == 0;
        if (!known)
            return gt_fail(e, "%s:%d: unexpected column '%s'", r->path, r->line,
                           r->head[i]);
    }
    return 0;
}

/* Open the file, read its sources and check the header. */
static int open_trace(const char *path, const char *const *want, int *cols, char *source,
                      csv_reader *r, gt_err *e)
{
    if (read_sources(path, source, TRACE_SOURCE_MAX, e) || csv_open(r, path, e))
        return -1;
    if (expect_columns(r, want, cols, e)) {
        csv_close(r);
        return -1;
    }
    return 0;
}

/* time_s in [0, TRACE_MAX_TIME_S] -> nanoseconds. */
static int read_time(const csv_reader *r, int col, int64_t *t_ns, double *t_s, gt_err *e)
{
    if (csv_double(r, col, 0, TRACE_MAX_TIME_S, 0, 0, t_s, e))
        return -1;
    *t_ns = llround(*t_s * 1e9);
    return 0;
}

/* A number that must be > 0, with the sign problem named (not just a range). */
/* A value in (0, hi], at least `lo` (bandwidth: the topology's range,
 * 1e-9 .. 1e7 Gbps; times: at least 1 ns so no op rounds to zero). */
static int read_positive(const csv_reader *r, int col, const char *what, double lo, double hi,
                         double *out, gt_err *e)
{
    if (csv_double(r, col, -DBL_MAX, DBL_MAX, 0, 0, out, e))
        return -1;
    if (*out <= 0)
        return csv_fail_at(r, col, e, "%s must be > 0 (got %g)", what, *out);
    if (*out < lo || *out > hi)
        return csv_fail_at(r, col, e, "%s must be in [%g, %g] (got %g)", what, lo, hi, *out);
    return 0;
}

/* Copy a non-empty text field of at most cap-1 characters. */
static int read_text(const csv_reader *r, int col, char *out, size_t cap, gt_err *e)
{
    const char *s = csv_get(r, col);
    if (!*s)
        return csv_fail_at(r, col, e, "empty, expected a name");
    if (strlen(s) >= cap)
        return csv_fail_at(r, col, e, "'%s' is longer than %zu characters", s, cap - 1);
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

static int no_rows(const char *path, gt_err *e)
{
    return gt_fail(e, "%s: no data rows after the header", path);
}

/* --- WAN bandwidth series ------------------------------------------------- */

static const char *const BW_COLS[] = {"time_s", "gbps", NULL};

static int bw_row(const csv_reader *r, const int *col, bwtrace *tr, int *cap, double *prev_s,
                  int *prev_line, gt_err *e)
{
    int64_t t_ns;
    double t_s, gbps;
    if (read_time(r, col[0], &t_ns, &t_s, e) || read_positive(r, col[1], "bandwidth", 1e-9, 1e7,
                                                               &gbps, e))
        return -1;
    if (tr->n == 0 && t_ns != 0)
        return csv_fail_at(r, col[0], e, "the first sample must be at 0 (got %g); the "
                                         "bandwidth before it would be a gap", t_s);
    if (tr->n > 0 && t_ns <= tr->t_ns[tr->n - 1])
        return csv_fail_at(r, col[0], e, "%g is not after %g (line %d); times must increase",
                           t_s, *prev_s, *prev_line);
    int c1 = *cap, c2 = *cap;
    if (grow((void **)&tr->t_ns, &c1, tr->n + 1, sizeof *tr->t_ns) ||
        grow((void **)&tr->bw, &c2, tr->n + 1, sizeof *tr->bw))
        return gt_fail(e, "%s: out of memory", r->path);
    *cap = c1;
    tr->t_ns[tr->n] = t_ns;
    tr->bw[tr->n++] = gbps * 125000000.0; /* Gbit/s -> bytes/s */
    *prev_s = t_s;
    *prev_line = r->line;
    return 0;
}

int bwtrace_load(const char *path, bwtrace *out, gt_err *e)
{
    memset(out, 0, sizeof *out);
    csv_reader r;
    int col[2], cap = 0, got, prev_line = 0;
    double prev_s = 0;
    if (open_trace(path, BW_COLS, col, out->source, &r, e))
        return -1;
    while ((got = csv_next(&r, e)) == 1)
        if (bw_row(&r, col, out, &cap, &prev_s, &prev_line, e))
            break;
    csv_close(&r);
    if (got == 0 && out->n == 0)
        got = no_rows(path, e);
    if (got != 0)
        bwtrace_free(out);
    return got == 0 ? 0 : -1;
}

void bwtrace_free(bwtrace *tr)
{
    free(tr->t_ns);
    free(tr->bw);
    memset(tr, 0, sizeof *tr);
}

/* Index of the last sample at or before t (0 when t precedes them all). */
static int bw_index(const bwtrace *tr, int64_t t_ns)
{
    int lo = 0, hi = tr->n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (tr->t_ns[mid] <= t_ns)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

double bwtrace_at(const bwtrace *tr, int64_t t_ns)
{
    return tr->n ? tr->bw[bw_index(tr, t_ns)] : 0;
}

int64_t bwtrace_next_change(const bwtrace *tr, int64_t t_ns)
{
    if (tr->n == 0)
        return INT64_MAX;
    int i = bw_index(tr, t_ns);
    if (tr->t_ns[i] > t_ns)
        return tr->t_ns[i];
    return i + 1 < tr->n ? tr->t_ns[i + 1] : INT64_MAX;
}

/* --- availability events -------------------------------------------------- */

static const char *const AVAIL_COLS[] = {"time_s", "event", "node", NULL};

typedef struct avail_state {
    int cap_ev, cap_nodes;
    unsigned char *live;              /* per node */
    int nlive;
    double prev_s;
} avail_state;

/* Index of the node called `name`, adding it on first sight. A linear scan
 * is fine: the published traces have at most a few hundred node names. */
static int node_index(avail_trace *a, avail_state *st, const char *name, const csv_reader *r,
                      int col, gt_err *e)
{
    for (int i = 0; i < a->nnodes; i++)
        if (strcmp(a->nodes[i], name) == 0)
            return i;
    int c1 = st->cap_nodes, c2 = st->cap_nodes, c3 = st->cap_nodes;
    if (grow((void **)&a->nodes, &c1, a->nnodes + 1, sizeof *a->nodes) ||
        grow((void **)&st->live, &c2, a->nnodes + 1, 1) ||
        grow((void **)&a->node_at, &c3, a->nnodes + 1, sizeof *a->node_at))
        return gt_fail(e, "%s: out of memory", r->path);
    st->cap_nodes = c1;
    memcpy(a->nodes[a->nnodes], name, strlen(name) + 1);
    a->node_at[a->nnodes][0] = r->line; /* where it first appears, for later errors */
    a->node_at[a->nnodes][1] = csv_col_at(r, col);
    st->live[a->nnodes] = 0;
    return a->nnodes++;
}

static int avail_kind_of(const csv_reader *r, int col, avail_kind *k, gt_err *e)
{
    const char *s = csv_get(r, col);
    if (strcmp(s, "add") == 0)
        *k = AVAIL_ADD;
    else if (strcmp(s, "remove") == 0)
        *k = AVAIL_REMOVE;
    else
        return csv_fail_at(r, col, e, "'%s', expected add or remove", s);
    return 0;
}

static int avail_row(const csv_reader *r, const int *col, avail_trace *a, avail_state *st,
                     gt_err *e)
{
    int64_t t_ns;
    double t_s;
    avail_kind kind = AVAIL_REMOVE;
    char name[64];
    if (read_time(r, col[0], &t_ns, &t_s, e) || avail_kind_of(r, col[1], &kind, e) ||
        read_text(r, col[2], name, sizeof name, e))
        return -1;
    if (a->n > 0 && t_ns < a->ev[a->n - 1].t_ns)
        return csv_fail_at(r, col[0], e, "%g is before the previous event's %g; times must "
                                         "not decrease", t_s, st->prev_s);
    int node = node_index(a, st, name, r, col[2], e);
    if (node < 0)
        return -1;
    if (kind == AVAIL_ADD && st->live[node])
        return csv_fail_at(r, col[2], e, "'%s' is added while already present", name);
    if (kind == AVAIL_REMOVE && !st->live[node])
        return csv_fail_at(r, col[2], e, "'%s' is removed while not present", name);
    st->live[node] = kind == AVAIL_ADD;
    st->nlive += kind == AVAIL_ADD ? 1 : -1;
    if (st->nlive > a->max_live)
        a->max_live = st->nlive;
    if (grow((void **)&a->ev, &st->cap_ev, a->n + 1, sizeof *a->ev))
        return gt_fail(e, "%s: out of memory", r->path);
    a->ev[a->n++] = (avail_event){.t_ns = t_ns, .kind = kind, .node = node};
    st->prev_s = t_s;
    return 0;
}

int avail_load(const char *path, avail_trace *out, gt_err *e)
{
    memset(out, 0, sizeof *out);
    csv_reader r;
    int col[3], got;
    avail_state st = {0};
    if (open_trace(path, AVAIL_COLS, col, out->source, &r, e))
        return -1;
    while ((got = csv_next(&r, e)) == 1)
        if (avail_row(&r, col, out, &st, e))
            break;
    csv_close(&r);
    free(st.live);
    if (got == 0 && out->n == 0)
        got = no_rows(path, e);
    if (got != 0)
        avail_free(out);
    return got == 0 ? 0 : -1;
}

void avail_free(avail_trace *a)
{
    free(a->ev);
    free(a->nodes);
    free(a->node_at);
    memset(a, 0, sizeof *a);
}

/* --- prefill request mix -------------------------------------------------- */

static const char *const MIX_COLS[] = {"prompt_tokens", "probability", NULL};
#define MIX_SUM_TOL 1e-6

static int mix_row(const csv_reader *r, const int *col, prefill_mix *m, int *cap, gt_err *e)
{
    long tokens;
    double p;
    if (csv_long(r, col[0], 1, 10000000, &tokens, e) ||
        csv_double(r, col[1], -DBL_MAX, DBL_MAX, 0, 0, &p, e))
        return -1;
    if (p <= 0 || p > 1)
        return csv_fail_at(r, col[1], e, "%g is not in (0, 1] (leave empty bins out)", p);
    if (m->n > 0 && tokens <= m->tokens[m->n - 1])
        return csv_fail_at(r, col[0], e, "%ld is not above the previous row's %d; lengths "
                                         "must increase", tokens, m->tokens[m->n - 1]);
    int c1 = *cap, c2 = *cap;
    if (grow((void **)&m->tokens, &c1, m->n + 1, sizeof *m->tokens) ||
        grow((void **)&m->prob, &c2, m->n + 1, sizeof *m->prob))
        return gt_fail(e, "%s: out of memory", r->path);
    *cap = c1;
    m->tokens[m->n] = (int)tokens;
    m->prob[m->n++] = p;
    return 0;
}

/* Sum to 1 within the tolerance, then renormalise and take the mean. */
static int mix_finish(const char *path, prefill_mix *m, gt_err *e)
{
    double sum = 0;
    for (int i = 0; i < m->n; i++)
        sum += m->prob[i];
    if (fabs(sum - 1) > MIX_SUM_TOL)
        return gt_fail(e, "%s: column 'probability': the %d probabilities sum to %.9g, "
                          "expected 1 (within %g)", path, m->n, sum, MIX_SUM_TOL);
    m->mean_tokens = 0;
    for (int i = 0; i < m->n; i++) {
        m->prob[i] /= sum;
        m->mean_tokens += m->prob[i] * m->tokens[i];
    }
    return 0;
}

int prefill_mix_load(const char *path, prefill_mix *out, gt_err *e)
{
    memset(out, 0, sizeof *out);
    csv_reader r;
    int col[2], cap = 0, got;
    if (open_trace(path, MIX_COLS, col, out->source, &r, e))
        return -1;
    while ((got = csv_next(&r, e)) == 1)
        if (mix_row(&r, col, out, &cap, e))
            break;
    csv_close(&r);
    if (got == 0 && out->n == 0)
        got = no_rows(path, e);
    if (got == 0)
        got = mix_finish(path, out, e);
    if (got != 0)
        prefill_mix_free(out);
    return got == 0 ? 0 : -1;
}

void prefill_mix_free(prefill_mix *m)
{
    free(m->tokens);
    free(m->prob);
    memset(m, 0, sizeof *m);
}

/* --- per-layer profile ---------------------------------------------------- */

static const char *const PROF_COLS[] = {"gpu",  "model",  "layer_kind", "b",
                                        "seq",  "fwd_ms", "bwd_ms",     NULL};
static const char *const KIND_NAMES[] = {"embedding", "layer", "head"};

const char *layer_kind_name(layer_kind k)
{
    return (unsigned)k < 3 ? KIND_NAMES[k] : "?";
}

static int kind_of(const csv_reader *r, int col, layer_kind *k, gt_err *e)
{
    const char *s = csv_get(r, col);
    for (int i = 0; i < 3; i++)
        if (strcmp(s, KIND_NAMES[i]) == 0) {
            *k = (layer_kind)i;
            return 0;
        }
    return csv_fail_at(r, col, e, "'%s', expected embedding, layer or head", s);
}

static int prof_fields(const csv_reader *r, const int *col, const gpu_catalog *cat,
                       profile_row *row, gt_err *e)
{
    long b, seq;
    double fwd, bwd;
    if (read_text(r, col[0], row->gpu, sizeof row->gpu, e) ||
        read_text(r, col[1], row->model, sizeof row->model, e) ||
        kind_of(r, col[2], &row->kind, e) || csv_long(r, col[3], 1, 10000000, &b, e) ||
        csv_long(r, col[4], 1, 10000000, &seq, e) ||
        read_positive(r, col[5], "forward time", 1e-6, 1e9, &fwd, e) ||
        read_positive(r, col[6], "backward time", 1e-6, 1e9, &bwd, e))
        return -1;
    if (cat && gpu_catalog_find(cat, row->gpu) < 0)
        return csv_fail_at(r, col[0], e, "unknown GPU type '%s' (see topologies/gpus.csv)",
                           row->gpu);
    if (fwd > 1e9 || bwd > 1e9)
        return gt_fail(e, "%s:%d: a time above 1e9 ms (got %g / %g)", r->path, r->line, fwd,
                       bwd);
    row->b = (int)b;
    row->seq = (int)seq;
    row->fwd_ns = llround(fwd * 1e6);
    row->bwd_ns = llround(bwd * 1e6);
    return 0;
}

static int prof_row(const csv_reader *r, const int *col, const gpu_catalog *cat, profile *p,
                    int **lines, int *cap, gt_err *e)
{
    profile_row row;
    memset(&row, 0, sizeof row);
    if (prof_fields(r, col, cat, &row, e))
        return -1;
    const profile_row *dup = profile_find(p, row.gpu, row.model, row.kind, row.b, row.seq);
    if (dup)
        return gt_fail(e, "%s:%d: row %s,%s,%s,%d,%d repeats line %d", r->path, r->line,
                       row.gpu, row.model, layer_kind_name(row.kind), row.b, row.seq,
                       (*lines)[dup - p->rows]);
    int c1 = *cap, c2 = *cap;
    if (grow((void **)&p->rows, &c1, p->n + 1, sizeof *p->rows) ||
        grow((void **)lines, &c2, p->n + 1, sizeof **lines))
        return gt_fail(e, "%s: out of memory", r->path);
    *cap = c1;
    (*lines)[p->n] = r->line;
    row.line = r->line;
    row.model_col = csv_col_at(r, col[1]);
    p->rows[p->n++] = row;
    return 0;
}

int profile_load(const char *path, const gpu_catalog *cat, profile *out, gt_err *e)
{
    memset(out, 0, sizeof *out);
    csv_reader r;
    int col[7], cap = 0, got, *lines = NULL;
    if (open_trace(path, PROF_COLS, col, out->source, &r, e))
        return -1;
    while ((got = csv_next(&r, e)) == 1)
        if (prof_row(&r, col, cat, out, &lines, &cap, e))
            break;
    csv_close(&r);
    free(lines);
    if (got == 0 && out->n == 0)
        got = no_rows(path, e);
    if (got != 0)
        profile_free(out);
    return got == 0 ? 0 : -1;
}

int profile_check_model(const profile *p, const char *path, const char *model_id, gt_err *e)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->rows[i].model, model_id) != 0)
            return gt_fail(e, "%s:%d:%d: column 'model': '%s' is not the job's model '%s' (a "
                              "row for another model would be silently unused)", path,
                           p->rows[i].line, p->rows[i].model_col, p->rows[i].model, model_id);
    return 0;
}

void profile_free(profile *p)
{
    free(p->rows);
    memset(p, 0, sizeof *p);
}

const profile_row *profile_find(const profile *p, const char *gpu, const char *model,
                                layer_kind kind, int b, int seq)
{
    for (int i = 0; i < p->n; i++) {
        const profile_row *r = &p->rows[i];
        if (r->kind == kind && r->b == b && r->seq == seq && strcmp(r->gpu, gpu) == 0 &&
            strcmp(r->model, model) == 0)
            return r;
    }
    return NULL;
}
