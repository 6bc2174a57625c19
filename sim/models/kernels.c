/* kernels.c — the per-layer kernel model (see kernels.h and
 * docs/compute-model.md for the kernel list and every byte count).
 *
 * Notation: T = b*s tokens of a microbatch, h hidden, f ffn, a heads, d = h/a,
 * kv = key/value width, t = tensor-parallel degree, e = activation bytes.
 * Megatron-LM's split: QKV and the first MLP matrix are split by columns, the
 * attention projection and the second MLP matrix by rows, heads are split
 * across the t GPUs; norms, dropout and residual adds are replicated on every
 * GPU unless sequence parallelism splits them along the sequence. */
#include "sim/models/kernels.h"

#include "sim/models/attn_choice.h"
#include "sim/models/flash_attn.h"
#include "sim/models/kernels_eager.h"

#include <math.h>

int kern_has_model(const gpu_type *g)
{
    return g->gemm_eff > 0 && g->sms > 0 && g->mem_eff > 0;
}

double kern_peak(const gpu_type *g, precision_kind p)
{
    switch (p) {
    case PREC_FP8:
        return g->peak_fp8 > 0 ? g->peak_fp8 : g->peak_flops;
    case PREC_TF32:
        return g->peak_tf32 > 0 ? g->peak_tf32 : g->peak_fp32;
    case PREC_FP32:
        return g->peak_fp32;
    case PREC_BF16:
    case PREC_FP16:
    default:
        return g->peak_flops;
    }
}

double kern_gemm_s(const gpu_type *g, double peak, double eb, double M, double N, double K,
                   double batch)
{
    if (M <= 0 || N <= 0 || K <= 0 || batch <= 0)
        return 0;
    /* tile quantisation: partial tiles cost whole tiles; wave quantisation:
     * the last wave of tiles may leave SMs idle */
    double tiles = ceil(M / KERN_TILE_M) * ceil(N / KERN_TILE_N) * batch;
    double waves = ceil(tiles / g->sms);
    /* saturation: the K loop's prologue and epilogue do not overlap the main
     * loop, a fixed cost of about k_sat steps of K per tile */
    double per_sm = peak / g->sms * g->gemm_eff;
    double compute = waves * 2.0 * KERN_TILE_M * KERN_TILE_N * (K + g->k_sat) / per_sm;
    double memory = kern_mem_s(g, batch * (M * K + K * N + M * N) * eb);
    return compute > memory ? compute : memory;
}

double kern_mem_s(const gpu_type *g, double bytes)
{
    return bytes / (g->mem_bw * g->mem_eff);
}

double kern_ring_s(const gpu_type *g, int tp, double bytes, int phases)
{
    if (tp <= 1)
        return 0;
    double eff = g->link_eff > 0 ? g->link_eff : 1.0;
    double one = (tp - 1.0) / tp * bytes / (g->link_bw * eff) + (tp - 1) * g->link_lat_s;
    return phases * one;
}

int kern_elem_bytes(const job *j)
{
    return j->precision_bytes > 0 ? j->precision_bytes : precision_act_bytes(j->precision);
}

/* fp8 GEMMs only where the GPU has fp8 tensor cores (else the 16-bit path,
 * without casts, as a framework falls back to bf16). */
static int runs_fp8(const job *j, const gpu_type *g)
{
    return j->precision == PREC_FP8 && g->peak_fp8 > 0;
}

/* Bytes of a GEMM operand: fp8 GEMMs read 1-byte inputs. */
static double gemm_bytes(const job *j, const gpu_type *g)
{
    return runs_fp8(j, g) ? 1.0 : kern_elem_bytes(j);
}

/* A linear layer (T x K) x (K x N): forward one GEMM; backward the data
 * gradient (T x N) x (N x K) and the weight gradient (K x T) x (T x N).
 * Under fp8 each GEMM's activation input is cast first (read e, write 1
 * byte per element, one kernel; Transformer Engine style). */
/* The peak a linear layer's GEMMs scale by gemm_eff: fp8 GEMMs reach a
 * smaller share of their peak than 16-bit ones where the catalog measures it
 * (gemm_eff_fp8), expressed as the fp8 peak x gemm_eff_fp8 / gemm_eff. */
static double linear_peak(const job *j, const gpu_type *g)
{
    double pk = kern_peak(g, j->precision);
    if (runs_fp8(j, g) && g->gemm_eff_fp8 > 0)
        pk *= g->gemm_eff_fp8 / g->gemm_eff;
    return pk;
}

static void linear(const job *j, const gpu_type *g, double T, double N, double K, int bwd,
                   kern_time *o)
{
    double pk = linear_peak(j, g), eb = gemm_bytes(j, g);
    if (!bwd) {
        o->gemm_s += kern_gemm_s(g, pk, eb, T, N, K, 1);
        o->kernels += 1;
    } else {
        o->gemm_s += kern_gemm_s(g, pk, eb, T, K, N, 1) + kern_gemm_s(g, pk, eb, K, N, T, 1);
        o->kernels += 2;
    }
    if (runs_fp8(j, g)) {
        int casts = bwd ? 2 : 1; /* backward casts the output gradient and the input */
        o->mem_s += casts * kern_mem_s(g, T * K * (kern_elem_bytes(j) + 1.0));
        o->kernels += casts;
    }
}

/* Unpadding around a variable-length fused kernel (llm-foundry's attn_impl
 * flash: flash-attn's bert_padding.unpad_input on Q, K and V, pad_input on
 * the output). Forward: three gathers (read and write Q, K, V), then the
 * output scattered into a zero-filled tensor (write zeros, read, write);
 * unpad_input also derives the token indices from the mask each time
 * (sum, nonzero, cumsum, max: four small kernels). Backward: the output
 * gradient gathered (read, write) and dQ, dK, dV scattered into zero-filled
 * gradients (write zeros, read, write). q = T h/t and kv = T kv/t elements. */
static void unpad_passes(const job *j, const gpu_type *g, double q, double kv, int bwd,
                         kern_time *o)
{
    double e = kern_elem_bytes(j);
    if (!bwd) {
        o->mem_s += kern_mem_s(g, (2 * (q + 2 * kv) + 3 * q) * e);
        o->kernels += 3 * (1 + 4) + 2;
    } else {
        o->mem_s += kern_mem_s(g, (2 * q + 3 * (q + 2 * kv)) * e);
        o->kernels += 1 + 3 * 2;
    }
}

void kern_attention(const job *j, const gpu_type *g, int tp, int b, int bwd, kern_time *o)
{
    const model_spec *m = &j->model;
    double s = j->seq, e = kern_elem_bytes(j), d = (double)m->hidden / m->heads;
    double batch = (double)b * m->heads / tp; /* heads of this GPU, times sequences */
    double pk = kern_peak(g, j->precision < PREC_TF32 ? PREC_BF16 : j->precision);
    double T = (double)b * s, width = (double)m->hidden / tp;
    int fused = attn_fused_on(j, g);
    if (fused && flash_has_data(g, j->attn_impl, bwd)) {
        /* a fused kernel with a measured efficiency on this architecture:
         * priced by its own work structure (sim/models/flash_attn.c) */
        double bytes = (bwd ? 8.0 : 4.0) * T * width * e; /* Q,K,V,O (+dO,dQ,dK,dV) */
        o->gemm_s += flash_attn_s(g, pk, s, d, batch, bwd, j->attn_impl, bytes);
        o->kernels += bwd ? 2 : 1;
        if (j->attn_unpad)
            unpad_passes(j, g, T * width, T * (double)m->kv_heads * d / tp, bwd, o);
        return;
    }
    if (fused) {
        /* no measurement for this type: FlashAttention (causal) as GEMMs:
         * each query tile loops over the key
         * blocks, so both products run as s x d outputs with a K loop of
         * length s (QK^T's FLOPs equal PV's); masked blocks are skipped (half
         * the work); backward redoes S and computes dV, dP, dQ, dK: five
         * such products instead of two */
        double blk = kern_gemm_s(g, pk, e, s, d, s, batch);
        o->gemm_s += 0.5 * (bwd ? 5 : 2) * blk;
        o->mem_s += kern_mem_s(g, (bwd ? 8.0 : 4.0) * T * width * e); /* Q,K,V,O (+dO,dQ,dK,dV) */
        o->kernels += bwd ? 2 : 1;
        if (j->attn_unpad)
            unpad_passes(j, g, T * width, T * (double)m->kv_heads * d / tp, bwd, o);
        return;
    }
    /* unfused (Megatron-LM before FlashAttention): batched GEMMs around a
     * fused scale-mask-softmax kernel and a dropout kernel over the a/t x s x s
     * scores (dropout keeps a 1-byte mask) */
    double scores = batch * s * s;
    double qk = kern_gemm_s(g, pk, e, s, s, d, batch), pv = kern_gemm_s(g, pk, e, s, d, s, batch);
    if (!bwd) {
        o->gemm_s += qk + pv;
        o->mem_s += kern_mem_s(g, scores * (2 * e + 2 * e + 1));
        o->kernels += 4;
    } else {
        o->gemm_s += qk + 3 * pv; /* dP = dO V^T; dV, dQ, dK */
        o->mem_s += kern_mem_s(g, scores * (3 * e + 2 * e + 1));
        o->kernels += 6;
    }
}

void kern_tp_layer_traffic(const job *j, int tp, int b, int *count, double *bytes)
{
    *count = tp > 1 ? 2 : 0; /* after attention and after the MLP (forward); their
                              * conjugates in backward */
    *bytes = (double)b * j->seq * j->model.hidden * kern_elem_bytes(j);
}

/* Exposed time of the layer's TP collectives. Without overlap: two
 * all-reduces (or, under sequence parallelism, two all-gather +
 * reduce-scatter pairs of the same traffic) one after another with the
 * kernels. With --tp-comm-overlap (Megatron-Core + Transformer Engine
 * userbuffers; needs sequence parallelism) each of the four halves is split
 * into chunks pipelined with the GEMM it feeds or drains: the all-gather
 * before QKV and before MLP-up, the reduce-scatter after the attention
 * projection and after MLP-down (in backward their conjugates, under the
 * same linears' dgrad + wgrad). A half then costs only what its GEMM cannot
 * hide: max(0, c - gemm). An upper bound on the hiding: the chunking's own
 * cost and SM sharing are not charged. */
static double tp_comm_s(const job *j, const gpu_type *g, int tp, int b, const double gemm[4])
{
    int n;
    double bytes;
    kern_tp_layer_traffic(j, tp, b, &n, &bytes);
    if (!(j->tp_comm_overlap && j->sequence_parallel) || n == 0)
        return n * kern_ring_s(g, tp, bytes, 2);
    double half = kern_ring_s(g, tp, bytes, 1), s = 0;
    for (int i = 0; i < 4; i++)
        s += half > gemm[i] ? half - gemm[i] : 0;
    return s;
}

/* The layer's memory-bound kernels: two norms (read x, write y; backward
 * also reads dy), two dropout + residual adds (read two, write one; backward
 * passes two) and the MLP activation on the t-th share of T x f (GeLU one
 * input, SwiGLU two). Under job.eager the norms (EAGER_OPS_NORM) and SwiGLU
 * run as eager PyTorch's separate kernels and RoPE and repeat_kv add their
 * passes (kernels_eager.c). */
static void pointwise(const job *j, const gpu_type *g, int tp, int b, int bwd, kern_time *o)
{
    const model_spec *m = &j->model;
    double T = (double)b * j->seq, e = kern_elem_bytes(j);
    double E = T * m->hidden / (j->sequence_parallel ? tp : 1);
    double F = T * m->ffn / tp;
    if (j->eager == EAGER_NONE) {
        o->mem_s += kern_mem_s(g, E * e * (bwd ? 2 * 3 + 2 * 3 : 2 * 2 + 2 * 3));
        o->mem_s += kern_mem_s(g, F * e * (m->gated_mlp ? (bwd ? 5 : 3) : (bwd ? 3 : 2)));
        o->kernels += 5;
        return;
    }
    /* eager: the residual adds are single kernels either way */
    eager_pass norm = j->eager == EAGER_OPS_NORM ? eager_rmsnorm(e, bwd)
                                                 : (eager_pass){(bwd ? 3 : 2) * e, 1};
    eager_pass act = m->gated_mlp ? eager_swiglu(e, bwd) : (eager_pass){(bwd ? 3 : 2) * e, 1};
    o->mem_s += kern_mem_s(g, E * (2 * norm.bytes + 2 * 3 * e));
    o->mem_s += kern_mem_s(g, F * act.bytes);
    o->kernels += 2 * norm.kernels + 2 + act.kernels;
    eager_attention_glue(j, g, tp, b, o); /* same bytes both ways */
}

/* Bias gradients (models with biased linear layers): the backward sums each
 * linear's output gradient over the tokens, one reduction kernel reading
 * T x N elements (PyTorch: addmm's autograd reduces grad to the bias shape,
 * tools/autograd/derivatives.yaml; Megatron-LM's linear backward:
 * grad_output.sum(dim=0)). Column-parallel biases (QKV, MLP up) are split t
 * ways; row-parallel ones (attention projection, MLP down) are whole and see
 * the full output gradient, or its sequence shard under sequence
 * parallelism. The forward bias add costs nothing extra: it is fused into the
 * GEMM epilogue (cuBLASLt's bias epilogue, which PyTorch's addmm uses for a
 * 1-D bias) or into the next elementwise kernel (Megatron's bias-GeLU and
 * bias-dropout-add). fp8 GEMMs (Transformer Engine) compute the bias
 * gradient inside the output gradient's cast-transpose kernel, already
 * priced with the casts (linear()). */
static void bias_grads(const job *j, const gpu_type *g, int tp, int b, kern_time *o)
{
    const model_spec *m = &j->model;
    if (!m->bias || runs_fp8(j, g))
        return;
    double T = (double)b * j->seq, h = m->hidden, e = kern_elem_bytes(j);
    double kv = (double)m->kv_heads * h / m->heads;
    double col = T * ((h + 2 * kv) + (m->gated_mlp ? 2 : 1) * m->ffn) / tp;
    double row = 2 * T * h / (j->sequence_parallel ? tp : 1);
    o->mem_s += kern_mem_s(g, (col + row) * e);
    o->kernels += 4;
}

void kern_layer(const job *j, const gpu_type *g, int tp, int b, int bwd, kern_time *o)
{
    const model_spec *m = &j->model;
    double T = (double)b * j->seq, h = m->hidden, f = m->ffn;
    double kv = (double)m->kv_heads * h / m->heads;
    *o = (kern_time){0};
    /* QKV, attention projection, MLP up (gate), MLP down; each one's GEMM
     * time kept for the overlap of the TP collectives */
    double N[4] = {(h + 2 * kv) / tp, h, (m->gated_mlp ? 2 : 1) * f / tp, h};
    double K[4] = {h, h / tp, h, f / tp}, gemm[4];
    for (int i = 0; i < 4; i++) {
        double before = o->gemm_s;
        linear(j, g, T, N[i], K[i], bwd, o);
        gemm[i] = o->gemm_s - before;
    }
    kern_attention(j, g, tp, b, bwd, o);
    pointwise(j, g, tp, b, bwd, o);
    if (bwd)
        bias_grads(j, g, tp, b, o);
    o->launch_s = o->kernels * g->kernel_s;
    o->comm_s = tp_comm_s(j, g, tp, b, gemm);
}

/* torchtitan's per-op selective checkpointing (selective_ac_option "op",
 * torchtitan/models/llama3/parallelize: _custom_policy) saves the outputs of
 * the ops in its save list (mm, the SDPA / flash attention kernel, the
 * reduce-scatter) except every second mm, and recomputes everything else in
 * the backward. A layer's mms run wq wk wv wo w1 w3 w2 (gated MLP; w1 w2
 * otherwise): the 2nd, 4th and 6th (wk, wo, w3; GeLU: wk, wo) are redone,
 * forward, together with the norms, residual adds and MLP activation; the
 * attention core and the collectives are not (saved). The memory side is
 * MEM_ACT_OPS (memory.c). */
static void ops_recompute(const job *j, const gpu_type *g, int tp, int b, kern_time *o)
{
    const model_spec *m = &j->model;
    double T = (double)b * j->seq, h = m->hidden, f = m->ffn;
    double kv = (double)m->kv_heads * h / m->heads;
    *o = (kern_time){0};
    linear(j, g, T, kv / tp, h, 0, o);     /* wk */
    linear(j, g, T, h, h / tp, 0, o);      /* wo */
    if (m->gated_mlp)
        linear(j, g, T, f / tp, h, 0, o);  /* w3 */
    pointwise(j, g, tp, b, 0, o);
    o->launch_s = o->kernels * g->kernel_s;
}

void kern_embedding(const job *j, const gpu_type *g, int tp, int b, int bwd, kern_time *o)
{
    const model_spec *m = &j->model;
    double E = (double)b * j->seq * m->hidden, e = kern_elem_bytes(j);
    *o = (kern_time){0};
    /* lookup (read the rows, write the output; + the learned positions);
     * backward scatter-adds the gradient into the table */
    o->mem_s = kern_mem_s(g, E * e * (bwd ? 3 : (m->learned_pos ? 4 : 2)));
    o->kernels = bwd ? 1 : (m->learned_pos ? 2 : 1);
    o->launch_s = o->kernels * g->kernel_s;
    /* vocabulary-parallel embedding: one all-reduce of the output forward */
    o->comm_s = bwd ? 0 : kern_ring_s(g, tp, E * e, 2);
}

void kern_head(const job *j, const gpu_type *g, int tp, int b, int bwd, kern_time *o)
{
    const model_spec *m = &j->model;
    double T = (double)b * j->seq, h = m->hidden, e = kern_elem_bytes(j);
    double V = (double)m->vocab / tp;
    *o = (kern_time){0};
    linear(j, g, T, V, h, bwd, o);
    /* final norm; fp32 cross-entropy over this GPU's logits (read e, write
     * 4 bytes forward; read 4, write e backward) */
    o->mem_s += kern_mem_s(g, T * h * e * (bwd ? 3 : 2)) + kern_mem_s(g, T * V * (e + 4));
    o->kernels += bwd ? 3 : 4;
    o->launch_s = o->kernels * g->kernel_s;
    /* vocabulary-parallel cross-entropy: three all-reduces of T floats
     * (max, sum, target logit) forward; backward the input gradient's
     * all-reduce */
    o->comm_s = bwd ? kern_ring_s(g, tp, T * h * e, 2) : 3 * kern_ring_s(g, tp, T * 4, 2);
}

double kern_total_s(const kern_time *t, double freq_scale)
{
    return t->gemm_s / freq_scale + t->mem_s + t->launch_s + t->comm_s;
}

double kern_layers_s(const job *j, const gpu_type *g, int tp, int b, int n, int bwd,
                     double freq_scale)
{
    kern_time k;
    kern_layer(j, g, tp, b, bwd, &k);
    double t = kern_total_s(&k, freq_scale);
    if (bwd && j->recompute == RECOMPUTE_FULL) {
        kern_layer(j, g, tp, b, 0, &k);
        t += kern_total_s(&k, freq_scale);
    } else if (bwd && j->recompute_ops) {
        kern_time a;
        ops_recompute(j, g, tp, b, &a);
        t += kern_total_s(&a, freq_scale);
    } else if (bwd && j->recompute_attention && !attn_fused_on(j, g)) {
        /* selective recomputation redoes the attention core; a fused kernel
         * already recomputes it inside its backward */
        kern_time a = {0};
        kern_attention(j, g, tp, b, 0, &a);
        a.launch_s = a.kernels * g->kernel_s;
        t += kern_total_s(&a, freq_scale);
    }
    return n * t;
}

double kern_stage_s(const job *j, const gpu_type *g, int tp, int b, int first, int last,
                    int bwd, double freq_scale)
{
    kern_time k;
    double t = kern_layers_s(j, g, tp, b, last - first + 1, bwd, freq_scale);
    if (first == 0) {
        kern_embedding(j, g, tp, b, bwd, &k);
        t += kern_total_s(&k, freq_scale);
    }
    if (last == j->model.layers - 1) {
        kern_head(j, g, tp, b, bwd, &k);
        t += kern_total_s(&k, freq_scale);
    }
    return t;
}
