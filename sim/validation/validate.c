/* validate.c — reading validation/runs.csv and replaying one row (see
 * validate.h). */
#include "sim/validation/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/csv.h"
#include "sim/base/grow.h"
#include "sim/inputs/freq.h"
#include "sim/inputs/plan.h"
#include "sim/engine/simulator.h"
#include "sim/inputs/topology.h"

static const char *const STR_COLS[] = {"id", "gpu", "model", "schedule", "dp_shard",
                                       "grad_sync", "grad_dtype", "recompute", "precision",
                                       "attention", "metric", "role", "skip"};
#define NSTR ((int)(sizeof STR_COLS / sizeof *STR_COLS))
static const char *const INT_COLS[] = {
    "n_gpus", "node_gpus", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq",
    "gated_mlp", "bias", "learned_pos", "micro_batch", "global_batch", "tp", "pp", "dp", "vp",
    "sequence_parallel", "tp_comm_overlap"};
#define NINT ((int)(sizeof INT_COLS / sizeof *INT_COLS))
static const char *const DBL_COLS[] = {"nic_gbps", "grad_bucket_mb", "value",
                                       "measured_iteration_s"};
#define NDBL ((int)(sizeof DBL_COLS / sizeof *DBL_COLS))

static char *str_field(val_row *r, int i)
{
    char *f[] = {r->id, r->gpu, r->model, r->schedule, r->dp_shard, r->grad_sync,
                 r->grad_dtype, r->recompute, r->precision, r->attention, r->metric, r->role,
                 r->skip};
    return f[i];
}

static size_t str_cap(int i)
{
    static const size_t caps[] = {48, 32, 80, 16, 8, 16, 8, 16, 8, 16, 24, 8, 200};
    return caps[i];
}

static int *int_field(val_row *r, int i)
{
    int *f[] = {&r->n_gpus, &r->node_gpus, &r->layers, &r->hidden, &r->heads, &r->kv_heads,
                &r->ffn, &r->vocab, &r->seq, &r->gated_mlp, &r->bias, &r->learned_pos,
                &r->micro_batch, &r->global_batch, &r->tp, &r->pp, &r->dp, &r->vp,
                &r->sequence_parallel, &r->tp_comm_overlap};
    return f[i];
}

/* The parallel layout of a replayed row: every factor >= 1, the products
 * consistent (computed in 64 bits: each factor may be up to 1e8, and
 * val_build multiplies them in int), tensor-parallel groups within a node,
 * whole nodes. */
static int check_layout(const csv_reader *c, const val_row *r, gt_err *e)
{
    if (r->tp < 1 || r->pp < 1 || r->dp < 1 || r->vp < 1 || r->micro_batch < 1 ||
        r->measured_s <= 0 || r->node_gpus < r->tp || r->tp > PLAN_MAX_TP)
        return gt_fail(e, "%s:%d: row %s: tp/pp/dp/vp/micro_batch must be >= 1, tp <= node_gpus "
                          "and <= %d, measured_iteration_s > 0", c->path, c->line, r->id,
                       PLAN_MAX_TP);
    if ((long long)r->tp * r->pp * r->dp != r->n_gpus)
        return gt_fail(e, "%s:%d: row %s: tp x pp x dp = %lld, expected n_gpus = %d", c->path,
                       c->line, r->id, (long long)r->tp * r->pp * r->dp, r->n_gpus);
    if ((long long)r->pp * r->vp > r->layers)
        return gt_fail(e, "%s:%d: row %s: pp x vp = %lld stages for %d layers: expected at "
                          "most one stage per layer", c->path, c->line, r->id,
                       (long long)r->pp * r->vp, r->layers);
    if ((long long)r->dp * r->micro_batch > r->global_batch)
        return gt_fail(e, "%s:%d: row %s: dp x micro_batch = %lld exceeds global_batch = %d",
                       c->path, c->line, r->id, (long long)r->dp * r->micro_batch,
                       r->global_batch);
    if (r->node_gpus % r->tp || (r->n_gpus > r->node_gpus && r->n_gpus % r->node_gpus))
        return gt_fail(e, "%s:%d: row %s: node_gpus = %d must be a multiple of tp = %d, and "
                          "n_gpus = %d a multiple of node_gpus (or one partial node)",
                       c->path, c->line, r->id, r->node_gpus, r->tp, r->n_gpus);
    return 0;
}

/* One row; numeric fields may be empty on skipped rows (then 0). */
static int read_eager(csv_reader *c, int col, int need, val_row *r, gt_err *e);

static int read_row(csv_reader *c, const int *sc, const int *ic, const int *dc, int pl,
                    int eg, val_row *r, gt_err *e)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < NSTR; i++) {
        const char *v = csv_get(c, sc[i]);
        if (strlen(v) >= str_cap(i))
            return gt_fail(e, "%s:%d: column '%s': value too long", c->path, c->line,
                           STR_COLS[i]);
        snprintf(str_field(r, i), str_cap(i), "%s", v);
    }
    if (!r->id[0])
        return gt_fail(e, "%s:%d: column 'id': empty", c->path, c->line);
    int need = r->skip[0] == '\0'; /* a replayed row must be complete */
    for (int i = 0; i < NINT; i++) {
        long v = 0;
        if ((need || *csv_get(c, ic[i])) && csv_long(c, ic[i], 0, 100000000, &v, e))
            return -1;
        *int_field(r, i) = (int)v;
    }
    double *d[] = {&r->nic_gbps, &r->grad_bucket_mb, &r->value, &r->measured_s};
    for (int i = 0; i < NDBL; i++)
        if (csv_double(c, dc[i], 0, 1e12, !need || i == 1 || i == 2, 0, d[i], e))
            return -1;
    if (pl >= 0 && csv_double(c, pl, 0, 1e5, 1, 0, &r->power_limit_w, e))
        return -1;
    if (eg >= 0 && read_eager(c, eg, need, r, e))
        return -1;
    snprintf(r->source_key, sizeof r->source_key, "%.*s", (int)strcspn(r->id, "-"), r->id);
    if (need && check_layout(c, r, e))
        return -1;
    if (need && strcmp(r->attention, "fused") && strcmp(r->attention, "flash2") &&
        strcmp(r->attention, "flash2_unpad") && strcmp(r->attention, "triton") &&
        strcmp(r->attention, "unfused"))
        return gt_fail(e, "%s:%d: row %s: column 'attention': expected fused, flash2, "
                          "flash2_unpad, triton or unfused, got '%s'", c->path, c->line, r->id,
                       r->attention);
    if (need && strcmp(r->recompute, "none") && strcmp(r->recompute, "selective") &&
        strcmp(r->recompute, "full") && strcmp(r->recompute, "ops"))
        return gt_fail(e, "%s:%d: row %s: column 'recompute': expected none, selective, full or "
                          "ops, got '%s'", c->path, c->line, r->id, r->recompute);
    return 0;
}

/* The optional column eager: none (or empty), ops or ops+norm; the eager
 * passes are torchtitan's Llama block (kernels_eager.c), so a replayed row
 * that sets it must have that block's shape: gated MLP, no biases, rotary
 * positions. */
static int read_eager(csv_reader *c, int col, int need, val_row *r, gt_err *e)
{
    const char *v = csv_get(c, col);
    if (strcmp(v, "") && strcmp(v, "none") && strcmp(v, "ops") && strcmp(v, "ops+norm"))
        return gt_fail(e, "%s:%d: row %s: column 'eager': expected none, ops or ops+norm (or "
                          "empty), got '%.40s'", c->path, c->line, r->id, v);
    snprintf(r->eager, sizeof r->eager, "%s", v);
    if (need && !strncmp(v, "ops", 3) && (!r->gated_mlp || r->bias || r->learned_pos))
        return gt_fail(e, "%s:%d: row %s: column 'eager': '%s' prices a Llama block (expected "
                          "gated_mlp 1, bias 0, learned_pos 0)", c->path, c->line, r->id, v);
    return 0;
}

int val_load(const char *path, val_row **rows, int *n, gt_err *e)
{
    *rows = NULL;
    *n = 0;
    csv_reader c;
    if (csv_open(&c, path, e))
        return -1;
    int sc[NSTR], ic[NINT], dc[NDBL];
    for (int i = 0; i < NSTR; i++)
        if ((sc[i] = csv_col(&c, STR_COLS[i], 1, e)) < 0)
            goto fail;
    for (int i = 0; i < NINT; i++)
        if ((ic[i] = csv_col(&c, INT_COLS[i], 1, e)) < 0)
            goto fail;
    for (int i = 0; i < NDBL; i++)
        if ((dc[i] = csv_col(&c, DBL_COLS[i], 1, e)) < 0)
            goto fail;
    int pl = csv_col(&c, "power_limit_w", 0, NULL); /* optional */
    int eg = csv_col(&c, "eager", 0, NULL);         /* optional */
    size_t cap = 0;
    int got;
    while ((got = csv_next(&c, e)) == 1) {
        if ((size_t)*n == cap && gt_grow(rows, &cap, cap ? 2 * cap : 256, sizeof **rows)) {
            gt_fail(e, "%s: out of memory", path);
            goto fail;
        }
        if (read_row(&c, sc, ic, dc, pl, eg, &(*rows)[*n], e))
            goto fail;
        ++*n;
    }
    if (got < 0)
        goto fail;
    csv_close(&c);
    return 0;
fail:
    csv_close(&c);
    free(*rows);
    *rows = NULL;
    *n = 0;
    return -1;
}

const char *val_arch(const val_row *r, const gpu_catalog *cat)
{
    int k = gpu_catalog_find(cat, r->gpu);
    return k < 0 ? "" : cat->types[k].arch;
}

/* One site of nodes behind a NIC each; the LAN rate is the NIC's. `scale`
 * multiplies the NIC / LAN rate and `lat_ms` is the LAN latency (1 and
 * VAL_LAN_LAT_MS unless the replicas are reduced: val_replicas). */
static int build_topology(const val_row *r, const gpu_catalog *cat, int ngpus, double scale,
                          double lat_ms, topology *t, gt_err *e)
{
    int per = r->node_gpus < ngpus ? r->node_gpus : ngpus;
    int nodes = (ngpus + per - 1) / per;
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"name\": \"validation-%s\", \"sites\": [{\"id\": \"dc\", \"region\": \"dc\", "
             "\"lat\": 0, \"lon\": 0, \"carbon_g_per_kwh\": 0, \"pue\": 1, \"nodes\": "
             "[{\"gpu\": \"%s\", \"count\": %d, \"nic_gbps\": %.17g, \"repeat\": %d}], "
             "\"lan\": {\"gbps\": %.17g, \"latency_ms\": %.17g}}], \"links\": []}",
             r->id, r->gpu, per, r->nic_gbps * scale, nodes, r->nic_gbps * scale, lat_ms);
    return topo_parse(t, r->id, buf, strlen(buf), cat, e);
}

int val_replicas(const val_row *r)
{
    int nd = r->node_gpus;
    if (r->tp == 1 && r->pp == 1 && r->dp > VAL_MAX_REPLICAS && r->dp % nd == 0 &&
        VAL_MAX_REPLICAS % nd == 0 && VAL_MAX_REPLICAS >= 2 * nd)
        return VAL_MAX_REPLICAS;
    return r->dp;
}

/* Pipeline flushes per optimizer step. Without pipelining (pp = 1) the
 * frameworks loop over global batch / (microbatch x dp) microbatches and
 * sync once (gradient accumulation, e.g. llm-foundry's grad-accum): that many
 * flushes of one microbatch. With pipelining, Megatron runs all of them as
 * one 1F1B / interleaved schedule: one flush. */
static int row_accumulation(const val_row *r)
{
    int per = r->dp * r->micro_batch; /* 0 on a skipped row without a layout */
    return r->pp == 1 && per > 0 ? r->global_batch / per : 1;
}

/* The row's data-parallel options onto the plan and job (validated here, so
 * a bad word in runs.csv is an input error naming the row). */
static int row_dp_options(const val_row *r, plan *p, job *j, gt_err *e)
{
    if (shard_parse(r->dp_shard, &p->dp_shard))
        return gt_fail(e, "row %s: column 'dp_shard': expected none, zero1, zero2, zero3 or "
                          "fsdp, got '%s'", r->id, r->dp_shard);
    if (!strcmp(r->grad_sync, "overlap"))
        p->grad_sync = GSYNC_OVERLAP;
    else if (!strcmp(r->grad_sync, "after_backward"))
        p->grad_sync = GSYNC_AFTER_BACKWARD;
    else
        return gt_fail(e, "row %s: column 'grad_sync': expected after_backward or overlap, "
                          "got '%s'", r->id, r->grad_sync);
    if (p->grad_sync == GSYNC_OVERLAP && !(r->grad_bucket_mb > 0))
        return gt_fail(e, "row %s: column 'grad_bucket_mb': must be > 0 with grad_sync "
                          "overlap", r->id);
    p->bucket_mb = p->grad_sync == GSYNC_OVERLAP ? r->grad_bucket_mb : 0;
    if (!strcmp(r->grad_dtype, "fp32"))
        j->grad_bytes = 4;
    else if (!strcmp(r->grad_dtype, "bf16") || !strcmp(r->grad_dtype, "fp16"))
        j->grad_bytes = 2;
    else
        return gt_fail(e, "row %s: column 'grad_dtype': expected bf16, fp16 or fp32, got '%s'",
                       r->id, r->grad_dtype);
    int acc = row_accumulation(r);
    p->accumulation = acc;
    j->accumulation = acc;
    return 0;
}

void val_options(const val_row *r, char *buf, size_t cap)
{
    char sync[48] = "after_backward";
    if (!strcmp(r->grad_sync, "overlap"))
        snprintf(sync, sizeof sync, "overlap:%.4gMiB", r->grad_bucket_mb);
    char pl[24] = "";
    if (r->power_limit_w > 0)
        snprintf(pl, sizeof pl, " limit:%.4gW", r->power_limit_w);
    char eg[20] = "";
    if (!strncmp(r->eager, "ops", 3))
        snprintf(eg, sizeof eg, " eager:%s", r->eager);
    snprintf(buf, cap, "%s %s acc:%d grad:%s%s%s%s", r->dp_shard, sync, row_accumulation(r),
             r->grad_dtype, r->tp_comm_overlap ? " tp-overlap" : "", pl, eg);
}

/* A run under a power limit: the driver holds the SM clock at f (the
 * frequency model's power curve); the kernel model's GEMMs and attention
 * kernels then run at peak x f / f_max, memory-bound kernels and links at
 * their rates (the kernel model's reading of a clock, kern_total_s). */
static int apply_power_limit(const val_row *r, gpu_type *g, gt_err *e)
{
    int f = freq_clock_at_limit(g, r->power_limit_w);
    if (f < 0)
        return gt_fail(e, "row %s: column 'power_limit_w': %g W is below what %s draws at its "
                          "lowest modelled clock, or %s has no frequency model",
                       r->id, r->power_limit_w, g->id, g->id);
    double s = (double)f / g->freq.f_max_mhz;
    g->peak_flops *= s;
    g->peak_fp8 *= s;
    g->peak_tf32 *= s;
    g->peak_fp32 *= s;
    return 0;
}

/* Megatron rank order: GPU of (pipeline p, physical stage s, TP rank x) is
 * x + tp (p + D s). Each pipeline runs m microbatches per flush. */
static int build_plan(const val_row *r, int D, int m, plan *p, gt_err *e)
{
    int S = r->pp, v = r->vp, K = S * v, per = r->layers / K;
    if (plan_init(p, D))
        return gt_fail(e, "out of memory");
    snprintf(p->planner, sizeof p->planner, "validation");
    p->schedule = v > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
    p->sync = SYNC_RING;
    p->microbatch_size = r->micro_batch;
    for (int pi = 0; pi < D; pi++) {
        if (plan_pipe_alloc(p, pi, K)) {
            plan_free(p);
            return gt_fail(e, "out of memory");
        }
        p->pipes[pi].microbatches = m;
        for (int k = 0; k < K; k++) {
            plan_stage *st = &p->pipes[pi].stages[k];
            st->ngpus = r->tp;
            for (int x = 0; x < r->tp; x++)
                st->gpus[x] = x + r->tp * (pi + D * (k % S));
            st->first = k * per;
            st->last = k * per + per - 1;
        }
    }
    return 0;
}

void val_build_job(const val_row *r, job *j)
{
    model_spec m = {.layers = r->layers, .hidden = r->hidden, .heads = r->heads,
                    .kv_heads = r->kv_heads, .ffn = r->ffn, .vocab = r->vocab,
                    .seq_len = r->seq, .gated_mlp = r->gated_mlp, .bias = r->bias,
                    .learned_pos = r->learned_pos,
                    .norm = r->gated_mlp ? NORM_RMSNORM : NORM_LAYERNORM};
    snprintf(m.id, sizeof m.id, "%s", r->id);
    job_defaults(j, &m);
    j->seq = r->seq;
    j->microbatch = r->micro_batch;
    j->recompute = !strcmp(r->recompute, "full") ? RECOMPUTE_FULL : RECOMPUTE_NONE;
    j->recompute_attention = !strcmp(r->recompute, "selective");
    j->recompute_ops = !strcmp(r->recompute, "ops");
    precision_kind pk = PREC_BF16;
    precision_parse(r->precision, &pk);
    j->precision = pk;
    j->precision_bytes = precision_act_bytes(pk);
    /* a row states the kernel its run used: forced, never auto */
    j->attention = strcmp(r->attention, "unfused") ? ATTN_FUSED : ATTN_UNFUSED;
    /* flash2_unpad: FlashAttention-2 through its variable-length API, with the
     * unpadding gathers and padding scatter around it (kernels.c) */
    j->attn_unpad = !strcmp(r->attention, "flash2_unpad");
    j->attn_impl = !strncmp(r->attention, "flash2", 6) ? ATTN_FLASH2
                   : !strcmp(r->attention, "triton")   ? ATTN_TRITON
                                                       : ATTN_DEFAULT;
    j->sequence_parallel = r->sequence_parallel != 0;
    j->tp_comm_overlap = r->tp_comm_overlap != 0;
    j->eager = !strcmp(r->eager, "ops")        ? EAGER_OPS
               : !strcmp(r->eager, "ops+norm") ? EAGER_OPS_NORM
                                               : EAGER_NONE;
}

int val_build(const val_row *r, const gpu_catalog *cat, double k_sat, int replicas,
              topology *t, job *j, plan *p, gt_err *e)
{
    if (gpu_catalog_find(cat, r->gpu) < 0)
        return gt_fail(e, "row %s: GPU type '%s' not in the catalog", r->id, r->gpu);
    if (r->layers % (r->pp * r->vp) || r->global_batch % (r->dp * r->micro_batch))
        return gt_fail(e, "row %s: layers or batch do not split evenly", r->id);
    int D = replicas, acc = row_accumulation(r);
    int m = r->global_batch / (r->dp * r->micro_batch) / acc;
    if (D < 1 || D > r->dp || (D < r->dp && (r->tp > 1 || r->pp > 1 || D % r->node_gpus ||
                                             D < 2 * r->node_gpus)))
        return gt_fail(e, "row %s: %d replicas cannot stand for dp = %d", r->id, D, r->dp);
    /* D of dp ring members: each of the D - 1 steps of a phase carries 1/D of
     * the buffer over one NIC per node; rates x (D-1)/D x dp/(dp-1) and the
     * latency x (dp-1)/(D-1) give the same phase time as dp members. */
    double scale = 1, lat = VAL_LAN_LAT_MS;
    if (D < r->dp) {
        scale = (double)(D - 1) / D * r->dp / (r->dp - 1);
        lat = VAL_LAN_LAT_MS * (r->dp - 1) / (D - 1);
    }
    if (build_topology(r, cat, r->tp * r->pp * D, scale, lat, t, e))
        return -1;
    for (int k = 0; k < t->ntypes; k++) {
        t->types[k].mem_bytes = 1e18; /* memory is not what is validated here */
        if (k_sat >= 0 && !strcmp(t->types[k].id, r->gpu))
            t->types[k].k_sat = k_sat;
        if (r->power_limit_w > 0 && !strcmp(t->types[k].id, r->gpu) &&
            apply_power_limit(r, &t->types[k], e)) {
            topo_free(t);
            return -1;
        }
    }
    if (build_plan(r, D, m, p, e)) {
        topo_free(t);
        return -1;
    }
    val_build_job(r, j);
    j->batch = D * (r->global_batch / r->dp);
    if (row_dp_options(r, p, j, e)) {
        plan_free(p);
        topo_free(t);
        return -1;
    }
    return 0;
}

int val_simulate(const val_row *r, const gpu_catalog *cat, double k_sat, double *sim_s,
                 gt_err *e)
{
    topology t;
    job j;
    plan p;
    if (val_build(r, cat, k_sat, val_replicas(r), &t, &j, &p, e))
        return -1;
    sim_options o;
    sim_options_default(&o);
    sim_result res;
    int rc = simulate_plan(&t, &j, &p, &o, &res, e);
    if (!rc)
        *sim_s = res.iteration_s;
    plan_free(&p);
    topo_free(&t);
    return rc;
}
