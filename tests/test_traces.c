/* test_traces.c — the trace readers of sim/inputs/trace.h: every shipped trace under
 * traces/ loads; broken files (a gap, time going back, a negative bandwidth,
 * a non-numeric field, no source, ...) are refused with file:line and the
 * column in the message; the example profile equals the cost formula. */
#include "testutil.h"

#include <glob.h>
#include <math.h>
#include <unistd.h>

#include "sim/models/cost.h"
#include "sim/inputs/model.h"
#include "sim/inputs/trace.h"

#define GBPS 125000000.0

/* Every file matching `pattern` must load with `load`; returns how many. */
static int load_all(const char *pattern, int (*load)(const char *path, gt_err *e))
{
    glob_t g;
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        gt_err e = {{0}};
        if (load(g.gl_pathv[i], &e))
            fail_msg("%s: %s", g.gl_pathv[i], e.msg);
    }
    int n = (int)g.gl_pathc;
    globfree(&g);
    return n;
}

static int load_bw(const char *p, gt_err *e)
{
    bwtrace t;
    int rc = bwtrace_load(p, &t, e);
    bwtrace_free(&t);
    return rc;
}

static int load_avail(const char *p, gt_err *e)
{
    avail_trace a;
    int rc = avail_load(p, &a, e);
    avail_free(&a);
    return rc;
}

static int load_mix(const char *p, gt_err *e)
{
    prefill_mix m;
    int rc = prefill_mix_load(p, &m, e);
    prefill_mix_free(&m);
    return rc;
}

static int load_profile(const char *p, gt_err *e)
{
    gpu_catalog cat;
    if (gpu_catalog_load_default(&cat, e))
        return -1;
    profile pr;
    int rc = profile_load(p, &cat, &pr, e);
    profile_free(&pr);
    gpu_catalog_free(&cat);
    return rc;
}

static void shipped_traces_load(void **state)
{
    (void)state;
    int nb = load_all("traces/wan/*.csv", load_bw), na = load_all("traces/avail/*.csv",
                                                                  load_avail);
    int nm = load_all("traces/prefill/*.csv", load_mix);
    int np = load_all("traces/profiles/*.csv", load_profile);
    printf("  %d bandwidth series, %d availability traces, %d prefill mixes, %d profiles\n", nb,
           na, nm, np);
    assert_true(nb >= 2 && na >= 3 && nm >= 2 && np >= 1);
}

static void bandwidth_series_values(void **state)
{
    (void)state;
    bwtrace t;
    gt_err e;
    assert_int_equal(
        bwtrace_load("traces/wan/gcp-europe-west1_to_gcp-us-central1_skyplane-2022.csv", &t, &e),
        0);
    assert_non_null(strstr(t.source, "skyplane-2022-01"));
    assert_int_equal(t.n, 10);
    /* 5.048 Gbps (2022-01) for the first minute, then 24.994 (2022-11) */
    assert_true(rel_diff(bwtrace_at(&t, 0), 5.048 * GBPS) < 1e-12);
    assert_true(rel_diff(bwtrace_at(&t, 59999999999LL), 5.048 * GBPS) < 1e-12);
    assert_true(rel_diff(bwtrace_at(&t, 60000000000LL), 24.994 * GBPS) < 1e-12);
    assert_true(rel_diff(bwtrace_at(&t, 1000000000000LL), t.bw[9]) < 1e-12);
    assert_true(bwtrace_next_change(&t, 0) == 60000000000LL);
    assert_true(bwtrace_next_change(&t, 60000000000LL) == 120000000000LL);
    assert_true(bwtrace_next_change(&t, 540000000000LL) == INT64_MAX);
    bwtrace_free(&t);
    bwtrace_free(&t); /* freeing twice is harmless */
}

static void availability_values(void **state)
{
    (void)state;
    avail_trace a;
    gt_err e;
    assert_int_equal(avail_load("traces/avail/aws_p3_spot.csv", &a, &e), 0);
    assert_int_equal(a.n, 344);
    assert_int_equal(a.max_live, 32);
    assert_int_equal(a.ev[0].kind, AVAIL_ADD);
    assert_string_equal(a.nodes[a.ev[0].node], "node1");
    for (int i = 1; i < a.n; i++)
        assert_true(a.ev[i].t_ns >= a.ev[i - 1].t_ns);
    avail_free(&a);
}

static void prefill_mix_values(void **state)
{
    (void)state;
    prefill_mix m;
    gt_err e;
    assert_int_equal(prefill_mix_load("traces/prefill/azure_conv_2023.csv", &m, &e), 0);
    double sum = 0;
    for (int i = 0; i < m.n; i++)
        sum += m.prob[i];
    printf("  conv mix: %d bins, mean %.1f prompt tokens (sample mean 1079.6)\n", m.n,
           m.mean_tokens);
    assert_true(fabs(sum - 1) < 1e-12);
    /* bins keep their mean length: the mix's mean is the sample's to rounding */
    assert_true(fabs(m.mean_tokens - 1079.6) < 1);
    prefill_mix_free(&m);
}

/* The example profile was computed from the docs/models.md formula: check it. */
static void example_profile_matches_the_formula(void **state)
{
    (void)state;
    gt_err e;
    gpu_catalog cat;
    profile p;
    model_spec m;
    assert_int_equal(gpu_catalog_load_default(&cat, &e), 0);
    assert_int_equal(profile_load("traces/profiles/example_gpt3_1_3b.csv", &cat, &p, &e), 0);
    assert_int_equal(model_resolve("gpt3_1.3b", &m, &e), 0);
    const profile_row *r = profile_find(&p, "a100_sxm_80gb", "gpt3_1.3b", LAYER_BLOCK, 2, 2048);
    assert_non_null(r);
    const gpu_type *g = &cat.types[gpu_catalog_find(&cat, "a100_sxm_80gb")];
    double want = cost_layer_fwd_flops(&m, 2, 2048) / (g->peak_flops * g->efficiency);
    printf("  a100 layer b=2: profile %.4f ms, formula %.4f ms\n", r->fwd_ns / 1e6, want * 1e3);
    assert_true(fabs(r->fwd_ns / 1e9 - want) < 1e-7);
    assert_true(fabs(r->bwd_ns / 1e9 - 2 * want) < 1e-7); /* backward = 2 x forward */
    assert_null(profile_find(&p, "a100_sxm_80gb", "gpt3_1.3b", LAYER_BLOCK, 3, 2048));
    profile_free(&p);
    gpu_catalog_free(&cat);
}

/* --- refusals ------------------------------------------------------------ */

typedef int (*loader)(const char *path, gt_err *e);

/* Write `body` after a source line and a header, load it, and expect an error
 * that names "<path>:<line>" and contains `needle`. */
static void expect_refused(loader load, const char *header, const char *body, int line,
                           const char *needle)
{
    char text[2048], path[64], where[96];
    snprintf(text, sizeof text, "# source: unit test\n%s\n%s", header, body);
    write_temp(text, path, sizeof path);
    gt_err e = {{0}};
    assert_int_not_equal(load(path, &e), 0);
    if (line > 0)
        snprintf(where, sizeof where, "%s:%d:", path, line);
    else
        snprintf(where, sizeof where, "%s", path);
    if (!strstr(e.msg, where) || !strstr(e.msg, needle))
        fail_msg("message '%s' lacks '%s' or '%s'", e.msg, where, needle);
    printf("  refused: %s\n", e.msg);
    unlink(path);
}

static void bandwidth_series_refusals(void **state)
{
    (void)state;
    const char *h = "time_s,gbps";
    /* lines: 1 source, 2 header, 3.. data */
    expect_refused(load_bw, h, "0,1\n10,\n20,2\n", 4, "column 'gbps': empty");       /* gap */
    expect_refused(load_bw, h, "0,1\n,2\n", 4, "column 'time_s': empty");           /* gap */
    expect_refused(load_bw, h, "5,1\n10,2\n", 3, "first sample must be at 0");     /* gap */
    expect_refused(load_bw, h, "0,1\n10,2\n10,3\n", 5, "not after 10");
    expect_refused(load_bw, h, "0,1\n10,2\n5,3\n", 5, "times must increase");
    expect_refused(load_bw, h, "0,1\n10,-2.5\n", 4, "must be > 0 (got -2.5)");
    expect_refused(load_bw, h, "0,1\n10,0\n", 4, "must be > 0");
    expect_refused(load_bw, h, "0,1\n10,fast\n", 4, "column 'gbps': 'fast' is not a finite");
    expect_refused(load_bw, h, "0,1\n1e3x,2\n", 4, "column 'time_s': '1e3x'");
    expect_refused(load_bw, h, "0,1\n10,nan\n", 4, "not a finite number");
    expect_refused(load_bw, h, "0,1\n10,2,3\n", 4, "3 fields, expected 2");
    expect_refused(load_bw, "time_s,gbps,note", "0,1,x\n", 2, "unexpected column 'note'");
    expect_refused(load_bw, "t,gbps", "0,1\n", 1, "missing column 'time_s'");
    expect_refused(load_bw, h, "", 0, "no data rows");
    /* no source line at all */
    char path[64];
    gt_err e;
    bwtrace t;
    write_temp("time_s,gbps\n0,1\n", path, sizeof path);
    assert_int_not_equal(bwtrace_load(path, &t, &e), 0);
    assert_non_null(strstr(e.msg, "# source:"));
    unlink(path);
    assert_int_not_equal(bwtrace_load("traces/no-such-file.csv", &t, &e), 0);
    assert_non_null(strstr(e.msg, "cannot open"));
}

static void availability_refusals(void **state)
{
    (void)state;
    const char *h = "time_s,event,node";
    expect_refused(load_avail, h, "0,add,n1\n5,remove,n2\n", 4, "'n2' is removed while not");
    expect_refused(load_avail, h, "0,add,n1\n5,add,n1\n", 4, "'n1' is added while already");
    expect_refused(load_avail, h, "0,add,n1\n5,reboot,n1\n", 4, "'reboot', expected add or");
    expect_refused(load_avail, h, "0,add,n1\n5,remove,n1\n4,add,n1\n", 5, "must not decrease");
    expect_refused(load_avail, h, "0,add,n1\n5,remove,\n", 4, "column 'node': empty");
    expect_refused(load_avail, h, "0,add,n1\nsoon,remove,n1\n", 4, "'soon' is not a finite");
    expect_refused(load_avail, h, "-1,add,n1\n", 3, "out of range");
    /* simultaneous events are fine */
    char path[64], text[] = "# source: t\ntime_s,event,node\n0,add,a\n0,add,b\n3,remove,a\n";
    gt_err e;
    avail_trace a;
    write_temp(text, path, sizeof path);
    assert_int_equal(avail_load(path, &a, &e), 0);
    assert_int_equal(a.nnodes, 2);
    assert_int_equal(a.max_live, 2);
    assert_int_equal(a.ev[2].kind, AVAIL_REMOVE);
    avail_free(&a);
    unlink(path);
}

static void prefill_mix_refusals(void **state)
{
    (void)state;
    const char *h = "prompt_tokens,probability";
    expect_refused(load_mix, h, "100,0.5\n200,0.4\n", 0, "sum to 0.9");
    expect_refused(load_mix, h, "100,0.5\n100,0.5\n", 4, "lengths must increase");
    expect_refused(load_mix, h, "100,0.5\n200,half\n", 4, "'half' is not a finite");
    expect_refused(load_mix, h, "100,0.5\n20.5,0.5\n", 4, "'20.5' is not an integer");
    expect_refused(load_mix, h, "100,1.5\n", 3, "not in (0, 1]");
    expect_refused(load_mix, h, "100,0\n200,1\n", 3, "not in (0, 1]");
}

static void profile_refusals(void **state)
{
    (void)state;
    const char *h = "gpu,model,layer_kind,b,seq,fwd_ms,bwd_ms";
    expect_refused(load_profile, h, "t4,m,layer,1,128,1,2\nt4,m,layer,1,128,1,2\n", 4,
                   "repeats line 3");
    expect_refused(load_profile, h, "b300,m,layer,1,128,1,2\n", 3, "unknown GPU type 'b300'");
    expect_refused(load_profile, h, "t4,m,mlp,1,128,1,2\n", 3, "'mlp', expected embedding");
    expect_refused(load_profile, h, "t4,m,layer,1,128,-1,2\n", 3, "must be > 0 (got -1)");
    expect_refused(load_profile, h, "t4,m,layer,0,128,1,2\n", 3, "column 'b'");
    expect_refused(load_profile, h, "t4,m,head,1,128,1,slow\n", 3, "column 'bwd_ms': 'slow'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shipped_traces_load),
        cmocka_unit_test(bandwidth_series_values),
        cmocka_unit_test(availability_values),
        cmocka_unit_test(prefill_mix_values),
        cmocka_unit_test(example_profile_matches_the_formula),
        cmocka_unit_test(bandwidth_series_refusals),
        cmocka_unit_test(availability_refusals),
        cmocka_unit_test(prefill_mix_refusals),
        cmocka_unit_test(profile_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
