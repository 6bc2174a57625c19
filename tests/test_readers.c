/* test_readers.c — the input readers at their limits (issue 9): one GPU, one
 * layer, batch 1, a site without GPUs, 100,000 GPUs and the GPU limit, zero
 * bandwidth and zero latency, NaN / Infinity, integer overflow in counts, a
 * plan whose memory fits to the byte (and one byte over), deeply nested and
 * very long JSON, binary input; plus regression tests for what fuzzing and
 * these tests found (each names the fix). Readers are driven from buffers
 * (topo_parse, plan_parse, model_parse_json) or temp files (catalogs). */
#include "testutil.h"

#include <limits.h>
#include <math.h>

#include "sim/models/cost.h"
#include "sim/models/memory.h"
#include "sim/base/jsonio.h"
#include "sim/inputs/model.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"
#include "sim/models/path.h"
#include "sim/models/plan_check.h"
#include "sim/models/plan_view.h"

static gpu_catalog CAT;

static int setup(void **state)
{
    (void)state;
    gt_err e;
    if (gpu_catalog_load_default(&CAT, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gpu_catalog_free(&CAT);
    return 0;
}

/* --- helpers -------------------------------------------------------------- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)need + 1 > b->cap) {
        b->cap = (b->n + (size_t)need + 1) * 2;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)need + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)need;
}

static void sb_rep(sbuf *b, const char *s, size_t times)
{
    size_t k = strlen(s);
    if (b->n + k * times + 1 > b->cap) {
        b->cap = b->n + k * times + 1;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
    for (size_t i = 0; i < times; i++, b->n += k)
        memcpy(b->s + b->n, s, k);
    b->s[b->n] = '\0';
}

static int topo_str(topology *t, const char *text, gt_err *e)
{
    return topo_parse(t, "t.json", text, strlen(text), &CAT, e);
}

/* Expect topo_str to fail with "t.json:LINE:COL: " + msg piece; when `at` is
 * given, LINE:COL must point at that text. */
static void topo_refused(const char *text, const char *piece, const char *at)
{
    topology t;
    gt_err e;
    if (topo_str(&t, text, &e) == 0) {
        topo_free(&t);
        print_error("accepted: %.200s\n", text);
        fail();
    }
    int line = 0, col = 0, used = 0;
    if (sscanf(e.msg, "t.json:%d:%d: %n", &line, &col, &used) != 2 || line < 1 || col < 1) {
        print_error("no file:line:col in: %s\n", e.msg);
        fail();
    }
    if (!strstr(e.msg, piece)) {
        print_error("'%s' not in: %s\n", piece, e.msg);
        fail();
    }
    if (at) {
        const char *p = text;
        for (int l = 1; l < line; p++)
            if (*p == '\n')
                l++;
        p += col - 1;
        if (strncmp(p, at, strlen(at))) {
            print_error("%d:%d points at '%.20s', not '%s' (%s)\n", line, col, p, at, e.msg);
            fail();
        }
    }
}

#define SITE(id, gpu, count)                                                             \
    "{\"id\": \"" id "\", \"nodes\": [{\"gpu\": \"" gpu "\", \"count\": " #count "}], "   \
    "\"lan\": {\"gbps\": 10, \"latency_ms\": 1}}"

static const char *TINY_MODEL =
    "{\"id\": \"tiny\", \"layers\": 8, \"hidden\": 1024, \"heads\": 16, \"ffn\": 4096, "
    "\"vocab\": 32000, \"seq_len\": 1024}";

static void model_str(model_spec *m, const char *text)
{
    gt_err e;
    if (model_parse_json("m.json", text, strlen(text), m, &e)) {
        print_error("%s\n", e.msg);
        fail();
    }
}

static void job_for(job *j, const char *model_json, int batch)
{
    model_spec m;
    model_str(&m, model_json);
    job_defaults(j, &m);
    j->batch = batch;
}

static int plan_str(plan *p, const char *text, const topology *t, gt_err *e)
{
    return plan_parse(p, "p.json", text, strlen(text), t, e);
}

/* --- one GPU, one layer, batch 1 ------------------------------------------ */

static void test_one_gpu(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    assert_int_equal(topo_str(&t, "{\"sites\": [" SITE("solo", "t4", 1) "]}", &e), 0);
    assert_int_equal(t.nsites, 1);
    assert_int_equal(t.nnodes, 1);
    assert_int_equal(t.ngpus, 1);
    char name[64];
    topo_gpu_name(&t, 0, name, sizeof name);
    assert_string_equal(name, "solo/0/0");
    assert_int_equal(topo_gpu_lookup(&t, "solo/0/0"), 0);
    assert_int_equal(topo_gpu_lookup(&t, "solo/0/1"), -1);
    assert_int_equal(topo_gpu_lookup(&t, "solo/1/0"), -1);
    double lat, rate;
    path_lone(&t, 0, 0, &lat, &rate);
    assert_true(lat == 0 && rate == CAT.types[gpu_catalog_find(&CAT, "t4")].link_bw);

    job j;
    job_for(&j, TINY_MODEL, 4);
    plan p;
    const char *one = "{\"microbatch_size\": 1, \"pipelines\": [{\"microbatches\": 4, "
                      "\"stages\": [{\"gpus\": [\"solo/0/0\"], \"layers\": [0, 7]}]}]}";
    assert_int_equal(plan_str(&p, one, &t, &e), 0);
    assert_int_equal(plan_check(&p, &t, &j, &e), 0);
    assert_int_equal(plan_gpus_used(&p), 1);
    assert_true(plan_gpu_memory(&p, &t, &j, 0) > COST_RUNTIME_OVERHEAD_BYTES);
    plan_free(&p);
    /* a second stage cannot use the only GPU again */
    const char *two = "{\"pipelines\": [{\"microbatches\": 4, \"stages\": ["
                      "{\"gpus\": [\"solo/0/0\"], \"layers\": [0, 3]},"
                      "{\"gpus\": [\"solo/0/0\"], \"layers\": [4, 7]}]}]}";
    assert_int_equal(plan_str(&p, two, &t, &e), 0);
    assert_int_equal(plan_check(&p, &t, &j, &e), -1);
    assert_non_null(strstr(e.msg, "GPU solo/0/0 is used twice"));
    plan_free(&p);
    topo_free(&t);
}

static void test_one_layer_model(void **state)
{
    (void)state;
    const char *one = "{\"id\": \"one\", \"layers\": 1, \"hidden\": 64, \"heads\": 4, "
                      "\"ffn\": 256, \"vocab\": 100, \"seq_len\": 32}";
    job j;
    job_for(&j, one, 2);
    const model_spec *m = &j.model;
    assert_int_equal(m->layers, 1);
    /* the only stage holds the layer, the embedding and the head */
    double held = cost_stage_params(m, 0, 0);
    double expect = cost_layer_params(m) + cost_embedding_params(m) + 2.0 * 64 +
                    (double)m->vocab * m->hidden;
    assert_true(rel_diff(held, expect) < 1e-12);
    assert_true(cost_iteration_flops(&j) > 0);

    topology t;
    gt_err e;
    assert_int_equal(topo_str(&t, "{\"sites\": [" SITE("s", "t4", 2) "]}", &e), 0);
    plan p;
    const char *ok = "{\"pipelines\": [{\"microbatches\": 2, \"stages\": "
                     "[{\"gpus\": [\"s/0/1\"], \"layers\": [0, 0]}]}]}";
    assert_int_equal(plan_str(&p, ok, &t, &e), 0);
    assert_int_equal(plan_check(&p, &t, &j, &e), 0);
    plan_free(&p);
    const char *beyond = "{\"pipelines\": [{\"microbatches\": 2, \"stages\": "
                         "[{\"gpus\": [\"s/0/1\"], \"layers\": [0, 1]}]}]}";
    assert_int_equal(plan_str(&p, beyond, &t, &e), 0);
    assert_int_equal(plan_check(&p, &t, &j, &e), -1);
    assert_non_null(strstr(e.msg, "layer 1 does not exist (the model has 1 layers, 0..0)"));
    plan_free(&p);
    topo_free(&t);

    model_spec z;
    const char *zero = "{\"layers\": 0, \"hidden\": 64, \"heads\": 4, \"ffn\": 256, "
                       "\"vocab\": 100, \"seq_len\": 32}";
    assert_int_equal(model_parse_json("z.json", zero, strlen(zero), &z, &e), -1);
    assert_non_null(strstr(e.msg, "z.json:1:12: layers: must be in [1, 100000] (got 0)"));
}

static void test_batch_one(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    assert_int_equal(topo_str(&t, "{\"sites\": [" SITE("s", "a100_sxm_80gb", 2) "]}", &e), 0);
    job j;
    job_for(&j, TINY_MODEL, 1);
    plan p;
    const char *one = "{\"pipelines\": [{\"microbatches\": 1, \"stages\": ["
                      "{\"gpus\": [\"s/0/0\"], \"layers\": [0, 3]},"
                      "{\"gpus\": [\"s/0/1\"], \"layers\": [4, 7]}]}]}";
    assert_int_equal(plan_str(&p, one, &t, &e), 0);
    assert_int_equal(plan_check(&p, &t, &j, &e), 0);
    /* one microbatch in flight on every stage, whatever the schedule */
    assert_int_equal(plan_in_flight(&p, 0, 0), 1);
    assert_int_equal(plan_in_flight(&p, 0, 1), 1);
    plan_free(&p);
    /* two data-parallel pipelines cannot share a batch of one */
    const char *two = "{\"pipelines\": ["
                      "{\"microbatches\": 1, \"stages\": [{\"gpus\": [\"s/0/0\"], \"layers\": [0, 7]}]},"
                      "{\"microbatches\": 1, \"stages\": [{\"gpus\": [\"s/0/1\"], \"layers\": [0, 7]}]}]}";
    assert_int_equal(plan_str(&p, two, &t, &e), 0);
    assert_int_equal(plan_check(&p, &t, &j, &e), -1);
    assert_non_null(strstr(e.msg, "add up to 2 x microbatch_size 1 = 2 sequences, but the "
                                  "job's batch is 1"));
    plan_free(&p);
    topo_free(&t);
}

/* The resolved view of an interleaved plan, by hand: two pipelines of S = 2
 * GPUs and v = 2 chunks each, lanes 0-1 and 2-3; in flight on physical
 * stage i (Megatron-LM's warm-up (S-i-1)*2 + (v-1)*S forwards plus one,
 * spread over v chunks, at most m = 4): ceil(5/2) = 3 on i = 0, ceil(3/2) =
 * 2 on i = 1; a GPU outside the plan maps to no pipeline. */
static void test_plan_view_interleaved(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    assert_int_equal(topo_str(&t, "{\"sites\": [" SITE("s", "a100_sxm_80gb", 5) "]}", &e), 0);
    char buf[1024];
    const char *pipe = "{\"microbatches\": 4, \"stages\": ["
                       "{\"gpus\": [\"s/0/%d\"], \"layers\": [0, 1]},"
                       "{\"gpus\": [\"s/0/%d\"], \"layers\": [2, 3]},"
                       "{\"gpus\": [\"s/0/%d\"], \"layers\": [4, 5]},"
                       "{\"gpus\": [\"s/0/%d\"], \"layers\": [6, 7]}]}";
    char p0[256], p1[256];
    snprintf(p0, sizeof p0, pipe, 0, 1, 0, 1);
    snprintf(p1, sizeof p1, pipe, 2, 3, 2, 3);
    snprintf(buf, sizeof buf, "{\"schedule\": \"interleaved\", \"pipelines\": [%s, %s]}", p0, p1);
    plan p;
    assert_int_equal(plan_str(&p, buf, &t, &e), 0);
    plan_view v;
    assert_int_equal(plan_view_build(&v, &p, t.ngpus, &e), 0);
    assert_int_equal(v.nlanes, 4);
    for (int pi = 0; pi < 2; pi++) {
        assert_int_equal(v.S[pi], 2);
        assert_int_equal(v.v[pi], 2);
        assert_int_equal(v.lane0[pi], 2 * pi);
        for (int k = 0; k < 4; k++) {
            assert_int_equal(plan_view_in_flight(&v, pi, k), k % 2 ? 2 : 3);
            assert_int_equal(plan_view_in_flight(&v, pi, k), plan_in_flight(&p, pi, k));
        }
    }
    for (int g = 0; g < 4; g++) {
        assert_int_equal(v.gpu_pipe[g], g / 2);
        assert_int_equal(v.gpu_stage[g], g % 2);
    }
    assert_int_equal(v.gpu_pipe[4], -1);
    assert_int_equal(v.gpu_stage[4], -1);
    plan_view_free(&v);
    plan_free(&p);
    topo_free(&t);
}

/* --- sites, sizes, limits ------------------------------------------------- */

/* Fix (topology.c count_site): a site with "nodes": [] used to load as a site
 * of 0 GPUs; it is now refused at the site's nodes. */
static void test_site_without_gpus(void **state)
{
    (void)state;
    topo_refused("{\"sites\": [" SITE("a", "t4", 1) ",\n"
                 "  {\"id\": \"b\", \"nodes\": [], \"lan\": {\"gbps\": 1}}],\n"
                 " \"default_wan\": {\"gbps\": 1, \"latency_ms\": 1}}",
                 "sites[1].nodes: a site needs at least one node with GPUs", "[]");
}

static char *big_topology(int sites, int gpus_per_site, int explicit_nodes)
{
    sbuf b = {0};
    sb_put(&b, "{\"name\": \"big\", \"sites\": [\n");
    for (int s = 0; s < sites; s++) {
        sb_put(&b, "%s{\"id\": \"site%d\", \"lan\": {\"gbps\": 100}, \"nodes\": [",
               s ? ",\n" : "", s);
        if (explicit_nodes)
            for (int n = 0; n < gpus_per_site / 8; n++)
                sb_put(&b, "%s{\"gpu\": \"h100_sxm\", \"count\": 8}", n ? "," : "");
        else
            sb_put(&b, "{\"gpu\": \"h100_sxm\", \"count\": 8, \"repeat\": %d}",
                   gpus_per_site / 8);
        sb_put(&b, "]}");
    }
    sb_put(&b, "],\n\"default_wan\": {\"gbps\": 10, \"latency_ms\": 40}}\n");
    return b.s;
}

static void test_100k_gpus_load(void **state)
{
    (void)state;
    for (int explicit_nodes = 0; explicit_nodes < 2; explicit_nodes++) {
        char *text = big_topology(100, 1000, explicit_nodes);
        topology t;
        gt_err e;
        assert_int_equal(topo_str(&t, text, &e), 0);
        assert_int_equal(t.ngpus, 100000);
        assert_int_equal(t.nnodes, 12500);
        assert_int_equal(t.nsites, 100);
        assert_int_equal(topo_gpu_lookup(&t, "site99/124/7"), 99999);
        assert_int_equal(topo_gpu_lookup(&t, "site99/125/0"), -1);
        double lat, rate;
        path_lone(&t, 0, 99999, &lat, &rate);
        assert_true(fabs(lat - 0.040) < 1e-12 && rate > 0);
        topo_free(&t);
        free(text);
    }
}

static void test_gpu_limit(void **state)
{
    (void)state;
    char text[512];
    topology t;
    gt_err e;
    /* exactly TOPO_MAX_GPUS loads */
    snprintf(text, sizeof text,
             "{\"sites\": [{\"id\": \"a\", \"lan\": {\"gbps\": 1}, \"nodes\": ["
             "{\"gpu\": \"t4\", \"count\": 1000, \"repeat\": %d}]}]}", TOPO_MAX_GPUS / 1000);
    assert_int_equal(topo_str(&t, text, &e), 0);
    assert_int_equal(t.ngpus, TOPO_MAX_GPUS);
    topo_free(&t);
    /* one more is refused, naming the limit, at the node that crosses it */
    snprintf(text, sizeof text,
             "{\"sites\": [{\"id\": \"a\", \"lan\": {\"gbps\": 1}, \"nodes\": ["
             "{\"gpu\": \"t4\", \"count\": 1000, \"repeat\": %d},\n"
             "{\"gpu\": \"t4\", \"count\": 1}]}]}", TOPO_MAX_GPUS / 1000);
    char want[128];
    snprintf(want, sizeof want, "sites[0].nodes[1].count: topology exceeds the limit of %d GPUs",
             TOPO_MAX_GPUS);
    topo_refused(text, want, "1}");
    /* a huge repeat is refused before anything is allocated */
    topo_refused("{\"sites\": [{\"id\": \"a\", \"lan\": {\"gbps\": 1}, \"nodes\": ["
                 "{\"gpu\": \"t4\", \"count\": 1, \"repeat\": 2000000000}]}]}",
                 "repeat: must be in [1, 200000]", "2000000000");
}

/* Fix (topology.c parse_doc): the WAN matrix is nsites^2 links of ~456 bytes,
 * so 4096 one-GPU sites (a 400 kB file) took 7.3 GB; over 1024 sites is now
 * refused with the limit named. */
static void test_site_limit(void **state)
{
    (void)state;
    sbuf b = {0};
    sb_put(&b, "{\"sites\": [");
    for (int s = 0; s < 1025; s++)
        sb_put(&b, "%s{\"id\": \"s%d\", \"lan\": {\"gbps\": 1}, \"nodes\": [{\"gpu\": \"t4\", "
                   "\"count\": 1}]}", s ? "," : "", s);
    sb_put(&b, "], \"default_wan\": {\"gbps\": 1, \"latency_ms\": 1}}");
    topo_refused(b.s, "sites: 1025 sites, more than the limit of 1024", "[");
    free(b.s);
}

/* --- zero bandwidth and latency ------------------------------------------- */

#define TWO_SITES(link)                                                                  \
    "{\"sites\": [" SITE("a", "a100_sxm_80gb", 2) ",\n" SITE("b", "t4", 2) "],\n"        \
    "\"links\": [" link "]}"

static void test_zero_bandwidth_refused(void **state)
{
    (void)state;
    topo_refused(TWO_SITES("{\"a\": \"a\", \"b\": \"b\", \"gbps\": 0, \"latency_ms\": 5}"),
                 "links[0].gbps: link \"a\"->\"b\": gbps must be > 0 (got 0)", "0,");
    topo_refused(TWO_SITES("{\"a\": \"a\", \"b\": \"b\", \"gbps\": 1e-12, \"latency_ms\": 5}"),
                 "gbps must be >= 1e-09 (got 1e-12)", "1e-12");
    topo_refused(TWO_SITES("{\"a\": \"a\", \"b\": \"b\", \"a_to_b_gbps\": 1, "
                           "\"b_to_a_gbps\": -0.0, \"latency_ms\": 5}"),
                 "b_to_a_gbps must be > 0 (got -0)", "-0.0");
    topo_refused("{\"sites\": [{\"id\": \"a\", \"nodes\": [{\"gpu\": \"t4\", \"count\": 1}], "
                 "\"lan\": {\"gbps\": 0}}]}", "sites[0].lan.gbps: must be > 0 (got 0)", "0}");
    topo_refused("{\"sites\": [{\"id\": \"a\", \"nodes\": [{\"gpu\": \"t4\", \"count\": 1, "
                 "\"nic_gbps\": 0}], \"lan\": {\"gbps\": 1}}]}",
                 "sites[0].nodes[0].nic_gbps: must be > 0 (got 0)", "0}");
    topo_refused("{\"sites\": [" SITE("a", "t4", 1) "," SITE("b", "t4", 1) "], "
                 "\"default_wan\": {\"gbps\": 0, \"latency_ms\": 1}}",
                 "default_wan.gbps: must be > 0 (got 0)", "0,");
}

/* Fix (topology.c link_num): a bandwidth above the 1e7 Gbps cap was reported
 * as "must be > 0". */
static void test_huge_bandwidth_message(void **state)
{
    (void)state;
    topo_refused(TWO_SITES("{\"a\": \"a\", \"b\": \"b\", \"gbps\": 2e7, \"latency_ms\": 5}"),
                 "gbps must be <= 1e+07 (got 2e+07)", "2e7");
}

static void test_zero_latency_allowed(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    const char *text = "{\"sites\": [{\"id\": \"a\", \"nodes\": [{\"gpu\": \"t4\", \"count\": 1, "
                       "\"repeat\": 2}], \"lan\": {\"gbps\": 10, \"latency_ms\": 0}},"
                       SITE("b", "t4", 1) "],"
                       "\"links\": [{\"a\": \"a\", \"b\": \"b\", \"gbps\": 2, \"latency_ms\": 0}]}";
    assert_int_equal(topo_str(&t, text, &e), 0);
    double lat, rate;
    path_lone(&t, 0, 1, &lat, &rate); /* same site, other node: LAN */
    assert_true(lat == 0 && rate == 10 * 125e6);
    path_lone(&t, 0, 2, &lat, &rate); /* across the WAN: no RTT, so no TCP cap */
    assert_true(lat == 0 && rate == 2 * 125e6);
    assert_true(isinf(path_tcp_cap(&t, 0, 1, t.tcp_connections)));
    topo_free(&t);
}

/* --- hostile JSON ---------------------------------------------------------- */

static void test_nan_and_infinity_rejected(void **state)
{
    (void)state;
    const char *bad[][2] = {{"NaN", "invalid token near 'NaN'"},
                            {"nan", "invalid token near 'nan'"},
                            {"Infinity", "invalid token near 'Infinity'"},
                            {"-Infinity", "invalid token near '-'"},
                            {"1e999", "real number overflow near '1e999'"},
                            {"-1e999", "real number overflow near '-1e999'"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "{\"sites\": [{\"id\": \"a\",\n \"nodes\": [{\"gpu\": \"t4\", \"count\": 1}],\n"
                 " \"lan\": {\"gbps\": %s}}]}", bad[i][0]);
        topo_refused(text, bad[i][1], NULL);
        topology t;
        gt_err e;
        assert_int_equal(topo_str(&t, text, &e), -1);
        assert_non_null(strstr(e.msg, "t.json:3:"));   /* the line of the value */
    }
    /* the same in a model and a plan */
    model_spec m;
    gt_err e;
    const char *mt = "{\"layers\": 2, \"hidden\": NaN}";
    assert_int_equal(model_parse_json("m.json", mt, strlen(mt), &m, &e), -1);
    assert_non_null(strstr(e.msg, "m.json:1:"));
    assert_non_null(strstr(e.msg, "NaN"));
}

static void test_integer_overflow_in_counts(void **state)
{
    (void)state;
    const char *head = "{\"sites\": [{\"id\": \"a\", \"lan\": {\"gbps\": 1},\n \"nodes\": "
                       "[{\"gpu\": \"t4\", \"count\": ";
    struct {
        const char *count, *want, *at;
    } cases[] = {
        {"99999999999999999999", "invalid JSON: too big integer near '99999999999999999999'", NULL},
        {"-99999999999999999999", "too big negative integer", NULL},
        {"9223372036854775807", "count: must be in [1, 1024] (got 9223372036854775807)", "9223"},
        {"-9223372036854775808", "count: must be in [1, 1024] (got -9223372036854775808)", "-9"},
        {"4294967297", "count: must be in [1, 1024] (got 4294967297)", "4294967297"},
        {"2147483648", "count: must be in [1, 1024] (got 2147483648)", "2147483648"},
        {"8.5", "count: expected an integer", "8.5"},
        {"1e3", "count: expected an integer", "1e3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[256];
        snprintf(text, sizeof text, "%s%s}]}]}", head, cases[i].count);
        topo_refused(text, cases[i].want, cases[i].at);
    }
    /* in a plan: microbatches and layer indices */
    topology t;
    gt_err e;
    assert_int_equal(topo_str(&t, "{\"sites\": [" SITE("s", "t4", 1) "]}", &e), 0);
    plan p;
    const char *mb = "{\"pipelines\": [{\"microbatches\": 4294967297, \"stages\": "
                     "[{\"gpus\": [\"s/0/0\"], \"layers\": [0, 7]}]}]}";
    assert_int_equal(plan_str(&p, mb, &t, &e), -1);
    assert_non_null(strstr(e.msg, "p.json:1:33: pipelines[0].microbatches: must be in "
                                  "[1, 100000000] (got 4294967297)"));
    const char *lay = "{\"pipelines\": [{\"microbatches\": 4, \"stages\": "
                      "[{\"gpus\": [\"s/0/0\"], \"layers\": [0, 4294967303]}]}]}";
    assert_int_equal(plan_str(&p, lay, &t, &e), -1);
    assert_non_null(strstr(e.msg, "invalid layer range [0, 4294967303]"));
    topo_free(&t);
}

/* Fix (plan_check.c check_batch): microbatches x microbatch_size was a 64-bit
 * product that overflows (undefined behaviour) for large plans; it is now
 * compared exactly and reported with the real numbers. Since issue 16 the op
 * count (2 x stages x microbatches, in long long) is checked first: such a
 * plan is refused by its real op count, and a plan within the op cap cannot
 * overflow the batch product (4e6 x INT_MAX < 2^63). */
static void test_batch_product_overflow(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    assert_int_equal(topo_str(&t, "{\"sites\": [" SITE("s", "t4", 3) "]}", &e), 0);
    job j;
    job_for(&j, TINY_MODEL, 1024);
    plan p;
    assert_int_equal(plan_init(&p, 3), 0);
    p.microbatch_size = INT_MAX;
    for (int pi = 0; pi < 3; pi++) {
        assert_int_equal(plan_pipe_alloc(&p, pi, 1), 0);
        p.pipes[pi].microbatches = INT_MAX;
        p.pipes[pi].stages[0] = (plan_stage){.ngpus = 1, .gpus = {pi}, .first = 0, .last = 7};
    }
    assert_int_equal(plan_check(&p, &t, &j, &e), -1);
    /* 2 x 1 stage x 3 x (2^31-1) microbatches */
    assert_non_null(strstr(e.msg, "the plan has 12884901882 ops"));
    /* within the op cap, the batch check reports the exact product */
    for (int pi = 0; pi < 3; pi++)
        p.pipes[pi].microbatches = 600000;
    assert_int_equal(plan_check(&p, &t, &j, &e), -1);
    assert_non_null(strstr(e.msg, "microbatches add up to 1800000 x microbatch_size "
                                  "2147483647 = 3865470564600000"));
    assert_non_null(strstr(e.msg, "but the job's batch is 1024"));
    plan_free(&p);
    topo_free(&t);
}

static void test_deep_nesting(void **state)
{
    (void)state;
    const size_t depth = 100000;
    const char *opens[] = {"[", "{\"a\":"};
    for (int k = 0; k < 2; k++) {
        sbuf b = {0};
        sb_put(&b, "{\"sites\": ");
        sb_rep(&b, opens[k], depth);
        gt_err e;
        topology t;
        assert_int_equal(topo_str(&t, b.s, &e), -1);
        assert_non_null(strstr(e.msg, "t.json:1:"));
        assert_non_null(strstr(e.msg, "maximum parsing depth reached"));
        plan p;
        assert_int_equal(plan_parse(&p, "p.json", b.s, b.n, &t, &e), -1);
        assert_non_null(strstr(e.msg, "maximum parsing depth reached"));
        model_spec m;
        assert_int_equal(model_parse_json("m.json", b.s, b.n, &m, &e), -1);
        assert_non_null(strstr(e.msg, "maximum parsing depth reached"));
        free(b.s);
    }
    /* nesting the parser accepts (2000 levels): the error locator walks over
     * it, to the value itself or to the field after it */
    const char *lead[] = {"{\"x\": ", "{\"name\": "};
    const char *want[] = {"x: unknown field \"x\"", "zzz: unknown field \"zzz\""};
    const char *at[] = {"[[[[", "1,"};
    for (int k = 0; k < 2; k++) {
        sbuf b = {0};
        sb_put(&b, "%s", lead[k]);
        sb_rep(&b, "[", 2000);
        sb_rep(&b, "]", 2000);
        sb_put(&b, ",\n \"zzz\": 1, \"sites\": []}");
        topo_refused(b.s, want[k], at[k]);
        free(b.s);
    }
}

static void test_long_strings(void **state)
{
    (void)state;
    const size_t big = 1u << 20; /* 1 MiB */
    sbuf b = {0};
    /* a long name is refused with its limit */
    sb_put(&b, "{\"name\": \"");
    sb_rep(&b, "n", big);
    sb_put(&b, "\", \"sites\": [" SITE("a", "t4", 1) "]}");
    topo_refused(b.s, "name: longer than 127 characters", "\"nnnn");
    free(b.s);
    /* a long free-text source is kept whole */
    memset(&b, 0, sizeof b);
    sb_put(&b, "{\"sources\": [\"");
    sb_rep(&b, "s", big);
    sb_put(&b, "\"], \"sites\": [" SITE("a", "t4", 1) "]}");
    topology t;
    gt_err e;
    assert_int_equal(topo_str(&t, b.s, &e), 0);
    assert_int_equal(t.nsources, 1);
    assert_int_equal(strlen(t.sources[0]), big);
    /* a long unknown key and a long GPU id give bounded messages */
    free(b.s);
    memset(&b, 0, sizeof b);
    sb_put(&b, "{\"sites\": [" SITE("a", "t4", 1) "], \"");
    sb_rep(&b, "k", big);
    sb_put(&b, "\": 1}");
    topology u;
    assert_int_equal(topo_str(&u, b.s, &e), -1);
    assert_true(strlen(e.msg) < sizeof e.msg);
    assert_non_null(strstr(e.msg, "t.json:1:"));
    assert_non_null(strstr(e.msg, "unknown field \"kkkk"));
    free(b.s);
    memset(&b, 0, sizeof b);
    sb_put(&b, "{\"pipelines\": [{\"microbatches\": 1, \"stages\": [{\"gpus\": [\"a/0/");
    sb_rep(&b, "9", big);
    sb_put(&b, "\"], \"layers\": [0, 7]}]}]}");
    plan p;
    assert_int_equal(plan_str(&p, b.s, &t, &e), -1);
    assert_non_null(strstr(e.msg, "p.json:1:57: pipelines[0].stages[0].gpus[0]: unknown GPU \"a/0/9999"));
    free(b.s);
    topo_free(&t);
}

/* Fix (jsonio.c jdoc_parse): Jansson stops at a NUL byte and said "expected
 * near end of file"; binary input is now named as such, at the NUL's
 * position; and columns are 1-based even for a bad first byte. */
static void test_binary_input(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    const char bin[] = "{\"name\":\n  \"x\0y\"}";
    assert_int_equal(topo_parse(&t, "b.json", bin, sizeof bin - 1, &CAT, &e), -1);
    assert_string_equal(e.msg, "b.json:2:5: binary data (NUL byte), expected JSON text");
    const char lead[] = "\0{}";
    assert_int_equal(topo_parse(&t, "b.json", lead, sizeof lead - 1, &CAT, &e), -1);
    assert_string_equal(e.msg, "b.json:1:1: binary data (NUL byte), expected JSON text");
    const char bom[] = "\xff\xfe{}";
    assert_int_equal(topo_parse(&t, "b.json", bom, sizeof bom - 1, &CAT, &e), -1);
    assert_string_equal(e.msg, "b.json:1:1: invalid JSON: unable to decode byte 0xff");
    assert_int_equal(topo_parse(&t, "b.json", "", 0, &CAT, &e), -1);
    assert_string_equal(e.msg, "b.json:1:1: empty file, expected a JSON object");
}

/* --- the error locator ----------------------------------------------------- */

static void test_locator_positions(void **state)
{
    (void)state;
    const char *text = "{\"a\": \"x\\\"]}[,\",\n"
                       " \"b\": [1, {\"c\": [2, 3]},\n"
                       "        {\"d\": {}}],\n"
                       " \"e\": -1.5e3}";
    jdoc d;
    gt_err e;
    assert_int_equal(jdoc_parse(&d, "l.json", text, strlen(text), &e), 0);
    struct {
        const char *path;
        int line, col;
    } want[] = {{"a", 1, 7},     {"b", 2, 7},       {"b[0]", 2, 8},    {"b[1]", 2, 11},
                {"b[1].c", 2, 17}, {"b[1].c[1]", 2, 21}, {"b[2].d", 3, 15}, {"e", 4, 7},
                {"b[3]", 0, 0},  {"zz", 0, 0},      {"b[1].c[9]", 0, 0}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        int line, col;
        jdoc_locate(&d, want[i].path, &line, &col);
        if (line != want[i].line || col != want[i].col) {
            print_error("%s at %d:%d, expected %d:%d\n", want[i].path, line, col, want[i].line,
                        want[i].col);
            fail();
        }
    }
    /* a missing value is reported at its parent */
    jdoc_fail(&d, &e, "b[1].zz", "missing");
    assert_string_equal(e.msg, "l.json:2:11: b[1].zz: missing");
    jdoc_free(&d);
}

/* --- memory to the byte ----------------------------------------------------- */

/* A GPU whose memory equals the plan's need to the byte passes plan_check;
 * one byte less fails with the reason. */
static void test_memory_fits_to_the_byte(void **state)
{
    (void)state;
    job j;
    job_for(&j, TINY_MODEL, 8);
    gpu_catalog cat = {0};
    cat.n = CAT.n;
    cat.types = malloc((size_t)CAT.n * sizeof *cat.types);
    assert_non_null(cat.types);
    memcpy(cat.types, CAT.types, (size_t)CAT.n * sizeof *cat.types);
    int k = gpu_catalog_find(&cat, "t4");
    assert_true(k >= 0);
    const char *pj = "{\"schedule\": \"1f1b\", \"pipelines\": [{\"microbatches\": 8, \"stages\": ["
                     "{\"gpus\": [\"s/0/0\"], \"layers\": [0, 4]},"
                     "{\"gpus\": [\"s/0/1\"], \"layers\": [5, 7]}]}]}";
    const char *tj = "{\"sites\": [" SITE("s", "t4", 2) "]}";
    topology t;
    gt_err e;
    plan p;
    assert_int_equal(topo_parse(&t, "t.json", tj, strlen(tj), &cat, &e), 0);
    assert_int_equal(plan_str(&p, pj, &t, &e), 0);
    /* stage 0 holds layers 0..4 with 2 microbatches in flight under 1F1B;
     * a T4 (Turing) runs the unfused attention under --attention auto */
    double need = plan_gpu_memory(&p, &t, &j, 0);
    job ju = j;
    ju.attention = ATTN_UNFUSED;
    assert_true(need == cost_stage_memory(&ju, 1, 0, 4, 1, 2));
    assert_true(need == floor(need)); /* a whole number of bytes for this model */
    assert_true(need > plan_gpu_memory(&p, &t, &j, 1));
    topo_free(&t);
    plan_free(&p);

    double sizes[] = {need, need + 1, need - 1};
    int expect_ok[] = {1, 1, 0};
    for (int i = 0; i < 3; i++) {
        cat.types[k].mem_bytes = sizes[i];
        assert_int_equal(topo_parse(&t, "t.json", tj, strlen(tj), &cat, &e), 0);
        assert_int_equal(plan_str(&p, pj, &t, &e), 0);
        int rc = plan_check(&p, &t, &j, &e);
        if (expect_ok[i]) {
            assert_int_equal(rc, 0);
        } else {
            assert_int_equal(rc, -1);
            assert_non_null(strstr(e.msg, "pipelines[0].stages[0]: GPU s/0/0 (t4) needs "));
            assert_non_null(strstr(e.msg, "for layers [0, 4] but has"));
        }
        plan_free(&p);
        topo_free(&t);
    }
    gpu_catalog_free(&cat);
}

/* --- round trips and the buffer/file readers agree -------------------------- */

static void test_topology_write_read_round_trip(void **state)
{
    (void)state;
    const char *files[] = {"tests/bad/support/topo.json", "topologies/real/aws-world-10.json"};
    char dir[64], out[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(out, sizeof out, "%s/copy.json", dir);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        topology a, b;
        gt_err e;
        if (!tu_exists(files[i]))
            continue; /* shipped topologies may be renamed; the support file is ours */
        assert_int_equal(topo_load(&a, files[i], &CAT, &e), 0);
        assert_int_equal(topo_write(&a, out, &e), 0);
        assert_int_equal(tu_count_entries(dir), 1);
        assert_int_equal(topo_load(&b, out, &CAT, &e), 0);
        assert_int_equal(a.nsites, b.nsites);
        assert_int_equal(a.nnodes, b.nnodes);
        assert_int_equal(a.ngpus, b.ngpus);
        for (int s = 0; s < a.nsites; s++)
            for (int u = 0; u < a.nsites; u++)
                if (s != u)
                    assert_true(rel_diff(topo_wan(&a, s, u)->bw, topo_wan(&b, s, u)->bw) < 1e-5);
        topo_free(&a);
        topo_free(&b);
    }
    tu_rmtree(dir);
}

static void test_model_buffer_and_file_agree(void **state)
{
    (void)state;
    model_spec a, b;
    gt_err e;
    size_t len = 0;
    char *text = tu_read_file("tests/bad/support/model.json", &len);
    assert_non_null(text);
    assert_int_equal(model_load_json("tests/bad/support/model.json", &a, &e), 0);
    assert_int_equal(model_parse_json("tests/bad/support/model.json", text, len, &b, &e), 0);
    assert_memory_equal(&a, &b, sizeof a);
    assert_string_equal(a.id, "tiny");
    assert_int_equal(a.kv_heads, 16);
    free(text);
}

/* --- catalogs (CSV) ---------------------------------------------------------- */

static const char *GPU_HEAD =
    "id,name,memory_gib,mem_bw_gbs,tflops,tdp_w,idle_w,efficiency,link_gbs\n";

static int gpu_csv(const char *rows, size_t len, gt_err *e, char *path, size_t cap)
{
    write_temp(GPU_HEAD, path, cap);
    FILE *fp = fopen(path, "ab");
    assert_non_null(fp);
    assert_int_equal(fwrite(rows, 1, len, fp), len);
    fclose(fp);
    gpu_catalog c;
    int rc = gpu_catalog_load(&c, path, e);
    if (rc == 0)
        gpu_catalog_free(&c);
    unlink(path);
    return rc;
}

static void test_gpu_catalog_bad_rows(void **state)
{
    (void)state;
    struct {
        const char *rows, *want;
        size_t len; /* 0: strlen(rows) */
    } cases[] = {
        {"g,G,16,300,65,70,20,0.4,16\n", NULL, 0},
        {"g,G,nan,300,65,70,20,0.4,16\n", ":2:5: column 'memory_gib': 'nan' is not a finite number", 0},
        {"g,G,16,300,65,70,20,0.4,16\ng,G,16,300,65,70,20,0.4,16\n", ":3:1: column 'id': duplicate", 0},
        {"g,G,16,300,65,70,80,0.4,16\n", ":2:18: column 'idle_w': 80 must be below tdp_w 70", 0},
        {"g,G,16,300,65,70,20,0,16\n", ":2:21: column 'efficiency': 0 out of range", 0},
        {"g,G,16,300,65,70,20,0.4\n", ":2: 8 fields, expected 9", 0},
        {"g,G,1e999,300,65,70,20,0.4,16\n", "'1e999' is not a finite number", 0},
        {"", ": no GPU rows", 0},
        {"g,G,16,300,6\0005,70,20,0.4,16\n", ":2: binary data (NUL byte)", 28},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[64];
        gt_err e;
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].rows);
        int rc = gpu_csv(cases[i].rows, len, &e, path, sizeof path);
        if (!cases[i].want) {
            assert_int_equal(rc, 0);
            continue;
        }
        assert_int_equal(rc, -1);
        if (strncmp(e.msg, path, strlen(path)) || !strstr(e.msg, cases[i].want)) {
            print_error("case %zu: '%s' not in %s\n", i, cases[i].want, e.msg);
            fail();
        }
    }
}

static void test_model_catalog_overflow(void **state)
{
    (void)state;
    char path[64];
    write_temp("id,layers,hidden,heads,kv_heads,ffn,vocab,seq_len,gated_mlp,tied_embeddings,"
               "bias,norm,learned_pos,params_published\n"
               "m,99999999999999999999,64,4,4,256,100,32,0,1,1,layernorm,1,\n",
               path, sizeof path);
    model_spec *all;
    int n;
    gt_err e;
    assert_int_equal(model_catalog_load(path, &all, &n, &e), -1);
    assert_null(all);
    assert_non_null(strstr(e.msg, ":2:3: column 'layers': '99999999999999999999' is not an integer"));
    unlink(path);
}

int main(void)
{
    if (tu_chdir_root()) {
        fprintf(stderr, "test_readers: cannot find the repository root\n");
        return 1;
    }
    if (getenv("CMOCKA_TEST_FILTER")) /* e.g. CMOCKA_TEST_FILTER='*nesting*' */
        cmocka_set_test_filter(getenv("CMOCKA_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_gpu),
        cmocka_unit_test(test_one_layer_model),
        cmocka_unit_test(test_batch_one),
        cmocka_unit_test(test_plan_view_interleaved),
        cmocka_unit_test(test_site_without_gpus),
        cmocka_unit_test(test_100k_gpus_load),
        cmocka_unit_test(test_gpu_limit),
        cmocka_unit_test(test_site_limit),
        cmocka_unit_test(test_zero_bandwidth_refused),
        cmocka_unit_test(test_huge_bandwidth_message),
        cmocka_unit_test(test_zero_latency_allowed),
        cmocka_unit_test(test_nan_and_infinity_rejected),
        cmocka_unit_test(test_integer_overflow_in_counts),
        cmocka_unit_test(test_batch_product_overflow),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_long_strings),
        cmocka_unit_test(test_binary_input),
        cmocka_unit_test(test_locator_positions),
        cmocka_unit_test(test_memory_fits_to_the_byte),
        cmocka_unit_test(test_topology_write_read_round_trip),
        cmocka_unit_test(test_model_buffer_and_file_agree),
        cmocka_unit_test(test_gpu_catalog_bad_rows),
        cmocka_unit_test(test_model_catalog_overflow),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
