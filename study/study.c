/* study.c — random topology studies: study_run (see study.h for the runs,
 * the CSV, resuming and MPI): topologies, one row per run, the MPI share.
 * The CSV file itself (resume, append, order) is study_file.c; the
 * `geotrain study` command (arguments, progress, signals) is
 * cli/cmd_study.c; this file parses no argv. */
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
#include "sim/base/atomic_file.h"
#include "sim/engine/simulator.h"
#include "study/study_state.h"

/* The columns (study.h); key columns and the input part are fixed below. */
const char STUDY_HEADER[] =
    "topology,topo_seed,topo_name,sites,gpus,gpu_mix,job,model,batch,microbatch,seq,planner,"
    "seed,objective,status,iteration_time_s,energy_j,j_per_token,tokens_per_s,gpus_used,stages,"
    "pipelines,objective_value,carbon_g,usd,evaluations,error,plan_time_s";
/* The status column, indexed by planner_run_status. */
const char *const STUDY_STATUS[] = {"ok", "infeasible", "replay-failed"};

const char *study_header(void)
{
    return STUDY_HEADER;
}

int study_column(const char *name)
{
    const char *p = STUDY_HEADER;
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

/* --- the study's state -------------------------------------------------------------- */

long study_run_index(const study *s, run_key k)
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

void study_report_progress(study *s, bool finished)
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
int study_topo_info(study *s, int i, gt_err *e)
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
void study_row_inputs(const study *s, run_key k, sbuf *b)
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
    study_row_inputs(s, k, b);
    sb_add(b, ",%s", STUDY_STATUS[u->status]);
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
            rc = study_file_record(s, msg, len, e);
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
    study_report_progress(s, false);
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
    return study_file_record(s, row, b.n, e) || drain(s, false, finished, e) ? -1 : 0;
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
            rc = study_file_open(s, e);
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
            rc = study_file_order(s, e);
        s->current[0] = '\0';
        study_report_progress(s, true);
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
    study_report_progress(&s, false);
    int finished = 0;
    rc = run_share(&s, &finished, e);
    rc = conclude(&s, rc, finished, e);
    study_free(&s);
    return rc;
}
