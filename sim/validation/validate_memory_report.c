/* validate_memory_report.c — replaying the measured-memory rows with the
 * memory model, fitting the allocator reserve on the fitting rows, and the
 * report in text and JSON (validate_memory.h). */
#include "sim/models/plan_check.h"
#include "sim/validation/validate_memory.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/models/memory.h"
#include "sim/validation/validate.h"

#define GIB 1073741824.0

/* The row's job through the iteration-time replay's builder (the fields it
 * reads are the same), then the memory fields and the framework's policy. */
static void row_job(const mem_row *r, job *j, mem_policy *pol)
{
    val_row v;
    memset(&v, 0, sizeof v);
    snprintf(v.id, sizeof v.id, "%s", r->id);
    snprintf(v.recompute, sizeof v.recompute, "%s", r->recompute);
    snprintf(v.precision, sizeof v.precision, "%s", r->precision);
    snprintf(v.attention, sizeof v.attention, "%s", r->attention);
    v.layers = r->layers, v.hidden = r->hidden, v.heads = r->heads, v.kv_heads = r->kv_heads;
    v.ffn = r->ffn, v.vocab = r->vocab, v.seq = r->seq, v.gated_mlp = r->gated_mlp;
    v.bias = r->bias, v.learned_pos = r->learned_pos, v.micro_batch = r->micro_batch;
    v.sequence_parallel = r->sequence_parallel;
    val_build_job(&v, j);
    j->grad_bytes = r->grad_bytes;
    memory_policy_of(j, pol);
    if (!strcmp(r->recompute, "ops"))
        pol->act = MEM_ACT_OPS;
    pol->loss_bytes = r->loss_bytes;
    pol->fsdp_keep_unsharded = r->fsdp_keep_unsharded;
    pol->tp_keeps_gathered = r->tp_keeps_gathered;
}

/* One pipeline of pp x vp stages of tp GPUs (the in-flight counts of the
 * schedule come from plan_in_flight, as in plan check). */
static int row_plan(const mem_row *r, plan *p, gt_err *e)
{
    int K = r->pp * r->vp, per = r->layers / K;
    if (plan_init(p, 1) || plan_pipe_alloc(p, 0, K)) {
        plan_free(p);
        return gt_fail(e, "out of memory");
    }
    p->schedule = !strcmp(r->schedule, "interleaved") ? SCHED_INTERLEAVED
                  : !strcmp(r->schedule, "gpipe")     ? SCHED_GPIPE
                                                      : SCHED_1F1B;
    p->microbatch_size = r->micro_batch;
    p->pipes[0].microbatches = r->microbatches;
    for (int k = 0; k < K; k++) {
        plan_stage *st = &p->pipes[0].stages[k];
        st->ngpus = r->tp;
        for (int x = 0; x < r->tp; x++)
            st->gpus[x] = x + r->tp * (k % r->pp);
        st->first = k * per;
        st->last = k * per + per - 1;
    }
    return 0;
}

int mem_simulate(const mem_row *r, double *bytes, gt_err *e)
{
    if (r->layers % (r->pp * r->vp))
        return gt_fail(e, "row %s: %d layers do not split evenly over %d x %d stages", r->id,
                       r->layers, r->pp, r->vp);
    if (r->vp > 1 && strcmp(r->schedule, "interleaved"))
        return gt_fail(e, "row %s: vp = %d needs schedule interleaved", r->id, r->vp);
    job j;
    mem_policy pol;
    row_job(r, &j, &pol);
    shard_kind shard;
    if (shard_parse(r->dp_shard, &shard))
        return gt_fail(e, "row %s: dp_shard '%s' unknown", r->id, r->dp_shard);
    plan p;
    if (row_plan(r, &p, e))
        return -1;
    double worst = 0;
    for (int s = 0; s < r->pp; s++) {
        double sum = 0;
        for (int k = s; k < p.pipes[0].nstages; k += r->pp) {
            const plan_stage *st = &p.pipes[0].stages[k];
            mem_terms t;
            memory_stage_terms_policy(&j, &pol, r->micro_batch, st->first, st->last, r->tp,
                                      plan_in_flight(&p, 0, k), shard, r->dp, &t);
            sum += memory_terms_total(&t) - t.overhead;
        }
        worst = fmax(worst, sum);
    }
    plan_free(&p);
    *bytes = worst;
    return 0;
}

static void stats_role(const mem_report *rep, const char *role, int raw, val_stats *s)
{
    double *err = malloc(sizeof *err * (size_t)(rep->n > 0 ? rep->n : 1));
    int k = 0;
    if (!err) {
        memset(s, 0, sizeof *s);
        return;
    }
    for (int i = 0; i < rep->n; i++)
        if (rep->res[i].done && (!role || !strcmp(rep->res[i].row->role, role)))
            err[k++] = raw ? rep->res[i].raw_rel_err : rep->res[i].rel_err;
    val_stats_of(err, k, s);
    free(err);
}

/* The reserve minimising mean |error| over the fitting rows (grid; the
 * smallest of equal ones). */
static void fit_reserve(mem_report *rep)
{
    double best = INFINITY;
    rep->reserve = 0;
    rep->reserve_rows = 0;
    for (int i = 0; i < rep->n; i++)
        rep->reserve_rows += rep->res[i].done && !strcmp(rep->res[i].row->role, "fit");
    if (!rep->reserve_rows)
        return;
    int steps = (int)lround(MEM_RESERVE_MAX / MEM_RESERVE_STEP);
    for (int g = 0; g <= steps; g++) {
        double f = g * MEM_RESERVE_STEP, sum = 0;
        for (int i = 0; i < rep->n; i++) {
            const mem_result *x = &rep->res[i];
            if (x->done && !strcmp(x->row->role, "fit"))
                sum += fabs(x->alloc_gib * (1 + f) / x->row->measured_gib - 1);
        }
        if (sum < best - 1e-12) {
            best = sum;
            rep->reserve = f;
        }
    }
}

int mem_run(const mem_row *rows, int n, mem_report *rep, gt_err *e)
{
    memset(rep, 0, sizeof *rep);
    rep->res = calloc((size_t)(n > 0 ? n : 1), sizeof *rep->res);
    if (!rep->res)
        return gt_fail(e, "out of memory");
    rep->n = n;
    for (int i = 0; i < n; i++) {
        mem_result *x = &rep->res[i];
        x->row = &rows[i];
        gt_err re;
        double b;
        if (rows[i].skip[0])
            snprintf(x->why, sizeof x->why, "%s", rows[i].skip);
        else if (mem_simulate(&rows[i], &b, &re))
            snprintf(x->why, sizeof x->why, "not replayed: %s", re.msg);
        else {
            x->done = 1;
            x->alloc_gib = b / GIB;
            x->raw_rel_err = x->alloc_gib / rows[i].measured_gib - 1;
        }
    }
    fit_reserve(rep);
    for (int i = 0; i < n; i++) {
        mem_result *x = &rep->res[i];
        if (!x->done)
            continue;
        x->sim_gib = x->alloc_gib * (1 + rep->reserve);
        x->rel_err = x->sim_gib / x->row->measured_gib - 1;
    }
    stats_role(rep, "fit", 0, &rep->fit);
    stats_role(rep, "holdout", 0, &rep->holdout);
    stats_role(rep, NULL, 0, &rep->overall);
    stats_role(rep, "holdout", 1, &rep->raw_holdout);
    return 0;
}

void mem_report_free(mem_report *rep)
{
    free(rep->res);
    memset(rep, 0, sizeof *rep);
}

static void print_stats(FILE *out, const char *label, const val_stats *s)
{
    if (s->n)
        fprintf(out, "  %-34s %5d %8.1f%% %8.1f%% %8.1f%% %+8.1f%%\n", label, s->n,
                100 * s->mean, 100 * s->median, 100 * s->max, 100 * s->bias);
}

void mem_report_print(const mem_report *rep, int table, FILE *out)
{
    fprintf(out, "\npeak memory per GPU (GiB): measured vs the memory model\n");
    if (table) {
        fprintf(out, "%-22s %-10s %-7s %8s %9s %9s %9s  %s\n", "row", "gpu", "role",
                "measured", "allocated", "simulated", "rel_err", "layout");
        for (int i = 0; i < rep->n; i++) {
            const mem_result *x = &rep->res[i];
            const mem_row *r = x->row;
            if (!x->done)
                continue;
            fprintf(out, "%-22s %-10s %-7s %8.2f %9.2f %9.2f %+8.1f%%  tp%d pp%d dp%d %s %s%s\n",
                    r->id, r->gpu, r->role, r->measured_gib, x->alloc_gib, x->sim_gib,
                    100 * x->rel_err, r->tp, r->pp, r->dp, r->dp_shard, r->recompute,
                    r->compile ? " compile" : "");
        }
    }
    for (int i = 0; i < rep->n; i++)
        if (!rep->res[i].done)
            fprintf(out, "  skipped %-22s %s\n", rep->res[i].row->id, rep->res[i].why);
    fprintf(out, "allocator reserve fitted on %d fitting rows: %.3f (grid 0 .. %.2f step %.3f)\n",
            rep->reserve_rows, rep->reserve, MEM_RESERVE_MAX, MEM_RESERVE_STEP);
    fprintf(out, "|relative error| of the peak memory        rows     mean   median      max  "
                 "mean signed\n");
    print_stats(out, "rows used for fitting", &rep->fit);
    print_stats(out, "held-out rows", &rep->holdout);
    print_stats(out, "held-out rows, no reserve", &rep->raw_holdout);
    print_stats(out, "overall", &rep->overall);
}

static json_t *stats_json(const val_stats *s)
{
    return json_pack("{s:i, s:f, s:f, s:f, s:f}", "rows", s->n, "mean_rel_error", s->mean,
                     "median_rel_error", s->median, "max_rel_error", s->max,
                     "mean_signed_rel_error", s->bias);
}

json_t *mem_report_json(const mem_report *rep)
{
    json_t *doc = json_object(), *rows = json_array(), *skipped = json_array();
    for (int i = 0; i < rep->n; i++) {
        const mem_result *x = &rep->res[i];
        if (x->done)
            json_array_append_new(
                rows, json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f}", "id", x->row->id,
                                "source", x->row->source_key, "gpu", x->row->gpu, "role",
                                x->row->role, "measured_gib", x->row->measured_gib,
                                "allocated_gib", x->alloc_gib, "simulated_gib", x->sim_gib,
                                "rel_error", x->rel_err));
        else
            json_array_append_new(skipped,
                                  json_pack("{s:s, s:s}", "id", x->row->id, "reason", x->why));
    }
    json_object_set_new(doc, "rows", rows);
    json_object_set_new(doc, "skipped", skipped);
    json_object_set_new(doc, "reserve", json_real(rep->reserve));
    json_object_set_new(doc, "reserve_fit_rows", json_integer(rep->reserve_rows));
    json_object_set_new(doc, "fit_rows", stats_json(&rep->fit));
    json_object_set_new(doc, "holdout_rows", stats_json(&rep->holdout));
    json_object_set_new(doc, "holdout_rows_no_reserve", stats_json(&rep->raw_holdout));
    json_object_set_new(doc, "overall", stats_json(&rep->overall));
    return doc;
}
