/* test_training.c — what real training systems do beyond one flush and a
 * plain all-reduce, against independently known answers:
 *   gradient accumulation: k flushes take k x one flush + one sync and one
 *     optimizer step on a contention-free plan (closed form), estimator and
 *     simulator alike, op by op;
 *   memory: the hand-computed peak of a 2-stage 1F1B plan with and without
 *     recomputation, and of a 2-way tensor-parallel one; ZeRO-1/2/3 and FSDP state per GPU equal the ZeRO
 *     paper's (2+2+K)Psi/Nd formulas and its 7.5B / Nd = 64 figures;
 *   sharded sync traffic: ZeRO-1/2 move what an all-reduce moves, ZeRO-3
 *     1.5x (ZeRO paper section 7); each algorithm's emitted transfers against
 *     its closed-form bytes per member;
 *   overlapped (bucketed) sync is never slower than sync-after-backward and
 *     equal when a bucket holds a whole stage (nothing left to overlap);
 *   fp32 gradients double the sync bytes;
 *   plan fields at their defaults change nothing; bad combinations are
 *     refused with a reason, on the command line too. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "sim/models/collective.h"
#include "sim/models/cost.h"
#include "sim/models/dp_sync.h"
#include "sim/models/memory.h"
#include "sim/engine/simulate.h"
#include "sim/models/plan_check.h"

#define TINY FIXTURES "/tiny-model.json"

/* Four A100s in one node: every transfer has its own GPU-link pair. */
static const char *ONE_NODE =
    "{\"name\":\"one-node\",\"sites\":[{\"id\":\"s1\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\","
    "\"count\":4,\"nic_gbps\":100}],\"lan\":{\"gbps\":100,\"latency_ms\":0.01}}],\"links\":[]}";
/* Two sites of two A100s behind one 1 Gbps link: the sync dominates. */
static const char *TWO_SITES =
    "{\"name\":\"two-sites\",\"sites\":["
    "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.01}},"
    "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.01}}],"
    "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":1,\"latency_ms\":5}]}";

typedef struct world {
    topology t;
    job j;
    plan p;
} world;

/* Topology and plan from JSON text, the tiny model, batch B. Returns 0, or
 * -1 with e filled when the plan does not parse. */
static int load(world *w, const char *topo_json, const char *plan_json, int batch, gt_err *e)
{
    char tpath[64];
    write_temp(topo_json, tpath, sizeof tpath);
    assert_int_equal(topo_load(&w->t, tpath, NULL, e), 0);
    unlink(tpath);
    model_spec m;
    if (model_resolve(TINY, &m, e))
        fail_msg("%s", e->msg);
    job_defaults(&w->j, &m);
    w->j.batch = batch;
    int rc = plan_parse(&w->p, "plan", plan_json, strlen(plan_json), &w->t, e);
    if (rc)
        topo_free(&w->t);
    return rc;
}

static void load_ok(world *w, const char *topo_json, const char *plan_json, int batch)
{
    gt_err e;
    if (load(w, topo_json, plan_json, batch, &e))
        fail_msg("%s", e.msg);
}

static void unload(world *w)
{
    plan_free(&w->p);
    topo_free(&w->t);
}

static void run(const world *w, sim_detail *d)
{
    sim_options o;
    sim_options_default(&o);
    o.est_op_times = true; /* compared with the replay op by op */
    gt_err e;
    if (sim_detail_run(&w->t, &w->j, &w->p, &o, d, &e))
        fail_msg("%s", e.msg);
}

/* Two pipelines of two stages on one node; options spliced in before
 * "pipelines". */
static void two_by_two(char *out, size_t cap, const char *sched, int m, const char *opts)
{
    snprintf(out, cap,
             "{\"schedule\":\"%s\",\"dp_sync\":\"ring\",\"microbatch_size\":1,%s"
             "\"pipelines\":["
             "{\"microbatches\":%d,\"stages\":[{\"gpus\":[\"s1/0/0\"],\"layers\":[0,3]},"
             "{\"gpus\":[\"s1/0/1\"],\"layers\":[4,7]}]},"
             "{\"microbatches\":%d,\"stages\":[{\"gpus\":[\"s1/0/2\"],\"layers\":[0,3]},"
             "{\"gpus\":[\"s1/0/3\"],\"layers\":[4,7]}]}]}",
             sched, opts, m, m);
}

static int64_t max_bwd_end(const timing *tm, const workload *w)
{
    int64_t x = 0;
    for (int l = 0; l < w->nlanes; l++)
        x = tm->lanes[l].bwd_end > x ? tm->lanes[l].bwd_end : x;
    return x;
}

static void assert_ops_equal(const sim_detail *d)
{
    for (int i = 0; i < d->w.nops; i++) {
        assert_int_equal(d->tm.ops[i].start, d->est.ops[i].start);
        assert_int_equal(d->tm.ops[i].end, d->est.ops[i].end);
    }
    assert_int_equal(d->tm.iteration_ns, d->est.iteration_ns);
}

/* --- gradient accumulation --------------------------------------------------- */

/* One pipeline of two stages (contention-free: no sync to meet its
 * transfers): k flushes take exactly k x one flush, then one optimizer step. */
static void test_accumulation_pipeline(void **state)
{
    (void)state;
    const char *scheds[] = {"gpipe", "1f1b"};
    for (int s = 0; s < 2; s++) {
        int m = 4, k = 3;
        char plan1[1024], plank[1024];
        const char *fmt =
            "{\"schedule\":\"%s\",\"dp_sync\":\"ring\",\"microbatch_size\":1,%s"
            "\"pipelines\":[{\"microbatches\":%d,\"stages\":[{\"gpus\":[\"s1/0/0\"],"
            "\"layers\":[0,3]},{\"gpus\":[\"s1/0/1\"],\"layers\":[4,7]}]}]}";
        snprintf(plan1, sizeof plan1, fmt, scheds[s], "", m);
        snprintf(plank, sizeof plank, fmt, scheds[s], "\"accumulation_steps\":3,", m);
        world w1, wk;
        load_ok(&w1, ONE_NODE, plan1, m);
        load_ok(&wk, ONE_NODE, plank, m * k);
        sim_detail d1, dk;
        run(&w1, &d1);
        run(&wk, &dk);
        int64_t flush = max_bwd_end(&d1.tm, &d1.w), opt = 0;
        for (int l = 0; l < d1.w.nlanes; l++)
            if (d1.tm.lanes[l].opt_end == d1.tm.iteration_ns)
                opt = d1.w.lanes[l].opt_ns;
        assert_true(opt > 0);
        assert_int_equal(d1.tm.iteration_ns, flush + opt);
        assert_int_equal(dk.w.nops, k * d1.w.nops);
        assert_int_equal(max_bwd_end(&dk.tm, &dk.w), k * flush);
        assert_int_equal(dk.tm.iteration_ns, k * flush + opt);
        assert_ops_equal(&dk);
        sim_detail_free(&d1);
        sim_detail_free(&dk);
        unload(&w1);
        unload(&wk);
    }
}

/* Two single-stage replicas: a flush is m forwards and m backwards back to
 * back, m(f + b); k flushes then one ring sync and one optimizer step,
 * k m (f + b) + (the same sync and step as with one flush). The job's
 * --accumulation-steps gives the same run as the plan field. */
static void test_accumulation_closed_form(void **state)
{
    (void)state;
    int m = 4, k = 3;
    const char *fmt =
        "{\"schedule\":\"1f1b\",\"dp_sync\":\"ring\",\"microbatch_size\":1,%s\"pipelines\":["
        "{\"microbatches\":%d,\"stages\":[{\"gpus\":[\"s1/0/0\"],\"layers\":[0,7]}]},"
        "{\"microbatches\":%d,\"stages\":[{\"gpus\":[\"s1/0/1\"],\"layers\":[0,7]}]}]}";
    char plan1[1024], plank[1024];
    snprintf(plan1, sizeof plan1, fmt, "", m, m);
    snprintf(plank, sizeof plank, fmt, "\"accumulation_steps\":3,", m, m);
    world w1, wk, wj;
    load_ok(&w1, ONE_NODE, plan1, 2 * m);
    load_ok(&wk, ONE_NODE, plank, 2 * m * k);
    load_ok(&wj, ONE_NODE, plan1, 2 * m * k);
    wj.j.accumulation = k;
    sim_detail d1, dk, dj;
    run(&w1, &d1);
    run(&wk, &dk);
    run(&wj, &dj);
    int64_t f = 0, b = 0; /* every op of a kind has the same duration here */
    for (int i = 0; i < d1.w.nops; i++)
        *(d1.w.ops[i].kind == OP_FWD ? &f : &b) = d1.w.ops[i].dur_ns;
    int64_t after = d1.tm.iteration_ns - m * (f + b); /* one sync + one optimizer step */
    assert_true(after > d1.w.lanes[0].opt_ns);          /* the sync is really there */
    assert_int_equal(dk.tm.iteration_ns, k * m * (f + b) + after);
    assert_int_equal(dk.est.iteration_ns, k * m * (f + b) + after);
    assert_int_equal(dj.tm.iteration_ns, dk.tm.iteration_ns);
    sim_detail_free(&d1);
    sim_detail_free(&dk);
    sim_detail_free(&dj);
    unload(&w1);
    unload(&wk);
    unload(&wj);
}

static void test_accumulation_checks(void **state)
{
    (void)state;
    char plan[2048];
    two_by_two(plan, sizeof plan, "1f1b", 4, "\"accumulation_steps\":2,");
    world w;
    gt_err e;
    load_ok(&w, ONE_NODE, plan, 8); /* 2 pipes x 4 x 1 x 2 = 16, not 8 */
    assert_int_not_equal(plan_check(&w.p, &w.t, &w.j, &e), 0);
    assert_non_null(strstr(e.msg, "accumulation_steps 2"));
    w.j.batch = 16;
    assert_int_equal(plan_check(&w.p, &w.t, &w.j, &e), 0);
    w.j.accumulation = 4; /* plan says 2 */
    assert_int_not_equal(plan_check(&w.p, &w.t, &w.j, &e), 0);
    assert_non_null(strstr(e.msg, "accumulation_steps is 2 in the plan but 4"));
    unload(&w);
    two_by_two(plan, sizeof plan, "1f1b", 4, "\"accumulation_steps\":0,");
    assert_int_not_equal(load(&w, ONE_NODE, plan, 8, &e), 0);
    assert_non_null(strstr(e.msg, "accumulation_steps"));
}

/* --- memory ------------------------------------------------------------------ */

/* Tiny model: s = 1024, h = 1024, a = 16, V = 32000. One pipeline of two
 * stages (layers 0-3, 4-7), 1F1B, m = 4, b = 1: stage 0 keeps
 * min(2 - 0, 4) = 2 microbatches, stage 1 min(2 - 1, 4) = 1. */
static void test_memory_two_stage_1f1b(void **state)
{
    (void)state;
    const char *plan =
        "{\"schedule\":\"1f1b\",\"dp_sync\":\"ring\",\"microbatch_size\":1,\"pipelines\":["
        "{\"microbatches\":4,\"stages\":[{\"gpus\":[\"s1/0/0\"],\"layers\":[0,3]},"
        "{\"gpus\":[\"s1/0/1\"],\"layers\":[4,7]}]}]}";
    world w;
    load_ok(&w, ONE_NODE, plan, 4);
    double s = 1024, h = 1024, a = 16, V = 32000, GiB = 1073741824.0;
    /* Korthikanti 4.1 with a fused attention kernel: 34sbh + 4asb (fp32
     * log-sum-exp instead of the 5as^2b of the scores): 35717120 */
    double layer_act = s * (34 * h + 4 * a);
    /* fp32 logits (131072000) and the output projection's saved input 2sbh */
    double logits = 4 * s * V + 2 * s * h;
    double p0 = cost_stage_params(&w.j.model, 0, 3), p1 = cost_stage_params(&w.j.model, 4, 7);
    double over = 1.5 * GiB;
    /* no recomputation: 16 B/param + in-flight activations (+ logits on the last) */
    assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, 0), 16 * p0 + 4 * 2 * layer_act + over) <
                1e-12);
    assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, 1),
                         16 * p1 + 4 * 1 * layer_act + logits + over) < 1e-12);
    /* full recomputation: 2sbh per layer kept, one layer's full activations
     * re-created during its backward; the last stage's larger buffer wins */
    w.j.recompute = RECOMPUTE_FULL;
    double kept = 2 * s * h;
    assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, 0),
                         16 * p0 + 4 * 2 * kept + layer_act + over) < 1e-12);
    assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, 1),
                         16 * p1 + 4 * 1 * kept + (logits > layer_act ? logits : layer_act) + over) <
                1e-12);
    /* fp32 gradients hold 2 more bytes per parameter */
    w.j.grad_bytes = 4;
    assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, 0),
                         18 * p0 + 4 * 2 * kept + layer_act + over) < 1e-12);
    assert_true(plan_gpu_memory(&w.p, &w.t, &w.j, 2) == 0);
    /* unfused attention keeps the scores: sbh(34 + 5as/h) = 119537664 */
    w.j.grad_bytes = 2;
    w.j.recompute = RECOMPUTE_NONE;
    w.j.attention = ATTN_UNFUSED;
    double unfused = s * h * (34 + 5 * a * s / h);
    assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, 0), 16 * p0 + 4 * 2 * unfused + over) <
                1e-12);
    assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, 1),
                         16 * p1 + 4 * 1 * unfused + logits + over) < 1e-12);
    /* ... and with full recomputation one layer of them is re-created */
    w.j.recompute = RECOMPUTE_FULL;
    assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, 0),
                         16 * p0 + 4 * 2 * kept + unfused + over) < 1e-12);
    unload(&w);
}

/* A 2-way tensor-parallel stage (Korthikanti et al. section 4.2, no
 * sequence parallelism): each GPU keeps sbh(10 + 24/t + 5as/(ht)) per layer
 * (fused attention: 4a/t per token instead of the 5as/t of the scores)
 * and microbatch, and 1/t of the state and of the vocabulary-parallel logits;
 * the output projection's input (2sbh) is whole without sequence parallelism. */
static void test_memory_tensor_parallel(void **state)
{
    (void)state;
    const char *plan =
        "{\"schedule\":\"1f1b\",\"dp_sync\":\"ring\",\"microbatch_size\":1,\"pipelines\":["
        "{\"microbatches\":4,\"stages\":[{\"gpus\":[\"s1/0/0\",\"s1/0/1\"],\"layers\":[0,3]},"
        "{\"gpus\":[\"s1/0/2\",\"s1/0/3\"],\"layers\":[4,7]}]}]}";
    world w;
    load_ok(&w, ONE_NODE, plan, 4);
    double s = 1024, h = 1024, a = 16, V = 32000, t = 2, over = 1.5 * 1073741824.0;
    /* fused attention: sb(10h + (24h + 4a)/t) = 23101440 */
    double layer_act = s * (10 * h + (24 * h + 4 * a) / t);
    double p0 = cost_stage_params(&w.j.model, 0, 3), p1 = cost_stage_params(&w.j.model, 4, 7);
    for (int g = 0; g < 2; g++)
        assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, g),
                             16 * p0 / t + 4 * 2 * layer_act + over) < 1e-12);
    for (int g = 2; g < 4; g++)
        assert_true(rel_diff(plan_gpu_memory(&w.p, &w.t, &w.j, g),
                             16 * p1 / t + 4 * 1 * layer_act + 4 * s * V / t + 2 * s * h + over) <
                    1e-12);
    unload(&w);
}

/* ZeRO paper (Rajbhandari et al. SC'20) section 5 and Figure 1: with K = 12
 * and Nd replicas, per GPU (2+2+K)Psi baseline, (2+2+K/Nd)Psi for P_os,
 * (2+(2+K)/Nd)Psi for P_os+g, (2+2+K)Psi/Nd for P_os+g+p; for Psi = 7.5B
 * and Nd = 64: 120, 31.4, 16.6 and 1.9 GB. */
static void test_zero_memory_formulas(void **state)
{
    (void)state;
    model_spec m;
    gt_err e;
    assert_int_equal(model_resolve(TINY, &m, &e), 0);
    job j;
    job_defaults(&j, &m);
    int L = m.layers, nd[] = {2, 4, 64};
    double psi = cost_stage_params(&m, 0, L - 1);
    for (int x = 0; x < 3; x++) {
        double N = nd[x];
        double expect[] = {16 * psi, (4 + 12 / N) * psi, (2 + 14 / N) * psi, 16 * psi / N,
                           16 * psi / N};
        for (int k = SHARD_NONE; k <= SHARD_FSDP; k++) {
            mem_terms t;
            memory_stage_terms(&j, 1, 0, L - 1, 1, 1, (shard_kind)k, nd[x], &t);
            /* FSDP2 keeps its root (embedding, head) gathered: 2 bytes each */
            double root = k == SHARD_FSDP ? 2 * (cost_embedding_params(&m) + cost_head_params(&m)) : 0;
            assert_true(rel_diff(t.params + t.grads + t.optimizer - root, expect[k]) < 1e-12);
            /* activations do not depend on the sharding */
            mem_terms u;
            memory_stage_terms(&j, 1, 0, L - 1, 1, 1, SHARD_NONE, 1, &u);
            assert_true(t.activations == u.activations);
            if (nd[x] == 64) {
                double gb = (t.params + t.grads + t.optimizer - root) / psi * 7.5;
                double paper[] = {120, 31.4, 16.6, 1.9, 1.9};
                assert_true(fabs(gb - paper[k]) < 0.06);
            }
        }
    }
    /* one replica: nothing to shard */
    mem_terms t, u;
    memory_stage_terms(&j, 1, 0, L - 1, 1, 1, SHARD_ZERO3, 1, &t);
    memory_stage_terms(&j, 1, 0, L - 1, 1, 1, SHARD_NONE, 1, &u);
    assert_true(memory_terms_total(&t) == memory_terms_total(&u));
}

/* --- sharded sync traffic ------------------------------------------------------ */

static double sync_bytes_of(const world *w, sim_detail *d)
{
    double total = 0;
    for (int g = 0; g < d->w.ngroups; g++) {
        coll_plan c;
        gt_err e;
        assert_int_equal(collective_build(&c, &w->t, &d->w, &d->w.groups[g], w->p.sync, &e), 0);
        for (int f = 0; f < c.nflows; f++)
            total += c.flows[f].bytes;
        collective_free(&c);
    }
    return total;
}

static void test_zero_traffic(void **state)
{
    (void)state;
    for (int s = 0; s < 2; s++) { /* ring, then the parameter server */
        double base = 0;
        const char *shards[] = {"none", "zero1", "zero2", "zero3", "fsdp"};
        /* ZeRO-3 / FSDP: a reduce-scatter (1/2) and two all-gathers (1/2
         * each) for each of the 4 microbatches */
        double factor[] = {1, 1, 1, 0.5 + 4, 0.5 + 4};
        for (int k = 0; k < 5; k++) {
            char plan[2048], opts[128];
            snprintf(opts, sizeof opts, "\"dp_shard\":\"%s\",", shards[k]);
            two_by_two(plan, sizeof plan, "1f1b", 4, opts);
            if (s) /* "ring" -> "ps" padded with blanks: the JSON stays valid */
                memcpy(strstr(plan, "\"ring\""), "\"ps\"  ", 6);
            world w;
            load_ok(&w, ONE_NODE, plan, 8);
            sim_detail d;
            run(&w, &d);
            double bytes = sync_bytes_of(&w, &d);
            if (k == 0)
                base = bytes;
            assert_true(rel_diff(bytes, factor[k] * base) < 1e-12);
            assert_true(d.tm.iteration_ns >= d.est.iteration_ns);
            sim_detail_free(&d);
            unload(&w);
        }
    }
}

/* Bytes on the wire of a ring over n members per optimizer step, closed form:
 * an all-reduce of G sends 2(n-1)/n G from each member, a reduce-scatter or
 * an all-gather half of that. Plain DP all-reduces the gradients G; ZeRO-1/2
 * reduce-scatter G and all-gather the weights W once per step; ZeRO-3 / FSDP
 * gather W before the forward and again before the backward of each of the
 * m x k passes (reshard after forward), then reduce-scatter G once. The two
 * pipelines of two_by_two are the n = 2 members of each stage's ring. */
static void test_fsdp_gathers_per_pass(void **state)
{
    (void)state;
    const char *shards[] = {"none", "zero1", "zero2", "zero3", "fsdp"};
    int ms[] = {1, 4}, ks[] = {1, 3};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int x = 0; x < 5; x++) {
                int m = ms[a], k = ks[b];
                char plan[2048], opts[128];
                snprintf(opts, sizeof opts, "\"dp_shard\":\"%s\",\"accumulation_steps\":%d,",
                         shards[x], k);
                two_by_two(plan, sizeof plan, "1f1b", m, opts);
                world w;
                load_ok(&w, ONE_NODE, plan, 2 * m * k);
                sim_detail d;
                run(&w, &d);
                double want = 0, n = 2, half = (n - 1) / n * n; /* all members' share */
                for (int g = 0; g < d.w.ngroups; g++) {
                    double G = d.w.groups[g].bytes, W = d.w.groups[g].weights;
                    assert_int_equal(d.w.groups[g].nmembers, 2);
                    want += x == 0   ? 2 * half * G
                            : x < 3 ? half * (G + W)
                                    : half * (G + 2.0 * m * k * W);
                }
                assert_int_equal(d.w.ngroups, 2);
                assert_true(rel_diff(sync_bytes_of(&w, &d), want) < 1e-12);
                sim_detail_free(&d);
                unload(&w);
            }
}

/* One algorithm's transfers as totals: bytes per sender, transfers, most steps. */
typedef struct emit_tally {
    double sent[8], total;
    int n, max_reps;
} emit_tally;

static int tally_xfer(void *ctx, int src, int dst, double bytes, int div, int reps)
{
    emit_tally *t = ctx;
    assert_true(src != dst && src >= 0 && src < 8 && dst >= 0 && dst < 8);
    t->sent[src] += reps * bytes / div;
    t->total += reps * bytes / div;
    t->n++;
    t->max_reps = reps > t->max_reps ? reps : t->max_reps;
    return 0;
}

static int tally_end(void *ctx)
{
    (void)ctx;
    return 0;
}

static emit_tally tally(sync_kind kind, shard_kind shard, double G, double W)
{
    /* four members, two per site, listed out of order (the emitter sorts) */
    coll_member m[4] = {{3, 1, 3}, {0, 0, 0}, {2, 1, 2}, {1, 0, 1}};
    emit_tally t = {{0}, 0, 0, 0};
    coll_sink k = {tally_xfer, tally_end, &t};
    assert_int_equal(collective_emit(m, 4, kind, shard, G, W, 1, &k), 0);
    assert_true(t.n <= collective_xfers_per_phase(kind, 4) * DP_SYNC_MAX_PHASES);
    return t;
}

/* The emitter's totals against each algorithm's closed form (collective.h):
 * ring: each of n members sends 2(n-1)/n G in 2(n-1) steps; parameter
 * server: n(n-1) shards of G/n, there and back; hierarchical over two sites
 * of two: a G ring per site (G per member), a G ring of the two leaders,
 * then G to each non-leader; ZeRO-1: reduce-scatter of G, all-gather of W,
 * each (n-1)/n of it per member. */
static void test_collective_emit_closed_forms(void **state)
{
    (void)state;
    double G = 1000, W = 300;
    emit_tally r = tally(SYNC_RING, SHARD_NONE, G, W);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.max_reps, 6);
    for (int i = 0; i < 4; i++)
        assert_true(rel_diff(r.sent[i], 1.5 * G) < 1e-12);
    emit_tally p = tally(SYNC_PS, SHARD_NONE, G, W);
    assert_int_equal(p.n, 12);
    assert_true(rel_diff(p.total, 12 * 2 * G / 4) < 1e-12);
    emit_tally h = tally(SYNC_HIERARCHICAL, SHARD_NONE, G, W);
    assert_int_equal(h.n, 4 + 2 + 2);
    assert_true(rel_diff(h.total, 4 * G + 2 * G + 2 * G) < 1e-12);
    assert_true(rel_diff(h.sent[0], G + G + G) < 1e-12); /* leader of site 0 */
    assert_true(rel_diff(h.sent[1], G) < 1e-12);
    emit_tally z = tally(SYNC_RING, SHARD_ZERO1, G, W);
    for (int i = 0; i < 4; i++)
        assert_true(rel_diff(z.sent[i], 0.75 * (G + W)) < 1e-12);
}

static void test_zero_needs_splittable_sync(void **state)
{
    (void)state;
    char plan[2048];
    two_by_two(plan, sizeof plan, "1f1b", 4, "\"dp_shard\":\"zero2\",");
    world w;
    load_ok(&w, ONE_NODE, plan, 8);
    w.p.sync = SYNC_HIERARCHICAL;
    gt_err e;
    assert_int_not_equal(plan_check(&w.p, &w.t, &w.j, &e), 0);
    assert_non_null(strstr(e.msg, "dp_shard"));
    unload(&w);
    two_by_two(plan, sizeof plan, "1f1b", 4, "\"dp_shard\":\"zero4\",");
    assert_int_not_equal(load(&w, ONE_NODE, plan, 8, &e), 0);
    assert_non_null(strstr(e.msg, "dp_shard"));
}

/* --- overlapped sync and gradient dtype ------------------------------------------ */

/* Pipeline 0 in site a, pipeline 1 in site b: each stage's ring crosses the
 * 1 Gbps link. */
static void cross_sites(char *out, size_t cap, const char *sched, const char *opts)
{
    snprintf(out, cap,
             "{\"schedule\":\"%s\",\"dp_sync\":\"ring\",\"microbatch_size\":1,%s"
             "\"pipelines\":["
             "{\"microbatches\":4,\"stages\":[{\"gpus\":[\"a/0/0\"],\"layers\":[0,3]},"
             "{\"gpus\":[\"a/0/1\"],\"layers\":[4,7]}]},"
             "{\"microbatches\":4,\"stages\":[{\"gpus\":[\"b/0/0\"],\"layers\":[0,3]},"
             "{\"gpus\":[\"b/0/1\"],\"layers\":[4,7]}]}]}",
             sched, opts);
}

static void run_cross(const char *sched, const char *opts, const char *topo, int64_t *sim,
                      int64_t *est, int *ngroups)
{
    char plan[2048];
    cross_sites(plan, sizeof plan, sched, opts);
    world w;
    load_ok(&w, topo, plan, 8);
    sim_detail d;
    run(&w, &d);
    *sim = d.tm.iteration_ns;
    *est = d.est.iteration_ns;
    *ngroups = d.w.ngroups;
    sim_detail_free(&d);
    unload(&w);
}

static void test_overlap_never_slower(void **state)
{
    (void)state;
    const char *scheds[] = {"gpipe", "1f1b"};
    for (int s = 0; s < 2; s++) {
        int64_t as, ae, os, oe, ws, we;
        int ag, og, wg;
        run_cross(scheds[s], "", TWO_SITES, &as, &ae, &ag);
        run_cross(scheds[s], "\"grad_sync\":\"overlap\",", TWO_SITES, &os, &oe, &og);
        /* 25 MiB buckets hold one 25.2 MB layer each: one group per layer */
        assert_int_equal(ag, 2);
        assert_int_equal(og, 8);
        assert_true(os <= as);
        assert_true(oe <= ae);
        assert_true(os < as); /* here there is backward to hide the sync behind */
        assert_true(os >= oe);
        /* a bucket as large as a stage is ready only when the stage's
         * backward ends: nothing to overlap, the very same iteration */
        run_cross(scheds[s], "\"grad_sync\":\"overlap\",\"grad_bucket_mb\":100000,", TWO_SITES,
                  &ws, &we, &wg);
        assert_int_equal(wg, 2);
        assert_int_equal(ws, as);
        assert_int_equal(we, ae);
    }
}

static void test_grad_dtype_bytes(void **state)
{
    (void)state;
    char plan[2048];
    cross_sites(plan, sizeof plan, "1f1b", "");
    world w;
    load_ok(&w, TWO_SITES, plan, 8);
    sim_detail d2, d4;
    run(&w, &d2);
    w.j.grad_bytes = 4;
    run(&w, &d4);
    for (int g = 0; g < d2.w.ngroups; g++)
        assert_true(rel_diff(d4.w.groups[g].bytes, 2 * d2.w.groups[g].bytes) < 1e-12);
    assert_true(rel_diff(sync_bytes_of(&w, &d4), 2 * sync_bytes_of(&w, &d2)) < 1e-12);
    assert_true(d4.tm.iteration_ns > d2.tm.iteration_ns);
    sim_detail_free(&d2);
    sim_detail_free(&d4);
    unload(&w);
}

/* --- defaults change nothing ------------------------------------------------------ */

static void test_explicit_defaults_identical(void **state)
{
    (void)state;
    char plain[2048], explicit_[2048];
    cross_sites(plain, sizeof plain, "1f1b", "");
    cross_sites(explicit_, sizeof explicit_, "1f1b",
                "\"accumulation_steps\":1,\"dp_shard\":\"none\",\"grad_sync\":\"after_backward\",");
    world a, b;
    load_ok(&a, TWO_SITES, plain, 8);
    load_ok(&b, TWO_SITES, explicit_, 8);
    sim_detail da, db;
    run(&a, &da);
    run(&b, &db);
    assert_int_equal(da.w.nops, db.w.nops);
    for (int i = 0; i < da.w.nops; i++)
        assert_int_equal(da.tm.ops[i].end, db.tm.ops[i].end);
    assert_int_equal(da.tm.iteration_ns, db.tm.iteration_ns);
    assert_true(plan_gpu_memory(&a.p, &a.t, &a.j, 0) == plan_gpu_memory(&b.p, &b.t, &b.j, 0));
    /* the writer leaves unset options out, so today's plans round-trip as before */
    json_t *ja = plan_to_json(&a.p, &a.t), *jb = plan_to_json(&b.p, &b.t);
    assert_null(json_object_get(ja, "accumulation_steps"));
    assert_null(json_object_get(ja, "dp_shard"));
    assert_null(json_object_get(ja, "grad_sync"));
    assert_int_equal(json_integer_value(json_object_get(jb, "accumulation_steps")), 1);
    json_decref(ja);
    json_decref(jb);
    sim_detail_free(&da);
    sim_detail_free(&db);
    unload(&a);
    unload(&b);
}

/* The command line: overrides replay, junk is a usage error (exit 2), a
 * plan field of the wrong kind names the field, planners refuse k > 1. */
static void test_command_line(void **state)
{
    (void)state;
    char tpath[64], ppath[64];
    char plan[2048];
    cross_sites(plan, sizeof plan, "1f1b", "");
    write_temp(TWO_SITES, tpath, sizeof tpath);
    write_temp(plan, ppath, sizeof ppath);
    tu_run r;
    tu_geotrain(&r, "simulate", "-t", tpath, "-m", TINY, "--batch", "8", "-p", ppath,
                "--grad-sync", "overlap", "--dp-shard", "zero2", "--grad-dtype", "fp32", NULL);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    tu_geotrain(&r, "simulate", "-t", tpath, "-m", TINY, "--batch", "8", "-p", ppath,
                "--dp-shard", "zero9", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--dp-shard expects"));
    tu_run_free(&r);
    tu_geotrain(&r, "simulate", "-t", tpath, "-m", TINY, "--batch", "16", "-p", ppath,
                "--accumulation-steps", "2", NULL);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    tu_geotrain(&r, "plan", "-t", tpath, "-m", TINY, "--batch", "16", "-o", "/dev/null",
                "--accumulation-steps", "2", NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "one pipeline flush per optimizer step"));
    tu_run_free(&r);
    unlink(ppath);
    cross_sites(plan, sizeof plan, "1f1b", "\"grad_sync\":\"during\",");
    write_temp(plan, ppath, sizeof ppath);
    tu_geotrain(&r, "plan", "check", "-t", tpath, "-m", TINY, "--batch", "8", ppath, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "grad_sync"));
    assert_non_null(strstr(r.err, "after_backward or overlap"));
    tu_run_free(&r);
    unlink(ppath);
    unlink(tpath);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accumulation_pipeline),
        cmocka_unit_test(test_accumulation_closed_form),
        cmocka_unit_test(test_accumulation_checks),
        cmocka_unit_test(test_memory_two_stage_1f1b),
        cmocka_unit_test(test_memory_tensor_parallel),
        cmocka_unit_test(test_zero_memory_formulas),
        cmocka_unit_test(test_zero_traffic),
        cmocka_unit_test(test_collective_emit_closed_forms),
        cmocka_unit_test(test_fsdp_gathers_per_pass),
        cmocka_unit_test(test_zero_needs_splittable_sync),
        cmocka_unit_test(test_overlap_never_slower),
        cmocka_unit_test(test_grad_dtype_bytes),
        cmocka_unit_test(test_explicit_defaults_identical),
        cmocka_unit_test(test_command_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
