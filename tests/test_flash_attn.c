/* test_flash_attn.c — the fused causal attention model (sim/models/flash_attn.c)
 * against hand-computed closed forms: at the catalog's reference shape (causal,
 * s = 8192, d = 128) with enough heads to fill the GPU the time is the
 * benchmark's counted FLOPs over peak x the measured fraction, exactly; with one
 * head the longest query tile bounds it; a memory-bound case takes its bytes
 * over bandwidth; the achieved rate rises with the sequence and the head
 * dimension; the kernel choice picks its catalog columns; the layer model uses
 * it where the type has the data and the GEMM estimate where not. */
#include "testutil.h"

#include <math.h>

#include "sim/models/flash_attn.h"
#include "sim/models/kernels.h"

static gpu_type h100(void)
{
    gpu_type g = {.peak_flops = 989.4e12, .mem_bw = 3350e9, .sms = 132, .gemm_eff = 0.8,
                  .mem_eff = 0.85, .kernel_s = 4e-6, .link_bw = 450e9, .link_eff = 0.78,
                  .k_sat = 128, .attn_fwd_eff = 0.637, .attn_bwd_eff = 0.537,
                  .fa2_fwd_eff = 0.287, .fa2_bwd_eff = 0.29};
    snprintf(g.id, sizeof g.id, "test_h100");
    snprintf(g.arch, sizeof g.arch, "hopper");
    return g;
}

static void test_reference_shape_reproduces_measurement(void **state)
{
    (void)state;
    gpu_type g = h100();
    double B = 132 * 8; /* sequences x heads: many waves */
    for (int bwd = 0; bwd <= 1; bwd++) {
        /* counted FLOPs: causal half of 4 s^2 d per head, x 2.5 backward */
        double counted = B * 2.0 * 8192.0 * 8192.0 * 128 * (bwd ? 2.5 : 1);
        assert_true(rel_diff(flash_counted_flops(8192, 128, B, bwd), counted) < 1e-15);
        double eff[] = {bwd ? 0.537 : 0.637, bwd ? 0.29 : 0.287};
        attn_impl_kind k[] = {ATTN_DEFAULT, ATTN_FLASH2};
        for (int i = 0; i < 2; i++) {
            double t = flash_attn_s(&g, g.peak_flops, 8192, 128, B, bwd, k[i], 0);
            assert_true(rel_diff(t, counted / (g.peak_flops * eff[i])) < 1e-12);
        }
        /* the Triton kernel off Ampere: FlashAttention-2's rate / 1.9 */
        double t2 = flash_attn_s(&g, g.peak_flops, 8192, 128, B, bwd, ATTN_FLASH2, 0);
        double tt = flash_attn_s(&g, g.peak_flops, 8192, 128, B, bwd, ATTN_TRITON, 0);
        assert_true(rel_diff(tt, 1.9 * t2) < 1e-12);
    }
}

/* The Triton kernel on Ampere runs at FlashAttention-1's measured speed:
 * its slowdown against FlashAttention-2 is FA2 / FA1 of the FA2 release's
 * A100 bars (causal forward + backward TFLOP/s) at the measured shapes,
 * interpolated between them (log2 s, d) and held outside; other
 * architectures keep 1.9 at every shape. */
static void test_triton_slowdown_from_measurements(void **state)
{
    (void)state;
    gpu_type h = h100(), a = h100();
    snprintf(a.arch, sizeof a.arch, "ampere");
    assert_true(rel_diff(flash_triton_slowdown(&a, 512, 64), 88.0 / 58.0) < 1e-12);
    assert_true(rel_diff(flash_triton_slowdown(&a, 16384, 64), 171.0 / 97.0) < 1e-12);
    assert_true(rel_diff(flash_triton_slowdown(&a, 512, 128), 99.0 / 55.0) < 1e-12);
    assert_true(rel_diff(flash_triton_slowdown(&a, 8192, 128), 182.0 / 80.0) < 1e-12);
    /* halfway in log2 s between 1k and 2k, and in d between 64 and 128 */
    double mid_s = (119.0 / 70.0 + 140.0 / 77.0) / 2;
    assert_true(rel_diff(flash_triton_slowdown(&a, 1024 * sqrt(2.0), 64), mid_s) < 1e-12);
    double mid_d = (156.0 / 87.0 + 173.0 / 76.0) / 2;
    assert_true(rel_diff(flash_triton_slowdown(&a, 4096, 96), mid_d) < 1e-12);
    /* outside the measured range the nearest measurement holds */
    assert_true(flash_triton_slowdown(&a, 65536, 128) == flash_triton_slowdown(&a, 16384, 128));
    assert_true(flash_triton_slowdown(&a, 128, 64) == flash_triton_slowdown(&a, 512, 64));
    assert_true(flash_triton_slowdown(&a, 8192, 256) == flash_triton_slowdown(&a, 8192, 128));
    assert_true(flash_triton_slowdown(&a, 8192, 32) == flash_triton_slowdown(&a, 8192, 64));
    /* elsewhere the prior, whatever the shape */
    assert_true(flash_triton_slowdown(&h, 512, 64) == 1.9);
    assert_true(flash_triton_slowdown(&h, 65536, 128) == 1.9);
    /* it scales the kernel's time in either pass (compute-bound) */
    for (int bwd = 0; bwd <= 1; bwd++) {
        double t2 = flash_attn_s(&a, a.peak_flops, 2048, 64, 512, bwd, ATTN_FLASH2, 0);
        double tt = flash_attn_s(&a, a.peak_flops, 2048, 64, 512, bwd, ATTN_TRITON, 0);
        assert_true(rel_diff(tt, 140.0 / 77.0 * t2) < 1e-12);
    }
}

static void test_one_head_bound_by_longest_tile(void **state)
{
    (void)state;
    gpu_type g = h100();
    /* one head, s = 8192: 64 query tiles on 132 SMs; the last tile runs 64
     * key blocks + 1 fixed step. Executed per counted at the reference:
     * (64 x 65 / 2 + 64) x 4 x 128^2 / (2 x 8192^2) = 2144 / 2048. */
    double w_ref = 2144.0 / 2048.0;
    double per_sm = 989.4e12 / 132 * 0.637 * w_ref;
    double want = 65 * 4.0 * 128 * 128 * 128 / per_sm;
    double t = flash_attn_s(&g, g.peak_flops, 8192, 128, 1, 0, ATTN_DEFAULT, 0);
    assert_true(rel_diff(t, want) < 1e-12);
}

static void test_memory_bound(void **state)
{
    (void)state;
    gpu_type g = h100();
    double bytes = 1e12;
    double t = flash_attn_s(&g, g.peak_flops, 128, 128, 1, 1, ATTN_DEFAULT, bytes);
    assert_true(rel_diff(t, bytes / (3350e9 * 0.85)) < 1e-12);
}

static void test_rate_rises_with_sequence_and_head_dim(void **state)
{
    (void)state;
    gpu_type g = h100();
    for (int bwd = 0; bwd <= 1; bwd++) {
        double prev_t = 0, prev_rate = 0;
        for (double s = 512; s <= 65536; s *= 2) {
            double B = 132 * 16;
            double t = flash_attn_s(&g, g.peak_flops, s, 128, B, bwd, ATTN_DEFAULT, 0);
            double rate = flash_counted_flops(s, 128, B, bwd) / t;
            assert_true(t > prev_t);
            assert_true(rate > prev_rate);
            prev_t = t;
            prev_rate = rate;
        }
        /* never above the measured fraction / the reference's work ratio (the
         * rate the long-sequence limit tends to) */
        double lim = (bwd ? 0.537 : 0.637) * (bwd ? 2208.0 : 2144.0) / 2048.0;
        assert_true(prev_rate < lim * g.peak_flops);
        double r64 = flash_counted_flops(8192, 64, 1056, bwd) /
                     flash_attn_s(&g, g.peak_flops, 8192, 64, 1056, bwd, ATTN_DEFAULT, 0);
        double r128 = flash_counted_flops(8192, 128, 1056, bwd) /
                      flash_attn_s(&g, g.peak_flops, 8192, 128, 1056, bwd, ATTN_DEFAULT, 0);
        /* d / (d + 30), normalised at d = 128: 64/94 / (128/158) */
        assert_true(rel_diff(r64 / r128, (64.0 / 94) / (128.0 / 158)) < 1e-12);
    }
}

static void test_kernel_columns_and_fallback(void **state)
{
    (void)state;
    gpu_type g = h100();
    g.fa2_fwd_eff = g.fa2_bwd_eff = 0; /* no FlashAttention-2 figure: the default's */
    double a = flash_attn_s(&g, g.peak_flops, 4096, 128, 512, 0, ATTN_DEFAULT, 0);
    double f = flash_attn_s(&g, g.peak_flops, 4096, 128, 512, 0, ATTN_FLASH2, 0);
    assert_true(rel_diff(a, f) < 1e-15);
    /* the layer model uses it for a fused job on a type with data ... */
    model_spec m = {.layers = 2, .hidden = 4096, .heads = 32, .kv_heads = 32, .ffn = 16384,
                    .vocab = 32000, .seq_len = 8192};
    job j;
    job_defaults(&j, &m);
    kern_time k = {0};
    kern_attention(&j, &g, 1, 2, 0, &k);
    double bytes = 4.0 * 2 * 8192 * 4096 * 2;
    assert_true(rel_diff(k.gemm_s, flash_attn_s(&g, g.peak_flops, 8192, 128, 64, 0,
                                                ATTN_DEFAULT, bytes)) < 1e-12);
    /* ... and the GEMM estimate where the type has none */
    g.attn_fwd_eff = g.attn_bwd_eff = 0;
    assert_false(flash_has_data(&g, ATTN_DEFAULT, 0));
    kern_time k2 = {0};
    kern_attention(&j, &g, 1, 2, 0, &k2);
    double blk = kern_gemm_s(&g, g.peak_flops, 2, 8192, 128, 8192, 64);
    assert_true(rel_diff(k2.gemm_s, blk) < 1e-12); /* 0.5 x 2 products */
}

static void test_shipped_catalog_columns(void **state)
{
    (void)state;
    gt_err e;
    gpu_catalog c;
    assert_int_equal(gpu_catalog_load_default(&c, &e), 0);
    const gpu_type *h = &c.types[gpu_catalog_find(&c, "h100_sxm")];
    const gpu_type *a = &c.types[gpu_catalog_find(&c, "a100_sxm_80gb")];
    const gpu_type *v = &c.types[gpu_catalog_find(&c, "v100_sxm2_32gb")];
    /* H100: 630.0 / 531.6 (FA3) and 284.1 / 287.1 (FA2) of 989.4 TFLOP/s */
    assert_true(fabs(h->attn_fwd_eff - 630.0 / 989.4) < 1e-3);
    assert_true(fabs(h->fa2_bwd_eff - 287.1 / 989.4) < 1e-3);
    assert_true(a->attn_fwd_eff == 0.73 && a->attn_bwd_eff == 0.63);
    assert_false(flash_has_data(v, ATTN_DEFAULT, 0)); /* no FlashAttention on Volta */
    gpu_catalog_free(&c);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_shape_reproduces_measurement),
        cmocka_unit_test(test_triton_slowdown_from_measurements),
        cmocka_unit_test(test_one_head_bound_by_longest_tile),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_rate_rises_with_sequence_and_head_dim),
        cmocka_unit_test(test_kernel_columns_and_fallback),
        cmocka_unit_test(test_shipped_catalog_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
