/* cmd_plan.c — `geotrain plan`: run a planner and write the plan file
 * (docs/formats.md, Plan). The file is plan_to_json() plus "objective_value"
 * (the planner's figure: simulated for memetic and exact), "estimate" and
 * "simulated" blocks; with --objective pareto (memetic, exact) a front: a
 * JSON of plans and a CSV beside it. Progress goes to stderr (docs/cli.md);
 * at the end a summary of the plan goes to stdout. SIGINT/SIGTERM
 * (cli/signals.h) write the best plan so far and exit 128 + signal. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "planner/encoding.h"
#include "planner/exact.h"
#include "planner/islands.h"
#include "planner/memetic.h"
#include "planner/objective.h"
#include "planner/pareto.h"
#include "planner/planner.h"
#include "planner/freq_finish.h"
#include "sim/base/atomic_file.h"
#include "cli/cli.h"
#include "cli/signals.h"
#include "cli/version.h"
#include "sim/estimator/estimator.h"
#include "sim/base/jsonio.h"
#include "sim/engine/simulator.h"
#include "sim/models/plan_check.h"

static const char HELP[] =
    "usage: geotrain plan -t TOPO -m MODEL [JOB] [--planner NAME] [--objective OBJ]\n"
    "                     [--seed S] [--budget-s SEC | --generations N] [--threads N]\n"
    "                     -o PLAN\n\n"
    "Choose GPUs, pipeline shape, placement, layer cuts, microbatches, schedule and\n"
    "gradient sync for a training job, and write the plan (docs/formats.md, Plan)\n"
    "with its objective value, the estimator's and the simulator's figures.\n\n"
    "  --planner NAME     memetic (default), exact, an ablation or a baseline (below)\n"
    "  --objective OBJ    time (default), energy, weighted:W, energy-within:X, carbon,\n"
    "                     cost, pareto (memetic, exact: -o front.json + front.csv)\n"
    "  --seed S           random seed (default 1); same seed, same plan\n"
    "  --budget-s SEC     wall-clock budget (exact: the longest run it accepts)\n"
    "  --generations N    generation budget (deterministic; not with --budget-s)\n"
    "  --threads N        OpenMP threads (default: all); the plan does not depend on it\n"
    "  --islands K        memetic island model: K searches (island i seeded S + 7919 i)\n"
    "                     exchanging their best plans in a ring; with mpirun the islands\n"
    "                     spread over the ranks and the plan is the same as in one\n"
    "                     process (build with make MPI=1). Objectives time, energy,\n"
    "                     weighted, carbon, cost\n"
    "  --migrate-every G  generations between migrations (default 10)\n"
    "  --freq             memetic, objectives energy, weighted, energy-within, pareto:\n"
    "                     per-stage SM clocks on the finalists (no slowdown; geotrain freq)\n"
    "  -o, --output PLAN  where to write the plan\n"
    "  -q, --quiet        no progress on stderr (a line that redraws itself on a\n"
    "                     terminal, else a plain line every 5 s with the time left)\n\n"
    "Ctrl-C (or SIGTERM) stops the search: the best plan so far is written and the\n"
    "exit code is 130 (143 for SIGTERM). A second signal ends at once.\n\n%s\n"
    "example:\n"
    "  geotrain plan -t topologies/pools/world-hetero.json -m gpt3-xl --batch 1024 \\\n"
    "      --objective time -o p.json\n"
    "  mpirun -n 4 build-mpi/geotrain plan -t T.json -m gpt3-xl --islands 4 \\\n"
    "      --generations 100 -o p.json\n\nplanners:\n";

typedef struct plan_args {
    cli_common c;
    const char *planner, *objective, *out;
    long seed, generations, threads, microbatch, islands, migrate_every;
    double budget_s;
    bool freq;     /* --freq: SM clocks on the search's finalists (planner/freq_finish.h) */
    bool quiet;
} plan_args;

static void print_help(void)
{
    printf(HELP, CLI_JOB_HELP);
    int n;
    const planner_def *all = planner_all(&n);
    for (int i = 0; i < n; i++)
        printf("  %-18s %s\n", all[i].name, all[i].summary);
}

static int parse_opt(plan_args *a, int argc, char **argv, int *i)
{
    const char *arg = argv[*i], *v;
    if (cli_value("plan", argc, argv, i, &v))
        return EXIT_USAGE;
    if (!strcmp(arg, "--planner"))
        a->planner = v;
    else if (!strcmp(arg, "--objective"))
        a->objective = v;
    else if (!strcmp(arg, "-o") || !strcmp(arg, "--output"))
        a->out = v;
    else if (!strcmp(arg, "--seed"))
        return cli_long("plan", arg, v, 0, 0x7fffffffL, &a->seed) ? EXIT_USAGE : 0;
    else if (!strcmp(arg, "--generations"))
        return cli_long("plan", arg, v, 1, 100000000L, &a->generations) ? EXIT_USAGE : 0;
    else if (!strcmp(arg, "--threads"))
        return cli_long("plan", arg, v, 1, 4096, &a->threads) ? EXIT_USAGE : 0;
    else if (!strcmp(arg, "--islands"))
        return cli_long("plan", arg, v, 1, 4096, &a->islands) ? EXIT_USAGE : 0;
    else if (!strcmp(arg, "--migrate-every"))
        return cli_long("plan", arg, v, 1, 1000000L, &a->migrate_every) ? EXIT_USAGE : 0;
    else if (!strcmp(arg, "--budget-s"))
        return cli_double("plan", arg, v, 1e-3, 1e7, &a->budget_s) ? EXIT_USAGE : 0;
    return 0;
}

static bool takes_value(const char *a)
{
    static const char *const opts[] = {"--planner", "--objective", "-o", "--output", "--seed",
                                       "--generations", "--threads", "--budget-s", "--islands",
                                       "--migrate-every", NULL};
    for (int i = 0; opts[i]; i++)
        if (!strcmp(a, opts[i]))
            return true;
    return false;
}

/* The input files of this run, for the provenance block of what it writes
 * (set once by cmd_plan, before any search). */
static const char *g_inputs[3];

static void csv_path(const char *json_path, char *out, size_t cap)
{
    size_t n = strlen(json_path);
    if (n > 5 && !strcmp(json_path + n - 5, ".json"))
        snprintf(out, cap, "%.*s.csv", (int)(n - 5), json_path);
    else
        snprintf(out, cap, "%s.csv", json_path);
}

/* Returns -1 to go on, or an exit code. */
static int parse_args(plan_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    cli_init(&a->c, "plan");
    a->planner = "memetic";
    a->objective = "time";
    a->seed = 1;
    for (int i = 1; i < argc; i++) {
        int r = cli_take_common(&a->c, argc, argv, &i);
        if (r < 0)
            return EXIT_USAGE;
        if (r)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            print_help();
            return EXIT_OK;
        }
        if (!strcmp(argv[i], "--freq")) {
            a->freq = true;
            continue;
        }
        if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            a->quiet = true;
            continue;
        }
        if (!takes_value(argv[i]))
            return cli_unknown("plan", argv[i], HELP);
        if (parse_opt(a, argc, argv, &i))
            return EXIT_USAGE;
    }
    if (a->budget_s > 0 && a->generations > 0)
        return cli_usage_error("plan", "--budget-s and --generations contradict each other: "
                                       "give one budget");
    if (a->migrate_every && !a->islands)
        return cli_usage_error("plan", "--migrate-every needs --islands K");
    if (a->islands && !memetic_config(planner_find(a->planner)))
        return cli_usage_error("plan", "--islands needs --planner memetic (or a memetic "
                                       "ablation), not '%s'", a->planner);
    if (a->freq && (!memetic_config(planner_find(a->planner)) || a->islands || !freq_finish_applies(a->objective)))
        return cli_usage_error("plan", "--freq needs the memetic planner (no --islands) and the "
                                       "objective energy, weighted:W, energy-within:X or pareto");
    if (!a->c.topo_path || !a->c.model_arg || !a->out)
        return cli_usage_error("plan", "need -t TOPO, -m MODEL and -o PLAN");
    const char *ins[3] = {a->c.topo_path, a->c.model_arg, a->c.profile_path};
    char cpath[1024];
    csv_path(a->out, cpath, sizeof cpath);
    const char *outs[2] = {a->out, !strcmp(a->objective, "pareto") ? cpath : NULL};
    if (cli_check_outputs("plan", outs, 2, ins, 3))
        return EXIT_USAGE;
    memcpy(g_inputs, ins, sizeof ins);
    return -1;
}

/* The job, with a microbatch that does not divide the batch reported with
 * the admissible values. */
static int load_job(plan_args *a, job *j)
{
    gt_err e;
    long mb = a->c.microbatch;
    a->c.microbatch = -1;
    if (cli_load_job(&a->c, j, &e) || cli_job_plannable(j, &e))
        return cli_input_error(&e);
    if (mb > 0 && j->batch % mb) {
        fprintf(stderr, "error: the batch of %d sequences cannot be split into microbatches "
                        "of %ld; admissible --microbatch values:", j->batch, mb);
        for (int d = 1; d <= j->batch; d++)
            if (j->batch % d == 0)
                fprintf(stderr, " %d", d);
        fputc('\n', stderr);
        return EXIT_INPUT;
    }
    if (mb > 0)
        j->microbatch = (int)mb;
    return -1;
}

/* --- output -------------------------------------------------------------------------- */

static json_t *metrics_json(const obj_metrics *m, double tokens, int gpus)
{
    json_t *o = json_object();
    json_object_set_new(o, "iteration_time_s", json_real(m->time_s));
    json_object_set_new(o, "energy_j", json_real(m->energy_j));
    json_object_set_new(o, "carbon_g", json_real(m->carbon_g));
    json_object_set_new(o, "usd", json_real(m->usd));
    json_object_set_new(o, "tokens_per_s", json_real(m->time_s > 0 ? tokens / m->time_s : 0));
    json_object_set_new(o, "gpus_used", json_integer(gpus));
    return o;
}

typedef struct evaluated {
    obj_metrics est, sim;
    sim_result sr;
    bool have_est, have_sim;
} evaluated;

static void evaluate(const topology *t, const job *j, const plan *p, evaluated *ev)
{
    gt_err e;
    est_summary s;
    memset(ev, 0, sizeof *ev);
    if (estimate_plan(t, j, p, &s, &e) == 0) {
        ev->est = obj_from_estimate(&s);
        ev->have_est = true;
    }
    sim_options so;
    sim_options_default(&so);
    if (enc_replay_work(p) > ENC_REPLAY_MAX_WORK) /* see encoding.h */
        return;
    if (simulate_plan(t, j, p, &so, &ev->sr, &e) == 0) {
        ev->sim = obj_from_sim(&ev->sr);
        ev->have_sim = true;
    }
}

static json_t *plan_doc(const topology *t, const job *j, const plan *p, const evaluated *ev,
                        double objective_value, const char *note)
{
    json_t *root = plan_to_json(p, t);
    double tokens = (double)j->batch * j->seq;
    int gpus = plan_gpus_used(p);
    json_object_set_new(root, "objective_value", json_real(objective_value));
    if (ev->have_est)
        json_object_set_new(root, "estimate", metrics_json(&ev->est, tokens, gpus));
    if (ev->have_sim) {
        json_t *s = metrics_json(&ev->sim, tokens, gpus);
        json_object_set_new(s, "utilization", json_real(ev->sr.utilization));
        json_object_set_new(s, "bubble_fraction", json_real(ev->sr.bubble_fraction));
        json_object_set_new(root, "simulated", s);
    }
    json_object_set_new(root, "topology", json_string(t->path));
    json_object_set_new(root, "model", json_string(j->model.id));
    if (note && *note)
        json_object_set_new(root, "note", json_string(note));
    return root;
}

static void print_summary(const topology *t, const plan *p, const evaluated *ev,
                          const objective *obj, const planner_stats *st, const char *path)
{
    printf("plan %s (objective %s): %d GPUs of %d\n", p->planner, obj->text, plan_gpus_used(p),
           t->ngpus);
    for (int s = 0; s < t->nsites; s++)
        for (int ty = 0; ty < t->ntypes; ty++) {
            int n = 0;
            for (int pi = 0; pi < p->npipes; pi++)
                for (int k = 0; k < p->pipes[pi].nstages; k++)
                    for (int x = 0; x < p->pipes[pi].stages[k].ngpus; x++) {
                        const topo_gpu *g = &t->gpus[p->pipes[pi].stages[k].gpus[x]];
                        n += g->site == s && g->type == ty;
                    }
            if (n)
                printf("  %-16s %3d x %s\n", t->sites[s].id, n, t->types[ty].id);
        }
    printf("shape: %d pipeline%s, schedule %s, sync %s, microbatch %d\n", p->npipes,
           p->npipes > 1 ? "s" : "", sched_name(p->schedule), sync_name(p->sync),
           p->microbatch_size);
    for (int pi = 0; pi < p->npipes && pi < 16; pi++) {
        const plan_pipeline *pp = &p->pipes[pi];
        printf("  pipeline %d: %d stages, %d microbatches, layers", pi, pp->nstages,
               pp->microbatches);
        for (int k = 0; k < pp->nstages && k < 24; k++)
            printf(" %d-%d", pp->stages[k].first, pp->stages[k].last);
        printf("%s\n", pp->nstages > 24 ? " ..." : "");
    }
    if (p->npipes > 16)
        printf("  ... %d more pipelines\n", p->npipes - 16);
    if (ev->have_est)
        printf("estimated: iteration %.6g s, %.6g J\n", ev->est.time_s, ev->est.energy_j);
    if (ev->have_sim)
        printf("simulated: iteration %.6g s, %.6g J\n", ev->sim.time_s, ev->sim.energy_j);
    else
        printf("simulated: not replayed (plan too large for the simulator: %.3g > %.3g, "
               "see planner/encoding.h)\n", enc_replay_work(p), ENC_REPLAY_MAX_WORK);
    printf("objective value %.9g %s; %ld evaluations in %.2f s; %s\n", st->objective_value,
           objective_unit(obj), st->evaluations, st->plan_time_s, st->note);
    printf("wrote %s\n", path);
}

/* --- pareto --------------------------------------------------------------------------- */

typedef struct csv_ctx {
    const pareto_front *f;
    const topology *t;
} csv_ctx;

static int write_csv(FILE *fp, void *vctx)
{
    const csv_ctx *c = vctx;
    fprintf(fp, "pareto_index,gpus_used,pipelines,schedule,sync,microbatch,"
                "est_iteration_time_s,est_energy_j,iteration_time_s,energy_j\n");
    for (int i = 0; i < c->f->n; i++) {
        const plan *p = &c->f->plans[i];
        fprintf(fp, "%d,%d,%d,%s,%s,%d,%.9g,%.9g,%.9g,%.9g\n", i, plan_gpus_used(p), p->npipes,
                sched_name(p->schedule), sync_name(p->sync), p->microbatch_size,
                c->f->est[i].time_s, c->f->est[i].energy_j, c->f->sim[i].time_s,
                c->f->sim[i].energy_j);
    }
    return ferror(fp) ? -1 : 0;
}

static int write_front(const topology *t, const job *j, const pareto_front *f,
                       const char *planner, const char *path, gt_err *e)
{
    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "planner", json_string(planner));
    json_object_set_new(root, "objective", json_string("pareto"));
    json_object_set_new(root, "topology", json_string(t->path));
    json_object_set_new(root, "model", json_string(j->model.id));
    for (int i = 0; i < f->n; i++) {
        evaluated ev;
        memset(&ev, 0, sizeof ev);
        ev.est = f->est[i];
        ev.sim = f->sim[i];
        ev.have_est = ev.have_sim = true;
        json_t *pj = plan_doc(t, j, &f->plans[i], &ev, f->sim[i].time_s, NULL);
        json_object_del(pj, "simulated");
        json_object_set_new(pj, "simulated", metrics_json(&f->sim[i], (double)j->batch * j->seq,
                                                          plan_gpus_used(&f->plans[i])));
        json_object_set_new(pj, "pareto_index", json_integer(i));
        json_array_append_new(arr, pj);
    }
    json_object_set_new(root, "plans", arr);
    cli_add_provenance(root, g_inputs, 3);
    int rc = json_write_atomic(root, path, e);
    json_decref(root);
    char cpath[1024];
    csv_path(path, cpath, sizeof cpath);
    csv_ctx c = {f, t};
    if (!rc)
        rc = atomic_write(cpath, write_csv, &c, e);
    if (!rc)
        printf("pareto front: %d plans; wrote %s and %s\n", f->n, path, cpath);
    return rc;
}

static int run_front(const topology *t, const job *j, const planner_opts *o, const char *name,
                     const char *out, bool freq)
{
    pareto_front f;
    planner_stats st;
    gt_err e;
    int rc;
    if (!strcmp(name, "memetic"))
        rc = memetic_front(t, j, o, &f, &st, &e);
    else if (!strcmp(name, "exact"))
        rc = exact_front(t, j, o, &f, &st, &e);
    else
        return cli_usage_error("plan", "--objective pareto needs --planner memetic or exact");
    if (!rc && freq) /* --freq: clocks on every plan of the front */
        rc = freq_finish_front(t, j, o->seed, &f, &e);
    if (rc)
        return cli_signals_caught() ? cli_signals_exit_code() : cli_input_error(&e);
    for (int i = 0; i < f.n; i++)
        printf("  %2d: %.6g s  %.6g J  (estimated %.6g s, %.6g J), %d GPUs\n", i, f.sim[i].time_s,
               f.sim[i].energy_j, f.est[i].time_s, f.est[i].energy_j, plan_gpus_used(&f.plans[i]));
    rc = write_front(t, j, &f, name, out, &e) ? cli_input_error(&e) : EXIT_OK;
    pareto_front_free(&f);
    return cli_signals_caught() && rc == EXIT_OK ? cli_signals_exit_code() : rc;
}

/* --- the command ------------------------------------------------------------------------ */

/* Writes plan p (atomically) with its figures and prints the summary. */
static int write_plan(const topology *t, const job *j, plan *p, const objective *obj,
                      const planner_stats *st, const char *out)
{
    gt_err e;
    evaluated ev;
    evaluate(t, j, p, &ev);
    json_t *root = plan_doc(t, j, p, &ev, st->objective_value, st->note);
    cli_add_provenance(root, g_inputs, 3);
    int rc = json_write_atomic(root, out, &e) ? cli_input_error(&e) : EXIT_OK;
    json_decref(root);
    if (rc == EXIT_OK)
        print_summary(t, p, &ev, obj, st, out);
    plan_free(p);
    return cli_signals_caught() && rc == EXIT_OK ? cli_signals_exit_code() : rc;
}

static int run_single(const topology *t, const job *j, const planner_def *pd,
                      const planner_opts *o, const objective *obj, const char *out, bool freq)
{
    plan p;
    planner_stats st;
    gt_err e;
    memset(&st, 0, sizeof st);
    e.msg[0] = '\0';
    if (planner_plan(pd, t, j, o, &p, &st, &e)) {
        if (cli_signals_caught()) {
            fprintf(stderr, "interrupted before any plan was found\n");
            return cli_signals_exit_code();
        }
        return cli_input_error(&e);
    }
    if (freq && freq_finish_plan(t, j, o->objective, &p, &st, &e)) { /* --freq */
        plan_free(&p);
        return cli_input_error(&e);
    }
    return write_plan(t, j, &p, obj, &st, out);
}

/* `--islands K`: the island model over the MPI ranks (or one process); rank 0
 * writes the plan, the other ranks only search. */
static int run_islands(const topology *t, const job *j, const plan_args *a,
                       const planner_def *pd, const planner_opts *o, const objective *obj)
{
    gt_par par;
    gt_err e;
    e.msg[0] = '\0';
    if (gt_par_begin(&par, &e))
        return cli_input_error(&e);
    if (par.foreign_size > 1) {
        gt_par_end(&par);
        return cli_usage_error("plan", "started by mpirun with %d ranks, but this geotrain "
                                       "was built without MPI (make MPI=1)", par.foreign_size);
    }
    /* the seed planners first, as planner_plan would: every rank gets the
     * same seeds */
    planner_opts os = *o;
    if (planner_seeds_run(pd, t, j, &os)) {
        gt_par_end(&par);
        gt_fail(&e, "out of memory");
        return cli_input_error(&e);
    }
    island_cfg ic = {(int)a->islands, (int)a->migrate_every, 0, 0, os.generations,
                     os.budget_s, os.stop};
    plan p;
    planner_stats st;
    island_report rep;
    memset(&st, 0, sizeof st);
    int rc = memetic_islands(&par, t, j, &os, memetic_config(pd), &ic, &p, &st, &rep, &e);
    planner_seeds_free(&os);
    if (rc) {
        rc = cli_signals_caught() ? cli_signals_exit_code() : cli_input_error(&e);
    } else if (rep.have_plan) {
        rc = write_plan(t, j, &p, obj, &st, a->out);
    }
    gt_par_end(&par);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    plan_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc >= 0)
        return rc;
    objective obj;
    gt_err e;
    if (objective_parse(a.objective, &obj, &e))
        return cli_usage_error("plan", "%s", e.msg);
    const planner_def *pd = planner_find(a.planner);
    if (!pd)
        return cli_usage_error("plan", "unknown planner '%s' (see geotrain plan --help)",
                               a.planner);
    job j;
    topology t;
    if ((rc = load_job(&a, &j)) >= 0)
        return rc;
    if (cli_load_topology(&a.c, &t, &e))
        return cli_input_error(&e);
    planner_opts o = {a.objective, (uint64_t)a.seed, a.budget_s, (int)a.generations,
                      (int)a.threads, !a.quiet, 0, NULL, NULL, 0};
    cli_signals sig;
    o.stop = cli_signals_catch(&sig);
    if (a.islands && (obj.kind == OBJ_PARETO || objective_needs_fastest(&obj))) {
        topo_free(&t);
        return cli_usage_error("plan", "--islands supports the objectives time, energy, "
                                       "weighted:W, carbon and cost (not %s)", a.objective);
    }
    if (a.islands)
        rc = run_islands(&t, &j, &a, pd, &o, &obj);
    else if (obj.kind == OBJ_PARETO)
        rc = run_front(&t, &j, &o, pd->name, a.out, a.freq);
    else
        rc = run_single(&t, &j, pd, &o, &obj, a.out, a.freq);
    cli_signals_restore(&sig);
    topo_free(&t);
    return rc;
}
