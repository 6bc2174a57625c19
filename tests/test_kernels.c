/* test_kernels.c — the per-layer kernel model (sim/models/kernels.c) against its
 * limits and closed forms: a large square GEMM tends to peak x gemm_eff; a
 * skinny GEMM takes its bytes over memory bandwidth; time grows with every
 * dimension; on an idealised GPU (one SM, no saturation, infinite memory
 * bandwidth, free launches) a layer's GEMM time is exactly the FLOPs of
 * sim/models/cost.c over peak x efficiency, split t ways by tensor parallelism;
 * the TP collectives follow the ring closed form; precisions pick their
 * peaks; a type without kernel data uses the documented fallback; eager
 * PyTorch's elementwise passes add their hand-counted bytes and kernels. */
#include "testutil.h"

#include <math.h>

#include "sim/models/cost.h"
#include "sim/models/kernels.h"

static gpu_type h100(void)
{
    gpu_type g = {.peak_flops = 989.4e12, .peak_fp8 = 1978.9e12, .peak_tf32 = 494.7e12,
                  .peak_fp32 = 66.9e12, .mem_bw = 3350e9, .link_bw = 450e9, .sms = 132,
                  .gemm_eff = 0.8, .mem_eff = 0.85, .kernel_s = 4e-6, .link_lat_s = 1e-6,
                  .link_eff = 0.78, .k_sat = 128, .efficiency = 0.43};
    snprintf(g.id, sizeof g.id, "test_h100");
    return g;
}

static double gemm_flops(double M, double N, double K)
{
    return 2 * M * N * K;
}

static void test_square_gemm_tends_to_peak(void **state)
{
    (void)state;
    gpu_type g = h100();
    double prev = 0;
    for (double n = 1024; n <= 65536; n *= 2) {
        double t = kern_gemm_s(&g, g.peak_flops, 2, n, n, n, 1);
        double frac = gemm_flops(n, n, n) / t / g.peak_flops;
        assert_true(frac <= g.gemm_eff + 1e-12);  /* never above the measured ceiling */
        assert_true(frac >= prev - 1e-3);          /* approaches it (waves may wobble) */
        prev = frac;
    }
    /* at 65536: tile/wave waste 1 - 262144/(ceil(262144/132) x 132) < 0.1 %,
     * saturation 128/65536 = 0.2 % */
    assert_true(prev > 0.995 * g.gemm_eff);
}

static void test_skinny_gemm_memory_bound(void **state)
{
    (void)state;
    gpu_type g = h100();
    /* a GEMV-like product: 8 tokens through an 8192 x 8192 weight */
    double M = 8, N = 8192, K = 8192, eb = 2;
    double bytes = (M * K + K * N + M * N) * eb;
    double want = bytes / (g.mem_bw * g.mem_eff);
    double t = kern_gemm_s(&g, g.peak_flops, eb, M, N, K, 1);
    assert_true(rel_diff(t, want) < 1e-12);
    /* and it runs far below the compute peak */
    assert_true(gemm_flops(M, N, K) / t < 0.05 * g.peak_flops);
}

static void test_gemm_monotone(void **state)
{
    (void)state;
    gpu_type g = h100();
    static const double d[] = {1, 7, 64, 100, 128, 129, 500, 1024, 2048, 3000, 4096, 12288};
    int n = (int)(sizeof d / sizeof *d);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            for (int c = 0; c + 1 < n; c++) {
                /* grow one dimension at a time, the other two fixed */
                double x = d[a], y = d[b], k0 = d[c], k1 = d[c + 1];
                assert_true(kern_gemm_s(&g, g.peak_flops, 2, x, y, k1, 1) >=
                            kern_gemm_s(&g, g.peak_flops, 2, x, y, k0, 1));
                assert_true(kern_gemm_s(&g, g.peak_flops, 2, k1, x, y, 1) >=
                            kern_gemm_s(&g, g.peak_flops, 2, k0, x, y, 1));
                assert_true(kern_gemm_s(&g, g.peak_flops, 2, x, k1, y, 1) >=
                            kern_gemm_s(&g, g.peak_flops, 2, x, k0, y, 1));
            }
}

static job gpt_job(int heads, int hidden, int ffn, int seq)
{
    model_spec m = {.layers = 4, .hidden = hidden, .heads = heads, .kv_heads = heads,
                    .ffn = ffn, .vocab = 51200, .seq_len = seq, .norm = NORM_LAYERNORM};
    snprintf(m.id, sizeof m.id, "test");
    job j;
    job_defaults(&j, &m);
    j.seq = seq;
    return j;
}

/* One SM, tile-aligned shapes, k_sat 0, unbounded memory bandwidth: GEMM
 * time = FLOPs / (peak x gemm_eff) exactly, so the layer's GEMMs must add up
 * to cost_layer_fwd_flops (the closed form of test_cost.c) split t ways. */
static void test_layer_gemms_match_flop_formula(void **state)
{
    (void)state;
    gpu_type g = h100();
    g.sms = 1;
    g.k_sat = 0;
    g.mem_bw = 1e30;
    job j = gpt_job(32, 4096, 16384, 2048);
    j.attention = ATTN_UNFUSED; /* the unfused core computes all s x s scores */
    double flops = cost_layer_fwd_flops(&j.model, 2, j.seq);
    for (int tp = 1; tp <= 8; tp *= 2) {
        kern_time f, b;
        kern_layer(&j, &g, tp, 2, 0, &f);
        kern_layer(&j, &g, tp, 2, 1, &b);
        double want = flops / tp / (g.peak_flops * g.gemm_eff);
        assert_true(rel_diff(f.gemm_s, want) < 1e-9);
        assert_true(rel_diff(b.gemm_s, 2 * want) < 1e-9); /* backward = 2 x forward */
    }
}

/* Ring collective: phases x ((t-1)/t x bytes / (bw x eff) + (t-1) x lat);
 * a layer's pass has two all-reduces of b*s*h*e bytes, and sequence
 * parallelism keeps that traffic while splitting the replicated
 * norm/dropout/residual bytes t ways. */
static void test_tp_collectives_closed_form(void **state)
{
    (void)state;
    gpu_type g = h100();
    double B = 64e6;
    double ar8 = 2 * (7.0 / 8 * B / (g.link_bw * g.link_eff) + 7 * g.link_lat_s);
    assert_true(rel_diff(kern_ring_s(&g, 8, B, 2), ar8) < 1e-12);
    assert_true(kern_ring_s(&g, 1, B, 2) == 0);
    job j = gpt_job(16, 2048, 8192, 2048);
    int b = 4, tp = 4, n;
    double bytes;
    kern_tp_layer_traffic(&j, tp, b, &n, &bytes);
    assert_int_equal(n, 2);
    assert_true(rel_diff(bytes, (double)b * 2048 * 2048 * 2) < 1e-12);
    double ar4 = 2 * (3.0 / 4 * bytes / (g.link_bw * g.link_eff) + 3 * g.link_lat_s);
    for (int bwd = 0; bwd < 2; bwd++) {
        kern_time plain, sp;
        kern_layer(&j, &g, tp, b, bwd, &plain);
        j.sequence_parallel = true;
        kern_layer(&j, &g, tp, b, bwd, &sp);
        j.sequence_parallel = false;
        assert_true(rel_diff(plain.comm_s, 2 * ar4) < 1e-12);
        assert_true(rel_diff(sp.comm_s, plain.comm_s) < 1e-12);
        /* replicated elementwise bytes per layer: forward 2 norms x 2 + 2
         * residual adds x 3 = 10 T h e; backward 12 T h e */
        double E = (double)b * 2048 * 2048 * 2 * (bwd ? 12 : 10);
        double saved = E * (1 - 1.0 / tp) / (g.mem_bw * g.mem_eff);
        assert_true(rel_diff(plain.mem_s - sp.mem_s, saved) < 1e-9);
    }
}

/* --tp-comm-overlap with sequence parallelism: each of the four collective
 * halves (ring of 1 phase) hides under the GEMMs of one linear (forward: its
 * GEMM; backward: dgrad + wgrad), so the exposed time is the sum of
 * max(0, half - gemm_i), with gemm_i from kern_gemm_s on the linear's shape.
 * Without sequence parallelism nothing changes; compute is untouched. */
static void test_tp_comm_overlap_closed_form(void **state)
{
    (void)state;
    gpu_type g = h100();
    /* a small hidden size at tp 8 on a slow link: some halves stay exposed */
    g.link_bw = 50e9;
    job j = gpt_job(16, 2048, 8192, 2048);
    int b = 1, tp = 8, n;
    double bytes, h = 2048, f = 8192, T = (double)b * 2048;
    kern_tp_layer_traffic(&j, tp, b, &n, &bytes);
    double half = kern_ring_s(&g, tp, bytes, 1), pk = kern_peak(&g, j.precision);
    double N[4] = {3 * h / tp, h, f / tp, h}, K[4] = {h, h / tp, h, f / tp};
    for (int bwd = 0; bwd < 2; bwd++) {
        double want = 0;
        for (int i = 0; i < 4; i++) {
            double gm = bwd ? kern_gemm_s(&g, pk, 2, T, K[i], N[i], 1) +
                                  kern_gemm_s(&g, pk, 2, K[i], N[i], T, 1)
                            : kern_gemm_s(&g, pk, 2, T, N[i], K[i], 1);
            want += half > gm ? half - gm : 0;
        }
        kern_time sp, ov, plain_ov;
        j.sequence_parallel = true;
        kern_layer(&j, &g, tp, b, bwd, &sp);
        j.tp_comm_overlap = true;
        kern_layer(&j, &g, tp, b, bwd, &ov);
        j.sequence_parallel = false;
        kern_layer(&j, &g, tp, b, bwd, &plain_ov);
        j.tp_comm_overlap = false;
        assert_true(want > 0 && want < sp.comm_s); /* partly hidden */
        assert_true(rel_diff(ov.comm_s, want) < 1e-12);
        assert_true(ov.gemm_s == sp.gemm_s && ov.mem_s == sp.mem_s);
        assert_true(rel_diff(plain_ov.comm_s, n * kern_ring_s(&g, tp, bytes, 2)) < 1e-12);
    }
    /* on the real link the GEMMs hide every half of this shape */
    g = h100();
    j.sequence_parallel = j.tp_comm_overlap = true;
    kern_time ov;
    kern_layer(&j, &g, 2, 8, 0, &ov);
    assert_true(ov.comm_s == 0);
}

static void test_precision_peaks(void **state)
{
    (void)state;
    gpu_type g = h100();
    assert_true(kern_peak(&g, PREC_BF16) == g.peak_flops);
    assert_true(kern_peak(&g, PREC_FP16) == g.peak_flops);
    assert_true(kern_peak(&g, PREC_FP8) == g.peak_fp8);
    assert_true(kern_peak(&g, PREC_TF32) == g.peak_tf32);
    assert_true(kern_peak(&g, PREC_FP32) == g.peak_fp32);
    gpu_type v = g;
    v.peak_fp8 = 0; /* no fp8 tensor cores: the 16-bit peak */
    v.peak_tf32 = 0; /* no TF32 (Volta): FP32 */
    assert_true(kern_peak(&v, PREC_FP8) == v.peak_flops);
    assert_true(kern_peak(&v, PREC_TF32) == v.peak_fp32);
    /* a compute-bound GEMM speeds up by the ratio of the peaks (~2x) */
    double t16 = kern_gemm_s(&g, kern_peak(&g, PREC_BF16), 2, 8192, 8192, 8192, 1);
    double t8 = kern_gemm_s(&g, kern_peak(&g, PREC_FP8), 1, 8192, 8192, 8192, 1);
    assert_true(rel_diff(t16 / t8, g.peak_fp8 / g.peak_flops) < 1e-12);
    precision_kind p;
    assert_int_equal(precision_parse("fp8", &p), 0);
    assert_int_equal(p, PREC_FP8);
    assert_int_equal(precision_parse("int4", &p), -1);
    assert_int_equal(precision_act_bytes(PREC_FP32), 4);
}

/* fp8 linears run at gemm_eff_fp8 where the catalog has it: a compute-bound
 * layer's GEMM time scales by gemm_eff / gemm_eff_fp8; without the column it
 * is the 16-bit efficiency at the fp8 peak. */
static void test_fp8_gemm_efficiency(void **state)
{
    (void)state;
    gpu_type g = h100();
    g.k_sat = 0;
    model_spec m = {.layers = 1, .hidden = 8192, .heads = 64, .kv_heads = 64, .ffn = 32768,
                    .vocab = 32000, .seq_len = 4096};
    job j;
    job_defaults(&j, &m);
    j.precision = PREC_FP8;
    kern_time a, b;
    kern_layer(&j, &g, 1, 4, 0, &a);
    g.gemm_eff_fp8 = 0.7;
    kern_layer(&j, &g, 1, 4, 0, &b);
    /* the attention core (16-bit, not fp8) is in gemm_s too: remove it */
    kern_time at = {0};
    kern_attention(&j, &g, 1, 4, 0, &at);
    assert_true(rel_diff((b.gemm_s - at.gemm_s) / (a.gemm_s - at.gemm_s), 0.8 / 0.7) < 1e-9);
    assert_true(rel_diff(b.mem_s, a.mem_s) < 1e-15); /* casts and elementwise unchanged */
    j.precision = PREC_BF16; /* a 16-bit job ignores the column */
    kern_layer(&j, &g, 1, 4, 0, &b);
    g.gemm_eff_fp8 = 0;
    kern_layer(&j, &g, 1, 4, 0, &a);
    assert_true(a.gemm_s == b.gemm_s);
}

/* A type without kernel data: the stage time is the constant-efficiency
 * closed form FLOPs / (peak x efficiency) + the bandwidth-only ring. */
static void test_fallback_without_kernel_data(void **state)
{
    (void)state;
    gpu_type g = h100();
    g.gemm_eff = 0;
    assert_false(kern_has_model(&g));
    job j = gpt_job(16, 2048, 8192, 2048);
    double flops = cost_stage_fwd_flops(&j, 2, 1, 2);
    double bytes = 2.0 * 2 * 2 * 2048 * 2048 * 2; /* 2 layers x 2 all-reduces x b*s*h*2 */
    double want = flops / (g.peak_flops * g.efficiency) / 2 + bytes * 2 * 1 / 2 / g.link_bw;
    assert_true(llabs(cost_stage_fwd_ns(&j, &g, 2, 2, 1, 2, 1.0) - cost_ns(want)) <= 1);
    gpu_type k = h100();
    assert_true(kern_has_model(&k));
    double ks = kern_stage_s(&j, &k, 2, 2, 1, 2, 0, 1.0);
    assert_true(llabs(cost_stage_fwd_ns(&j, &k, 2, 2, 1, 2, 1.0) - cost_ns(ks)) <= 1);
}

/* Recomputation: full adds one forward of the layers to the backward. */
static void test_recompute_adds_forward(void **state)
{
    (void)state;
    gpu_type g = h100();
    job j = gpt_job(16, 2048, 8192, 2048);
    double b0 = kern_stage_s(&j, &g, 1, 1, 1, 2, 1, 1.0);
    double f0 = kern_stage_s(&j, &g, 1, 1, 1, 2, 0, 1.0);
    j.recompute = RECOMPUTE_FULL;
    assert_true(rel_diff(kern_stage_s(&j, &g, 1, 1, 1, 2, 1, 1.0), b0 + f0) < 1e-12);
}

/* Every shipped GPU type carries the kernel model with sane values. */
static void test_catalog_kernel_columns(void **state)
{
    (void)state;
    gt_err e;
    gpu_catalog c;
    assert_int_equal(gpu_catalog_load_default(&c, &e), 0);
    static const char *need[] = {"a100_sxm_40gb", "a100_sxm_80gb", "h100_sxm", "h100_nvl",
                                 "h200_sxm", "gh200", "b200", "gb200", "gb300", "l4", "l40s",
                                 "v100_sxm2_32gb", NULL};
    for (int i = 0; need[i]; i++)
        assert_true(gpu_catalog_find(&c, need[i]) >= 0);
    for (int i = 0; i < c.n; i++) {
        const gpu_type *g = &c.types[i];
        assert_true(kern_has_model(g));
        assert_true(g->gemm_eff <= 1 && g->mem_eff <= 1 && g->arch[0]);
        assert_true(g->peak_fp8 == 0 || g->peak_fp8 >= g->peak_flops);
        assert_true(g->peak_fp32 > 0 && g->peak_fp32 <= g->peak_flops);
    }
    gpu_catalog_free(&c);
}

/* Overhead seconds per wave of tiles that k_sat adds to a compute-bound
 * square GEMM on g (the GEMM with and without saturation, over its waves). */
static double tile_overhead_s(gpu_type g)
{
    double n = 8192;
    double waves = ceil(ceil(n / KERN_TILE_M) * ceil(n / KERN_TILE_N) / g.sms);
    double with = kern_gemm_s(&g, g.peak_flops, 2, n, n, n, 1);
    g.k_sat = 0;
    double without = kern_gemm_s(&g, g.peak_flops, 2, n, n, n, 1);
    assert_true(without > kern_mem_s(&g, 3 * n * n * 2)); /* compute-bound */
    return (with - without) / waves;
}

/* An architecture without fitting rows takes the per-tile overhead time of
 * the nearest fitted architecture of its vendor (topologies/derive/
 * kernel_params.py): on the reference parts a wave's k_sat overhead takes the
 * same time, to the half K-step of rounding; every part of the architecture
 * shares its k_sat, as the fitted architectures do. */
static void test_catalog_k_sat_prior_keeps_tile_time(void **state)
{
    (void)state;
    gt_err e;
    gpu_catalog c;
    assert_int_equal(gpu_catalog_load_default(&c, &e), 0);
    static const char *pair[][2] = {{"b200", "h100_sxm"}, {"l40s", "a100_sxm_80gb"},
                                    {"t4", "v100_sxm2_32gb"}};
    for (size_t i = 0; i < sizeof pair / sizeof pair[0]; i++) {
        int a = gpu_catalog_find(&c, pair[i][0]), b = gpu_catalog_find(&c, pair[i][1]);
        assert_true(a >= 0 && b >= 0);
        const gpu_type *ga = &c.types[a], *gb = &c.types[b];
        assert_true(ga->k_sat > 0 && gb->k_sat > 0);
        double ta = tile_overhead_s(*ga), tb = tile_overhead_s(*gb);
        assert_true(fabs(ta - tb) <= tb * (0.5 / ga->k_sat + 1e-9));
        for (int k = 0; k < c.n; k++)
            if (!strcmp(c.types[k].arch, ga->arch))
                assert_true(c.types[k].k_sat == ga->k_sat);
    }
    gpu_catalog_free(&c);
}

/* torchtitan's per-op selective checkpointing redoes the 2nd, 4th and 6th
 * mm of the layer (wk, wo, w3 of wq wk wv wo w1 w3 w2) and its pointwise
 * ops, forward. On an idealised GPU (one SM, k_sat 0, unbounded memory
 * bandwidth, no launch cost) the backward grows by exactly those GEMMs'
 * FLOPs / (peak x gemm_eff): 2 T h (h kv/a + h + f) / t. */
static void test_ops_recompute_redoes_every_second_gemm(void **state)
{
    (void)state;
    gpu_type g = h100();
    g.sms = 1;
    g.k_sat = 0;
    g.mem_bw = 1e30;
    g.kernel_s = 0;
    job j = gpt_job(32, 4096, 14336, 2048);
    j.model.kv_heads = 8;
    j.model.gated_mlp = 1;
    double T = 2.0 * 2048, h = 4096, f = 14336, kv = h * 8 / 32;
    for (int tp = 1; tp <= 8; tp *= 2) {
        j.recompute_ops = false;
        double none = kern_layers_s(&j, &g, tp, 2, 1, 1, 1.0);
        j.recompute_ops = true;
        double ops = kern_layers_s(&j, &g, tp, 2, 1, 1, 1.0);
        double want = 2 * T * h * (kv + h + f) / tp / (g.peak_flops * g.gemm_eff);
        assert_true(rel_diff(ops - none, want) < 1e-9);
        /* the forward does not change */
        double fwd_ops = kern_layers_s(&j, &g, tp, 2, 1, 0, 1.0);
        j.recompute_ops = false;
        assert_true(fwd_ops == kern_layers_s(&j, &g, tp, 2, 1, 0, 1.0));
    }
}

/* Biased linear layers: the backward adds one reduction per linear over its
 * output gradient, T x N elements of e bytes each (column-parallel biases
 * QKV and MLP up split t ways, row-parallel ones whole, or split t ways along
 * the sequence under sequence parallelism), plus its four launches; the
 * forward (bias add fused into the GEMM epilogue) and the GEMMs are
 * unchanged. Hand-computed bytes, GeLU and SwiGLU, with and without SP. */
static void test_bias_gradients_closed_form(void **state)
{
    (void)state;
    gpu_type g = h100();
    job j = gpt_job(32, 4096, 16384, 2048);
    int b = 2;
    double T = 2.0 * 2048, h = 4096, e = 2;
    for (int gated = 0; gated < 2; gated++)
        for (int tp = 1; tp <= 4; tp *= 2)
            for (int sp = 0; sp < 2; sp++) {
                j.model.gated_mlp = gated;
                j.model.ffn = gated ? 11008 : 16384;
                j.sequence_parallel = sp;
                double f = j.model.ffn;
                double col = T * (3 * h + (gated ? 2 : 1) * f) / tp;
                double row = 2 * T * h / (sp ? tp : 1);
                double want = (col + row) * e / (g.mem_bw * g.mem_eff);
                for (int bwd = 0; bwd < 2; bwd++) {
                    kern_time plain, biased;
                    j.model.bias = 0;
                    kern_layer(&j, &g, tp, b, bwd, &plain);
                    j.model.bias = 1;
                    kern_layer(&j, &g, tp, b, bwd, &biased);
                    assert_true(biased.gemm_s == plain.gemm_s);
                    assert_true(biased.comm_s == plain.comm_s);
                    if (!bwd) {
                        assert_true(biased.mem_s == plain.mem_s);
                        assert_int_equal(biased.kernels, plain.kernels);
                        continue;
                    }
                    assert_true(rel_diff(biased.mem_s - plain.mem_s, want) < 1e-9);
                    assert_int_equal(biased.kernels - plain.kernels, 4);
                    assert_true(rel_diff(biased.launch_s - plain.launch_s, 4 * g.kernel_s) <
                                1e-9);
                }
            }
    /* fp8 GEMMs (Transformer Engine): the bias gradient rides in the cast */
    j.precision = PREC_FP8;
    kern_time plain, biased;
    j.model.bias = 0;
    kern_layer(&j, &g, 1, b, 1, &plain);
    j.model.bias = 1;
    kern_layer(&j, &g, 1, b, 1, &biased);
    assert_true(biased.mem_s == plain.mem_s && biased.kernels == plain.kernels);
}

/* FlashAttention-2 through its variable-length API (llm-foundry attn_impl
 * flash): the unpadding adds, forward, three gathers of Q, K, V (read +
 * write) and the output's scatter into zeros (write zeros, read, write);
 * backward, the output gradient's gather and the three input gradients'
 * scatters into zeros. Hand-computed bytes for an MHA and a GQA layer at
 * t = 1 and 2; the kernel's own time is unchanged. */
static void test_unpad_passes_closed_form(void **state)
{
    (void)state;
    gpu_type g = h100();
    g.attn_fwd_eff = g.attn_bwd_eff = 0.6;
    g.fa2_fwd_eff = g.fa2_bwd_eff = 0.3;
    job j = gpt_job(32, 4096, 16384, 2048);
    j.attention = ATTN_FUSED;
    j.attn_impl = ATTN_FLASH2;
    int b = 3;
    double T = 3.0 * 2048, h = 4096, e = 2, bw = g.mem_bw * g.mem_eff;
    for (int kvh = 8; kvh <= 32; kvh *= 4)
        for (int tp = 1; tp <= 2; tp++) {
            j.model.kv_heads = kvh;
            double q = T * h / tp, kv = T * h * kvh / 32 / tp;
            double want[2] = {(2 * (q + 2 * kv) + 3 * q) * e / bw,
                              (2 * q + 3 * (q + 2 * kv)) * e / bw};
            for (int bwd = 0; bwd < 2; bwd++) {
                kern_time plain = {0}, unpad = {0};
                j.attn_unpad = false;
                kern_attention(&j, &g, tp, b, bwd, &plain);
                j.attn_unpad = true;
                kern_attention(&j, &g, tp, b, bwd, &unpad);
                assert_true(plain.gemm_s > 0 && unpad.gemm_s == plain.gemm_s);
                assert_true(rel_diff(unpad.mem_s - plain.mem_s, want[bwd]) < 1e-9);
                assert_int_equal(unpad.kernels - plain.kernels, bwd ? 7 : 17);
            }
        }
    /* a fused kernel without measured rates (GEMM estimate) is unpadded alike */
    gpu_type nod = h100();
    j.model.kv_heads = 32;
    for (int bwd = 0; bwd < 2; bwd++) {
        kern_time plain = {0}, unpad = {0};
        j.attn_unpad = false;
        kern_attention(&j, &nod, 1, b, bwd, &plain);
        j.attn_unpad = true;
        kern_attention(&j, &nod, 1, b, bwd, &unpad);
        double want = (bwd ? 11 : 9) * T * h * e / (nod.mem_bw * nod.mem_eff);
        assert_true(rel_diff(unpad.mem_s - plain.mem_s, want) < 1e-9);
    }
    /* without a fused kernel there is nothing to unpad */
    j.attention = ATTN_UNFUSED;
    kern_time a = {0}, c = {0};
    j.attn_unpad = false;
    kern_attention(&j, &g, 1, b, 0, &a);
    j.attn_unpad = true;
    kern_attention(&j, &g, 1, b, 0, &c);
    assert_true(a.mem_s == c.mem_s && a.kernels == c.kernels);
}

/* Eager PyTorch's elementwise passes (job.eager), bytes counted by hand
 * from torchtitan's Llama block at bf16 (e = 2): RMSNorm 36 bytes per
 * element forward, 92 backward (against the fused kernel's 4 / 6); SwiGLU
 * 10 / 18 per element of T f/t (fused: 6 / 10); RoPE 20 per element of Q and
 * K each way; repeat_kv 2 (q + kv) e each way under GQA only. The kernel
 * counts grow by 9 forward / 10 backward (ops), and by 2 x 7 / 2 x 13 more
 * with the norm eager. The GEMMs and the attention kernel do not change. */
static void test_eager_passes_by_hand(void **state)
{
    (void)state;
    gpu_type g = h100();
    job j = gpt_job(32, 4096, 14336, 2048);
    j.model.gated_mlp = 1;
    for (int kvh = 8; kvh <= 32; kvh += 24) {
        j.model.kv_heads = kvh;
        for (int tp = 1; tp <= 2; tp++)
            for (int bwd = 0; bwd <= 1; bwd++) {
                kern_time k[3];
                for (int m = 0; m < 3; m++) {
                    j.eager = (eager_kind)m;
                    kern_layer(&j, &g, tp, 2, bwd, &k[m]);
                    assert_true(k[m].gemm_s == k[0].gemm_s);
                }
                double T = 2.0 * 2048, E = T * 4096, F = T * 14336 / tp;
                double q = E / tp, kv = T * 4096.0 * kvh / 32 / tp;
                double glue = (q + kv) * 20 + (kvh < 32 ? 2 * (q + kv) * 2 : 0);
                double ops = F * (bwd ? 18 - 10 : 10 - 6) + glue;
                double norm = 2 * E * (bwd ? 92 - 6 : 36 - 4);
                double bw = g.mem_bw * g.mem_eff;
                assert_true(rel_diff(k[1].mem_s - k[0].mem_s, ops / bw) < 1e-9);
                assert_true(rel_diff(k[2].mem_s - k[1].mem_s, norm / bw) < 1e-9);
                int more = (bwd ? 10 : 9) - (kvh < 32 ? 0 : 2);
                assert_int_equal(k[1].kernels - k[0].kernels, more);
                assert_int_equal(k[2].kernels - k[1].kernels, bwd ? 26 : 14);
            }
    }
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_square_gemm_tends_to_peak),
        cmocka_unit_test(test_skinny_gemm_memory_bound),
        cmocka_unit_test(test_gemm_monotone),
        cmocka_unit_test(test_layer_gemms_match_flop_formula),
        cmocka_unit_test(test_tp_collectives_closed_form),
        cmocka_unit_test(test_tp_comm_overlap_closed_form),
        cmocka_unit_test(test_precision_peaks),
        cmocka_unit_test(test_fp8_gemm_efficiency),
        cmocka_unit_test(test_fallback_without_kernel_data),
        cmocka_unit_test(test_recompute_adds_forward),
        cmocka_unit_test(test_ops_recompute_redoes_every_second_gemm),
        cmocka_unit_test(test_bias_gradients_closed_form),
        cmocka_unit_test(test_unpad_passes_closed_form),
        cmocka_unit_test(test_eager_passes_by_hand),
        cmocka_unit_test(test_catalog_kernel_columns),
        cmocka_unit_test(test_catalog_k_sat_prior_keeps_tile_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
