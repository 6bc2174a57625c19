/* test_bad_inputs.c — every file of the bad-input corpus (tests/bad/) is
 * refused by the command a user would run, with exit code 1 and an error
 * that names the file, the line and column (JSON), the field and the reason
 * (docs/formats.md and 11). The output-writing rules are tested in test_outputs.c.
 *
 *   tests/bad/topo/FILE    geotrain topo check FILE
 *   tests/bad/plan/FILE    geotrain plan check -t tests/bad/support/topo.json
 *                           -m tests/bad/support/model.json --batch 16
 *                           --attention unfused FILE
 *   tests/bad/model/FILE   geotrain model show FILE
 *   tests/bad/avail/FILE   geotrain simulate (the support files) --avail FILE
 *   tests/bad/profile/FILE geotrain simulate (the support files) --profile FILE
 *   tests/bad/sim/FILE     geotrain simulate -t FILE (the support model and plan):
 *                          topologies that pass `topo check` but whose times
 *                          would pass the time cap (sim/base/timecap.h)
 *
 * CSV errors are "FILE:LINE: ..." or, about one field, "FILE:LINE:COL: column
 * 'name': ..." with COL the field's first character.
 *
 * Each corpus file has one row in the tables below (a file without a row, or
 * a row without a file, fails the test): the expected line, the text found at
 * the reported line:column (the locator points at the offending value), the
 * field path and a piece of the reason. Semantic plan errors have no position
 * (line -1): the reason is asserted instead. */
#include "testutil.h"


typedef struct expect {
    const char *file;     /* name inside the corpus folder */
    int line;             /* expected line; 0 = any; -1 = no position (semantic) */
    const char *at;       /* text at line:col, NULL = not checked */
    const char *field;    /* "FILE:L:C: field: ...", NULL = no field (syntax error) */
    const char *reason;   /* a piece of the message */
} expect;

static const expect TOPO[] = {
    {"count-over-node-limit.json", 3, "4096", "sites[0].nodes[0].count", "must be in [1, 1024]"},
    {"duplicate-key.json", 2, NULL, NULL, "duplicate object key"},
    {"duplicate-link.json", 5, "{\"a\": \"b\"", "links[1]", "duplicate link \"b\"-\"a\""},
    {"duplicate-site.json", 3, "\"a\"", "sites[1].id", "duplicate site id \"a\""},
    {"empty.json", 1, NULL, NULL, "empty file"},
    {"garbage-png.bin", 0, NULL, NULL, "binary data (NUL byte)"},
    {"garbage.bin", 0, NULL, NULL, "binary data (NUL byte)"},
    {"huge-count.json", 3, NULL, NULL, "too big integer"},
    {"infinity.json", 4, NULL, NULL, "invalid token near 'Infinity'"},
    {"invalid-utf8.json", 1, NULL, NULL, "unable to decode byte 0xc3"},
    {"long-name.json", 1, "\"nnnn", "name", "longer than 127 characters"},
    {"malformed-single-quotes.json", 1, NULL, NULL, "invalid token"},
    {"malformed-trailing-comma.json", 3, NULL, NULL, "unexpected token near ']'"},
    {"malformed-unclosed.json", 4, NULL, NULL, "expected near end of file"},
    {"missing-site-pair.json", 5, "[", "links", "missing link between sites \"b\" and \"c\""},
    {"nan.json", 4, NULL, NULL, "invalid token near 'NaN'"},
    {"negative-bandwidth.json", 4, "-1", "links[0].gbps", "gbps must be > 0 (got -1)"},
    {"negative-latency.json", 4, "-3", "links[0].latency_ms", "latency_ms must be >= 0 (got -3)"},
    {"no-sites.json", 1, "[]", "sites", "at least one site"},
    {"over-gpu-limit.json", 5, "1024", "sites[1].nodes[0].count", "limit of 200000 GPUs"},
    {"real-overflow.json", 4, NULL, NULL, "real number overflow"},
    {"site-id-with-slash.json", 2, "\"us/east\"", "sites[0].id", "must not contain '/'"},
    {"site-without-gpus.json", 3, "[]", "sites[1].nodes", "at least one node with GPUs"},
    {"top-level-array.json", 1, "[", NULL, "expected a JSON object at the top level"},
    {"site-id-with-comma.json", 2, "\"us,east\"", "sites[0].id", "must not contain ','"},
    {"site-id-with-control.json", 2, "\"us\\u0007", "sites[0].id", "must not contain byte 0x07"},
    {"site-id-with-newline.json", 2, "\"us\\n", "sites[0].id", "must not contain byte 0x0a"},
    {"site-id-with-space.json", 2, "\"us east\"", "sites[0].id", "must not contain byte 0x20"},
    {"trace-duplicate-column.json", 13, "\"../support", "links[0].trace",
     "duplicate-column.csv:2: column 'gbps' appears twice in the header (columns 2 and 3)"},
    {"trace-is-device.json", 13, "\"/dev/zero\"", "links[0].trace",
     "/dev/zero: not a regular file (character device)"},
    {"trace-is-directory.json", 13, "\"/\"", "links[0].trace", "/: is a directory"},
    {"trace-missing.json", 13, "\"../support", "links[0].trace",
     "trace file \"../support/traces/no-such-trace.csv\" not found"},
    {"trace-nan.json", 13, "\"../support", "links[0].trace",
     "nan.csv:3:3: column 'gbps': 'nan' is not a finite number"},
    {"trace-too-slow.json", 13, "\"../support", "links[0].trace",
     "too-slow.csv:3:3: column 'gbps': bandwidth must be in [1e-09, 1e+07] (got 1e-12)"},
    {"unknown-field.json", 4, "20", "links[0].latency", "unknown field \"latency\""},
    {"unknown-gpu.json", 4, "\"h9000\"", "sites[0].nodes[1].gpu", "unknown GPU type \"h9000\""},
    {"unknown-site-in-link.json", 4, "\"zz\"", "links[0].b", "unknown site \"zz\""},
    {"whitespace-only.json", 3, NULL, NULL, "expected near end of file"},
    {"wrong-type-count.json", 3, "\"8\"", "sites[0].nodes[0].count", "expected an integer"},
    {"wrong-type-site-id.json", 3, "7", "sites[0].id", "expected a string"},
    {"wrong-type-sites.json", 2, "{", "sites", "expected an array"},
    {"zero-asym-bandwidth.json", 4, "0", "links[0].b_to_a_gbps", "must be > 0 (got 0)"},
    {"zero-bandwidth.json", 4, "0", "links[0].gbps", "gbps must be > 0 (got 0)"},
    {"zero-count.json", 3, "0", "sites[0].nodes[0].count", "must be in [1, 1024] (got 0)"},
    {"zero-lan-bandwidth.json", 4, "0", "sites[0].lan.gbps", "must be > 0 (got 0)"},
    {"zero-nic-bandwidth.json", 3, "0", "sites[0].nodes[0].nic_gbps", "must be > 0 (got 0)"},
    {NULL, 0, NULL, NULL, NULL}};

static const expect PLAN[] = {
    {"bad-layer-range.json", 5, "[7, 4]", "pipelines[0].stages[1].layers",
     "invalid layer range [7, 4]"},
    {"empty.json", 1, NULL, NULL, "empty file"},
    {"garbage.bin", 0, NULL, NULL, "binary data (NUL byte)"},
    {"gpu-index-out-of-range.json", 5, "\"s1/0/4\"", "pipelines[0].stages[1].gpus[0]",
     "unknown GPU \"s1/0/4\""},
    {"gpu-id-leading-zero.json", 5, "\"s1/0/01\"", "pipelines[0].stages[1].gpus[0]",
     "unknown GPU \"s1/0/01\""},
    {"gpu-id-plus.json", 5, "\"s1/0/+1\"", "pipelines[0].stages[1].gpus[0]",
     "unknown GPU \"s1/0/+1\""},
    {"gpu-id-space.json", 5, "\"s1/0/ 1\"", "pipelines[0].stages[1].gpus[0]",
     "unknown GPU \"s1/0/ 1\""},
    {"gpu-used-twice.json", -1, NULL, NULL,
     "GPU s1/0/0 is used twice (pipelines[0].stages[0] and pipelines[1].stages[1])"},
    {"huge-microbatches.json", 3, NULL, NULL, "too big integer"},
    {"interleaved-wrong-repeat.json", -1, NULL, NULL,
     "pipelines[0].stages[3]: interleaved stages must repeat the GPUs of stage 1"},
    {"interleaved-microbatches-not-multiple.json", -1, NULL, NULL,
     "pipelines[0]: the interleaved schedule needs microbatches (15) to be a multiple of the "
     "stages (2)"},
    {"too-many-ops.json", -1, NULL, NULL,
     "the plan has 400000000 ops (2 x stages x microbatches), over the cap of 4000000"},
    {"layer-beyond-model.json", -1, NULL, NULL, "layer 8 does not exist (the model has 8 layers"},
    {"malformed.json", 4, NULL, NULL, "'}' expected"},
    /* by hand: 16 B x 1.674e8 params (8 layers, embedding and untied head) = 2.49 GiB
     * + GPipe's 16 microbatches x 8 layers x sbh(34 + 5as/h) (unfused attention, which
     * the plan checks run with: a fused kernel keeps no s x s scores and the tiny
     * model would fit) = 16 x 8 x 2^20 x 114 B
     * = 14.25 GiB + fp32 logits 4sbV = 0.12 GiB + 1.5 GiB runtime = 18.37 GiB */
    {"memory-overflow.json", -1, NULL, NULL, "GPU edge/0/0 (t4) needs 18.37 GiB for layers [0, 7] "
                                             "but has 16.00 GiB"},
    {"microbatches-do-not-add-up.json", -1, NULL, NULL,
     "microbatches add up to 15 x microbatch_size 1 = 15 sequences, but the job's batch is 16"},
    {"missing-layer-range.json", 5, "{\"gpus\"", "pipelines[0].stages[1].layers",
     "expected [first, last]"},
    {"missing-layers.json", -1, NULL, NULL, "pipelines[0]: layers 4..5 are missing"},
    {"no-pipelines.json", 2, "[]", "pipelines", "expected a non-empty array of pipelines"},
    {"overlapping-ranges.json", -1, NULL, NULL,
     "pipelines[0].stages[1]: layers [3, 7] overlap the previous stage (which ends at 4)"},
    {"tensor-parallel-across-nodes.json", -1, NULL, NULL,
     "tensor-parallel GPUs must share a node (edge/0/0 and edge/1/0 do not)"},
    {"unknown-field.json", 4, "[0, 7]", "pipelines[0].stages[0].layer", "unknown field \"layer\""},
    {"unknown-gpu.json", 5, "\"mars/0/0\"", "pipelines[0].stages[1].gpus[0]",
     "unknown GPU \"mars/0/0\""},
    {"unknown-schedule.json", 1, "\"zigzag\"", "schedule", "expected gpipe, 1f1b or interleaved"},
    {"wrong-type-gpus.json", 4, "\"s1/0/0\"", "pipelines[0].stages[0].gpus",
     "expected a non-empty array"},
    {"wrong-type-microbatches.json", 3, "\"16\"", "pipelines[0].microbatches",
     "expected an integer"},
    {NULL, 0, NULL, NULL, NULL}};

static const expect MODEL[] = {
    {"bad-norm.json", 2, "\"batchnorm\"", "norm", "expected \"layernorm\" or \"rmsnorm\""},
    {"empty.json", 1, NULL, NULL, "empty file"},
    {"flag-not-boolean.json", 2, "\"yes\"", "gated_mlp", "expected true/false"},
    {"heads-do-not-divide-hidden.json", -1, NULL, NULL, "hidden 1000 is not a multiple of heads 16"},
    {"huge-layers.json", 1, NULL, NULL, "too big integer"},
    {"kv-heads-over-heads.json", 1, "32", "kv_heads", "must be in [1, 16] (got 32)"},
    {"missing-layers.json", 1, "{", "layers", "missing, expected an integer"},
    {"nan-ffn.json", 1, NULL, NULL, "invalid token near 'NaN'"},
    {"unknown-field.json", 2, "true", "gated", "unknown field \"gated\""},
    {"wrong-type-hidden.json", 3, "\"1024\"", "hidden", "expected an integer"},
    {"zero-layers.json", 2, "0", "layers", "must be in [1, 100000] (got 0)"},
    {NULL, 0, NULL, NULL, NULL}};

static const expect AVAIL[] = {
    {"bom-then-bad-row.csv", 4, "nX", NULL, "column 'node': 'nX' is removed while not present"},
    {"duplicate-column.csv", 2, NULL, NULL,
     "column 'node' appears twice in the header (columns 3 and 4)"},
    {"hex-time.csv", 3, "0x10", NULL, "column 'time_s': '0x10' is not a finite number"},
    {"infinite-time.csv", 3, "inf", NULL, "column 'time_s': 'inf' is not a finite number"},
    {"more-nodes-than-topology.csv", 8, "n5", NULL,
     ":8:7: column 'node': node \"n5\" is the trace's node 6 but the topology "
     "tests/bad/support/topo.json has 5 nodes (the trace names 6)"},
    {"plus-sign-time.csv", 3, "+5", NULL, "column 'time_s': '+5' is not a finite number"},
    {"space-before-number.csv", 3, " 5", NULL, "column 'time_s': ' 5' is not a finite number"},
    {NULL, 0, NULL, NULL, NULL}};

static const expect PROFILE[] = {
    {"duplicate-column.csv", 2, NULL, NULL,
     "column 'fwd_ms' appears twice in the header (columns 6 and 7)"},
    {"hex-float.csv", 3, "0x1p0", NULL, "column 'fwd_ms': '0x1p0' is not a finite number"},
    {"leading-zero-integer.csv", 3, "01", NULL, "column 'b': '01' is not an integer"},
    {"row-for-another-model.csv", 4, "gpt3_1.3b", NULL,
     "column 'model': 'gpt3_1.3b' is not the job's model 'tiny'"},
    {NULL, 0, NULL, NULL, NULL}};

#define CAP_REASON "reached 31.7 years (the time cap): the inputs are outside the accepted ranges"
static const expect SIM[] = {
    {"slowest-link.json", -1, NULL, NULL, CAP_REASON},
    {"tiny-window-huge-latency.json", -1, NULL, NULL, CAP_REASON},
    {NULL, 0, NULL, NULL, NULL}};

#define SUPPORT_TOPO "tests/bad/support/topo.json"
#define SUPPORT_MODEL "tests/bad/support/model.json"
#define SUPPORT_PLAN "tests/bad/support/good.plan.json"

enum { KIND_TOPO, KIND_PLAN, KIND_MODEL, KIND_AVAIL, KIND_PROFILE, KIND_SIM };

static int run_kind(tu_run *r, int kind, const char *path)
{
    if (kind == KIND_AVAIL || kind == KIND_PROFILE)
        return tu_geotrain(r, "simulate", "-t", SUPPORT_TOPO, "-m", SUPPORT_MODEL, "--batch",
                           "16", "-p", SUPPORT_PLAN, kind == KIND_AVAIL ? "--avail" : "--profile",
                           path, NULL);
    if (kind == KIND_SIM)
        return tu_geotrain(r, "simulate", "-t", path, "-m", SUPPORT_MODEL, "--batch", "16", "-p",
                           SUPPORT_PLAN, NULL);
    if (kind == KIND_TOPO)
        return tu_geotrain(r, "topo", "check", path, NULL);
    if (kind == KIND_PLAN)
        return tu_geotrain(r, "plan", "check", "-t", SUPPORT_TOPO, "-m", SUPPORT_MODEL,
                           "--batch", "16", "--attention", "unfused", path, NULL);
    return tu_geotrain(r, "model", "show", path, NULL);
}

/* Text at 1-based line:col of a file, compared with `want`. */
static int text_at(const char *path, int line, int col, const char *want)
{
    size_t len;
    char *t = tu_read_file(path, &len);
    if (!t)
        return 0;
    size_t i = 0;
    for (int l = 1; l < line && i < len; i++)
        if (t[i] == '\n')
            l++;
    i += (size_t)col - 1;
    int ok = i < len && strncmp(t + i, want, strlen(want)) == 0;
    free(t);
    return ok;
}

static const expect *find_expect(const expect *tab, const char *name)
{
    for (const expect *x = tab; x->file; x++)
        if (!strcmp(x->file, name))
            return x;
    return NULL;
}

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            print_error("%s: ", path);                                                    \
            print_error(__VA_ARGS__);                                                     \
            print_error("\n  stderr: %s\n", r.err ? r.err : "(none)");                   \
            tu_run_free(&r);                                                              \
            fail();                                                                       \
        }                                                                                 \
    } while (0)

static void check_one(int kind, const char *path, const expect *x)
{
    tu_run r;
    assert_int_equal(run_kind(&r, kind, path), 0);
    CHECK(r.status == 1, "exit code %d, expected 1\n", r.status);
    CHECK(!strstr(r.out, ": ok"), "reported ok\n");
    const char *p = strstr(r.err, path);
    CHECK(p != NULL, "stderr does not name the file\n");
    p += strlen(path);
    if (x->line < 0) {
        /* semantic error: "error: FILE: reason" */
        CHECK(p[0] == ':' && p[1] == ' ', "expected 'FILE: reason'\n");
    } else if (kind == KIND_AVAIL || kind == KIND_PROFILE) {
        /* CSV: "FILE:LINE: reason", or "FILE:LINE:COL: column 'x': reason" when the
         * error is about one field (then COL points at the field) */
        char *end;
        long line = strtol(p + 1, &end, 10), col = 0;
        CHECK(*p == ':' && end > p + 1 && *end == ':', "no line number after the file\n");
        CHECK(line == x->line, "line %ld, expected %d\n", line, x->line);
        if (end[1] >= '1' && end[1] <= '9') {
            const char *cp = end + 1;
            col = strtol(cp, &end, 10);
            CHECK(*end == ':', "no ':' after the column\n");
        }
        CHECK(!x->at || (col > 0 && text_at(path, (int)line, (int)col, x->at)),
              "%ld:%ld does not point at %s\n", line, col, x->at);
    } else {
        char *end;
        long line = strtol(p + 1, &end, 10);
        CHECK(*p == ':' && end > p + 1 && *end == ':', "no line number after the file\n");
        const char *cp = end + 1;
        long col = strtol(cp, &end, 10);
        CHECK(end > cp && *end == ':' && line >= 1 && col >= 1, "no line:col\n");
        CHECK(x->line == 0 || line == x->line, "line %ld, expected %d\n", line, x->line);
        CHECK(!x->at || text_at(path, (int)line, (int)col, x->at),
              "%ld:%ld does not point at %s\n", line, col, x->at);
        if (x->field) {
            size_t fl = strlen(x->field);
            CHECK(end[1] == ' ' && !strncmp(end + 2, x->field, fl) && end[2 + fl] == ':',
                  "field %s not named after the position\n", x->field);
        }
    }
    CHECK(strstr(p, x->reason) != NULL, "reason '%s' missing\n", x->reason);
    tu_run_free(&r);
}

static void check_corpus(int kind, const char *dir, const expect *tab)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int seen = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        const expect *x = find_expect(tab, de->d_name);
        if (!x) {
            print_error("%s has no row in the expectations of test_bad_inputs.c\n", path);
            closedir(d);
            fail();
        }
        check_one(kind, path, x);
        seen++;
    }
    closedir(d);
    int rows = 0;
    for (const expect *x = tab; x->file; x++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, x->file);
        if (!tu_exists(path)) {
            print_error("expectation for %s, which is missing\n", path);
            fail();
        }
        rows++;
    }
    assert_int_equal(seen, rows);
}

/* The inputs the bad plans are checked against are themselves valid, so each
 * bad plan fails for its own reason. */
static void test_support_files_are_valid(void **state)
{
    (void)state;
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "topo", "check", SUPPORT_TOPO, NULL), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "ok (4 sites, 16 GPUs)"));
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "model", "show", SUPPORT_MODEL, NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    assert_int_equal(run_kind(&r, KIND_PLAN, SUPPORT_PLAN), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "ok (2 pipelines, 5 GPUs of 16"));
    tu_run_free(&r);
}

static void test_bad_topologies(void **state)
{
    (void)state;
    check_corpus(KIND_TOPO, "tests/bad/topo", TOPO);
}

static void test_bad_plans(void **state)
{
    (void)state;
    check_corpus(KIND_PLAN, "tests/bad/plan", PLAN);
}

static void test_bad_models(void **state)
{
    (void)state;
    check_corpus(KIND_MODEL, "tests/bad/model", MODEL);
}

static void test_bad_avail_traces(void **state)
{
    (void)state;
    check_corpus(KIND_AVAIL, "tests/bad/avail", AVAIL);
}

static void test_bad_profiles(void **state)
{
    (void)state;
    check_corpus(KIND_PROFILE, "tests/bad/profile", PROFILE);
}

static void test_bad_time_ranges(void **state)
{
    (void)state;
    check_corpus(KIND_SIM, "tests/bad/sim", SIM);
}

/* A UTF-8 byte order mark is skipped (the file is read as if it had none),
 * and a non-regular input file is named as such, for every reader. */
static void test_bom_and_special_inputs(void **state)
{
    (void)state;
    tu_run r;
    assert_int_equal(run_kind(&r, KIND_PROFILE, "tests/bad/support/profile-with-bom.csv"), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    const char *special[][2] = {{"/dev/zero", "/dev/zero: not a regular file (character device)"},
                                {"tests/bad", "tests/bad: is a directory"}};
    for (int i = 0; i < 2; i++) {
        for (int k = KIND_TOPO; k <= KIND_PROFILE; k++) {
            assert_int_equal(run_kind(&r, k, special[i][0]), 0);
            assert_int_equal(r.status, 1);
            if (!strstr(r.err, special[i][1]))
                print_error("kind %d: %s\n", k, r.err);
            assert_non_null(strstr(r.err, special[i][1]));
            tu_run_free(&r);
        }
    }
}

/* A plan without schedule, dp_sync and microbatch_size gets the documented
 * defaults, and both plan check and the JSON report say which were used. */
static void test_plan_defaults_are_reported(void **state)
{
    (void)state;
    char dir[64], path[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(path, sizeof path, "%s/minimal.plan.json", dir);
    assert_int_equal(tu_write_file(path, "{\"pipelines\": [{\"microbatches\": 16, \"stages\": "
                                         "[{\"gpus\": [\"s1/0/0\"], \"layers\": [0, 7]}]}]}"),
                     0);
    tu_run r;
    assert_int_equal(run_kind(&r, KIND_PLAN, path), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "schedule 1f1b, sync ring, microbatch size 1,"));
    tu_run_free(&r);
    assert_int_equal(tu_geotrain(&r, "simulate", "-t", SUPPORT_TOPO, "-m", SUPPORT_MODEL,
                                 "--batch", "16", "-p", path, "--json", "-", NULL),
                     0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"schedule\": \"1f1b\""));
    assert_non_null(strstr(r.out, "\"dp_sync\": \"ring\""));
    assert_non_null(strstr(r.out, "\"microbatch_size\": 1"));
    tu_run_free(&r);
    tu_rmtree(dir);
}

/* A line with no newline is stopped at the line cap (1 MiB), not read on. */
static void test_line_cap(void **state)
{
    (void)state;
    char dir[64], path[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(path, sizeof path, "%s/long.csv", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("# source: test\ntime_s,event,node\n", fp);
    for (int i = 0; i < (1 << 20) + 10; i++)
        fputc('7', fp);
    fclose(fp);
    tu_run r;
    assert_int_equal(run_kind(&r, KIND_AVAIL, path), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, ":3: line longer than the cap of 1048576 bytes"));
    tu_run_free(&r);
    tu_rmtree(dir);
}

/* `topo check A B C` checks every file: ok lines for the good ones, the error
 * for the bad one, exit 1. */
static void test_topo_check_goes_on_after_a_bad_file(void **state)
{
    (void)state;
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "topo", "check", SUPPORT_TOPO,
                                 "tests/bad/topo/zero-bandwidth.json", SUPPORT_TOPO, NULL),
                     0);
    assert_int_equal(r.status, 1);
    const char *first = strstr(r.out, SUPPORT_TOPO ": ok");
    assert_non_null(first);
    assert_non_null(strstr(first + 1, SUPPORT_TOPO ": ok"));
    assert_non_null(strstr(r.err, "tests/bad/topo/zero-bandwidth.json:4:"));
    tu_run_free(&r);
}

/* A missing file is an input error (1) naming the file and the reason. */
static void test_missing_file(void **state)
{
    (void)state;
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "topo", "check", "tests/bad/no-such-file.json", NULL), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "tests/bad/no-such-file.json: cannot open: "));
    tu_run_free(&r);
    assert_int_equal(run_kind(&r, KIND_PLAN, "tests/bad/no-such.plan.json"), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "tests/bad/no-such.plan.json: cannot open: "));
    tu_run_free(&r);
}

int main(void)
{
    if (tu_chdir_root()) {
        fprintf(stderr, "test_bad_inputs: cannot find the repository root\n");
        return 1;
    }
    if (!tu_exists("geotrain")) {
        fprintf(stderr, "test_bad_inputs: ./geotrain is missing (make first)\n");
        return 1;
    }
    if (getenv("CMOCKA_TEST_FILTER")) /* e.g. CMOCKA_TEST_FILTER='*nesting*' */
        cmocka_set_test_filter(getenv("CMOCKA_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_support_files_are_valid),
        cmocka_unit_test(test_bad_topologies),
        cmocka_unit_test(test_bad_plans),
        cmocka_unit_test(test_bad_models),
        cmocka_unit_test(test_bad_avail_traces),
        cmocka_unit_test(test_bad_profiles),
        cmocka_unit_test(test_bad_time_ranges),
        cmocka_unit_test(test_bom_and_special_inputs),
        cmocka_unit_test(test_line_cap),
        cmocka_unit_test(test_plan_defaults_are_reported),
        cmocka_unit_test(test_topo_check_goes_on_after_a_bad_file),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
