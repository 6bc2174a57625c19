/* cost.c — formulas of the cost model (see cost.h, docs/models.md). */
#include "sim/models/cost.h"

#include <math.h>

#include "sim/models/kernels.h"
#include "sim/inputs/trace.h"

/* Norm parameters: LayerNorm has a gain and a bias, RMSNorm a gain. */
static double norm_params(const model_spec *m)
{
    return (m->norm == NORM_LAYERNORM ? 2.0 : 1.0) * m->hidden;
}

static double kv_dim(const model_spec *m)
{
    return (double)m->kv_heads * m->hidden / m->heads;
}

double cost_layer_matmul_params(const model_spec *m)
{
    double h = m->hidden;
    double attn = 2 * h * h + 2 * h * kv_dim(m);
    double mlp = (m->gated_mlp ? 3.0 : 2.0) * h * m->ffn;
    return attn + mlp;
}

double cost_layer_params(const model_spec *m)
{
    double h = m->hidden, p = cost_layer_matmul_params(m) + 2 * norm_params(m);
    if (m->bias)
        p += (h + 2 * kv_dim(m)) + h + (m->gated_mlp ? 2.0 : 1.0) * m->ffn + h;
    return p;
}

double cost_embedding_params(const model_spec *m)
{
    double p = (double)m->vocab * m->hidden;
    if (m->learned_pos)
        p += (double)m->seq_len * m->hidden;
    return p;
}

double cost_head_params(const model_spec *m)
{
    return norm_params(m) + (m->tied_embeddings ? 0 : (double)m->vocab * m->hidden);
}

double cost_model_params(const model_spec *m)
{
    return m->layers * cost_layer_params(m) + cost_embedding_params(m) + cost_head_params(m);
}

double cost_stage_params(const model_spec *m, int first, int last)
{
    double p = (last - first + 1) * cost_layer_params(m);
    if (first == 0)
        p += cost_embedding_params(m);
    if (last == m->layers - 1)
        p += norm_params(m) + (double)m->vocab * m->hidden;
    return p;
}

double cost_layer_fwd_flops(const model_spec *m, int b, int s)
{
    return 2.0 * b * s * cost_layer_matmul_params(m) + 4.0 * b * (double)s * s * m->hidden;
}

double cost_head_fwd_flops(const model_spec *m, int b, int s)
{
    return 2.0 * b * s * (double)m->hidden * m->vocab;
}

double cost_stage_fwd_flops(const job *j, int b, int first, int last)
{
    const model_spec *m = &j->model;
    double f = (last - first + 1) * cost_layer_fwd_flops(m, b, j->seq);
    if (last == m->layers - 1)
        f += cost_head_fwd_flops(m, b, j->seq);
    return f;
}

double cost_stage_bwd_flops(const job *j, int b, int first, int last)
{
    const model_spec *m = &j->model;
    double layers = (last - first + 1) * cost_layer_fwd_flops(m, b, j->seq);
    double f = 2 * layers;
    if (j->recompute == RECOMPUTE_FULL)
        f += layers;
    if (last == m->layers - 1)
        f += 2 * cost_head_fwd_flops(m, b, j->seq);
    return f;
}

double cost_iteration_flops(const job *j)
{
    int L = j->model.layers;
    return (double)j->batch * (cost_stage_fwd_flops(j, 1, 0, L - 1) +
                               cost_stage_bwd_flops(j, 1, 0, L - 1));
}

int64_t cost_compute_ns(const gpu_type *g, double flops, int tp, double tp_allreduce_bytes,
                        double freq_scale)
{
    double t = flops / (g->peak_flops * g->efficiency * freq_scale) / tp;
    if (tp > 1) /* ring all-reduce inside the node: 2(t-1)/t of the bytes per GPU */
        t += tp_allreduce_bytes * 2.0 * (tp - 1) / tp / g->link_bw;
    return cost_ns(t);
}

static double tp_bytes(const job *j, int b, int first, int last)
{
    /* four all-reduces of b*s*h*2 bytes per layer (two forward, two backward);
     * the forward op pays two, the backward op two */
    return 2.0 * (last - first + 1) * cost_activation_bytes(j, b);
}

/* Tensor-parallel collectives of a stage's pass: the kernel model's ring
 * (with link latency) where the type has it, else the fallback's
 * bandwidth-only ring. */
static double tp_comm_s(const job *j, const gpu_type *g, int tp, int b, int first, int last)
{
    if (tp <= 1)
        return 0;
    if (!kern_has_model(g))
        return tp_bytes(j, b, first, last) * 2.0 * (tp - 1) / tp / g->link_bw;
    int n;
    double bytes;
    kern_tp_layer_traffic(j, tp, b, &n, &bytes);
    return (last - first + 1) * n * kern_ring_s(g, tp, bytes, 2);
}

/* Seconds of the head's pass without a profile row. */
static double head_s(const job *j, const gpu_type *g, int b, int bwd)
{
    if (kern_has_model(g)) {
        kern_time k;
        kern_head(j, g, 1, b, bwd, &k);
        return kern_total_s(&k, 1.0);
    }
    double f = cost_head_fwd_flops(&j->model, b, j->seq);
    return (bwd ? 2 * f : f) / (g->peak_flops * g->efficiency);
}

/* Seconds of one pass of a stage from a per-layer profile (docs/models.md: a
 * profile overrides the formula); parts without a profile row use the
 * model. Returns -1 when the profile has no `layer` row for this key. */
static double profiled_s(const job *j, const gpu_type *g, int b, int first, int last, int bwd)
{
    const profile *p = j->profile;
    const model_spec *m = &j->model;
    if (!p)
        return -1;
    const profile_row *layer = profile_find(p, g->id, m->id, LAYER_BLOCK, b, j->seq);
    if (!layer)
        return -1;
    double t = (last - first + 1) * (bwd ? layer->bwd_ns : layer->fwd_ns) * 1e-9;
    if (bwd && j->recompute == RECOMPUTE_FULL)
        t += (last - first + 1) * layer->fwd_ns * 1e-9;
    if (first == 0) {
        const profile_row *emb = profile_find(p, g->id, m->id, LAYER_EMBEDDING, b, j->seq);
        if (emb)
            t += (bwd ? emb->bwd_ns : emb->fwd_ns) * 1e-9;
    }
    if (last == m->layers - 1) {
        const profile_row *head = profile_find(p, g->id, m->id, LAYER_HEAD, b, j->seq);
        t += head ? (bwd ? head->bwd_ns : head->fwd_ns) * 1e-9 : head_s(j, g, b, bwd);
    }
    return t;
}

/* Order of precedence: a measured profile, the kernel model, and for GPU
 * types without kernel data the documented fallback FLOPs / (peak x
 * efficiency) (docs/compute-model.md). */
static int64_t stage_ns(const job *j, const gpu_type *g, int tp, int b, int first, int last,
                        double freq_scale, int bwd)
{
    double prof = profiled_s(j, g, b, first, last, bwd);
    if (prof >= 0) /* a profile is measured without tensor parallelism: split
                    * the work and add the collectives */
        return cost_ns(prof / freq_scale / tp + tp_comm_s(j, g, tp, b, first, last));
    if (kern_has_model(g))
        return cost_ns(kern_stage_s(j, g, tp, b, first, last, bwd, freq_scale));
    return cost_compute_ns(g, bwd ? cost_stage_bwd_flops(j, b, first, last)
                                  : cost_stage_fwd_flops(j, b, first, last),
                           tp, tp_bytes(j, b, first, last), freq_scale);
}

int64_t cost_stage_fwd_ns(const job *j, const gpu_type *g, int tp, int b, int first, int last,
                          double freq_scale)
{
    return stage_ns(j, g, tp, b, first, last, freq_scale, 0);
}

int64_t cost_stage_bwd_ns(const job *j, const gpu_type *g, int tp, int b, int first, int last,
                          double freq_scale)
{
    return stage_ns(j, g, tp, b, first, last, freq_scale, 1);
}

int64_t cost_optimizer_ns(const gpu_type *g, double params_held)
{
    return cost_ns(params_held * 32.0 / g->mem_bw);
}

int64_t cost_transfer_ns(double bytes, double lat_s, double rate)
{
    return t_add(cost_ns(lat_s), cost_ns(bytes / rate));
}

double cost_activation_bytes(const job *j, int b)
{
    return (double)b * j->seq * j->model.hidden * j->precision_bytes;
}

double cost_grad_bytes(const model_spec *m, int first, int last)
{
    return 2.0 * cost_stage_params(m, first, last);
}

/* --- parts for planners ---------------------------------------------------- */

/* One pass of the parts in seconds, by the same precedence as stage_ns. */
static double part_s(const job *j, const gpu_type *g, int b, int part, int bwd)
{
    const model_spec *m = &j->model;
    static const layer_kind kinds[] = {LAYER_BLOCK, LAYER_HEAD, LAYER_EMBEDDING};
    /* a profile applies when it has the layer row (as in profiled_s) */
    if (j->profile && profile_find(j->profile, g->id, m->id, LAYER_BLOCK, b, j->seq)) {
        const profile_row *r = profile_find(j->profile, g->id, m->id, kinds[part], b, j->seq);
        if (!r)
            return part == 1 ? head_s(j, g, b, bwd) : 0;
        double t = (bwd ? r->bwd_ns : r->fwd_ns) * 1e-9;
        if (part == 0 && bwd && j->recompute == RECOMPUTE_FULL)
            t += r->fwd_ns * 1e-9;
        return t;
    }
    if (part == 1)
        return head_s(j, g, b, bwd);
    if (kern_has_model(g)) {
        kern_time k;
        if (part == 2) {
            kern_embedding(j, g, 1, b, bwd, &k);
            return kern_total_s(&k, 1.0);
        }
        return kern_layers_s(j, g, 1, b, 1, bwd, 1.0);
    }
    if (part == 2)
        return 0; /* the fallback gives the lookup no FLOPs */
    double f = cost_layer_fwd_flops(m, b, j->seq);
    return (bwd ? (j->recompute == RECOMPUTE_FULL ? 3 : 2) * f : f) /
           (g->peak_flops * g->efficiency);
}

int64_t cost_layer_pass_ns(const job *j, const gpu_type *g, int b)
{
    return cost_ns(part_s(j, g, b, 0, 0) + part_s(j, g, b, 0, 1));
}

int64_t cost_head_pass_ns(const job *j, const gpu_type *g, int b)
{
    return cost_ns(part_s(j, g, b, 1, 0) + part_s(j, g, b, 1, 1));
}

int64_t cost_embedding_pass_ns(const job *j, const gpu_type *g, int b)
{
    return cost_ns(part_s(j, g, b, 2, 0) + part_s(j, g, b, 2, 1));
}

double cost_max_rate(const job *j, const gpu_type *g, const int *bvals, int nb)
{
    double best = 0;
    for (int i = 0; i < nb; i++) {
        int b = bvals[i];
        double lf = (j->recompute == RECOMPUTE_FULL ? 4 : 3) *
                    cost_layer_fwd_flops(&j->model, b, j->seq);
        double hf = 3 * cost_head_fwd_flops(&j->model, b, j->seq);
        double lt = part_s(j, g, b, 0, 0) + part_s(j, g, b, 0, 1);
        double ht = part_s(j, g, b, 1, 0) + part_s(j, g, b, 1, 1);
        if (lt > 0 && lf / lt > best)
            best = lf / lt;
        if (ht > 0 && hf / ht > best)
            best = hf / ht;
    }
    return best > 0 ? best : g->peak_flops * g->efficiency;
}
