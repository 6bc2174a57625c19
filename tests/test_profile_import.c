/* test_profile_import.c — `geotrain profile import` (traces/kineto.c).
 *
 * The fixture tests/fixtures/kineto-small.json (written by the project) is one
 * step of a 2-block model with GPU kernels; the expected times are worked out
 * by hand below from its events, then read back through profile_load, the
 * reader --profile uses. */
#include "testutil.h"

#include "sim/inputs/trace.h"
#include "traces/kineto.h"

/* kineto-small.json by hand (us). Kernels are attributed to the layer event
 * around their cudaLaunchKernel:
 *   embedding fwd: kernel 15+8            -> 8     bwd: kernel 780+16      -> 16
 *   layers.0 fwd: kernels 60-90, 100-140  -> 70    bwd (autograd thread,
 *                                                  no "backward" in name): 630-780 -> 150
 *   layers.1 fwd: 170-220 and 210-250 on two streams overlap -> union 80
 *                                                  bwd: 490-620            -> 130
 *   block mean: fwd (70+80)/2 = 75, bwd (150+130)/2 = 140
 *   lm_head fwd 30, bwd 50; the optimizer kernel (launched outside any layer)
 *   counts nowhere. */
static void fixture_by_hand(void **s)
{
    (void)s;
    char dir[64], out[128];
    tu_mkdtemp(dir);
    snprintf(out, sizeof out, "%s/prof.csv", dir);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "profile", "import", "tests/fixtures/kineto-small.json",
                                 "-o", out, "--gpu", "a100_sxm_80gb", "--model", "tiny",
                                 "--microbatch", "2", "--seq", "128", NULL), 0);
    if (r.status)
        fail_msg("status %d: %s", r.status, r.err);
    tu_run_free(&r);
    profile p;
    gt_err e = {{0}};
    assert_int_equal(profile_load(out, NULL, &p, &e), 0);
    assert_int_equal(p.n, 3);
    static const int64_t want[3][2] = {{8000, 16000}, {75000, 140000}, {30000, 50000}};
    for (int k = 0; k < 3; k++) {
        const profile_row *row = profile_find(&p, "a100_sxm_80gb", "tiny", (layer_kind)k, 2, 128);
        assert_non_null(row);
        assert_int_equal(row->fwd_ns, want[k][0]);
        assert_int_equal(row->bwd_ns, want[k][1]);
    }
    assert_non_null(strstr(p.source, "GPU kernel time"));
    profile_free(&p);
    tu_rmtree(dir);
}

/* No kernels: CPU event time. Two microbatches; nested events count once;
 * class-style (GPT2Block_0) and dotted (h.1) names.
 *   block 0 fwd: [0,10] holding [2,5], then [100,112]: 10 + 12 = 22 over 2 runs
 *   block 1 fwd: [20,30], [120,128]: 18 over 2 runs  -> (22+18)/4 = 10 us
 *   bwd by name: block 0 [50,70], [150,166] = 36; block 1 [40,48], [140,150] = 18
 *                                                    -> (36+18)/4 = 13.5 us */
static const char CPU_TRACE[] =
    "{\"traceEvents\": [\n"
    " {\"ph\":\"X\",\"name\":\"nn.Module: GPT2Block_0\",\"tid\":1,\"ts\":0,\"dur\":10},\n"
    " {\"ph\":\"X\",\"name\":\"nn.Module: GPT2Attention_0\",\"tid\":1,\"ts\":2,\"dur\":3},\n"
    " {\"ph\":\"X\",\"name\":\"transformer.h.0.attn\",\"tid\":1,\"ts\":2,\"dur\":3},\n"
    " {\"ph\":\"X\",\"name\":\"transformer.h.1\",\"tid\":1,\"ts\":20,\"dur\":10},\n"
    " {\"ph\":\"X\",\"name\":\"transformer.h.1 backward\",\"tid\":1,\"ts\":40,\"dur\":8},\n"
    " {\"ph\":\"X\",\"name\":\"transformer.h.0 backward\",\"tid\":1,\"ts\":50,\"dur\":20},\n"
    " {\"ph\":\"X\",\"name\":\"nn.Module: GPT2Block_0\",\"tid\":1,\"ts\":100,\"dur\":12},\n"
    " {\"ph\":\"X\",\"name\":\"transformer.h.1\",\"tid\":1,\"ts\":120,\"dur\":8},\n"
    " {\"ph\":\"X\",\"name\":\"transformer.h.1 backward\",\"tid\":1,\"ts\":140,\"dur\":10},\n"
    " {\"ph\":\"X\",\"name\":\"transformer.h.0 backward\",\"tid\":1,\"ts\":150,\"dur\":16},\n"
    " {\"ph\":\"i\",\"name\":\"marker\",\"tid\":1,\"ts\":5}\n"
    "]}\n";

static void cpu_times_two_microbatches(void **s)
{
    (void)s;
    char path[64];
    write_temp(CPU_TRACE, path, sizeof path);
    kineto_times t;
    gt_err e = {{0}};
    assert_int_equal(kineto_load(path, &t, &e), 0);
    assert_false(t.from_kernels);
    assert_int_equal(t.blocks, 2);
    assert_int_equal(t.microbatches, 2);
    assert_true(t.fwd_us[LAYER_BLOCK] == 10.0);
    assert_true(t.bwd_us[LAYER_BLOCK] == 13.5);
    assert_true(t.fwd_us[LAYER_EMBEDDING] == 0 && t.fwd_us[LAYER_HEAD] == 0);
    unlink(path);
}

/* Errors: exit 1, the file named, an existing output left as it was. */
static void expect_refused(const char *trace, const char *needle)
{
    char path[64], dir[64], out[128];
    write_temp(trace, path, sizeof path);
    tu_mkdtemp(dir);
    snprintf(out, sizeof out, "%s/prof.csv", dir);
    assert_int_equal(tu_write_file(out, "old\n"), 0);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "profile", "import", path, "-o", out, "--gpu", "g",
                                 "--model", "m", "--microbatch", "1", "--seq", "8", NULL), 0);
    assert_int_equal(r.status, 1);
    if (!strstr(r.err, needle) || !strstr(r.err, path))
        fail_msg("expected '%s' and the path in: %s", needle, r.err);
    tu_run_free(&r);
    char *kept = tu_read_file(out, NULL);
    assert_string_equal(kept, "old\n");
    free(kept);
    unlink(path);
    tu_rmtree(dir);
}

static void bad_traces_refused(void **s)
{
    (void)s;
    expect_refused("{\"traceEvents\": [\n {\"ph\":\"X\",\"name\":\"aten::mm\",\"ts\":0,\"dur\":1}]}",
                   "no layer events");
    expect_refused("{\"traceEvents\": [{\"ph\":\"X\",\"name\":\"layers.0\",\"ts\":0,\"dur\":1}]}",
                   "backward time missing");
    expect_refused("{\"traceEvents\": [\n {\"ph\":\"X\",\"name\":\"layers.0\",\"ts\":0,}]}",
                   ":2:");
    expect_refused("{\"traceEvents\": [\n {\"ph\":\"X\",\"name\":\"layers.0\",\"ts\":\"a\",\"dur\":1}]}",
                   "traceEvents[0]");
    expect_refused("{\"events\": []}", "traceEvents: missing");
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_by_hand),
        cmocka_unit_test(cpu_times_two_microbatches),
        cmocka_unit_test(bad_traces_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
