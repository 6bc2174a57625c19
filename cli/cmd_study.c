/* cmd_study.c — `geotrain study`: arguments, jobs and planners from the
 * command line, the progress line, SIGINT, and the summary; the study itself
 * is study/study.c (study_run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/signals.h"
#include "cli/study_provenance.h"
#include "cli/commands.h"
#include "cli/topogen_options.h"
#include "planner/objective.h"
#include "planner/planner_run.h"
#include "sim/engine/simulator.h"
#include "study/study.h"

static const char HELP[] =
    "usage: geotrain study [--topologies N] [TOPO GEN OPTIONS] [--planners all|a,b,c]\n"
    "                      [-m MODEL[,MODEL...]] [JOB] [--seeds K] [--objective OBJ]\n"
    "                      [--budget-s SEC] [--generations G] -o FILE.csv\n\n"
    "Generate N topologies (as `geotrain topo gen`, topology i with seed S+i), run\n"
    "every planner with every seed on each (and every job), replay each plan in the\n"
    "simulator and append one CSV row per run. A progress bar with ETA runs on\n"
    "stderr (plain lines every 10 s when stderr is not a terminal).\n\n"
    "Resumable: rerun the same command and it keeps the rows already in FILE (key:\n"
    "topology, job, planner, seed), drops a partial last line, and runs the rest.\n"
    "Same arguments, same file: every column but the last (plan_time_s, wall clock)\n"
    "is deterministic when planners stop on generations (not --budget-s).\n"
    "Under `mpirun -n R` (built with make MPI=1) run k goes to rank k mod R and\n"
    "rank 0 writes the file; the finished file is the same as with one process.\n\n"
    "  --topologies N        generated topologies (default 10)\n"
    "  --planners LIST       'all' (default: every planner but exact) or a comma-\n"
    "                        separated list of:%s\n"
    "  -m, --model LIST      model(s), comma-separated (default gpt3-xl with --batch 64)\n"
    "  --batch LIST          global batch(es), comma-separated; jobs = models x batches\n"
    "                        (default 64 without -m, else the model's default)\n"
    "  --seeds K             planner seeds per topology (default 1)\n"
    "  --planner-seed S      first planner seed (default 1); seeds S..S+K-1\n"
    "  --objective OBJ       time (default), energy, weighted:W, energy-within:X, carbon,\n"
    "                        cost, pareto — passed to every planner\n"
    "  --budget-s SEC        wall-clock budget per planner run (0 = planner default;\n"
    "                        rows then depend on machine speed)\n"
    "  --generations G       generation budget per planner run (0 = planner default)\n"
    "  --threads N           threads per planner run (0 = default)\n"
    "  --write-topologies DIR  also write DIR/topology-NNNN.json (NNNN = index)\n"
    "  -q, --quiet           no progress output (also --no-progress)\n"
    "  -o, --output FILE     the CSV (required; appended to, see above)\n\n"
    "Ctrl-C (or SIGTERM) stops after the running run (its row is dropped): the rows\n"
    "done stay in FILE, resumable; exit 130 (143 for SIGTERM). A second signal ends\n"
    "at once.\n\n"
    "Topology options (as `geotrain topo gen --help`; --seed S is topology 0's seed,\n"
    "default 1): --sites N --gpus N --gpus-dist D --mix SPEC --mix-per node|site\n"
    "  --node-size K --nic-gbps X --regions LIST --bw-scale F --bw-jitter F\n"
    "  --tcp-connections K --tcp-window-mb W --pue X --seed S\n\n"
    "Columns: topology,topo_seed,topo_name,sites,gpus,gpu_mix (type:count ...),job,\n"
    "  model,batch,microbatch,seq,planner,seed,objective, then status (ok, infeasible:\n"
    "  the planner found no plan, replay-failed), iteration_time_s, energy_j,\n"
    "  j_per_token, tokens_per_s, gpus_used, stages, pipelines, objective_value (of\n"
    "  the simulated plan; for weighted and energy-within the planner's own value),\n"
    "  carbon_g, usd, evaluations, error (why infeasible), plan_time_s.\n\n"
    "Other JOB options (apply to every job):\n"
    "  --microbatch b --seq S --recompute none|full --opt-bytes N --iterations N\n";

typedef struct study_args {
    topogen_opts topo;
    cli_common c;
    const char *models, *batches, *planners, *objective, *out, *topo_dir;
    char prov[4200];          /* OUT.provenance.json */
    long ntopos, seeds, first_seed, generations, threads;
    double budget_s;
    bool quiet;
} study_args;

static void planner_names(char *buf, size_t cap)
{
    planner_run_names(buf, cap, 5, 24);
}

/* Study options with a number. */
static int take_number(study_args *a, int argc, char **argv, int *i)
{
    static const struct { const char *name; long lo, hi; } INTS[] = {
        {"--topologies", 1, 1000000}, {"--seeds", 1, 100000}, {"--planner-seed", 0, 2147483647L},
        {"--generations", 0, 100000000}, {"--threads", 0, 4096},
    };
    long *dst[] = {&a->ntopos, &a->seeds, &a->first_seed, &a->generations, &a->threads};
    const char *v;
    for (size_t k = 0; k < sizeof INTS / sizeof *INTS; k++)
        if (!strcmp(argv[*i], INTS[k].name))
            return cli_value("study", argc, argv, i, &v) ||
                           cli_long("study", INTS[k].name, v, INTS[k].lo, INTS[k].hi, dst[k])
                       ? -1 : 1;
    if (!strcmp(argv[*i], "--budget-s"))
        return cli_value("study", argc, argv, i, &v) ||
                       cli_double("study", "--budget-s", v, 0, 1e9, &a->budget_s) ? -1 : 1;
    return 0;
}

static int take_text(study_args *a, int argc, char **argv, int *i)
{
    static const char *const NAMES[] = {"-m", "--model", "--batch", "--planners",
                                        "--objective", "-o", "--output", "--write-topologies"};
    const char **dst[] = {&a->models, &a->models, &a->batches, &a->planners, &a->objective,
                          &a->out, &a->out, &a->topo_dir};
    for (size_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++)
        if (!strcmp(argv[*i], NAMES[k]))
            return cli_value("study", argc, argv, i, dst[k]) ? -1 : 1;
    if (!strcmp(argv[*i], "--no-progress") || !strcmp(argv[*i], "--quiet") ||
        !strcmp(argv[*i], "-q")) {
        a->quiet = true;
        return 1;
    }
    return 0;
}

/* EXIT_OK to go on (or *help: show the help), else the exit code. */
static int parse_args(study_args *a, int argc, char **argv, bool *help)
{
    *help = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            *help = true;
            return EXIT_OK;
        }
        if (!strcmp(arg, "-t") || !strcmp(arg, "--topology"))
            return cli_usage_error("study", "-t: a study generates its topologies (use "
                                            "`geotrain compare -t` for one file)");
        int r = take_text(a, argc, argv, &i);
        if (!r)
            r = take_number(a, argc, argv, &i);
        if (!r)
            r = topogen_take_option(&a->topo, "study", false, argc, argv, &i);
        if (!r)
            r = cli_take_common(&a->c, argc, argv, &i);
        if (r < 0)
            return EXIT_USAGE;
        if (!r)
            return cli_unknown("study", arg, HELP);
    }
    if (!a->out)
        return cli_usage_error("study", "no output file (-o FILE.csv)");
    if (!strcmp(a->out, "-"))
        return cli_usage_error("study", "-o -: the study appends to a file (it must be "
                                        "resumable); give a file name");
    study_provenance_path(a->out, a->prov, sizeof a->prov);
    const char *outs[] = {a->out, a->prov}, *ins[] = {a->c.profile_path, a->models};
    if (cli_check_outputs("study", outs, 2, ins, 2))
        return EXIT_USAGE;
    return EXIT_OK;
}

/* The planners to run, as listed (or `all` minus exact). */
static int select_planners(const char *spec, const planner_def ***out, int *n)
{
    if (strcmp(spec, "all") && cli_check_list("study", "--planners", spec))
        return EXIT_USAGE;
    int total;
    const planner_def *all = planner_all(&total);
    const planner_def **sel = calloc((size_t)total + 1, sizeof *sel);
    if (!sel)
        return cli_usage_error("study", "out of memory");
    *n = 0;
    char buf[1024], names[2048];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        bool every = !strcmp(tok, "all");
        const planner_def *d = every ? NULL : planner_find(tok);
        if (!every && !d) {
            free(sel);
            planner_names(names, sizeof names);
            return cli_usage_error("study", "unknown planner '%s'; known:%s", tok, names);
        }
        for (int i = 0; i < total; i++) {
            const planner_def *c = &all[i];
            bool want = every ? strcmp(c->name, "exact") != 0 : c == d, dup = false;
            for (int k = 0; k < *n; k++)
                dup |= sel[k] == c;
            if (want && !dup)
                sel[(*n)++] = c;
        }
    }
    if (!*n) {
        free(sel);
        return cli_usage_error("study", "no planner selected by '%s'", spec);
    }
    *out = sel;
    return EXIT_OK;
}

/* Jobs = models x batches. */
static int make_jobs(const study_args *a, job **out, int *n)
{
    if ((a->models && cli_check_list("study", "--model", a->models)) ||
        (a->batches && cli_check_list("study", "--batch", a->batches)))
        return EXIT_USAGE;
    char mb[1024], bb[1024];
    snprintf(mb, sizeof mb, "%s", a->models ? a->models : "gpt3-xl");
    snprintf(bb, sizeof bb, "%s", a->batches ? a->batches : a->models ? "" : "64");
    int nm = 1, nb = 1;
    for (const char *p = mb; *p; p++)
        nm += *p == ',';
    for (const char *p = bb; *p; p++)
        nb += *p == ',';
    job *jobs = calloc((size_t)nm * (size_t)nb, sizeof *jobs);
    if (!jobs)
        return cli_usage_error("study", "out of memory");
    *n = 0;
    char *s1 = NULL;
    for (char *m = strtok_r(mb, ",", &s1); m; m = strtok_r(NULL, ",", &s1)) {
        char bcopy[1024], *s2 = NULL;
        memcpy(bcopy, bb, sizeof bcopy);
        char *b = *bcopy ? strtok_r(bcopy, ",", &s2) : NULL;
        do {
            cli_common c = a->c;
            c.model_arg = m;
            long v = -1;
            if (b && cli_long("study", "--batch", b, 1, 100000000, &v)) {
                free(jobs);
                return EXIT_USAGE;
            }
            c.batch = v;
            gt_err e;
            if (cli_load_job(&c, &jobs[*n], &e)) {
                free(jobs);
                return cli_input_error(&e);
            }
            (*n)++;
        } while (b && (b = strtok_r(NULL, ",", &s2)));
    }
    if (!*n) {
        free(jobs);
        return cli_usage_error("study", "no model given");
    }
    *out = jobs;
    return EXIT_OK;
}

/* --- progress ------------------------------------------------------------------------------ */

typedef struct bar {
    bool tty;
    double last;
    long last_done;
} bar;

static void hms(double s, char *buf, size_t cap)
{
    long t = s < 0 || !isfinite(s) ? 0 : (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

static void show_progress(void *ctx, const study_progress *p)
{
    bar *b = ctx;
    double now = p->elapsed_s;
    long have = p->skipped + p->done, left = p->total - have;
    bool fresh = p->done != b->last_done;
    if (!b->tty && !p->finished && !(fresh && (b->last_done < 0 || now - b->last >= 10)))
        return;
    b->last = now;
    b->last_done = p->done;
    char el[32], eta[32] = "?";
    hms(now, el, sizeof el);
    if (p->finished)
        snprintf(eta, sizeof eta, "%s", left ? "-" : "0:00");
    else if (p->done > 0)
        hms(now / p->done * left, eta, sizeof eta);
    int pct = p->total ? (int)(100 * have / p->total) : 100;
    if (!b->tty) {
        fprintf(stderr, "study: %ld/%ld runs (%d %%), %ld skipped, elapsed %s, ETA %s%s%.60s\n",
                have, p->total, pct, p->skipped, el, eta,
                p->current && *p->current ? "; running " : "", p->current ? p->current : "");
        return;
    }
    char fill[31];
    int w = (int)(30 * have / (p->total ? p->total : 1));
    for (int k = 0; k < 30; k++)
        fill[k] = k < w ? '#' : '.';
    fill[30] = '\0';
    fprintf(stderr, "\rstudy [%s] %ld/%ld %3d%% %s elapsed, ETA %s  %.40s\033[K", fill, have,
            p->total, pct, el, eta, p->finished ? "" : p->current);
    if (p->finished)
        fputc('\n', stderr);
    fflush(stderr);
}

/* --- the command ------------------------------------------------------------------------------ */

static int check_topo_opts(const study_args *a, const topogen_data *d)
{
    if (topogen_check_usage("study", &a->topo, d))
        return EXIT_USAGE;
    if (a->topo.seed + (unsigned long)(a->ntopos - 1) > 4294967295UL)
        return cli_usage_error("study", "--seed %lu + --topologies %ld: topology seeds pass "
                               "4294967295", a->topo.seed, a->ntopos);
    return EXIT_OK;
}

static int report(const study_spec *sp, const study_summary *sum, int rc, const gt_err *e)
{
    if (rc)
        return cli_input_error(e);
    if (sum->interrupted || !sum->complete) {
        fprintf(stderr, "study: interrupted: %ld of %ld runs are in %s; run the same command "
                        "again to resume\n", sum->skipped + sum->ran, sum->total, sp->out);
        return cli_signals_exit_code();
    }
    printf("%s: %ld runs (%ld new: %ld ok, %ld without a plan)%s%s\n", sp->out, sum->total,
           sum->ran, sum->ok, sum->ran - sum->ok,
           sum->dropped_partial ? "; dropped a partial last line" : "",
           sum->reordered ? "; rows put in run order" : "");
    return EXIT_OK;
}

static int run_study(study_args *a, const gt_par *par, volatile int *stop)
{
    topogen_data d;
    gt_err e;
    objective ob;
    if (objective_parse(a->objective ? a->objective : "time", &ob, &e))
        return cli_usage_error("study", "--objective: %s", e.msg);
    if (topogen_data_load(&d, &e))
        return cli_input_error(&e);
    const planner_def **sel = NULL;
    job *jobs = NULL;
    int np = 0, nj = 0, rc = check_topo_opts(a, &d);
    if (!rc)
        rc = select_planners(a->planners ? a->planners : "all", &sel, &np);
    if (!rc)
        rc = make_jobs(a, &jobs, &nj);
    if (!rc) {
        a->topo.data = &d;
        bar b = {par->rank == 0 && isatty(STDERR_FILENO), 0, -1};
        study_spec sp = {a->topo, (int)a->ntopos, sel, np, jobs, nj, (int)a->seeds,
                         (uint64_t)a->first_seed, a->objective, a->budget_s, (int)a->generations,
                         (int)a->threads, a->out, a->topo_dir, stop,
                         a->quiet ? NULL : show_progress, &b, par};
        study_summary sum;
        rc = study_run(&sp, &sum, &e);
        if (!rc && par->rank == 0)
            rc = study_provenance_write(a->out, a->models, a->c.profile_path, &sum, &e);
        rc = par->rank == 0 ? report(&sp, &sum, rc, &e) : rc ? EXIT_INPUT
                                                             : sum.complete ? EXIT_OK : cli_signals_exit_code();
    }
    free(sel);
    free(jobs);
    topogen_data_free(&d);
    return rc;
}

int cmd_study(int argc, char **argv)
{
    study_args a;
    memset(&a, 0, sizeof a);
    topogen_defaults(&a.topo);
    cli_init(&a.c, "study");
    a.ntopos = 10;
    a.seeds = 1;
    a.first_seed = 1;
    bool help;
    int rc = parse_args(&a, argc, argv, &help);
    if (help) {
        char names[2048];
        planner_names(names, sizeof names);
        printf(HELP, names);
        return EXIT_OK;
    }
    if (rc)
        return rc;
    gt_par par;
    gt_err e;
    /* before any rank starts: a bad sidecar must stop the study before a row is written */
    if (study_provenance_check(a.out, &e))
        return cli_input_error(&e);
    if (gt_par_begin(&par, &e))
        return cli_input_error(&e);
    if (par.foreign_size > 1)
        return par.rank ? EXIT_USAGE
                        : cli_usage_error("study", "started by mpirun with %d ranks, but this "
                                          "geotrain was built without MPI (make MPI=1)",
                                          par.foreign_size);
    cli_signals sig;
    volatile int *stop = cli_signals_catch(&sig);
    rc = run_study(&a, &par, stop);
    cli_signals_restore(&sig);
    gt_par_end(&par);
    return rc;
}
