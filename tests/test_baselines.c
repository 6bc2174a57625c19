/* test_baselines.c — invariants of every baseline planner and the `compare`
 * command: every emitted plan passes plan_check; dtfm and megatron use every
 * GPU with uniform layers (dtfm: GPipe + parameter server, D_PP = D_DP = 8 on
 * Yuan's 64 V100s, its plan's native cost is the one it reports; without
 * recomputation it turns GPipe's on rather than fail); atlas keeps
 * each stage's replicas in one site; metis keeps a stage on one GPU type;
 * greedy uses the fastest GPUs; random is deterministic per seed; an
 * infeasible job is reported with the reason; compare's JSON and CSV carry
 * the contract's keys; an interrupted compare exits 128 + the signal and
 * leaves no output file behind. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <time.h>

#include "planner/baselines/baselines.h"
#include "planner/baselines/dtfm.h"
#include "planner/planner.h"
#include "sim/inputs/plan.h"
#include "sim/models/plan_check.h"

#define SMALL_GEO FIXTURES "/small-geo.json"
#define TINY FIXTURES "/tiny-model.json"

static void load(topology *t, job *j, const char *topo, const char *model, int batch, int seq,
                 recompute_kind rc)
{
    gt_err e;
    model_spec m;
    if (topo_load(t, topo, NULL, &e) || model_resolve(model, &m, &e)) {
        print_message("%s\n", e.msg);
        fail();
    }
    job_defaults(j, &m);
    j->batch = batch;
    if (seq > 0)
        j->seq = seq;
    j->recompute = rc;
}

static void run_planner(const char *name, const topology *t, const job *j, uint64_t seed,
                        int generations, plan *p, planner_stats *st)
{
    const planner_def *d = planner_find(name);
    assert_non_null(d);
    assert_true(d->baseline);
    planner_opts o = {.objective = "time", .seed = seed, .generations = generations};
    gt_err e;
    if (planner_plan(d, t, j, &o, p, st, &e)) {
        print_message("%s: %s\n", name, e.msg);
        fail();
    }
    if (plan_check(p, t, j, &e)) {
        print_message("%s: plan_check: %s\n", name, e.msg);
        fail();
    }
    assert_string_equal(p->planner, name);
}

/* Every pipeline has the same even cut and every GPU is used. */
static void check_all_gpus_uniform(const plan *p, const topology *t, const job *j)
{
    assert_int_equal(plan_gpus_used(p), t->ngpus);
    int L = j->model.layers, S = p->pipes[0].nstages;
    for (int d = 0; d < p->npipes; d++) {
        assert_int_equal(p->pipes[d].nstages, S);
        for (int k = 0; k < S; k++) {
            int n = p->pipes[d].stages[k].last - p->pipes[d].stages[k].first + 1;
            assert_true(n == L / S || n == L / S + 1);
            assert_int_equal(p->pipes[d].stages[k].first, p->pipes[0].stages[k].first);
        }
    }
}

static void test_every_baseline_small_geo(void **state)
{
    (void)state;
    topology t;
    job j;
    load(&t, &j, SMALL_GEO, TINY, 32, 1024, RECOMPUTE_NONE);
    const char *names[] = {"dtfm", "dtfm-hybrid", "megatron", "megatron-random", "metis",
                           "atlas", "greedy", "random"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        plan p;
        planner_stats st;
        run_planner(names[i], &t, &j, 3, 0, &p, &st);
        assert_true(st.objective_value > 0 && isfinite(st.objective_value));
        if (!strncmp(names[i], "dtfm", 4) || !strncmp(names[i], "megatron", 8))
            check_all_gpus_uniform(&p, &t, &j);
        if (!strncmp(names[i], "dtfm", 4)) {
            assert_int_equal(p.schedule, SCHED_GPIPE);
            assert_int_equal(p.sync, SYNC_PS);
        }
        plan_free(&p);
    }
    topo_free(&t);
}

/* Atlas: the replicas of stage k of all pipelines sit in one site; metis:
 * on one GPU type. */
static void check_stage_groups(const plan *p, const topology *t, bool by_site)
{
    for (int k = 0; k < p->pipes[0].nstages; k++) {
        int g0 = p->pipes[0].stages[k].gpus[0];
        for (int d = 0; d < p->npipes; d++)
            for (int x = 0; x < p->pipes[d].stages[k].ngpus; x++) {
                int g = p->pipes[d].stages[k].gpus[x];
                if (by_site)
                    assert_int_equal(t->gpus[g].site, t->gpus[g0].site);
                else
                    assert_int_equal(t->gpus[g].type, t->gpus[g0].type);
            }
    }
}

static void test_atlas_metis_groups(void **state)
{
    (void)state;
    const char *topos[] = {SMALL_GEO, "topologies/pools/world-hetero.json",
                           "topologies/yuan2022/case4.json"};
    for (size_t i = 0; i < sizeof topos / sizeof *topos; i++) {
        topology t;
        job j;
        load(&t, &j, topos[i], i ? "gpt3-xl" : TINY, i ? 1024 : 32, i ? 0 : 1024,
             i ? RECOMPUTE_FULL : RECOMPUTE_NONE);
        plan p;
        planner_stats st;
        run_planner("atlas", &t, &j, 1, 0, &p, &st);
        check_stage_groups(&p, &t, true);
        plan_free(&p);
        run_planner("metis", &t, &j, 1, 0, &p, &st);
        check_stage_groups(&p, &t, false);
        plan_free(&p);
        topo_free(&t);
    }
}

static void test_greedy_fastest_first(void **state)
{
    (void)state;
    topology t;
    job j;
    load(&t, &j, "topologies/pools/world-hetero.json", "gpt3-xl", 1024, 0, RECOMPUTE_FULL);
    plan p;
    planner_stats st;
    run_planner("greedy", &t, &j, 1, 0, &p, &st);
    /* no unused GPU is faster than a used one */
    double slowest_used = INFINITY, fastest_unused = 0;
    for (int g = 0; g < t.ngpus; g++) {
        const gpu_type *ty = topo_gpu_type(&t, g);
        double s = ty->peak_flops * ty->efficiency;
        if (plan_gpu_memory(&p, &t, &j, g) > 0)
            slowest_used = fmin(slowest_used, s);
        else
            fastest_unused = fmax(fastest_unused, s);
    }
    assert_true(fastest_unused <= slowest_used);
    plan_free(&p);
    topo_free(&t);
}

static bool same_plan(const plan *a, const plan *b)
{
    if (a->npipes != b->npipes)
        return false;
    for (int d = 0; d < a->npipes; d++) {
        if (a->pipes[d].nstages != b->pipes[d].nstages ||
            a->pipes[d].microbatches != b->pipes[d].microbatches)
            return false;
        for (int k = 0; k < a->pipes[d].nstages; k++)
            if (memcmp(&a->pipes[d].stages[k], &b->pipes[d].stages[k], sizeof(plan_stage)))
                return false;
    }
    return true;
}

static void test_seeded_determinism(void **state)
{
    (void)state;
    topology t;
    job j;
    load(&t, &j, "topologies/yuan2022/case4.json", "gpt3-xl", 1024, 0, RECOMPUTE_FULL);
    const char *names[] = {"random", "dtfm", "megatron-random"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        plan a, b;
        planner_stats sa, sb;
        run_planner(names[i], &t, &j, 42, 150, &a, &sa);
        run_planner(names[i], &t, &j, 42, 150, &b, &sb);
        assert_true(same_plan(&a, &b));
        assert_true(sa.objective_value == sb.objective_value);
        plan_free(&a);
        plan_free(&b);
    }
    topo_free(&t);
}

/* DT-FM on Yuan's world-wide case: 8 x 8, all 64 GPUs, and the decoded
 * plan's native cost is the one the search reports; without recomputation
 * no GPipe shape fits a 16 GB V100 and the error says so. */
static void test_dtfm_yuan_case5(void **state)
{
    (void)state;
    topology t;
    job j;
    load(&t, &j, "topologies/yuan2022/case5.json", "gpt3-xl", 1024, 0, RECOMPUTE_FULL);
    int dpp, ddp;
    gt_err e;
    assert_int_equal(dtfm_choose_shape(&t, &j, &dpp, &ddp, &e), 0);
    assert_int_equal(dpp, 8);
    assert_int_equal(ddp, 8);
    plan p;
    planner_stats st;
    run_planner("dtfm", &t, &j, 1, 300, &p, &st);
    check_all_gpus_uniform(&p, &t, &j);
    assert_int_equal(p.npipes, 8);
    assert_int_equal(p.pipes[0].nstages, 8);
    double native;
    assert_int_equal(dtfm_plan_cost(&t, &j, &p, &native, &e), 0);
    double reported = strtod(strstr(st.note, "DT-FM cost ") + 11, NULL);
    assert_true(rel_diff(native, reported) < 1e-3);
    plan_free(&p);
    /* without recomputation GPipe's in-flight activations do not fit: dtfm
     * turns GPipe's re-materialization on (planner/baselines/fit.h), says so,
     * and the plan carries it; stripped of it, the same plan does not fit */
    j.recompute = RECOMPUTE_NONE;
    run_planner("dtfm", &t, &j, 1, 10, &p, &st);
    assert_true(p.recompute_full);
    assert_int_equal(p.schedule, SCHED_GPIPE);
    assert_non_null(strstr(st.note, "full activation recomputation"));
    p.recompute_full = false;
    assert_int_not_equal(plan_check(&p, &t, &j, &e), 0);
    assert_non_null(strstr(e.msg, "needs"));
    assert_non_null(strstr(e.msg, "but has 16.00 GiB"));
    plan_free(&p);
    topo_free(&t);
}

/* --- the compare command ---------------------------------------------------- */

static json_t *compare_json(const char *const *extra, int *status)
{
    const char *args[40] = {"compare", "-t", SMALL_GEO, "-m", TINY, "--batch", "32", "--seq",
                            "1024", "--json", "-"};
    int n = 11;
    for (; extra && *extra; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    tu_run r;
    assert_int_equal(tu_geotrainv(&r, args), 0);
    *status = r.status;
    json_error_t je;
    json_t *root = json_loads(r.out, 0, &je);
    if (!root)
        print_message("compare output: %s\nstderr: %s\n", r.out, r.err);
    tu_run_free(&r);
    return root;
}

static void test_compare_json(void **state)
{
    (void)state;
    int status;
    const char *extra[] = {"--planners", "dtfm,megatron,metis,atlas,greedy,random", "--seeds",
                           "2", "--dtfm-cost", NULL};
    json_t *root = compare_json(extra, &status);
    assert_int_equal(status, 0);
    assert_non_null(root);
    json_t *rows = json_object_get(root, "rows");
    assert_int_equal(json_array_size(rows), 6);
    const char *keys[] = {"planner", "gpus_used", "iteration_time_s", "energy_j", "plan_time_s",
                          "objective_value", "relative_to_best_baseline", "dtfm_cost_s"};
    double best = INFINITY;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            assert_non_null(json_object_get(row, keys[k]));
        assert_int_equal(json_integer_value(json_object_get(row, "runs")), 2);
        double it = json_real_value(json_object_get(row, "iteration_time_s"));
        assert_true(it > 0);
        best = fmin(best, it);
    }
    json_array_foreach(rows, i, row) { /* the best baseline is +0 */
        double it = json_real_value(json_object_get(row, "iteration_time_s"));
        double rel = json_real_value(json_object_get(row, "relative_to_best_baseline"));
        assert_true(fabs(rel - (it / best - 1)) < 1e-9);
    }
    json_decref(root);
}

static void test_compare_infeasible_and_csv(void **state)
{
    (void)state;
    char dir[64], csv[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/rows.csv", dir);
    tu_run r; /* 16 GB T4s and 32 GB V100s cannot hold LLaMA-2 7B uniformly */
    const char *args[] = {"compare", "-t", SMALL_GEO, "-m", "llama2-7b", "--batch", "8",
                          "--planners", "dtfm,megatron,greedy", "--csv", csv, NULL};
    assert_int_equal(tu_geotrainv(&r, args), 0);
    assert_non_null(strstr(r.out, "infeasible"));
    char *text = tu_read_file(csv, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "planner,baseline,feasible"));
    int lines = 0;
    for (char *c = text; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 4);
    assert_non_null(strstr(text, "dtfm,1,0,"));
    free(text);
    tu_run_free(&r);
    tu_rmtree(dir);
    const char *bad[] = {"compare", "-t", SMALL_GEO, "-m", TINY, "--planners", "nope", NULL};
    assert_int_equal(tu_geotrainv(&r, bad), 0);
    assert_int_equal(r.status, 2);
    tu_run_free(&r);
}

/* --- interrupting compare ----------------------------------------------------- */

/* Whether the child runs `geotrain compare` (exec done: "compare" is in its
 * command line) and catches sig (its bit in SigCgt of /proc/PID/status).
 * Waiting for this, not for a fixed delay, keeps the test right on a loaded
 * machine: the signal cannot come before the handler. -1: no /proc. */
static int catches(pid_t pid, int sig)
{
    char path[64];
    size_t len = 0;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    char *cmd = tu_read_file(path, &len);
    if (!cmd)
        return -1;
    bool exec_done = memmem(cmd, len, "compare", 7) != NULL;
    free(cmd);
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *st = tu_read_file(path, NULL);
    const char *cgt = st ? strstr(st, "SigCgt:") : NULL;
    unsigned long long mask = cgt ? strtoull(cgt + 7, NULL, 16) : 0;
    free(st);
    return exec_done && (mask >> (sig - 1) & 1);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

/* dir/name, malloc'd. */
static char *path_in(const char *dir, const char *name)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

/* Start compare (stdout, stderr into dir/out, dir/err) on a job long enough
 * to be interrupted: memetic on Yuan's 64 GPUs with a 60 s budget, 3 seeds. */
static pid_t start_compare(const char *dir, const char *const *outputs)
{
    const char *args[32] = {"./geotrain", "compare", "-t", "topologies/yuan2022/case5.json",
                            "-m", "gpt3-xl", "--batch", "1024", "--planners", "memetic,random",
                            "--seeds", "3", "--budget-s", "60", "--threads", "1"};
    int n = 16;
    for (; *outputs; outputs++)
        args[n++] = *outputs;
    args[n] = NULL;
    char *out = path_in(dir, "out"), *err = path_in(dir, "err");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fo < 0 || fe < 0)
            _exit(127);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(args[0], (char *const *)args);
        _exit(127);
    }
    free(out);
    free(err);
    return pid;
}

/* Send sig once compare catches it; its exit code (-1 when it did not end
 * within minutes, or ended by the signal itself). */
static int interrupt(pid_t pid, int sig)
{
    int ws, got = 0, c = 0;
    for (int k = 0; k < 6000 && !got && (c = catches(pid, sig)) == 0; k++) {
        got = waitpid(pid, &ws, WNOHANG);
        pause_ms(20);
    }
    if (got) /* ended before it could be interrupted */
        return -1;
    if (c < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &ws, 0);
        skip(); /* no /proc: cannot tell when the handler is there */
    }
    kill(pid, sig);
    for (int k = 0; k < 6000 && !got; k++) { /* generous: minutes, not a timing check */
        got = waitpid(pid, &ws, WNOHANG);
        if (!got)
            pause_ms(50);
    }
    if (!got) {
        kill(pid, SIGKILL);
        waitpid(pid, &ws, 0);
        return -1;
    }
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static char *read_in(const char *dir, const char *name)
{
    char *path = path_in(dir, name), *s = tu_read_file(path, NULL);
    assert_non_null(s);
    free(path);
    return s;
}

/* Ctrl-C: exit 130, the rows done with the note, no --json file, the old
 * --csv file untouched, no temporary file left. */
static void test_compare_interrupted(void **state)
{
    (void)state;
    char dir[64];
    assert_non_null(tu_mkdtemp(dir));
    char *csv = path_in(dir, "rows.csv"), *json = path_in(dir, "rows.json");
    assert_int_equal(tu_write_file(csv, "an earlier file\n"), 0);
    const char *outputs[] = {"--csv", csv, "--json", json, NULL};
    assert_int_equal(interrupt(start_compare(dir, outputs), SIGINT), 130);
    char *out = read_in(dir, "out"), *old = read_in(dir, "rows.csv");
    assert_non_null(strstr(out, "interrupted: "));
    assert_non_null(strstr(out, " of 6 runs done"));
    assert_string_equal(old, "an earlier file\n");
    assert_false(tu_exists(json));
    assert_int_equal(tu_count_entries(dir), 3); /* out, err, rows.csv */
    free(out);
    free(old);
    free(csv);
    free(json);
    tu_rmtree(dir);
}

/* SIGTERM with --json -: exit 143, nothing on stdout (no part of a JSON
 * document), the rows done on stderr. */
static void test_compare_terminated(void **state)
{
    (void)state;
    char dir[64];
    assert_non_null(tu_mkdtemp(dir));
    const char *outputs[] = {"--json", "-", NULL};
    assert_int_equal(interrupt(start_compare(dir, outputs), SIGTERM), 143);
    char *out = read_in(dir, "out"), *err = read_in(dir, "err");
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "interrupted: "));
    free(out);
    free(err);
    tu_rmtree(dir);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_baseline_small_geo),
        cmocka_unit_test(test_atlas_metis_groups),
        cmocka_unit_test(test_greedy_fastest_first),
        cmocka_unit_test(test_seeded_determinism),
        cmocka_unit_test(test_dtfm_yuan_case5),
        cmocka_unit_test(test_compare_json),
        cmocka_unit_test(test_compare_infeasible_and_csv),
        cmocka_unit_test(test_compare_interrupted),
        cmocka_unit_test(test_compare_terminated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
