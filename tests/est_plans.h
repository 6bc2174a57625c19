/* est_plans.h — random plans for the estimator's tests: 44 GPUs of two
 * types in three sites (shared WAN links, so transfers contend), and plans
 * of 1-3 GPipe or 1F1B pipelines of 1-7 stages, 1-40 microbatches,
 * accumulation, tensor parallelism, every sync kind and overlapped sync
 * (every plan's at most 42 GPUs fit). Draws come from GSL's mt19937. */
#ifndef GT_EST_PLANS_H
#define GT_EST_PLANS_H

#include "testutil.h"

#include <gsl/gsl_rng.h>

#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"

static const char *const TOPO =
    "{\"name\":\"t\",\"sites\":["
    "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":4,\"nic_gbps\":25,"
    "\"repeat\":4}],\"lan\":{\"gbps\":100,\"latency_ms\":0.05}},"
    "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"v100_sxm2_16gb\",\"count\":4,\"nic_gbps\":10,"
    "\"repeat\":4}],\"lan\":{\"gbps\":25,\"latency_ms\":0.1}},"
    "{\"id\":\"c\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":10,"
    "\"repeat\":6}],\"lan\":{\"gbps\":25,\"latency_ms\":0.1}}],"
    "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":1.5,\"latency_ms\":30}],"
    "\"default_wan\":{\"gbps\":0.8,\"latency_ms\":70},"
    "\"tcp\":{\"window_mb\":8,\"connections\":4}}";

/* json parsed into t with the default GPU catalog (the test fails on an
 * error). */
static inline void est_parse_topo(topology *t, const char *name, const char *json)
{
    gt_err e;
    gpu_catalog cat;
    assert_int_equal(gpu_catalog_load_default(&cat, &e), 0);
    if (topo_parse(t, name, json, strlen(json), &cat, &e))
        fail_msg("%s", e.msg);
    gpu_catalog_free(&cat);
}

static inline void tiny_job(job *j, int layers)
{
    model_spec m = {.layers = layers, .hidden = 1024, .heads = 16, .kv_heads = 16, .ffn = 4096,
                    .vocab = 32000, .seq_len = 1024, .bias = true, .learned_pos = true};
    snprintf(m.id, sizeof m.id, "tiny");
    job_defaults(j, &m);
    j->seq = 1024;
}

static inline int pick(gsl_rng *r, int lo, int hi)
{
    return lo + (int)gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1));
}

/* v[0..n): n distinct draws from 0..range-1 (n <= range). */
static inline void pick_distinct(gsl_rng *r, int *v, int n, int range)
{
    for (int i = 0; i < n; i++) {
        int x, dup;
        do {
            x = pick(r, 0, range - 1);
            dup = 0;
            for (int k = 0; k < i; k++)
                dup |= v[k] == x;
        } while (dup);
        v[i] = x;
    }
}

/* A random plan over distinct GPUs (a stage may take 2 GPUs of one node as
 * tensor parallelism). */
static inline void random_plan(gsl_rng *r, const topology *t, job *j, plan *p)
{
    int L = j->model.layers, D = pick(r, 1, 3), b = pick(r, 1, 2), acc = pick(r, 1, 4) == 1 ? 2 : 1;
    plan_init(p, D);
    p->schedule = pick(r, 0, 1) ? SCHED_1F1B : SCHED_GPIPE;
    p->sync = (sync_kind)pick(r, 0, 2);
    p->grad_sync = pick(r, 0, 2) == 0 ? GSYNC_OVERLAP : GSYNC_AFTER_BACKWARD;
    p->microbatch_size = b;
    p->accumulation = acc;
    int used[64] = {0}, total = 0;
    int S = pick(r, 1, 7);
    for (int d = 0; d < D; d++) {
        int Sd = pick(r, 0, 3) == 0 ? pick(r, 1, 7) : S; /* pipelines alike, mostly */
        plan_pipe_alloc(p, d, Sd);
        p->pipes[d].microbatches = pick(r, 0, 4) == 0 ? pick(r, 1, 4) : pick(r, 1, 40);
        total += p->pipes[d].microbatches;
        int cut[8];
        cut[0] = 0;
        for (int k = 1; k < Sd; k++) /* Sd - 1 distinct cuts in 1..L-1, increasing */
            cut[k] = cut[k - 1] + 1 + (int)gsl_rng_uniform_int(r, (unsigned long)(L - cut[k - 1] - (Sd - k)));
        for (int k = 0; k < Sd; k++) {
            plan_stage *s = &p->pipes[d].stages[k];
            s->first = cut[k];
            s->last = k + 1 < Sd ? cut[k + 1] - 1 : L - 1;
            int g;
            do
                g = pick(r, 0, t->ngpus - 1);
            while (used[g]);
            used[g] = 1;
            s->ngpus = 1;
            s->gpus[0] = g;
            int mate = g ^ 1; /* same node: nodes hold an even count */
            if (pick(r, 0, 5) == 0 && !used[mate] && t->gpus[mate].node == t->gpus[g].node) {
                used[mate] = 1;
                s->ngpus = 2;
                s->gpus[1] = mate;
            }
        }
    }
    j->batch = total * b * acc;
}

#endif
