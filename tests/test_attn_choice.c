/* test_attn_choice.c — the attention kernel follows the GPU (attn_choice.h):
 * --attention auto runs the fused kernel on Ampere-or-newer types and the
 * unfused softmax path on Volta / Turing, stage by stage, in the compute and
 * the memory model alike; a forced fused kernel on a Volta GPU is refused.
 *
 * The memory answer is computed by hand from the activation count of
 * Korthikanti et al. 2022 (section 4): an unfused layer keeps the softmax
 * output, its dropout mask and the dropout output, 5as bytes per token
 * (16-bit, one-byte mask), where a fused kernel keeps one fp32 log-sum-exp
 * per head and token, 4a. */
#include "testutil.h"

#include <string.h>

#include "sim/inputs/catalog.h"
#include "sim/inputs/model.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"
#include "sim/models/attn_choice.h"
#include "sim/models/kernels.h"
#include "sim/models/plan_check.h"

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

static const gpu_type *type_of(const char *id)
{
    int k = gpu_catalog_find(&CAT, id);
    assert_true(k >= 0);
    return &CAT.types[k];
}

/* A GPT-style model (no gated MLP: dropout masks are kept): a = 16, s = 1024. */
#define HEADS 16
#define SEQ 1024
static const char *GPT =
    "{\"id\": \"tiny\", \"layers\": 8, \"hidden\": 1024, \"heads\": 16, \"ffn\": 4096, "
    "\"vocab\": 32000, \"seq_len\": 1024}";

static void job_of(job *j, attn_choice a)
{
    model_spec m;
    gt_err e;
    if (model_parse_json("m.json", GPT, strlen(GPT), &m, &e)) {
        print_error("%s\n", e.msg);
        fail();
    }
    job_defaults(j, &m);
    j->batch = 8;
    j->attention = a;
}


/* Two sites, one GPU each; stage 0 (layers 0..3) on `first`, stage 1 on `second`. */
static void world(const char *first, const char *second, topology *t, plan *p)
{
    char tj[512];
    snprintf(tj, sizeof tj,
             "{\"sites\": [{\"id\": \"x\", \"nodes\": [{\"gpu\": \"%s\", \"count\": 1}], "
             "\"lan\": {\"gbps\": 10, \"latency_ms\": 1}}, {\"id\": \"y\", \"nodes\": "
             "[{\"gpu\": \"%s\", \"count\": 1}], \"lan\": {\"gbps\": 10, \"latency_ms\": 1}}], "
             "\"default_wan\": {\"gbps\": 10, \"latency_ms\": 5}}",
             first, second);
    const char *pj = "{\"schedule\": \"1f1b\", \"pipelines\": [{\"microbatches\": 8, \"stages\": ["
                     "{\"gpus\": [\"x/0/0\"], \"layers\": [0, 3]},"
                     "{\"gpus\": [\"y/0/0\"], \"layers\": [4, 7]}]}]}";
    gt_err e;
    if (topo_parse(t, "t.json", tj, strlen(tj), &CAT, &e) ||
        plan_parse(p, "p.json", pj, strlen(pj), t, &e)) {
        print_error("%s\n", e.msg);
        fail();
    }
}

static void test_architecture_rule(void **state)
{
    (void)state;
    /* FlashAttention-2: Ampere, Ada, Hopper (+ Blackwell, CDNA2/3) */
    const char *fa2[] = {"a100_sxm_80gb", "a10", "l40s", "h100_sxm", "b200", "mi300x"};
    for (size_t i = 0; i < sizeof fa2 / sizeof fa2[0]; i++) {
        assert_true(attn_arch_runs_fa2(type_of(fa2[i])));
        assert_false(attn_arch_runs_no_flash(type_of(fa2[i])));
    }
    /* Turing: FlashAttention 1.x only; Volta: none */
    assert_false(attn_arch_runs_fa2(type_of("t4")));
    assert_false(attn_arch_runs_no_flash(type_of("t4")));
    assert_false(attn_arch_runs_fa2(type_of("v100_sxm2_32gb")));
    assert_true(attn_arch_runs_no_flash(type_of("v100_sxm2_32gb")));
    /* forcing wins over the rule either way */
    job j;
    job_of(&j, ATTN_UNFUSED);
    assert_false(attn_fused_on(&j, type_of("h100_sxm")));
    job_of(&j, ATTN_FUSED);
    assert_true(attn_fused_on(&j, type_of("t4")));
    job_of(&j, ATTN_AUTO);
    assert_true(attn_fused_on(&j, type_of("h100_sxm")));
    assert_false(attn_fused_on(&j, type_of("v100_pcie_16gb")));
}

/* A V100 stage keeps the s x s scores, an A100 stage does not. */
static void test_memory_follows_the_stage_gpu(void **state)
{
    (void)state;
    topology t;
    plan p;
    world("v100_sxm2_32gb", "a100_sxm_80gb", &t, &p);
    job au, fu, un;
    job_of(&au, ATTN_AUTO);
    job_of(&fu, ATTN_FUSED);
    job_of(&un, ATTN_UNFUSED);
    /* stage 0: 4 layers, 2 microbatches of b = 1 in flight under 1F1B; per
     * token and layer unfused keeps 5as bytes, fused 4a */
    double per_token = 5.0 * HEADS * SEQ - 4.0 * HEADS;
    double extra = 4 * 2 * 1.0 * SEQ * per_token;
    double v_auto = plan_gpu_memory(&p, &t, &au, 0), v_fused = plan_gpu_memory(&p, &t, &fu, 0);
    assert_true(v_auto == plan_gpu_memory(&p, &t, &un, 0));
    assert_true(rel_diff(v_auto - v_fused, extra) < 1e-12);
    /* the A100 stage (the last one) is the fused kernel's figure */
    double a_auto = plan_gpu_memory(&p, &t, &au, 1);
    assert_true(a_auto == plan_gpu_memory(&p, &t, &fu, 1));
    assert_true(a_auto < plan_gpu_memory(&p, &t, &un, 1));
    /* without a topology auto counts as fused */
    assert_true(plan_gpu_memory(&p, NULL, &au, 0) == v_fused);
    plan_free(&p);
    topo_free(&t);
}

/* The compute model prices the kernel the GPU runs. */
static void test_compute_follows_the_gpu(void **state)
{
    (void)state;
    job au, fu, un;
    job_of(&au, ATTN_AUTO);
    job_of(&fu, ATTN_FUSED);
    job_of(&un, ATTN_UNFUSED);
    const char *ids[] = {"v100_sxm2_32gb", "t4", "a100_sxm_80gb", "h100_sxm"};
    for (int i = 0; i < 4; i++) {
        const gpu_type *g = type_of(ids[i]);
        for (int bwd = 0; bwd < 2; bwd++) {
            double a = kern_layers_s(&au, g, 1, 1, 1, bwd, 1.0);
            double f = kern_layers_s(&fu, g, 1, 1, 1, bwd, 1.0);
            double u = kern_layers_s(&un, g, 1, 1, 1, bwd, 1.0);
            assert_true(f != u);
            assert_true(a == (i < 2 ? u : f));
        }
    }
}

static void test_forced_fused_refused_on_volta(void **state)
{
    (void)state;
    topology t;
    plan p;
    gt_err e;
    job j;
    world("a100_sxm_80gb", "v100_sxm2_32gb", &t, &p);
    job_of(&j, ATTN_FUSED);
    assert_int_equal(plan_check(&p, &t, &j, &e), -1);
    assert_non_null(strstr(e.msg, "pipelines[0].stages[1]"));
    assert_non_null(strstr(e.msg, "runs no FlashAttention"));
    job_of(&j, ATTN_AUTO);
    assert_int_equal(plan_check(&p, &t, &j, &e), 0);
    job_of(&j, ATTN_UNFUSED);
    assert_int_equal(plan_check(&p, &t, &j, &e), 0);
    plan_free(&p);
    topo_free(&t);
    /* Turing runs FlashAttention 1.x: forcing is allowed there */
    world("t4", "t4", &t, &p);
    job_of(&j, ATTN_FUSED);
    assert_int_equal(plan_check(&p, &t, &j, &e), 0);
    plan_free(&p);
    topo_free(&t);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_architecture_rule),
        cmocka_unit_test(test_memory_follows_the_stage_gpu),
        cmocka_unit_test(test_compute_follows_the_gpu),
        cmocka_unit_test(test_forced_fused_refused_on_volta),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
