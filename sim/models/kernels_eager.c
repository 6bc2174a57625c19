/* kernels_eager.c — eager PyTorch's unfused elementwise kernels of a Llama
 * layer, counted op by op from the model code the runs used (torchtitan
 * torchtitan/models/llama/model.py and torchtitan/models/norms.py at
 * 04133643 and 9dec370; both commits have the same ops). Each op reads its
 * inputs from and writes its output to DRAM; a kernel's bytes over the memory
 * bandwidth is its time (kern_mem_s), as kernels.c prices every memory-bound
 * kernel. Byte counts are per element of the op's activation; fp32
 * intermediates are 4 bytes, activations e. Per-token tensors (the norm's
 * mean and rsqrt: one value per token) and the RoPE table (s x d/2 complex
 * values, broadcast over batch and heads, cache resident) are below 0.1 % of
 * the traffic and counted as kernels only. */
#include "sim/models/kernels_eager.h"

/* Forward: x.float() reads e, writes 4; pow(2) 4 + 4; mean(-1) reads 4;
 * + eps and rsqrt on per-token values; x * rsqrt 4 + 4; type_as 4 + e;
 * * weight e + e. Backward, autograd op by op (FunctionsManual.cpp): the
 * weight mul gives grad x weight (e + e) and grad x output summed over the
 * tokens (e + e + e, then a reduction reading e); type_as's backward casts
 * the gradient to fp32 (e + 4); the x * rsqrt mul gives grad x rsqrt (4 + 4)
 * and (grad x x) summed over the row (4 + 4 + 4, then 4); mean's backward
 * expands and divides (writes 4); pow's backward computes
 * grad * (2 * x.pow(1)): the pow(1) copy (4 + 4), the scalar mul (4 + 4) and
 * the product (4 + 4 + 4); the two fp32 gradients of x add (4 + 4 + 4);
 * float()'s backward casts back (4 + e). */
eager_pass eager_rmsnorm(double e, int bwd)
{
    if (!bwd)
        return (eager_pass){(e + 4) + 8 + 4 + 8 + (4 + e) + 2 * e, 8};
    double weight = 2 * e + 3 * e + e;
    double rsqrt_mul = 8 + 12 + 4;
    double pow_bwd = 8 + 8 + 12;
    return (eager_pass){weight + (e + 4) + rsqrt_mul + 4 + pow_bwd + 12 + (4 + e), 14};
}

/* Forward: silu reads its input, writes (e + e); the mul reads two, writes
 * one (3 e). Backward: the mul's two input gradients (grad x other, 3 e
 * each) and silu_backward (grad and input in, gradient out: 3 e). A fused
 * kernel (kernels.c) does 3 e forward and 5 e backward. */
eager_pass eager_swiglu(double e, int bwd)
{
    return bwd ? (eager_pass){9 * e, 3} : (eager_pass){5 * e, 2};
}

/* apply_rotary_emb on Q and K: x.float() (e + 4), the complex multiply by
 * freqs_cis (4 + 4 per real element), type_as back (4 + e); its backward is
 * the cast to fp32, the multiply by the conjugate table and the cast back,
 * the same bytes. repeat_kv (unsqueeze, expand, reshape) materialises K and
 * V for every query head: reads kv, writes q elements each; its backward sums
 * the gradient over the repeats (reads q, writes kv). Q has T h / t
 * elements, K and V T kv / t on this GPU. */
void eager_attention_glue(const job *j, const gpu_type *g, int tp, int b, kern_time *o)
{
    const model_spec *m = &j->model;
    double T = (double)b * j->seq, e = kern_elem_bytes(j);
    double q = T * m->hidden / tp, kv = T * ((double)m->kv_heads * m->hidden / m->heads) / tp;
    o->mem_s += kern_mem_s(g, (q + kv) * (2 * e + 16));
    o->kernels += 2 * 3;
    if (m->kv_heads < m->heads) {
        o->mem_s += kern_mem_s(g, 2 * (q + kv) * e);
        o->kernels += 2;
    }
}
