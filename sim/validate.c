/* validate.c — reading validation/runs.csv and replaying one row (see
 * validate.h). */
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "plan.h"
#include "simulator.h"
#include "topology.h"

static const char *const STR_COLS[] = {"id", "gpu", "model", "schedule", "sim_mode",
                                       "recompute", "precision", "attention", "metric",
                                       "role", "skip"};
#define NSTR ((int)(sizeof STR_COLS / sizeof *STR_COLS))
static const char *const INT_COLS[] = {
    "n_gpus", "node_gpus", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq",
    "gated_mlp", "bias", "learned_pos", "micro_batch", "global_batch", "tp", "pp", "dp", "vp",
    "sequence_parallel"};
#define NINT ((int)(sizeof INT_COLS / sizeof *INT_COLS))

static char *str_field(val_row *r, int i)
{
    char *f[] = {r->id, r->gpu, r->model, r->schedule, r->sim_mode, r->recompute,
                 r->precision, r->attention, r->metric, r->role, r->skip};
    return f[i];
}

static size_t str_cap(int i)
{
    static const size_t caps[] = {48, 32, 80, 16, 16, 16, 8, 8, 24, 8, 200};
    return caps[i];
}

static int *int_field(val_row *r, int i)
{
    int *f[] = {&r->n_gpus, &r->node_gpus, &r->layers, &r->hidden, &r->heads, &r->kv_heads,
                &r->ffn, &r->vocab, &r->seq, &r->gated_mlp, &r->bias, &r->learned_pos,
                &r->micro_batch, &r->global_batch, &r->tp, &r->pp, &r->dp, &r->vp,
                &r->sequence_parallel};
    return f[i];
}

/* One row; numeric fields may be empty on skipped rows (then 0). */
static int read_row(csv_reader *c, const int *sc, const int *ic, const int *dc, val_row *r,
                    gt_err *e)
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
    double *d[] = {&r->nic_gbps, &r->value, &r->measured_s};
    for (int i = 0; i < 3; i++)
        if (csv_double(c, dc[i], 0, 1e12, !need || i == 1, 0, d[i], e))
            return -1;
    snprintf(r->source_key, sizeof r->source_key, "%.*s", (int)strcspn(r->id, "-"), r->id);
    if (need && (r->tp < 1 || r->pp < 1 || r->dp < 1 || r->vp < 1 || r->micro_batch < 1 ||
                 r->measured_s <= 0 || r->node_gpus < r->tp || r->tp > PLAN_MAX_TP))
        return gt_fail(e, "%s:%d: row %s: tp/pp/dp/vp/micro_batch must be >= 1, tp <= node_gpus "
                          "and <= %d, measured_iteration_s > 0", c->path, c->line, r->id,
                       PLAN_MAX_TP);
    return 0;
}

int val_load(const char *path, val_row **rows, int *n, gt_err *e)
{
    *rows = NULL;
    *n = 0;
    csv_reader c;
    if (csv_open(&c, path, e))
        return -1;
    int sc[NSTR], ic[NINT], dc[3];
    static const char *const dnames[] = {"nic_gbps", "value", "measured_iteration_s"};
    for (int i = 0; i < NSTR; i++)
        if ((sc[i] = csv_col(&c, STR_COLS[i], 1, e)) < 0)
            goto fail;
    for (int i = 0; i < NINT; i++)
        if ((ic[i] = csv_col(&c, INT_COLS[i], 1, e)) < 0)
            goto fail;
    for (int i = 0; i < 3; i++)
        if ((dc[i] = csv_col(&c, dnames[i], 1, e)) < 0)
            goto fail;
    int cap = 0, got;
    while ((got = csv_next(&c, e)) == 1) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            val_row *nr = realloc(*rows, (size_t)cap * sizeof *nr);
            if (!nr) {
                gt_fail(e, "%s: out of memory", path);
                goto fail;
            }
            *rows = nr;
        }
        if (read_row(&c, sc, ic, dc, &(*rows)[*n], e))
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

/* One site of nodes behind a NIC each; the LAN rate is the NIC's. */
static int build_topology(const val_row *r, const gpu_catalog *cat, int ngpus, topology *t,
                          gt_err *e)
{
    int per = r->node_gpus < ngpus ? r->node_gpus : ngpus;
    int nodes = (ngpus + per - 1) / per;
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"name\": \"validation-%s\", \"sites\": [{\"id\": \"dc\", \"region\": \"dc\", "
             "\"lat\": 0, \"lon\": 0, \"carbon_g_per_kwh\": 0, \"pue\": 1, \"nodes\": "
             "[{\"gpu\": \"%s\", \"count\": %d, \"nic_gbps\": %.17g, \"repeat\": %d}], "
             "\"lan\": {\"gbps\": %.17g, \"latency_ms\": 0.005}}], \"links\": []}",
             r->id, r->gpu, per, r->nic_gbps, nodes, r->nic_gbps);
    return topo_parse(t, r->id, buf, strlen(buf), cat, e);
}

/* Megatron rank order: GPU of (pipeline p, physical stage s, TP rank x) is
 * x + tp (p + D s). */
static int build_plan(const val_row *r, int D, plan *p, gt_err *e)
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
        p->pipes[pi].microbatches = r->global_batch / (r->dp * r->micro_batch);
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

static void build_job(const val_row *r, int D, job *j)
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
    j->batch = D * (r->global_batch / r->dp);
    j->recompute = !strcmp(r->recompute, "full") ? RECOMPUTE_FULL : RECOMPUTE_NONE;
    j->recompute_attention = !strcmp(r->recompute, "selective");
    precision_kind pk = PREC_BF16;
    precision_parse(r->precision, &pk);
    j->precision = pk;
    j->precision_bytes = precision_act_bytes(pk);
    j->fused_attention = strcmp(r->attention, "unfused") != 0;
    j->sequence_parallel = r->sequence_parallel != 0;
}

int val_simulate(const val_row *r, const gpu_catalog *cat, double k_sat, double *sim_s,
                 gt_err *e)
{
    if (gpu_catalog_find(cat, r->gpu) < 0)
        return gt_fail(e, "row %s: GPU type '%s' not in the catalog", r->id, r->gpu);
    if (r->layers % (r->pp * r->vp) || r->global_batch % (r->dp * r->micro_batch))
        return gt_fail(e, "row %s: layers or batch do not split evenly", r->id);
    int D = !strcmp(r->sim_mode, "replica") ? 1 : r->dp;
    topology t;
    if (build_topology(r, cat, r->tp * r->pp * D, &t, e))
        return -1;
    for (int k = 0; k < t.ntypes; k++) {
        t.types[k].mem_bytes = 1e18; /* memory is not what is validated here */
        if (k_sat >= 0 && !strcmp(t.types[k].id, r->gpu))
            t.types[k].k_sat = k_sat;
    }
    plan p;
    if (build_plan(r, D, &p, e)) {
        topo_free(&t);
        return -1;
    }
    job j;
    build_job(r, D, &j);
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
