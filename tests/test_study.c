/* test_study.c — `geotrain study` (experiments/study.h) and the island model
 * (planner/islands.h).
 *
 * Known answers: a study run twice gives the same CSV; a study interrupted
 * (the stop flag, or the file truncated anywhere, or rows shuffled and some
 * deleted) and resumed gives that same CSV again. plan_time_s, the last
 * column, is wall clock and is cut off before comparing. Rows from other
 * options, duplicated keys and foreign headers are refused.
 *
 * Islands run on toy islands whose candidates are a fixed function of
 * (island, generation): the result must be the minimum over every candidate
 * generated, and ring migration must carry a value one island per exchange.
 *
 * `test_study --islands-demo` (used by tests/mpi_test.sh under mpirun) runs
 * the toy islands over the MPI group and prints the result on rank 0; the
 * output must not depend on the number of ranks. */
#include "testutil.h"

#include <math.h>

#include "study/study.h"
#include "planner/islands.h"
#include "cli/cli.h"

/* --- helpers ------------------------------------------------------------------- */

/* The file without its last column (plan_time_s): malloc'd. */
static char *without_time(const char *path)
{
    char *s = tu_read_file(path, NULL);
    assert_non_null(s);
    char *out = malloc(strlen(s) + 1), *w = out;
    assert_non_null(out);
    for (char *line = s; *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char *comma = NULL;
        for (size_t k = 0; k < n; k++)
            if (line[k] == ',')
                comma = line + k;
        size_t keep = comma ? (size_t)(comma - line) : n;
        memcpy(w, line, keep);
        w += keep;
        *w++ = '\n';
        line += n + (nl != NULL);
    }
    *w = '\0';
    free(s);
    return out;
}

static const char *fpath(const char *name);

/* Files a and b of the test folder hold the same study (plan_time_s aside). */
static void assert_same_study(const char *a, const char *b)
{
    char pa[128], pb[128];
    snprintf(pa, sizeof pa, "%s", fpath(a));
    snprintf(pb, sizeof pb, "%s", fpath(b));
    char *x = without_time(pa), *y = without_time(pb);
    if (strcmp(x, y))
        fprintf(stderr, "---- %s ----\n%s---- %s ----\n%s", a, x, b, y);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

static int count_lines(const char *path)
{
    char *s = tu_read_file(path, NULL);
    int n = 0;
    for (char *p = s; p && *p; p++)
        n += *p == '\n';
    free(s);
    return n;
}

/* A small study: 3 topologies of 2 sites x 8 GPUs, two cheap baselines (and
 * memetic with 3 generations when registered), 2 seeds, GPT-3 XL batch 16. */
typedef struct fixture {
    const planner_def *planners[3];
    job jobs[1];
    study_spec sp;
    char dir[64], path[128];
    volatile int stop;
} fixture;

static fixture FX;

static int setup(void **state)
{
    (void)state;
    memset(&FX, 0, sizeof FX);
    int n = 0;
    const char *want[] = {"megatron", "greedy", "memetic"};
    for (int k = 0; k < 3; k++)
        if (planner_find(want[k]))
            FX.planners[n++] = planner_find(want[k]);
    if (n == 0) {
        int total;
        FX.planners[n++] = &planner_all(&total)[0];
    }
    model_spec m;
    gt_err e;
    if (model_resolve("gpt3-xl", &m, &e))
        return -1;
    job_defaults(&FX.jobs[0], &m);
    FX.jobs[0].batch = 16;
    if (!tu_mkdtemp(FX.dir))
        return -1;
    topogen_defaults(&FX.sp.topo);
    FX.sp.topo.sites = 2;
    FX.sp.topo.gpus = 8;
    FX.sp.topo.seed = 11;
    FX.sp.ntopos = 3;
    FX.sp.planners = FX.planners;
    FX.sp.nplanners = n;
    FX.sp.jobs = FX.jobs;
    FX.sp.njobs = 1;
    FX.sp.nseeds = 2;
    FX.sp.first_seed = 1;
    FX.sp.generations = 3;
    FX.sp.stop = &FX.stop;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(FX.dir);
    return 0;
}

static const char *fpath(const char *name)
{
    snprintf(FX.path, sizeof FX.path, "%s/%s", FX.dir, name);
    return FX.path;
}

static int run_to(const char *name, study_summary *sum)
{
    gt_err e = {{0}};
    FX.stop = 0;
    study_spec sp = FX.sp;
    sp.out = fpath(name);
    int rc = study_run(&sp, sum, &e);
    if (rc)
        fprintf(stderr, "study_run: %s\n", e.msg);
    return rc;
}

static long expected_rows(void)
{
    return (long)FX.sp.ntopos * FX.sp.nplanners * FX.sp.nseeds;
}

/* The reference file "ref.csv", made once. */
static void reference(void)
{
    if (tu_exists(fpath("ref.csv")))
        return;
    study_summary sum;
    assert_int_equal(run_to("ref.csv", &sum), 0);
    assert_true(sum.complete);
    assert_int_equal(sum.ran, expected_rows());
}

static void copy_prefix(const char *from, const char *to, size_t n)
{
    size_t len = 0;
    char *s = tu_read_file(fpath(from), &len);
    assert_non_null(s);
    assert_true(n <= len);
    char dst[128];
    snprintf(dst, sizeof dst, "%s", fpath(to));
    assert_int_equal(tu_write_buf(dst, s, n), 0);
    free(s);
}

/* --- study ----------------------------------------------------------------------- */

static void columns_are_documented(void **state)
{
    (void)state;
    assert_int_equal(study_column("topology"), 0);
    assert_int_equal(study_column("planner"), 11);
    assert_int_equal(study_column("seed"), 12);
    assert_int_equal(study_column("job"), 6);
    assert_int_equal(study_column("status"), 14);
    assert_int_equal(study_column("plan_time_s"), 27); /* last: the one wall-clock column */
    assert_int_equal(study_column("nope"), -1);
    const char *h = study_header();
    assert_string_equal(h + strlen(h) - strlen("plan_time_s"), "plan_time_s");
}

static void study_twice_gives_the_same_csv(void **state)
{
    (void)state;
    reference();
    study_summary sum;
    assert_int_equal(run_to("again.csv", &sum), 0);
    assert_same_study("ref.csv", "again.csv");
    assert_int_equal(count_lines(fpath("ref.csv")), 1 + expected_rows());
    /* every row names its key and its topology's inputs */
    char *s = tu_read_file(fpath("ref.csv"), NULL);
    assert_non_null(strstr(s, "\n0,11,gen-2s-8g-seed11,2,8,"));
    assert_non_null(strstr(s, "\n2,13,gen-2s-8g-seed13,2,8,"));
    free(s);
}

static void rerun_of_a_finished_study_runs_nothing(void **state)
{
    (void)state;
    reference();
    size_t len = 0;
    free(tu_read_file(fpath("ref.csv"), &len));
    copy_prefix("ref.csv", "done.csv", len);
    study_summary sum;
    assert_int_equal(run_to("done.csv", &sum), 0);
    assert_int_equal(sum.ran, 0);
    assert_int_equal(sum.skipped, expected_rows());
    assert_true(sum.complete);
    assert_false(sum.reordered);
}

/* Truncation anywhere: in the header, at a row boundary, mid-row. */
static void truncated_file_resumes_to_the_same_csv(void **state)
{
    (void)state;
    reference();
    size_t len = 0;
    char *s = tu_read_file(fpath("ref.csv"), &len);
    size_t header = (size_t)(strchr(s, '\n') - s) + 1;
    size_t cuts[] = {0, 7, header, header + 5, len / 2, len - 3, len - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        copy_prefix("ref.csv", "cut.csv", cuts[c]);
        study_summary sum;
        assert_int_equal(run_to("cut.csv", &sum), 0);
        assert_true(sum.complete);
        bool partial = cuts[c] > 0 && s[cuts[c] - 1] != '\n';
        assert_int_equal(sum.dropped_partial, partial);
        assert_same_study("ref.csv", "cut.csv");
    }
    free(s);
}

/* Rows out of order with holes (as MPI ranks or a crash leave them). */
static void shuffled_rows_with_holes_are_completed_in_order(void **state)
{
    (void)state;
    reference();
    char *s = tu_read_file(fpath("ref.csv"), NULL);
    char *lines[64] = {0};
    int n = 0;
    for (char *save = NULL, *l = strtok_r(s, "\n", &save); l && n < 64;
         l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    char buf[65536] = "";
    strcat(buf, lines[0]);
    strcat(buf, "\n");
    for (int i = n - 1; i >= 1; i--) /* reversed, every third row missing */
        if (i % 3) {
            strcat(buf, lines[i]);
            strcat(buf, "\n");
        }
    assert_int_equal(tu_write_file(fpath("shuf.csv"), buf), 0);
    study_summary sum;
    assert_int_equal(run_to("shuf.csv", &sum), 0);
    assert_true(sum.complete);
    assert_true(sum.reordered);
    assert_int_equal(sum.ran, (n - 1) / 3);
    assert_same_study("ref.csv", "shuf.csv");
    free(s);
}

static void stop_after(void *ctx, const study_progress *p)
{
    (void)ctx;
    if (p->done >= 2)
        FX.stop = 1;
}

static void stopped_study_resumes(void **state)
{
    (void)state;
    reference();
    gt_err e;
    study_spec sp = FX.sp;
    sp.out = fpath("stop.csv");
    sp.progress = stop_after;
    FX.stop = 0;
    study_summary sum;
    assert_int_equal(study_run(&sp, &sum, &e), 0);
    assert_true(sum.interrupted);
    assert_false(sum.complete);
    assert_int_equal(count_lines(fpath("stop.csv")), 1 + 2);
    assert_int_equal(run_to("stop.csv", &sum), 0);
    assert_true(sum.complete);
    assert_int_equal(sum.skipped, 2);
    assert_same_study("ref.csv", "stop.csv");
}

static void expect_refused(const char *content, const char *what)
{
    assert_int_equal(tu_write_file(fpath("bad.csv"), content), 0);
    gt_err e = {{0}};
    study_spec sp = FX.sp;
    sp.out = fpath("bad.csv");
    study_summary sum;
    assert_int_equal(study_run(&sp, &sum, &e), -1);
    if (!strstr(e.msg, what))
        fprintf(stderr, "message: %s\n(wanted '%s')\n", e.msg, what);
    assert_non_null(strstr(e.msg, what));
}

static void foreign_rows_are_refused(void **state)
{
    (void)state;
    reference();
    char *s = tu_read_file(fpath("ref.csv"), NULL);
    char *row1 = strchr(s, '\n') + 1, *row2 = strchr(row1, '\n') + 1;
    char buf[16384];
    /* the same row twice */
    snprintf(buf, sizeof buf, "%.*s%.*s", (int)(row2 - s), s, (int)(row2 - row1), row1);
    expect_refused(buf, "appears twice");
    /* a row of another study (other --sites: its topology name differs) */
    snprintf(buf, sizeof buf, "%.*s", (int)(row2 - s), s);
    char *name = strstr(buf, "gen-2s-");
    name[4] = '3';
    expect_refused(buf, "other options");
    /* a topology outside --topologies */
    snprintf(buf, sizeof buf, "%s\n7%s", study_header(), strchr(row1, ','));
    expect_refused(buf, "topology '7'");
    expect_refused("a,b,c\n1,2,3\n", "not a study CSV");
    expect_refused("no newline here", "not a study CSV");
    char *kept = tu_read_file(fpath("bad.csv"), NULL);
    assert_string_equal(kept, "no newline here"); /* untouched */
    free(kept);
    free(s);
}

/* --- the command -------------------------------------------------------------------- */

static void command_usage_errors(void **state)
{
    (void)state;
    tu_run r;
    tu_geotrain(&r, "study", "--topologies", "1", "--planners", "nosuch", "-o",
                fpath("x.csv"), NULL);
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(strstr(r.err, "unknown planner 'nosuch'"));
    assert_non_null(strstr(r.err, "megatron")); /* the valid names are listed */
    tu_run_free(&r);
    tu_geotrain(&r, "study", "-o", "-", NULL);
    assert_int_equal(r.status, EXIT_USAGE);
    tu_run_free(&r);
    tu_geotrain(&r, "study", "--topologies", "2", NULL);
    assert_int_equal(r.status, EXIT_USAGE);
    tu_run_free(&r);
    tu_geotrain(&r, "study", "--mix", "h999:1", "-o", fpath("x.csv"), NULL);
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(strstr(r.err, "h999"));
    tu_run_free(&r);
    tu_geotrain(&r, "study", "-t", "x.json", "-o", fpath("x.csv"), NULL);
    assert_int_equal(r.status, EXIT_USAGE);
    tu_run_free(&r);
    assert_false(tu_exists(fpath("x.csv")));
}

/* Two jobs (batches), a written topology folder, progress lines, rerun. */
static void command_runs_and_resumes(void **state)
{
    (void)state;
    char csv[128], dir[128];
    snprintf(csv, sizeof csv, "%s", fpath("cmd.csv"));
    snprintf(dir, sizeof dir, "%s", fpath("topos"));
    tu_run r;
    tu_geotrain(&r, "study", "--topologies", "2", "--sites", "2", "--gpus", "8", "--planners",
                FX.planners[0]->name, "--batch", "16,32", "--write-topologies", dir, "-o", csv,
                NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "4/4 runs"));
    assert_non_null(strstr(r.out, "4 runs"));
    tu_run_free(&r);
    assert_int_equal(count_lines(csv), 1 + 4);
    char t0[160];
    snprintf(t0, sizeof t0, "%s/topology-0001.json", dir);
    tu_geotrain(&r, "topo", "check", t0, NULL);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    tu_geotrain(&r, "study", "--topologies", "2", "--sites", "2", "--gpus", "8", "--planners",
                FX.planners[0]->name, "--batch", "16,32", "-o", csv, "--no-progress", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "0 new"));
    assert_string_equal(r.err, "");
    tu_run_free(&r);
    /* the job column tells the batches apart */
    char *s = tu_read_file(csv, NULL);
    assert_non_null(strstr(s, ",0,gpt3_1.3b,16,"));
    assert_non_null(strstr(s, ",1,gpt3_1.3b,32,"));
    free(s);
    tu_rmtree(dir);
}

/* --- islands ------------------------------------------------------------------------ */

/* Toy island: candidate of (island, generation) from a hash; keeps the min. */
typedef struct toy_ctx {
    int fail_island;         /* create fails for this island (-1 = none) */
    int done_after;          /* an island is done after this many generations (0 = never) */
    double great;            /* island 2's candidate at generation 0 (NAN = hashed) */
    double final_best[16];   /* each island's best when the census asks */
} toy_ctx;

typedef struct toy {
    toy_ctx *ctx;
    int id, gen;
    long evals;
    double best;
} toy;

static double toy_candidate(const toy_ctx *c, int island, int gen)
{
    if (island == 2 && gen == 0 && !isnan(c->great))
        return c->great;
    uint64_t x = (uint64_t)(island + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(gen + 7) * 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 29;
    return 0.1 + (double)(x >> 11) / 9007199254740992.0;
}

static int toy_create(void *ctx, int island, int n, void **state, gt_err *e)
{
    (void)n;
    toy_ctx *c = ctx;
    if (island == c->fail_island)
        return gt_fail(e, "toy island %d failed", island);
    toy *t = calloc(1, sizeof *t);
    t->ctx = c;
    t->id = island;
    t->best = INFINITY;
    *state = t;
    return 0;
}

static int toy_evolve(void *state, int gens, int *done, gt_err *e)
{
    (void)e;
    toy *t = state;
    for (int g = 0; g < gens; g++, t->gen++, t->evals++)
        t->best = fmin(t->best, toy_candidate(t->ctx, t->id, t->gen));
    *done = t->ctx->done_after && t->gen >= t->ctx->done_after;
    return 0;
}

static long toy_emigrate(void *state, int k, unsigned char *buf, size_t cap)
{
    (void)k;
    const toy *t = state;
    if (cap < sizeof t->best)
        return -1;
    memcpy(buf, &t->best, sizeof t->best);
    return (long)sizeof t->best;
}

static int toy_immigrate(void *state, const unsigned char *buf, size_t len, gt_err *e)
{
    toy *t = state;
    double v;
    if (len != sizeof v)
        return gt_fail(e, "toy: packet of %zu bytes", len);
    memcpy(&v, buf, sizeof v);
    t->best = fmin(t->best, v);
    return 0;
}

static double toy_best(const void *state)
{
    const toy *t = state;
    if (t->id < 16)
        t->ctx->final_best[t->id] = t->best;
    return t->best;
}

static long toy_evals(const void *state)
{
    return ((const toy *)state)->evals;
}

static int toy_finish(void *state, plan *out, planner_stats *st, gt_err *e)
{
    (void)e;
    const toy *t = state;
    memset(out, 0, sizeof *out);
    st->objective_value = t->best;
    st->evaluations = t->evals;
    snprintf(st->note, sizeof st->note, "toy");
    return 0;
}

static void toy_destroy(void *state)
{
    free(state);
}

static island_ops toy_ops(toy_ctx *c)
{
    return (island_ops){c, toy_create, toy_evolve, toy_emigrate, toy_immigrate, toy_best,
                        toy_evals, toy_finish, toy_destroy, 64};
}

static toy_ctx toy_defaults(void)
{
    toy_ctx c;
    memset(&c, 0, sizeof c);
    c.fail_island = -1;
    c.great = NAN;
    return c;
}

static void islands_find_the_minimum_of_all_candidates(void **state)
{
    (void)state;
    toy_ctx c = toy_defaults();
    island_ops ops = toy_ops(&c);
    island_cfg cfg = {.islands = 5, .epoch_gens = 3, .max_gens = 10};
    plan p;
    planner_stats st;
    island_report rep;
    gt_err e;
    assert_int_equal(islands_run(NULL, &ops, &cfg, &p, &st, &rep, &e), 0);
    double want = INFINITY;
    for (int i = 0; i < 5; i++)
        for (int g = 0; g < 10; g++)
            want = fmin(want, toy_candidate(&c, i, g));
    assert_true(st.objective_value == want);
    assert_true(rep.have_plan);
    assert_int_equal(rep.islands, 5);
    assert_int_equal(rep.generations, 10); /* 3 + 3 + 3 + 1 */
    assert_int_equal(rep.epochs, 4);
    assert_int_equal(rep.evaluations, 50);
    assert_int_equal(st.evaluations, 50);
    assert_string_equal(rep.stopped, "generations");
    assert_non_null(strstr(st.note, "5 islands"));
}

/* Snapshot ring: a value moves one island per exchange. */
static void ring_migration_moves_one_island_per_epoch(void **state)
{
    (void)state;
    toy_ctx c = toy_defaults();
    c.great = 0.01;
    island_ops ops = toy_ops(&c);
    plan p;
    planner_stats st;
    island_report rep;
    gt_err e;
    island_cfg one = {.islands = 4, .epoch_gens = 2, .max_gens = 4}; /* 1 exchange */
    assert_int_equal(islands_run(NULL, &ops, &one, &p, &st, &rep, &e), 0);
    assert_true(c.final_best[2] == 0.01 && c.final_best[3] == 0.01);
    assert_true(c.final_best[0] > 0.01 && c.final_best[1] > 0.01);
    assert_int_equal(rep.best_island, 2);
    assert_true(st.objective_value == 0.01); /* the final gathering reaches island 0 */
    island_cfg three = {.islands = 4, .epoch_gens = 2, .max_gens = 8}; /* 3 exchanges */
    assert_int_equal(islands_run(NULL, &ops, &three, &p, &st, &rep, &e), 0);
    for (int i = 0; i < 4; i++)
        assert_true(c.final_best[i] == 0.01);
}

static void islands_stop_when_all_are_done(void **state)
{
    (void)state;
    toy_ctx c = toy_defaults();
    c.done_after = 5;
    island_ops ops = toy_ops(&c);
    island_cfg cfg = {.islands = 3, .epoch_gens = 2};
    plan p;
    planner_stats st;
    island_report rep;
    gt_err e;
    assert_int_equal(islands_run(NULL, &ops, &cfg, &p, &st, &rep, &e), 0);
    assert_string_equal(rep.stopped, "done");
    assert_int_equal(rep.generations, 6);
    volatile int stop = 1;
    c.done_after = 0;
    cfg.stop = &stop;
    assert_int_equal(islands_run(NULL, &ops, &cfg, &p, &st, &rep, &e), 0);
    assert_string_equal(rep.stopped, "interrupted");
    assert_int_equal(rep.epochs, 1);
}

static void island_failure_is_reported(void **state)
{
    (void)state;
    toy_ctx c = toy_defaults();
    c.fail_island = 2;
    island_ops ops = toy_ops(&c);
    island_cfg cfg = {.islands = 3, .max_gens = 4};
    plan p;
    planner_stats st;
    island_report rep;
    gt_err e = {{0}};
    assert_int_equal(islands_run(NULL, &ops, &cfg, &p, &st, &rep, &e), -1);
    assert_string_equal(e.msg, "toy island 2 failed");
    assert_false(rep.have_plan);
}

static void genomes_pack_and_unpack(void **state)
{
    (void)state;
    enum { N = 6 };
    genome a, b, out[3];
    assert_int_equal(genome_alloc(&a, N), 0);
    assert_int_equal(genome_alloc(&b, N), 0);
    for (int k = 0; k < 3; k++)
        assert_int_equal(genome_alloc(&out[k], N), 0);
    int pa[N] = {5, 3, 1, 0, 2, 4}, pb[N] = {0, 1, 2, 3, 4, 5};
    memcpy(a.perm, pa, sizeof pa);
    memcpy(b.perm, pb, sizeof pb);
    a.S = 2, a.D = 2, a.bi = 1, a.sched = SCHED_1F1B, a.sync = SYNC_HIERARCHICAL;
    b.S = 6, b.D = 1, b.bi = 0, b.sched = SCHED_GPIPE, b.sync = SYNC_PS;
    const genome *g[2] = {&a, &b};
    unsigned char buf[512];
    long n = islands_pack_genomes(g, 2, N, buf, sizeof buf);
    assert_int_equal(n, (long)islands_packet_bytes(2, N));
    assert_int_equal(islands_pack_genomes(g, 2, N, buf, 8), -1);
    int got;
    gt_err e;
    assert_int_equal(islands_unpack_genomes(buf, (size_t)n, N, out, 3, &got, &e), 0);
    assert_int_equal(got, 2);
    assert_memory_equal(out[0].perm, pa, sizeof pa);
    assert_memory_equal(out[1].perm, pb, sizeof pb);
    assert_int_equal(out[0].S, 2);
    assert_int_equal(out[0].D, 2);
    assert_int_equal(out[0].bi, 1);
    assert_int_equal(out[0].sched, SCHED_1F1B);
    assert_int_equal(out[0].sync, SYNC_HIERARCHICAL);
    assert_int_equal(out[1].S, 6);
    assert_int_equal(out[1].status, 0);
    /* at most `max`, and broken packets are refused */
    assert_int_equal(islands_unpack_genomes(buf, (size_t)n, N, out, 1, &got, &e), 0);
    assert_int_equal(got, 1);
    assert_int_equal(islands_unpack_genomes(buf, (size_t)n, N + 1, out, 3, &got, &e), -1);
    assert_int_equal(islands_unpack_genomes(buf, (size_t)n - 4, N, out, 3, &got, &e), -1);
    b.perm[3] = 1; /* not a permutation */
    n = islands_pack_genomes(g, 2, N, buf, sizeof buf);
    assert_int_equal(islands_unpack_genomes(buf, (size_t)n, N, out, 3, &got, &e), -1);
    assert_non_null(strstr(e.msg, "permutation"));
    assert_int_equal(got, 1);
    genome_free(&a);
    genome_free(&b);
    for (int k = 0; k < 3; k++)
        genome_free(&out[k]);
}

/* --- MPI demo (tests/mpi_test.sh) ------------------------------------------------------ */

static int islands_demo(void)
{
    gt_par par;
    gt_err e = {{0}};
    if (gt_par_begin(&par, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    toy_ctx c = toy_defaults();
    island_ops ops = toy_ops(&c);
    island_cfg cfg = {.islands = 4, .epoch_gens = 3, .max_gens = 12};
    plan p;
    planner_stats st;
    island_report rep;
    int rc = islands_run(&par, &ops, &cfg, &p, &st, &rep, &e);
    if (rc)
        fprintf(stderr, "islands_run: %s\n", e.msg);
    else if (rep.have_plan)
        printf("islands=%d best=%.17g best_island=%d epochs=%d generations=%d "
               "evaluations=%ld\n", rep.islands, st.objective_value, rep.best_island,
               rep.epochs, rep.generations, rep.evaluations);
    if (par.rank == 0)
        fprintf(stderr, "ranks=%d\n", par.size);
    gt_par_end(&par);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (tu_chdir_root())
        return 1;
    if (argc > 1 && !strcmp(argv[1], "--islands-demo"))
        return islands_demo();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_are_documented),
        cmocka_unit_test(study_twice_gives_the_same_csv),
        cmocka_unit_test(rerun_of_a_finished_study_runs_nothing),
        cmocka_unit_test(truncated_file_resumes_to_the_same_csv),
        cmocka_unit_test(shuffled_rows_with_holes_are_completed_in_order),
        cmocka_unit_test(stopped_study_resumes),
        cmocka_unit_test(foreign_rows_are_refused),
        cmocka_unit_test(command_usage_errors),
        cmocka_unit_test(command_runs_and_resumes),
        cmocka_unit_test(islands_find_the_minimum_of_all_candidates),
        cmocka_unit_test(ring_migration_moves_one_island_per_epoch),
        cmocka_unit_test(islands_stop_when_all_are_done),
        cmocka_unit_test(island_failure_is_reported),
        cmocka_unit_test(genomes_pack_and_unpack),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
