/* test_cli_runs.c — the command-line conventions, run through ./geotrain
 * (docs/cli.md): --version, "did you mean", --opt=value, refused lists and
 * outputs, --timeline's format, simulate options a plan or the topology
 * overrides, CSV shape, progress lines, SIGTERM, and byte-identical plan,
 * compare and study outputs across runs and thread counts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "sim/base/csv.h"
#include "testutil.h"

#define CASE5 "topologies/yuan2022/case5.json"
#define CASE5_PLAN "topologies/plans/case5-rank-order.plan.json"
#define WORLD "topologies/pools/world-hetero.json"
#define TWO_DC FIXTURES "/two-dc.json"
#define TWO_DC_PLAN FIXTURES "/two-dc-cross.plan.json"
#define TINY FIXTURES "/tiny-model.json"

static void test_version(void **state)
{
    (void)state;
    tu_run a, b;
    assert_int_equal(tu_geotrain(&a, "--version", NULL), 0);
    assert_int_equal(tu_geotrain(&b, "version", NULL), 0);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.out, b.out);
    assert_true(!strncmp(a.out, "geotrain ", 9));
    assert_non_null(strstr(a.out, "\ncommit "));
    assert_non_null(strstr(a.out, "\nbuild "));
    tu_run_free(&a);
    tu_run_free(&b);
}

static void test_did_you_mean(void **state)
{
    (void)state;
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "simulate", "--bacth", "3", NULL), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "unknown option '--bacth' (did you mean --batch?)"));
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "compare", "--plannres", "x", NULL), 0);
    assert_non_null(strstr(r.err, "did you mean --planners?"));
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "simulat", NULL), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "did you mean 'simulate'?"));
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "topo", "shwo", "x", NULL), 0);
    assert_non_null(strstr(r.err, "did you mean 'topo show'?"));
    tu_run_free(&r);
    /* a mistyped model id: the nearest name users type, aliases included */
    const char *typo[][2] = {{"gpt3-xll", "gpt3-xl"}, {"lama2-7b", "llama2-7b"},
                             {"opt-1.3", "opt-1.3b"}};
    for (int i = 0; i < 3; i++) {
        char want[96];
        snprintf(want, sizeof want, "; or give a JSON file); did you mean '%s'?\n", typo[i][1]);
        assert_int_equal(tu_geotrain(&r, "model", "show", typo[i][0], NULL), 0);
        assert_int_equal(r.status, 1);
        assert_true(strncmp(r.err, "error: unknown model '", 22) == 0);
        size_t n = strlen(r.err), w = strlen(want);
        if (n < w || strcmp(r.err + n - w, want))
            fail_msg("model show %s: %s", typo[i][0], r.err);
        tu_run_free(&r);
    }
    /* far from every name: the list only, no guess */
    assert_int_equal(tu_geotrain(&r, "model", "show", "frobnicator", NULL), 0);
    assert_null(strstr(r.err, "did you mean"));
    tu_run_free(&r);
}

static char *deterministic(const char *path, bool study);

/* The model list of an unknown model shows the names users type, and every
 * name listed is accepted by -m (round trip through the resolver). */
static void test_model_list_typable(void **state)
{
    (void)state;
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "model", "show", "nope", NULL), 0);
    assert_int_equal(r.status, 1);
    char *list = strstr(r.err, " has: ");
    assert_non_null(list);
    assert_non_null(strstr(list, "gpt3-1.3b (gpt3-xl)"));
    assert_non_null(strstr(list, "llama2-7b"));
    list += 6;
    char *end = strchr(list, ';');
    assert_non_null(end);
    *end = '\0';
    int names = 0;
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        char name[64];
        snprintf(name, sizeof name, "%s", tok);
        char *alias = strstr(name, " (");
        const char *forms[2] = {name, NULL};
        if (alias) {            /* "gpt3-1.3b (gpt3-xl)": both forms */
            *alias = '\0';
            forms[1] = alias + 2;
            alias[2 + strcspn(alias + 2, ")")] = '\0';
        }
        for (int k = 0; k < 2 && forms[k]; k++) {
            tu_run m;
            assert_int_equal(tu_geotrain(&m, "model", "show", forms[k], NULL), 0);
            assert_int_equal(m.status, 0);
            tu_run_free(&m);
        }
        names++;
    }
    assert_true(names >= 20);
    tu_run_free(&r);
}

/* --batch=1024 is --batch 1024: the same report (the command line aside). */
static void test_equals_form(void **state)
{
    (void)state;
    char dir[64], a[128], b[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    char ja[140], jb[140];
    snprintf(ja, sizeof ja, "--json=%s", a);
    snprintf(jb, sizeof jb, "%s", b);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "simulate", "--topology=" CASE5, "--model=gpt3-xl",
                                 "--batch=1024", "--plan=" CASE5_PLAN, ja, NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", CASE5, "-m", "gpt3-xl", "--batch",
                                 "1024", "-p", CASE5_PLAN, "--json", jb, NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    char *x = deterministic(a, false), *y = deterministic(b, false);
    assert_true(strlen(x) > 1000);
    assert_string_equal(x, y);
    free(x);
    free(y);
    tu_rmtree(dir);
}

static void test_lists_refused(void **state)
{
    (void)state;
    const char *bad[] = {"greedy,", "memetic,,greedy", ",greedy"};
    for (int i = 0; i < 3; i++) {
        tu_run r;
        assert_int_equal(tu_geotrain(&r, "compare", "-t", CASE5, "-m", "gpt3-xl",
                                     "--planners", bad[i], NULL), 0);
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, "empty item"));
        tu_run_free(&r);
    }
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "study", "--planners", "greedy,", "-o", "/tmp/x.csv",
                                 NULL), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "empty item"));
    tu_run_free(&r);
}

/* Numbers on the command line follow the one grammar (sim/base/grammar.h): the
 * spellings strtol/strtod would take (hex, spaces, inf, overflow) are refused
 * with a message naming the option; the documented range ends are accepted. */
static void expect_refused(const char *want, const char *const *args)
{
    tu_run r;
    assert_int_equal(tu_geotrainv(&r, args), 0);
    if (r.status != 2 || !strstr(r.err, want))
        fail_msg("%s %s: status %d, stderr: %s", args[0], args[1], r.status, r.err);
    tu_run_free(&r);
}

static void test_numbers_refused(void **state)
{
    (void)state;
    static const char BATCH[] = "geotrain plan: --batch expects a decimal integer in [1, "
                                "100000000] (digits only, no sign, space or leading zero), got ";
    char want[256];
    const char *bad_batch[] = {"0x10", " 5", "+5", "05", "1e3", "5 ", ""};
    for (size_t i = 0; i < sizeof bad_batch / sizeof *bad_batch; i++) {
        snprintf(want, sizeof want, "%s'%s'\n", BATCH, bad_batch[i]);
        const char *a[] = {"plan", "-t", CASE5, "-m", "gpt3-xl", "--batch", bad_batch[i],
                           "-o", "/tmp/gt-never.plan.json", NULL};
        expect_refused(want, a);
    }
    const char *a1[] = {"plan", "-t", CASE5, "-m", "gpt3-xl", "--batch", "0", "-o",
                        "/tmp/gt-never.plan.json", NULL};
    expect_refused("geotrain plan: --batch expects an integer in [1, 100000000], got '0'\n", a1);
    const char *a2[] = {"plan", "-t", CASE5, "-m", "gpt3-xl", "--objective", "weighted:inf",
                        "-o", "/tmp/gt-never.plan.json", NULL};
    expect_refused("geotrain plan: objective \"weighted:inf\": weighted: needs a finite "
                   "decimal number in [0, 1] after ':'\n", a2);
    const char *a3[] = {"plan", "-t", CASE5, "-m", "gpt3-xl", "--objective",
                        "energy-within:0x1", "-o", "/tmp/gt-never.plan.json", NULL};
    expect_refused("energy-within: needs a finite decimal number in [0, 1e+06]", a3);
    const char *a4[] = {"topo", "gen", "--gpus", "1e400", "-o", "-", NULL};
    expect_refused("geotrain topo gen: --gpus expects a decimal integer in [1, 200000] (digits "
                   "only, no sign, space or leading zero), got '1e400'\n", a4);
    const char *a5[] = {"topo", "gen", "--bw-scale", "inf", "-o", "-", NULL};
    expect_refused("geotrain topo gen: --bw-scale expects a finite decimal number in [1e-09, "
                   "1e+06] (e.g. 12.5 or 1e-3; no hex, inf, nan or spaces), got 'inf'\n", a5);
    const char *a6[] = {"topo", "gen", "--seed", "4294967296", "-o", "-", NULL};
    expect_refused("--seed expects an integer in [0, 4294967295], got '4294967296'", a6);
    const char *a7[] = {"topo", "gen", "--gpus-dist", "zipf:0x2", "-o", "-", NULL};
    expect_refused("zipf", a7);
    /* the documented ends of a range are still accepted */
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "topo", "gen", "--seed", "4294967295", "--gpus", "200000",
                                 "--bw-jitter", "0.999999", "-o", "/dev/null", NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "topo", "gen", "--seed", "0", "--gpus", "1", "--sites",
                                 "1", "--pue", "10", "-o", "/dev/null", NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
}

/* crc32 of a file, computed here with zlib (the value the sidecar must carry). */
static unsigned long file_crc32(const char *path)
{
    size_t len = 0;
    char *t = tu_read_file(path, &len);
    assert_non_null(t);
    unsigned long c = crc32(crc32(0L, Z_NULL, 0), (const unsigned char *)t, (uInt)len);
    free(t);
    return c;
}

/* A study's CSV stays one kind of row; FILE.provenance.json says what wrote
 * it, one block per invocation that added rows. */
static void test_study_provenance(void **state)
{
    (void)state;
    char dir[64], csv[128], prov[160];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/s.csv", dir);
    snprintf(prov, sizeof prov, "%s.provenance.json", csv);
    const char *args[] = {"study", "-q", "--topologies", "1", "--gpus", "8", "--sites", "2",
                          "--planners", "greedy", "-m", TINY, "--batch", "16", "-o", csv, NULL};
    tu_run r;
    assert_int_equal(tu_geotrainv(&r, args), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    char *text = tu_read_file(csv, NULL);
    assert_non_null(text);
    assert_null(strchr(text, '#'));          /* no comment lines in the CSV */
    free(text);
    json_error_t je;
    json_t *root = json_load_file(prov, 0, &je);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "csv")), csv);
    assert_int_equal(json_integer_value(json_object_get(root, "rows")), 1);
    json_t *inv = json_object_get(root, "invocations");
    assert_int_equal(json_array_size(inv), 1);
    json_t *b = json_array_get(inv, 0);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "geotrain study -q --topologies 1 --gpus 8 --sites 2 --planners "
             "greedy -m %s --batch 16 -o %s", TINY, csv);
    assert_string_equal(json_string_value(json_object_get(b, "command")), cmd);
    assert_int_equal(json_integer_value(json_object_get(b, "rows_added")), 1);
    assert_true(json_is_true(json_object_get(b, "complete")));
    /* the model file is an input, with its zlib crc32 */
    json_t *in = json_object_get(b, "inputs");
    bool seen_model = false;
    for (size_t i = 0; i < json_array_size(in); i++) {
        json_t *f = json_array_get(in, i);
        if (strcmp(json_string_value(json_object_get(f, "path")), TINY))
            continue;
        char hex[16];
        snprintf(hex, sizeof hex, "%08lx", file_crc32(TINY) & 0xffffffffUL);
        assert_string_equal(json_string_value(json_object_get(f, "crc32")), hex);
        seen_model = true;
    }
    assert_true(seen_model);
    json_decref(root);
    /* a rerun that adds nothing leaves the sidecar as it was */
    char *before = tu_read_file(prov, NULL);
    assert_int_equal(tu_geotrainv(&r, args), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    char *after = tu_read_file(prov, NULL);
    assert_string_equal(before, after);
    free(before);
    free(after);
    /* a sidecar that is not one is refused before any run, not overwritten */
    char *rows = tu_read_file(csv, NULL);
    assert_int_equal(tu_write_file(prov, "{\"x\": 1}\n"), 0);
    const char *more[] = {"study", "-q", "--topologies", "2", "--gpus", "8", "--sites", "2",
                          "--planners", "greedy", "-m", TINY, "--batch", "16", "-o", csv, NULL};
    assert_int_equal(tu_geotrainv(&r, more), 0);
    assert_int_equal(r.status, 1);
    char want[256];
    snprintf(want, sizeof want, "error: %s: not a study provenance file (expected an object "
             "with an \"invocations\" array); move it away or use another -o\n", prov);
    assert_string_equal(r.err, want);
    tu_run_free(&r);
    text = tu_read_file(prov, NULL);
    assert_string_equal(text, "{\"x\": 1}\n");
    free(text);
    text = tu_read_file(csv, NULL);
    assert_string_equal(text, rows);       /* the second topology's row was not added */
    free(text);
    free(rows);
    tu_rmtree(dir);
}

/* Refused before anything runs: the input is unchanged, no output appears. */
static void test_outputs_refused(void **state)
{
    (void)state;
    char dir[64], x[128], topo[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(x, sizeof x, "%s/x", dir);
    snprintf(topo, sizeof topo, "%s/topo.json", dir);
    char *orig = tu_read_file(CASE5, NULL);
    assert_int_equal(tu_write_file(topo, orig), 0);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", topo, "-m", "gpt3-xl", "-p", CASE5_PLAN,
                                 "--json", x, "--csv", x, NULL), 0);
    assert_int_equal(r.status, 2);
    assert_false(tu_exists(x));
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", topo, "-m", "gpt3-xl", "-p", CASE5_PLAN,
                                 "--json", "-", "--csv", "-", NULL), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "exactly one"));
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", topo, "-m", "gpt3-xl", "-p", CASE5_PLAN,
                                 "--timeline", topo, NULL), 0);
    assert_int_equal(r.status, 2);
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "plan", "-t", topo, "-m", "gpt3-xl", "-o", topo, NULL), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "is an input of this run"));
    tu_run_free(&r);
    char *now = tu_read_file(topo, NULL);
    assert_string_equal(now, orig);
    free(now);
    free(orig);
    tu_rmtree(dir);
}

/* gzip (magic 1f 8b) only for *.gz; otherwise plain JSON that parses. */
static void test_timeline_format(void **state)
{
    (void)state;
    char dir[64], gz[128], plain[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(gz, sizeof gz, "%s/t.json.gz", dir);
    snprintf(plain, sizeof plain, "%s/t.json", dir);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", CASE5, "-m", "gpt3-xl", "-p", CASE5_PLAN,
                                 "--timeline", gz, NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", CASE5, "-m", "gpt3-xl", "-p", CASE5_PLAN,
                                 "--timeline", plain, NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    size_t n = 0;
    unsigned char *g = (unsigned char *)tu_read_file(gz, &n);
    assert_true(n > 2 && g[0] == 0x1f && g[1] == 0x8b);
    free(g);
    json_error_t je;
    json_t *doc = json_load_file(plain, 0, &je);
    assert_non_null(doc);
    assert_true(json_array_size(json_object_get(doc, "traceEvents")) > 0);
    json_decref(doc);
    tu_rmtree(dir);
}

static double estimate_at(const char *k)
{
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", TWO_DC, "-m", TINY, "--batch", "32",
                                 "-p", TWO_DC_PLAN, "--tcp-connections", k, "--json", "-",
                                 NULL), 0);
    assert_int_equal(r.status, 0);
    json_error_t je;
    json_t *doc = json_loads(r.out, 0, &je);
    assert_non_null(doc);
    double v = json_real_value(json_object_get(json_object_get(doc, "estimate"),
                                               "iteration_time_s"));
    json_decref(doc);
    tu_run_free(&r);
    return v;
}

/* The TCP cap is K x window / RTT: more connections can only lift it, and at
 * K = 1 it binds on the two-DC path, so the estimate must drop from 1 to 32. */
static void test_tcp_connections_reach_estimate(void **state)
{
    (void)state;
    double e1 = estimate_at("1"), e16 = estimate_at("16"), e32 = estimate_at("32");
    assert_true(e16 < e1);
    assert_true(e32 <= e16);
}

static void test_microbatch_contradiction(void **state)
{
    (void)state;
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", CASE5, "-m", "gpt3-xl", "-p", CASE5_PLAN,
                                 "--microbatch", "4", NULL), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "contradicts the plan's microbatch_size 1"));
    tu_run_free(&r);
}

/* One kind of row: every row of simulate --csv is a GPU (the reader checks
 * the field count), none is a total. compare --csv has its new columns. */
static void test_csv_shape(void **state)
{
    (void)state;
    char dir[64], path[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(path, sizeof path, "%s/gpus.csv", dir);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", CASE5, "-m", "gpt3-xl", "-p", CASE5_PLAN,
                                 "--csv", path, NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    csv_reader c;
    gt_err e;
    assert_int_equal(csv_open(&c, path, &e), 0);
    int rows = 0, rc, col = csv_col(&c, "gpu", 1, &e);
    while ((rc = csv_next(&c, &e)) == 1) {
        assert_string_not_equal(csv_get(&c, col), "total");
        rows++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(rows, 64);   /* the plan uses all 64 GPUs of case 5 */
    csv_close(&c);
    snprintf(path, sizeof path, "%s/cmp.csv", dir);
    assert_int_equal(tu_geotrain(&r, "compare", "-q", "-t", CASE5, "-m", "gpt3-xl",
                                 "--planners", "greedy,megatron", "--csv", path, NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    assert_int_equal(csv_open(&c, path, &e), 0);
    int tp = csv_col(&c, "tp_degree", 1, &e), mem = csv_col(&c, "peak_memory_bytes", 1, &e),
        ok = csv_col(&c, "feasible", 1, &e);
    assert_true(tp >= 0 && mem >= 0 && ok >= 0);
    rows = 0;
    int feasible = 0;
    while ((rc = csv_next(&c, &e)) == 1) {
        long t;
        double m;
        rows++;
        if (strcmp(csv_get(&c, ok), "1"))
            continue;   /* no plan: the plan's columns are empty */
        feasible++;
        assert_int_equal(csv_long(&c, tp, 1, 8, &t, &e), 0);
        /* the fullest GPU holds more than nothing and less than its 80 GB */
        assert_int_equal(csv_double(&c, mem, 1, 80e9, 0, 0, &m, &e), 0);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(rows, 2);
    assert_true(feasible >= 1);
    csv_close(&c);
    tu_rmtree(dir);
}

/* stderr is a file here (not a terminal): plain lines naming what runs. */
static void test_progress_lines(void **state)
{
    (void)state;
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "compare", "-t", CASE5, "-m", "gpt3-xl", "--planners",
                                 "greedy,megatron", NULL), 0);
    assert_non_null(strstr(r.err, "compare: [1/2] greedy"));
    assert_null(strchr(r.err, '\r'));
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "compare", "--quiet", "-t", CASE5, "-m", "gpt3-xl",
                                 "--planners", "greedy", NULL), 0);
    assert_string_equal(r.err, "");
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "plan", "-t", WORLD, "-m", "gpt3-xl", "--generations", "2",
                                 "-o", "/dev/null", NULL), 0);
    assert_non_null(strstr(r.err, "tensor-parallel degree 1 (1 of"));
    assert_null(strchr(r.err, '\r'));
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "plan", "-q", "-t", WORLD, "-m", "gpt3-xl",
                                 "--generations", "2", "-o", "/dev/null", NULL), 0);
    assert_string_equal(r.err, "");
    tu_run_free(&r);
}

/* Start geotrain with stderr on a pipe, wait for its first stderr line (the
 * handler is installed before any progress is printed), send sig, wait. */
static int run_and_signal(const char *const *args, int sig)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    const char *bin = getenv("GEOTRAIN_BIN");
    if (!bin || !*bin)
        bin = "./geotrain";
    if (pid == 0) {
        const char *argv[32] = {bin};
        for (int i = 0; args[i] && i < 30; i++)
            argv[i + 1] = args[i];
        dup2(fd[1], 2);
        close(fd[0]);
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    char c;
    while (read(fd[0], &c, 1) == 1 && c != '\n')
        ;
    kill(pid, sig);
    while (read(fd[0], &c, 1) == 1)   /* drain so the child never blocks */
        ;
    close(fd[0]);
    int ws;
    waitpid(pid, &ws, 0);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* SIGTERM: plan writes its best plan so far (which plan check accepts) and
 * exits 143; study keeps the rows done and exits 143. */
static void test_sigterm(void **state)
{
    (void)state;
    char dir[64], plan[128], csv[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(plan, sizeof plan, "%s/p.json", dir);
    snprintf(csv, sizeof csv, "%s/s.csv", dir);
    const char *pa[] = {"plan", "-t", WORLD, "-m", "gpt3-xl", "--generations", "100000",
                        "--threads", "1", "-o", plan, NULL};
    assert_int_equal(run_and_signal(pa, SIGTERM), 143);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "plan", "check", "-t", WORLD, "-m", "gpt3-xl", plan, NULL),
                     0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    const char *sa[] = {"study", "--topologies", "200", "--gpus", "8", "--sites", "2",
                        "--planners", "greedy,memetic", "--generations", "20", "-o", csv, NULL};
    assert_int_equal(run_and_signal(sa, SIGTERM), 143);
    assert_true(tu_exists(csv));
    tu_rmtree(dir);
}

/* Text of a file without the lines holding wall-clock time (plan_time_s,
 * documented as the only timing field), the provenance command line (the
 * thread count is an argument) and the study's last column. */
static char *deterministic(const char *path, bool study)
{
    char *t = tu_read_file(path, NULL);
    assert_non_null(t);
    char *out = calloc(strlen(t) + 1, 1), *w = out;
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "plan_time_s") && !study)
            continue;
        if (strstr(line, "\"command\":"))
            continue;
        size_t n = strlen(line);
        if (study) {
            char *last = strrchr(line, ',');
            n = last ? (size_t)(last - line) : n;
        }
        memcpy(w, line, n);
        w += n;
        *w++ = '\n';
    }
    free(t);
    return out;
}

static void same_files(const char *a, const char *b, bool study)
{
    char *x = deterministic(a, study), *y = deterministic(b, study);
    assert_true(strlen(x) > 100);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

/* Same seed: byte-identical plan file (whole file) across runs and
 * OMP_NUM_THREADS=1 vs 2; compare --json and study rows too (timing aside). */
static void test_byte_identical(void **state)
{
    (void)state;
    char dir[64], f[4][128], plan[128];
    assert_non_null(tu_mkdtemp(dir));
    const char *threads[] = {"1", "1", "2"};
    char *text[3];
    snprintf(plan, sizeof plan, "%s/p.json", dir);   /* one path: one command line */
    for (int k = 0; k < 3; k++) {
        setenv("OMP_NUM_THREADS", threads[k], 1);
        tu_run r;
        assert_int_equal(tu_geotrain(&r, "plan", "-q", "-t", WORLD, "-m", "gpt3-xl",
                                     "--generations", "4", "-o", plan, NULL), 0);
        assert_int_equal(r.status, 0);
        tu_run_free(&r);
        text[k] = tu_read_file(plan, NULL);
        assert_non_null(text[k]);
    }
    for (int k = 1; k < 3; k++)
        assert_string_equal(text[0], text[k]);   /* the whole file, provenance included */
    for (int k = 0; k < 3; k++)
        free(text[k]);
    for (int k = 0; k < 3; k++) {
        setenv("OMP_NUM_THREADS", threads[k], 1);
        snprintf(f[k], sizeof f[k], "%s/c%d.json", dir, k);
        tu_run r;
        assert_int_equal(tu_geotrain(&r, "compare", "-q", "-t", WORLD, "-m", "gpt3-xl",
                                     "--planners", "greedy,megatron,atlas", "--json", f[k],
                                     NULL), 0);
        assert_int_equal(r.status, 0);
        tu_run_free(&r);
    }
    same_files(f[0], f[1], false);
    same_files(f[0], f[2], false);
    for (int k = 0; k < 3; k++) {
        setenv("OMP_NUM_THREADS", threads[k], 1);
        snprintf(f[k], sizeof f[k], "%s/s%d.csv", dir, k);
        tu_run r;
        assert_int_equal(tu_geotrain(&r, "study", "-q", "--topologies", "2", "--gpus", "8",
                                     "--sites", "2", "--planners", "greedy,memetic",
                                     "--generations", "3", "-o", f[k], NULL), 0);
        assert_int_equal(r.status, 0);
        tu_run_free(&r);
    }
    same_files(f[0], f[1], true);
    same_files(f[0], f[2], true);
    unsetenv("OMP_NUM_THREADS");
    tu_rmtree(dir);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_model_list_typable),
        cmocka_unit_test(test_equals_form),
        cmocka_unit_test(test_lists_refused),
        cmocka_unit_test(test_numbers_refused),
        cmocka_unit_test(test_study_provenance),
        cmocka_unit_test(test_outputs_refused),
        cmocka_unit_test(test_timeline_format),
        cmocka_unit_test(test_tcp_connections_reach_estimate),
        cmocka_unit_test(test_microbatch_contradiction),
        cmocka_unit_test(test_csv_shape),
        cmocka_unit_test(test_progress_lines),
        cmocka_unit_test(test_sigterm),
        cmocka_unit_test(test_byte_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
