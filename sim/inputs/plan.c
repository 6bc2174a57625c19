/* plan.c — plan reader, checker and writer (see plan.h, docs/formats.md). */
#include "sim/inputs/plan.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/grammar.h"
#include "sim/base/jsonio.h"
#include "sim/inputs/plan_freq.h"

static const char *const PLAN_KEYS[] = {"planner", "objective", "schedule", "dp_sync",
                                        "microbatch_size", "pipelines", "objective_value",
                                        "estimate", "simulated", "topology", "model",
                                        "note", "pareto_index", "accumulation_steps",
                                        "dp_shard", "grad_sync", "grad_bucket_mb", "provenance",
                                        "recompute", "opt_bytes_per_param",
                                        NULL};
static const char *const PIPE_KEYS[] = {"microbatches", "stages", NULL};
static const char *const STAGE_KEYS[] = {"gpus",         "layers",       "freq_mhz",
                                         "freq_mhz_fwd", "freq_mhz_bwd", NULL};

const char *sched_name(sched_kind s)
{
    return s == SCHED_GPIPE ? "gpipe" : s == SCHED_1F1B ? "1f1b" : "interleaved";
}

/* Indexed by sync_kind. */
static const char *const SYNC_NAMES[SYNC_COUNT] = {"ring", "hierarchical", "ps"};

const char *sync_name(sync_kind s)
{
    return (unsigned)s < SYNC_COUNT ? SYNC_NAMES[s] : "?";
}

int sched_parse(const char *s, sched_kind *out)
{
    if (!strcmp(s, "gpipe"))
        *out = SCHED_GPIPE;
    else if (!strcmp(s, "1f1b"))
        *out = SCHED_1F1B;
    else if (!strcmp(s, "interleaved"))
        *out = SCHED_INTERLEAVED;
    else
        return -1;
    return 0;
}

int sync_parse(const char *s, sync_kind *out)
{
    for (int k = 0; k < SYNC_COUNT; k++)
        if (!strcmp(s, SYNC_NAMES[k])) {
            *out = (sync_kind)k;
            return 0;
        }
    return -1;
}

static const char *const SHARD_NAMES[] = {"none", "zero1", "zero2", "zero3", "fsdp"};

const char *shard_name(shard_kind s)
{
    return SHARD_NAMES[s];
}

int shard_parse(const char *s, shard_kind *out)
{
    for (int k = 0; k <= SHARD_FSDP; k++)
        if (!strcmp(s, SHARD_NAMES[k])) {
            *out = (shard_kind)k;
            return 0;
        }
    return -1;
}

int plan_accumulation(const plan *p, const job *j)
{
    return p->accumulation > 0 ? p->accumulation : j->accumulation > 0 ? j->accumulation : 1;
}

double plan_bucket_bytes(const plan *p)
{
    return (p->bucket_mb > 0 ? p->bucket_mb : PLAN_DEFAULT_BUCKET_MB) * 1048576.0;
}

const job *plan_job(const plan *p, const job *j, job *buf)
{
    if (!p->recompute_full && !(p->opt_bytes_per_param > 0))
        return j;
    *buf = *j;
    if (p->recompute_full)
        buf->recompute = RECOMPUTE_FULL;
    if (p->opt_bytes_per_param > 0)
        buf->opt_bytes_per_param = p->opt_bytes_per_param;
    return buf;
}

int plan_init(plan *p, int npipes)
{
    memset(p, 0, sizeof *p);
    snprintf(p->planner, sizeof p->planner, "hand");
    snprintf(p->objective, sizeof p->objective, "time");
    p->schedule = SCHED_1F1B;
    p->sync = SYNC_RING;
    p->microbatch_size = 1;
    p->pipes = calloc((size_t)(npipes > 0 ? npipes : 1), sizeof *p->pipes);
    if (!p->pipes)
        return -1;
    p->npipes = npipes;
    return 0;
}

int plan_pipe_alloc(plan *p, int pipe, int nstages)
{
    plan_pipeline *pp = &p->pipes[pipe];
    free(pp->stages);
    pp->stages = calloc((size_t)(nstages > 0 ? nstages : 1), sizeof *pp->stages);
    if (!pp->stages)
        return -1;
    pp->nstages = nstages;
    return 0;
}

void plan_free(plan *p)
{
    if (p->pipes)
        for (int i = 0; i < p->npipes; i++)
            free(p->pipes[i].stages);
    free(p->pipes);
    memset(p, 0, sizeof *p);
}

int plan_copy(plan *dst, const plan *src)
{
    plan tmp = *src;
    tmp.pipes = calloc((size_t)(src->npipes > 0 ? src->npipes : 1), sizeof *tmp.pipes);
    if (!tmp.pipes)
        return -1;
    for (int i = 0; i < src->npipes; i++) {
        tmp.pipes[i] = src->pipes[i];
        tmp.pipes[i].stages = malloc((size_t)src->pipes[i].nstages * sizeof(plan_stage) + 1);
        if (!tmp.pipes[i].stages) {
            tmp.npipes = i;
            plan_free(&tmp);
            return -1;
        }
        memcpy(tmp.pipes[i].stages, src->pipes[i].stages,
               (size_t)src->pipes[i].nstages * sizeof(plan_stage));
    }
    *dst = tmp;
    return 0;
}

/* --- reading ------------------------------------------------------------- */

static int parse_stage(const jdoc *d, json_t *st, const char *sp, const topology *t,
                       plan_stage *s, gt_err *e)
{
    char jp[320];
    if (!json_is_object(st))
        return jdoc_fail(d, e, sp, "expected a stage object");
    if (jdoc_keys(d, st, sp, STAGE_KEYS, e))
        return -1;
    json_t *gpus = json_object_get(st, "gpus");
    snprintf(jp, sizeof jp, "%s.gpus", sp);
    if (!json_is_array(gpus) || json_array_size(gpus) == 0)
        return jdoc_fail(d, e, jp, "expected a non-empty array of GPU ids \"site/node/index\"");
    if (json_array_size(gpus) > PLAN_MAX_TP)
        return jdoc_fail(d, e, jp, "more than %d GPUs in one stage", PLAN_MAX_TP);
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g) {
        snprintf(jp, sizeof jp, "%s.gpus[%zu]", sp, i);
        if (!json_is_string(g))
            return jdoc_fail(d, e, jp, "expected a GPU id string \"site/node/index\"");
        int idx = topo_gpu_lookup(t, json_string_value(g));
        char shown[200];
        if (idx < 0)
            return jdoc_fail(d, e, jp, "unknown GPU \"%s\" in topology %s (ids are "
                                       "SITE/NODE/INDEX, indices written 0, 1, 12: no sign, "
                                       "space or leading zero)",
                             gram_printable(json_string_value(g), shown, sizeof shown),
                             t->name);
        s->gpus[s->ngpus++] = idx;
    }
    json_t *lay = json_object_get(st, "layers");
    snprintf(jp, sizeof jp, "%s.layers", sp);
    if (!json_is_array(lay) || json_array_size(lay) != 2 ||
        !json_is_integer(json_array_get(lay, 0)) || !json_is_integer(json_array_get(lay, 1)))
        return jdoc_fail(d, e, jp, "expected [first, last] (inclusive layer indices)");
    json_int_t a = json_integer_value(json_array_get(lay, 0));
    json_int_t b = json_integer_value(json_array_get(lay, 1));
    if (a < 0 || b < a || b > 1000000)
        return jdoc_fail(d, e, jp, "invalid layer range [%lld, %lld]", (long long)a,
                         (long long)b);
    s->first = (int)a;
    s->last = (int)b;
    return plan_stage_freq_parse(d, st, sp, t, s, e);
}

static int parse_pipe(const jdoc *d, json_t *pj, const char *pp, const topology *t, plan *p,
                      int pi, gt_err *e)
{
    if (!json_is_object(pj))
        return jdoc_fail(d, e, pp, "expected a pipeline object");
    if (jdoc_keys(d, pj, pp, PIPE_KEYS, e))
        return -1;
    long mb;
    if (jdoc_int(d, pj, pp, "microbatches", 1, 1, 100000000, 0, &mb, e))
        return -1;
    json_t *stages = json_object_get(pj, "stages");
    char jp[300];
    snprintf(jp, sizeof jp, "%s.stages", pp);
    if (!json_is_array(stages) || json_array_size(stages) == 0)
        return jdoc_fail(d, e, jp, "expected a non-empty array of stages");
    if (json_array_size(stages) > 100000)
        return jdoc_fail(d, e, jp, "too many stages");
    if (plan_pipe_alloc(p, pi, (int)json_array_size(stages)))
        return gt_fail(e, "%s: out of memory", d->path);
    p->pipes[pi].microbatches = (int)mb;
    size_t i;
    json_t *st;
    json_array_foreach(stages, i, st) {
        char sp[300];
        snprintf(sp, sizeof sp, "%s.stages[%zu]", pp, i);
        if (parse_stage(d, st, sp, t, &p->pipes[pi].stages[i], e))
            return -1;
    }
    return 0;
}

static int parse_doc(const jdoc *d, const topology *t, plan *p, gt_err *e)
{
    json_t *r = d->root;
    char sched[32], sync[32], shard[32], gsync[32], rec[16];
    long b, acc;
    double bucket;
    if (jdoc_keys(d, r, "", PLAN_KEYS, e) ||
        jdoc_str(d, r, "", "planner", 0, "hand", p->planner, sizeof p->planner, e) ||
        jdoc_str(d, r, "", "objective", 0, "time", p->objective, sizeof p->objective, e) ||
        jdoc_str(d, r, "", "schedule", 0, "1f1b", sched, sizeof sched, e) ||
        jdoc_str(d, r, "", "dp_sync", 0, "ring", sync, sizeof sync, e) ||
        jdoc_int(d, r, "", "microbatch_size", 0, 1, 1000000, 1, &b, e) ||
        jdoc_int(d, r, "", "accumulation_steps", 0, 1, 1000000, 0, &acc, e) ||
        jdoc_str(d, r, "", "dp_shard", 0, "none", shard, sizeof shard, e) ||
        jdoc_str(d, r, "", "grad_sync", 0, "after_backward", gsync, sizeof gsync, e) ||
        jdoc_num(d, r, "", "grad_bucket_mb", 0, 1e-3, 1e9, 0, &bucket, e) ||
        jdoc_str(d, r, "", "recompute", 0, "none", rec, sizeof rec, e) ||
        jdoc_num(d, r, "", "opt_bytes_per_param", 0, 0, 1024, 0, &p->opt_bytes_per_param, e))
        return -1;
    if (shard_parse(shard, &p->dp_shard))
        return jdoc_fail(d, e, "dp_shard", "expected none, zero1, zero2, zero3 or fsdp (got "
                         "\"%s\")", shard);
    if (!strcmp(gsync, "after_backward"))
        p->grad_sync = GSYNC_AFTER_BACKWARD;
    else if (!strcmp(gsync, "overlap"))
        p->grad_sync = GSYNC_OVERLAP;
    else
        return jdoc_fail(d, e, "grad_sync", "expected after_backward or overlap (got \"%s\")",
                         gsync);
    p->accumulation = (int)acc;
    p->bucket_mb = bucket;
    if (strcmp(rec, "none") && strcmp(rec, "full"))
        return jdoc_fail(d, e, "recompute", "expected none or full (got \"%s\")", rec);
    p->recompute_full = !strcmp(rec, "full");
    if (sched_parse(sched, &p->schedule))
        return jdoc_fail(d, e, "schedule", "expected gpipe, 1f1b or interleaved (got \"%s\")",
                         sched);
    if (sync_parse(sync, &p->sync))
        return jdoc_fail(d, e, "dp_sync", "expected ring, hierarchical or ps (got \"%s\")",
                         sync);
    p->microbatch_size = (int)b;
    json_t *pipes = json_object_get(r, "pipelines");
    if (!json_is_array(pipes) || json_array_size(pipes) == 0)
        return jdoc_fail(d, e, "pipelines", "expected a non-empty array of pipelines");
    if (json_array_size(pipes) > 100000)
        return jdoc_fail(d, e, "pipelines", "too many pipelines");
    p->pipes = calloc(json_array_size(pipes), sizeof *p->pipes);
    if (!p->pipes)
        return gt_fail(e, "%s: out of memory", d->path);
    p->npipes = (int)json_array_size(pipes);
    size_t i;
    json_t *pj;
    json_array_foreach(pipes, i, pj) {
        char pp[64];
        snprintf(pp, sizeof pp, "pipelines[%zu]", i);
        if (parse_pipe(d, pj, pp, t, p, (int)i, e))
            return -1;
    }
    return 0;
}

int plan_parse(plan *p, const char *name, const char *buf, size_t len, const topology *t,
               gt_err *e)
{
    memset(p, 0, sizeof *p);
    jdoc d;
    if (jdoc_parse(&d, name, buf, len, e))
        return -1;
    int rc = parse_doc(&d, t, p, e);
    jdoc_free(&d);
    if (rc)
        plan_free(p);
    return rc;
}

int plan_load(plan *p, const char *path, const topology *t, gt_err *e)
{
    memset(p, 0, sizeof *p);
    jdoc d;
    if (jdoc_load(&d, path, e))
        return -1;
    int rc = parse_doc(&d, t, p, e);
    jdoc_free(&d);
    if (rc)
        plan_free(p);
    return rc;
}
