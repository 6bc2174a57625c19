/* study.c — random topology studies: study_run (see study.h for the runs,
 * the CSV, resuming and MPI). The `geotrain study` command (arguments,
 * progress, signals) is cli/cmd_study.c; this file parses no argv. */
#include "study/study.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "planner/objective.h"
#include "planner/planner_run.h"
#include "sim/atomic_file.h"
#include "sim/simulator.h"

/* The columns (study.h); key columns and the input part are fixed below. */
static const char HEADER[] =
    "topology,topo_seed,topo_name,sites,gpus,gpu_mix,job,model,batch,microbatch,seq,planner,"
    "seed,objective,status,iteration_time_s,energy_j,j_per_token,tokens_per_s,gpus_used,stages,"
    "pipelines,objective_value,carbon_g,usd,evaluations,error,plan_time_s";
enum { C_TOPO = 0, C_JOB = 6, C_PLANNER = 11, C_SEED = 12, C_STATUS = 14, NINPUT = 14,
       NCOLS = 28 };
#define ROW_CAP 4096
#define MAX_RUNS 100000000L

enum { TAG_ROW = 1, TAG_DONE = 2, TAG_FAIL = 3 };

const char *study_header(void)
{
    return HEADER;
}

int study_column(const char *name)
{
    const char *p = HEADER;
    size_t n = strlen(name);
    for (int k = 0; *p; k++) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return k;
        if (!c)
            break;
        p = c + 1;
    }
    return -1;
}

/* --- CSV text ------------------------------------------------------------------ */

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    if (b->n >= b->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n = k < 0 ? b->cap : b->n + (size_t)k;
}

/* A text field, quoted when it holds a comma, quote or line break. */
static void sb_field(sbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        sb_add(b, ",%s", s);
        return;
    }
    sb_add(b, ",\"");
    for (; *s; s++) {
        if (*s == '"')
            sb_add(b, "\"\"");
        else
            sb_add(b, "%c", *s == '\n' || *s == '\r' ? ' ' : *s);
    }
    sb_add(b, "\"");
}

static void sb_num(sbuf *b, bool ok, double v)
{
    if (ok && isfinite(v))
        sb_add(b, ",%.9g", v);
    else
        sb_add(b, ",");
}

/* Split one line (no newline) into fields in place; returns the count, or -1
 * on a broken quote. */
static int split_csv(char *line, char **f, int max)
{
    int n = 0;
    char *r = line, *w;
    for (;;) {
        if (n == max)
            return -1;
        f[n++] = w = r;
        if (*r == '"') {
            for (r++;; r++) {
                if (!*r)
                    return -1;
                if (*r == '"' && r[1] == '"')
                    *w++ = *r++;
                else if (*r == '"')
                    break;
                else
                    *w++ = *r;
            }
            r++;
            if (*r && *r != ',')
                return -1;
        } else {
            while (*r && *r != ',')
                *w++ = *r++;
        }
        char end = *r;
        *w = '\0';
        if (!end)
            return n;
        r++;
    }
}

/* --- the study's state -------------------------------------------------------------- */

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

static long run_index(const study *s, run_key k)
{
    const study_spec *sp = s->sp;
    return (((long)k.topo * sp->njobs + k.job) * sp->nplanners + k.planner) * sp->nseeds + k.seed;
}

static run_key run_key_of(const study *s, long idx)
{
    const study_spec *sp = s->sp;
    run_key k;
    k.seed = (int)(idx % sp->nseeds);
    idx /= sp->nseeds;
    k.planner = (int)(idx % sp->nplanners);
    idx /= sp->nplanners;
    k.job = (int)(idx % sp->njobs);
    k.topo = (int)(idx / sp->njobs);
    return k;
}

static void progress(study *s, bool finished)
{
    if (!s->sp->progress || s->par->rank != 0)
        return;
    study_progress p = {s->total, s->sum->skipped, s->sum->ran, planner_run_clock() - s->t0,
                        s->current, finished};
    s->sp->progress(s->sp->progress_ctx, &p);
}

/* --- topologies ----------------------------------------------------------------------- */

static int gen_topo(const study *s, int i, topology *t, gt_err *e)
{
    topogen_opts o = s->sp->topo;
    o.seed = s->sp->topo.seed + (unsigned long)i;
    o.data = &s->data;
    if (topo_generate(&o, t, e))
        return gt_prefix(e, "topology %d (seed %lu)", i, o.seed);
    return 0;
}

static void fill_info(topo_info *in, const topology *t, unsigned long seed)
{
    in->seed = seed;
    snprintf(in->name, sizeof in->name, "%s", t->name);
    in->sites = t->nsites;
    in->gpus = t->ngpus;
    sbuf b = {in->mix, 0, sizeof in->mix};
    in->mix[0] = '\0';
    for (int k = 0; k < t->ntypes; k++) {
        int cnt = 0;
        for (int g = 0; g < t->ngpus; g++)
            cnt += t->gpus[g].type == k;
        if (cnt)
            sb_add(&b, "%s%s:%d", b.n ? " " : "", t->types[k].id, cnt);
    }
}

/* The topology's input columns (generating it once). */
static int topo_info_of(study *s, int i, gt_err *e)
{
    if (s->info[i].ready)
        return 0;
    topology t;
    if (gen_topo(s, i, &t, e))
        return -1;
    fill_info(&s->info[i], &t, s->sp->topo.seed + (unsigned long)i);
    s->info[i].ready = true;
    topo_free(&t);
    return 0;
}

static int write_topologies(study *s, gt_err *e)
{
    const char *dir = s->sp->topo_dir;
    if (mkdir(dir, 0777) && errno != EEXIST)
        return gt_fail(e, "%s: cannot create the folder: %s", dir, strerror(errno));
    for (int i = 0; i < s->sp->ntopos; i++) {
        topology t;
        char path[4096];
        snprintf(path, sizeof path, "%s/topology-%04d.json", dir, i);
        if (gen_topo(s, i, &t, e))
            return -1;
        int rc = topo_write(&t, path, e);
        topo_free(&t);
        if (rc)
            return -1;
    }
    return 0;
}

/* --- rows ------------------------------------------------------------------------------ */

/* The input columns of a run, without a trailing comma. */
static void row_inputs(const study *s, run_key k, sbuf *b)
{
    const topo_info *in = &s->info[k.topo];
    const job *j = &s->sp->jobs[k.job];
    sb_add(b, "%d,%lu", k.topo, in->seed);
    sb_field(b, in->name);
    sb_add(b, ",%d,%d", in->sites, in->gpus);
    sb_field(b, in->mix);
    sb_add(b, ",%d", k.job);
    sb_field(b, j->model.id);
    sb_add(b, ",%d,%d,%d", j->batch, j->microbatch, j->seq);
    sb_field(b, s->sp->planners[k.planner]->name);
    sb_add(b, ",%llu", (unsigned long long)(s->sp->first_seed + (uint64_t)k.seed));
    sb_field(b, s->objtext);
}

/* The status column, indexed by planner_run_status. */
static const char *const STATUS[] = {"ok", "infeasible", "replay-failed"};

typedef struct run_res {
    planner_run run;
    double obj;              /* the objective of the simulated plan (see study.h) */
} run_res;

static void run_one(const study *s, const topology *t, run_key k, run_res *r)
{
    const study_spec *sp = s->sp;
    planner_opts po = {.objective = s->objtext, .seed = sp->first_seed + (uint64_t)k.seed,
                       .budget_s = sp->budget_s, .generations = sp->generations,
                       .threads = sp->threads, .stop = sp->stop};
    planner_run_replay(sp->planners[k.planner], t, &sp->jobs[k.job], &po, -1, &r->run, NULL);
    r->obj = 0;
    if (r->run.status != PLANNER_RUN_OK)
        return;
    /* weighted and energy-within need references only the planner had */
    obj_metrics m = obj_from_sim(&r->run.sim);
    bool own = !objective_needs_refs(&s->ob) && !objective_needs_fastest(&s->ob);
    r->obj = own ? objective_value(&s->ob, &m) : r->run.st.objective_value;
}

static void format_row(const study *s, run_key k, const run_res *r, sbuf *b)
{
    const job *j = &s->sp->jobs[k.job];
    const planner_run *u = &r->run;
    bool ok = u->status == PLANNER_RUN_OK;
    double tokens = (double)j->batch * j->seq;
    row_inputs(s, k, b);
    sb_add(b, ",%s", STATUS[u->status]);
    sb_num(b, ok, u->sim.iteration_s);
    sb_num(b, ok, u->sim.energy_j);
    sb_num(b, ok, u->sim.energy_j / tokens);
    sb_num(b, ok, u->sim.tokens_per_s);
    if (ok)
        sb_add(b, ",%d,%d,%d", u->sim.gpus_used, u->smax, u->pipes);
    else
        sb_add(b, ",,,");
    sb_num(b, ok, r->obj);
    sb_num(b, ok, u->sim.carbon_g);
    sb_num(b, ok, u->sim.usd);
    sb_add(b, ",%ld", u->st.evaluations);
    sb_field(b, ok ? "" : u->err);
    sb_add(b, ",%.3f\n", u->plan_s);
}

/* Parse a row's key; -1 (with why in e) when it is not one of this study's. */
static int parse_key(const study *s, char **f, int nf, run_key *k, gt_err *e)
{
    const study_spec *sp = s->sp;
    if (nf != NCOLS)
        return gt_fail(e, "%d fields, expected %d", nf, NCOLS);
    char *end;
    long t = strtol(f[C_TOPO], &end, 10), jb;
    if (*end || !*f[C_TOPO] || t < 0 || t >= sp->ntopos)
        return gt_fail(e, "topology '%s' is not in 0..%d", f[C_TOPO], sp->ntopos - 1);
    jb = strtol(f[C_JOB], &end, 10);
    if (*end || !*f[C_JOB] || jb < 0 || jb >= sp->njobs)
        return gt_fail(e, "job '%s' is not in 0..%d", f[C_JOB], sp->njobs - 1);
    k->topo = (int)t;
    k->job = (int)jb;
    k->planner = -1;
    for (int p = 0; p < sp->nplanners; p++)
        if (!strcmp(sp->planners[p]->name, f[C_PLANNER]))
            k->planner = p;
    if (k->planner < 0)
        return gt_fail(e, "planner '%s' is not in --planners", f[C_PLANNER]);
    unsigned long long sd = strtoull(f[C_SEED], &end, 10);
    if (*end || !*f[C_SEED] || sd < sp->first_seed || sd - sp->first_seed >= (uint64_t)sp->nseeds)
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
    int nf = split_csv(buf, f, NCOLS + 1);
    if (nf < 0)
        return gt_fail(e, "broken CSV quoting");
    if (parse_key(s, f, nf, k, e))
        return -1;
    if (ok)
        *ok = !strcmp(f[C_STATUS], STATUS[PLANNER_RUN_OK]);
    return 0;
}

/* --- the file (rank 0) -------------------------------------------------------------------- */

static int write_header(FILE *fp, void *ctx)
{
    (void)ctx;
    fprintf(fp, "%s\n", HEADER);
    return ferror(fp) ? -1 : 0;
}

static int read_all(const char *path, char **buf, size_t *len, gt_err *e)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return errno == ENOENT ? 1 : gt_fail(e, "%s: cannot read: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0, got;
    char *b = malloc(cap);
    while (b && (got = fread(b + n, 1, cap - n - 1, fp)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    bool bad = ferror(fp);
    fclose(fp);
    if (!b || bad) {
        free(b);
        return gt_fail(e, "%s: %s", path, bad ? "read error" : "out of memory");
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

/* One row of an existing file: part of this study, same inputs, new key. */
static int check_row(study *s, const char *line, int lineno, gt_err *e)
{
    const char *path = s->sp->out;
    run_key k;
    if (line_key(s, line, &k, NULL, e))
        return gt_prefix(e, "%s:%d: not a row of this study", path, lineno);
    if (topo_info_of(s, k.topo, e))
        return -1;
    char want[ROW_CAP];
    sbuf b = {want, 0, sizeof want};
    row_inputs(s, k, &b);
    if (strncmp(line, want, b.n) || line[b.n] != ',')
        return gt_fail(e, "%s:%d: this row was written with other options (expected it to "
                          "begin '%s'); rerun with the original arguments or another -o",
                       path, lineno, want);
    long idx = run_index(s, k);
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
    size_t n = nl ? (size_t)(nl - buf) : len, hl = strlen(HEADER);
    if (!nl && n < hl && !strncmp(buf, HEADER, n)) {
        s->sum->dropped_partial = len > 0;
        return 1;
    }
    if (n != hl || strncmp(buf, HEADER, hl))
        return gt_fail(e, "%s: not a study CSV (its first line is not this version's header "
                          "'%.60s...'); use another -o", s->sp->out, HEADER);
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
static int open_file(study *s, gt_err *e)
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
static int record_row(study *s, const char *row, size_t len, gt_err *e)
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
    s->done[run_index(s, k)] = 1;
    s->sum->ran++;
    s->sum->ok += ok;
    progress(s, false);
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
    fprintf(fp, "%s\n", HEADER);
    for (long i = 0; i < o->n; i++)
        fprintf(fp, "%s\n", o->rows[i].line);
    return ferror(fp) ? -1 : 0;
}

/* Rewrite the finished file in run order when it is not. */
static int order_file(study *s, gt_err *e)
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
        o.rows[o.n] = (keyed_line){run_index(s, k), line};
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

/* --- running ------------------------------------------------------------------------------- */

typedef struct cur_topo {
    int index;               /* -1 = none loaded */
    topology t;
} cur_topo;

static int load_topo(study *s, cur_topo *c, int i, gt_err *e)
{
    if (c->index == i)
        return 0;
    if (c->index >= 0)
        topo_free(&c->t);
    c->index = -1;
    if (gen_topo(s, i, &c->t, e))
        return -1;
    c->index = i;
    if (!s->info[i].ready) {
        fill_info(&s->info[i], &c->t, s->sp->topo.seed + (unsigned long)i);
        s->info[i].ready = true;
    }
    return 0;
}

/* Rank 0: take whatever the other ranks sent (block: until all are done). */
static int drain(study *s, bool block, int *finished, gt_err *e)
{
    for (;;) {
        if (block && *finished >= s->par->size - 1)
            return 0;
        char *msg = NULL;
        size_t len = 0;
        int src, tag, got = gt_par_recv(s->par, block, &src, &tag, &msg, &len);
        if (got < 0)
            return gt_fail(e, "out of memory");
        if (!got)
            return 0;
        int rc = 0;
        if (tag == TAG_ROW) /* rows are kept even after some rank failed */
            rc = record_row(s, msg, len, e);
        else if (tag == TAG_DONE || tag == TAG_FAIL)
            (*finished)++;
        if (tag == TAG_FAIL && !s->failed) {
            snprintf(s->fail.msg, sizeof s->fail.msg, "rank %d: %s", src, msg);
            s->failed = true;
        }
        free(msg);
        if (rc)
            return -1;
    }
}

/* One run on this rank; its row goes to the file (rank 0) or to rank 0. */
static int do_run(study *s, cur_topo *c, long idx, int *finished, gt_err *e)
{
    run_key k = run_key_of(s, idx);
    if (load_topo(s, c, k.topo, e))
        return -1;
    snprintf(s->current, sizeof s->current, "topology %d %s seed %llu%s", k.topo,
             s->sp->planners[k.planner]->name,
             (unsigned long long)(s->sp->first_seed + (uint64_t)k.seed),
             s->sp->njobs > 1 ? " job" : "");
    if (s->sp->njobs > 1)
        snprintf(s->current + strlen(s->current), sizeof s->current - strlen(s->current),
                 " %d", k.job);
    progress(s, false);
    run_res r;
    run_one(s, &c->t, k, &r);
    if (s->sp->stop && *s->sp->stop)
        return 1; /* the planner may have stopped early: drop this row */
    char row[ROW_CAP];
    sbuf b = {row, 0, sizeof row};
    format_row(s, k, &r, &b);
    if (b.n >= sizeof row)
        return gt_fail(e, "row of run %ld longer than %d characters", idx, ROW_CAP);
    if (s->par->rank != 0) {
        gt_par_send(s->par, 0, TAG_ROW, row, b.n);
        return 0;
    }
    return record_row(s, row, b.n, e) || drain(s, false, finished, e) ? -1 : 0;
}

/* This rank's share: runs idx = rank, rank + R, ... not yet done. */
static int run_share(study *s, int *finished, gt_err *e)
{
    cur_topo c = {.index = -1};
    int rc = 0;
    for (long idx = s->par->rank; idx < s->total && !rc; idx += s->par->size) {
        if (s->done[idx])
            continue;
        if (s->sp->stop && *s->sp->stop)
            rc = 1;
        else
            rc = do_run(s, &c, idx, finished, e);
    }
    if (c.index >= 0)
        topo_free(&c.t);
    if (rc > 0)
        s->sum->interrupted = true;
    return rc < 0 ? -1 : 0;
}

/* Rank 0 prepares the file; every rank learns which runs are done. */
static int prepare(study *s, gt_err *e)
{
    int rc = 0;
    if (s->par->rank == 0) {
        rc = s->sp->topo_dir ? write_topologies(s, e) : 0;
        if (!rc)
            rc = open_file(s, e);
    }
    int bad = rc != 0;
    gt_par_max_int(s->par, &bad, 1);
    if (bad) {
        gt_par_bcast(s->par, e->msg, sizeof e->msg, 0);
        return -1;
    }
    gt_par_bcast(s->par, s->done, (size_t)s->total, 0);
    long skipped = s->sum->skipped;
    gt_par_bcast(s->par, &skipped, sizeof skipped, 0);
    s->sum->skipped = skipped;
    return 0;
}

/* After the runs: rank 0 collects the rest, orders the file; all agree. */
static int conclude(study *s, int rc, int finished, gt_err *e)
{
    if (s->par->rank != 0) {
        gt_par_send(s->par, 0, rc ? TAG_FAIL : TAG_DONE, rc ? e->msg : "", rc ? strlen(e->msg) : 0);
    } else {
        if (drain(s, true, &finished, rc ? &(gt_err){{0}} : e) && !rc)
            rc = -1;
        if (!rc && s->failed) {
            *e = s->fail;
            rc = -1;
        }
        long have = 0;
        for (long i = 0; i < s->total; i++)
            have += s->done[i];
        s->sum->complete = have == s->total;
        if (!rc && s->sum->complete)
            rc = order_file(s, e);
        s->current[0] = '\0';
        progress(s, true);
    }
    int v[2] = {rc != 0, s->sum->interrupted};
    gt_par_max_int(s->par, v, 2);
    if (v[0])
        gt_par_bcast(s->par, e->msg, sizeof e->msg, 0);
    gt_par_bcast(s->par, s->sum, sizeof *s->sum, 0);
    s->sum->interrupted |= v[1];
    return v[0] ? -1 : 0;
}

static int study_init(study *s, const study_spec *sp, study_summary *sum, gt_err *e)
{
    memset(s, 0, sizeof *s);
    s->sp = sp;
    s->sum = sum;
    s->fd = -1;
    s->objtext = sp->objective ? sp->objective : "time";
    s->t0 = planner_run_clock();
    if (sp->ntopos < 1 || sp->nplanners < 1 || sp->njobs < 1 || sp->nseeds < 1)
        return gt_fail(e, "a study needs at least one topology, planner, job and seed");
    s->total = (long)sp->ntopos * sp->njobs * sp->nplanners * sp->nseeds;
    if (s->total > MAX_RUNS)
        return gt_fail(e, "%ld runs: more than the limit of %ld", s->total, MAX_RUNS);
    if (objective_parse(s->objtext, &s->ob, e))
        return -1;
    s->done = calloc((size_t)s->total, 1);
    s->info = calloc((size_t)sp->ntopos, sizeof *s->info);
    if (!s->done || !s->info)
        return gt_fail(e, "out of memory");
    if (sp->topo.data)
        s->data = *sp->topo.data;
    else if (topogen_data_load(&s->data, e))
        return -1;
    return 0;
}

static void study_free(study *s)
{
    if (s->fd >= 0)
        close(s->fd);
    if (!s->sp->topo.data && s->data.regions)
        topogen_data_free(&s->data);
    free(s->done);
    free(s->info);
}

int study_run(const study_spec *sp, study_summary *sum, gt_err *e)
{
    gt_par solo = {.rank = 0, .size = 1};
    study s;
    memset(sum, 0, sizeof *sum);
    int rc = study_init(&s, sp, sum, e);
    s.par = sp->par && sp->par->size > 1 ? sp->par : &solo;
    if (rc) {
        study_free(&s);
        return -1;
    }
    sum->total = s.total;
    if (prepare(&s, e)) {
        study_free(&s);
        return -1;
    }
    progress(&s, false);
    int finished = 0;
    rc = run_share(&s, &finished, e);
    rc = conclude(&s, rc, finished, e);
    study_free(&s);
    return rc;
}
