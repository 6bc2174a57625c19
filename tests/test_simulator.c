/* test_simulator.c — the event simulator against independent answers:
 * op-by-op agreement with the estimator on contention-free plans (GPipe,
 * 1F1B, interleaved, world-wide per-pair links); never faster than the
 * estimator when links are shared; the energy identity; byte-identical JSON
 * for the same seed; a valid gzip timeline with one event per op; Atlas's
 * temporal sharing lets the first pipeline's data arrive earlier without
 * slowing the iteration; concurrent syncs of different stages over one shared
 * link take at least their total bytes over its capacity, and so do the
 * activations of pipelines crossing one link; a bandwidth step halfway through a transfer gives
 * the hand-computed finish; BubbleTea never overlaps training ops; the
 * estimate a replay keeps without op times (per stage where that applies)
 * is the op-by-op recurrence's to the last bit. */
#include "testutil.h"

#include <jansson.h>
#include <unistd.h>
#include <zlib.h>

#include "sim/models/cost.h"
#include "sim/engine/eventq.h"
#include "sim/engine/network.h"
#include "sim/engine/prefill.h"
#include "sim/outputs/report.h"
#include "sim/engine/simulate.h"
#include "sim/outputs/timeline.h"
#include "sim/models/plan_check.h"

typedef struct world {
    topology t;
    job j;
    plan p;
} world;

static void load_world(world *w, const char *topo, const char *model, int batch, int seq,
                       const char *planf)
{
    gt_err e;
    assert_int_equal(topo_load(&w->t, topo, NULL, &e), 0);
    model_spec m;
    if (model_resolve(model, &m, &e))
        fail_msg("%s", e.msg);
    job_defaults(&w->j, &m);
    w->j.batch = batch;
    if (seq)
        w->j.seq = seq;
    if (plan_load(&w->p, planf, &w->t, &e))
        fail_msg("%s", e.msg);
}

static void free_world(world *w)
{
    plan_free(&w->p);
    topo_free(&w->t);
}

/* Replays with the estimator's time of every op kept (est_op_times): the
 * tests below compare the two op by op. */
static void run(world *w, const sim_options *o, sim_detail *d)
{
    gt_err e;
    sim_options x = *o;
    x.est_op_times = true;
    if (sim_detail_run(&w->t, &w->j, &w->p, &x, d, &e))
        fail_msg("%s", e.msg);
}

/* Load a world and replay it with the default options. */
static void load_and_run(world *w, const char *topo, const char *model, int batch, int seq,
                         const char *planf, sim_detail *d)
{
    load_world(w, topo, model, batch, seq, planf);
    sim_options o;
    sim_options_default(&o);
    run(w, &o, d);
}

/* The same from a topology and a plan given as JSON text (tiny model). */
static void run_inline(world *w, const char *topo_json, const char *plan_json, int batch,
                       sim_detail *d)
{
    char tpath[64], ppath[64];
    write_temp(topo_json, tpath, sizeof tpath);
    write_temp(plan_json, ppath, sizeof ppath);
    load_and_run(w, tpath, FIXTURES "/tiny-model.json", batch, 1024, ppath, d);
    unlink(tpath);
    unlink(ppath);
}

static void assert_ops_equal(const sim_detail *d)
{
    for (int i = 0; i < d->w.nops; i++) {
        assert_int_equal(d->tm.ops[i].start, d->est.ops[i].start);
        assert_int_equal(d->tm.ops[i].end, d->est.ops[i].end);
    }
    assert_int_equal(d->tm.iteration_ns, d->est.iteration_ns);
}

static void test_agree_one_node(void **state)
{
    (void)state;
    sched_kind kinds[] = {SCHED_GPIPE, SCHED_1F1B};
    for (int k = 0; k < 2; k++) {
        world w;
        load_world(&w, FIXTURES "/one-node.json", FIXTURES "/tiny-model.json", 16, 1024,
                   FIXTURES "/one-node-gpipe.plan.json");
        w.p.schedule = kinds[k];
        sim_options o;
        sim_options_default(&o);
        sim_detail d;
        run(&w, &o, &d);
        assert_ops_equal(&d);
        /* energy identity on the simulated iteration */
        for (int l = 0; l < d.w.nlanes; l++)
            assert_int_equal(d.acc[l].compute_ns + d.acc[l].comm_ns + d.acc[l].idle_ns,
                             d.tm.iteration_ns);
        sim_detail_free(&d);
        free_world(&w);
    }
}

/* p := interleaved over 2 GPUs, 4 listed stages (v = 2), 8 microbatches. */
static void interleaved_plan(plan *p)
{
    plan_free(p);
    assert_int_equal(plan_init(p, 1), 0);
    p->schedule = SCHED_INTERLEAVED;
    assert_int_equal(plan_pipe_alloc(p, 0, 4), 0);
    p->pipes[0].microbatches = 8;
    for (int k = 0; k < 4; k++)
        p->pipes[0].stages[k] = (plan_stage){.ngpus = 1, .gpus = {k % 2}, .first = 2 * k,
                                             .last = 2 * k + 1};
}

/* Interleaved: 2 GPUs, 4 listed stages (v = 2), m a multiple of S. */
static void test_agree_interleaved(void **state)
{
    (void)state;
    world w;
    load_world(&w, FIXTURES "/one-node.json", FIXTURES "/tiny-model.json", 8, 1024,
               FIXTURES "/one-node-gpipe.plan.json");
    interleaved_plan(&w.p);
    sim_options o;
    sim_options_default(&o);
    sim_detail d;
    run(&w, &o, &d);
    assert_ops_equal(&d);
    sim_detail_free(&d);
    free_world(&w);
}

/* The estimate a replay keeps without the op times (the estimator's own
 * evaluation: per stage where that applies) against the op-by-op
 * recurrence (est_op_times), to the last bit: the iteration and its bound
 * figures, WAN bytes, every lane's and group's times and accounts, the
 * totals; the replay itself does not move. */
static void same_estimate(const sim_detail *a, const sim_detail *b, const char *what)
{
    const timing *x = &a->est, *y = &b->est;
    if (x->iteration_ns != y->iteration_ns || x->unbounded_ns != y->unbounded_ns ||
        x->xfer_all_ns != y->xfer_all_ns || x->xfer_subset_ns != y->xfer_subset_ns ||
        memcmp(&x->wan_bytes, &y->wan_bytes, sizeof x->wan_bytes))
        fail_msg("%s: estimate %lld vs %lld ns", what, (long long)x->iteration_ns,
                 (long long)y->iteration_ns);
    assert_int_equal(a->w.nlanes, b->w.nlanes);
    assert_int_equal(a->w.ngroups, b->w.ngroups);
    assert_memory_equal(x->lanes, y->lanes, sizeof *x->lanes * (size_t)a->w.nlanes);
    assert_memory_equal(x->group_start, y->group_start, sizeof(int64_t) * (size_t)a->w.ngroups);
    assert_memory_equal(x->group_end, y->group_end, sizeof(int64_t) * (size_t)a->w.ngroups);
    assert_memory_equal(a->est_acc, b->est_acc, sizeof *a->est_acc * (size_t)a->w.nlanes);
    assert_memory_equal(&a->est_tot, &b->est_tot, sizeof a->est_tot);
    assert_memory_equal(&a->tot, &b->tot, sizeof a->tot);
    assert_memory_equal(a->tm.ops, b->tm.ops, sizeof *a->tm.ops * (size_t)a->w.nops);
    assert_int_equal(a->tm.iteration_ns, b->tm.iteration_ns);
    assert_memory_equal(&a->res.est_energy_j, &b->res.est_energy_j, sizeof(double));
    assert_memory_equal(&a->res.energy_j, &b->res.energy_j, sizeof(double));
    assert_null(a->est.ops);
    assert_non_null(b->est.ops);
}

static void test_estimate_without_op_times(void **state)
{
    (void)state;
    const char *cases[][3] = {
        {"topologies/yuan2022/case1.json", "topologies/plans/case1-rank-order.plan.json", "1024"},
        {"topologies/yuan2022/case5.json", "topologies/plans/case5-rank-order.plan.json", "1024"},
        {"topologies/real/aws-world-10.json", "topologies/plans/aws-world-10-rank-order.plan.json",
         "1000"},
        {"topologies/pools/world-hetero.json",
         "topologies/plans/world-hetero-rank-order.plan.json", "1022"},
        {FIXTURES "/one-node.json", FIXTURES "/one-node-gpipe.plan.json", "16"}};
    int per_stage = 0, op_path = 0;
    for (int c = 0; c < 6; c++) {
        world w;
        int k = c < 5 ? c : 4;
        load_world(&w, cases[k][0], k < 4 ? "gpt3-xl" : FIXTURES "/tiny-model.json",
                   atoi(cases[k][2]), k < 4 ? 2048 : 1024, cases[k][1]);
        if (c == 5) { /* interleaved: the estimator's op path */
            interleaved_plan(&w.p);
            w.j.batch = 8;
        }
        sim_options o;
        sim_options_default(&o);
        o.charge_unselected = c % 2;
        o.iterations = c == 1 ? 2 : 1;
        o.jitter_cv = c == 1 ? 0.1 : 0;
        sim_detail a, b;
        gt_err e;
        if (sim_detail_run(&w.t, &w.j, &w.p, &o, &a, &e))
            fail_msg("%s", e.msg);
        o.est_op_times = true;
        if (sim_detail_run(&w.t, &w.j, &w.p, &o, &b, &e))
            fail_msg("%s", e.msg);
        same_estimate(&a, &b, cases[k][1]);
        per_stage += a.est_per_stage;
        op_path += !a.est_per_stage;
        assert_int_equal(b.est_per_stage, 0);
        sim_detail_free(&a);
        sim_detail_free(&b);
        free_world(&w);
    }
    assert_int_equal(per_stage, 5); /* both ways were taken: all but the interleaved plan */
    assert_int_equal(op_path, 1);
}

/* Yuan et al. case 5 uses per-pair links (tc/netem): no flow shares a
 * capacity, so the two agree on every op. */
static void test_agree_worldwide(void **state)
{
    (void)state;
    world w;
    sim_detail d;
    load_world(&w, "topologies/yuan2022/case5.json", "gpt3-xl", 1024, 2048,
               "topologies/plans/case5-rank-order.plan.json");
    /* The plan is contention-free only while at most five 2 Gbps stage
     * transfers overlap on a node's 10 Gbps NIC, which holds for the
     * constant-efficiency op durations (the kernel model's shorter forward
     * ops make six overlap): the property under test is estimator ==
     * simulator, so use the documented fallback compute path. */
    for (int k = 0; k < w.t.ntypes; k++)
        w.t.types[k].gemm_eff = 0;
    sim_options o;
    sim_options_default(&o);
    run(&w, &o, &d);
    assert_ops_equal(&d);
    sim_detail_free(&d);
    free_world(&w);
}

/* Shared WAN links: contention can only slow ops down. */
static void test_shared_never_faster(void **state)
{
    (void)state;
    world w;
    sim_detail d;
    load_and_run(&w, "topologies/real/aws-world-10.json", "gpt3-xl", 1000, 2048,
                 "topologies/plans/aws-world-10-rank-order.plan.json", &d);
    assert_true(d.tm.iteration_ns >= d.est.iteration_ns);
    for (int i = 0; i < d.w.nops; i++)
        assert_true(d.tm.ops[i].end >= d.est.ops[i].end);
    sim_detail_free(&d);
    free_world(&w);
}

/* Two pipelines of two stages, one in each of two sites behind one shared
 * 1 Gbps link: the two stages' ring syncs run at the same time over that
 * link, so no iteration can be shorter than (G0 + G1) / 1 Gbps. The
 * estimator must see that (each group alone would take only G_k / C) and
 * still stay a lower bound of the replay. */
static const char *SHARED_SYNC_TOPO =
    "{\"name\":\"shared-sync\",\"sites\":["
    "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.01}},"
    "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.01}}],"
    "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":1,\"latency_ms\":1}]}";
static const char *SHARED_SYNC_PLAN =
    "{\"schedule\":\"1f1b\",\"dp_sync\":\"ring\",\"microbatch_size\":1,\"pipelines\":["
    "{\"microbatches\":4,\"stages\":[{\"gpus\":[\"a/0/0\"],\"layers\":[0,3]},"
    "{\"gpus\":[\"a/0/1\"],\"layers\":[4,7]}]},"
    "{\"microbatches\":4,\"stages\":[{\"gpus\":[\"b/0/0\"],\"layers\":[0,3]},"
    "{\"gpus\":[\"b/0/1\"],\"layers\":[4,7]}]}]}";

static void test_concurrent_syncs_share_link(void **state)
{
    (void)state;
    world w;
    sim_detail d;
    run_inline(&w, SHARED_SYNC_TOPO, SHARED_SYNC_PLAN, 8, &d);
    double volume_s = (cost_grad_bytes(&w.j.model, 0, 3) + cost_grad_bytes(&w.j.model, 4, 7)) / 125e6;
    assert_true(d.est.iteration_ns * 1e-9 >= volume_s);
    assert_true(d.tm.iteration_ns >= d.est.iteration_ns);
    assert_true(rel_diff((double)d.tm.iteration_ns, (double)d.est.iteration_ns) < 0.05);
    sim_detail_free(&d);
    free_world(&w);
}

/* Two GPipe pipelines whose two stages sit on either side of the same
 * 1 Gbps link: every activation (and gradient back) crosses it, so the
 * iteration takes at least 2 x m x activation bytes / 1 Gbps. The estimator
 * gives each transfer the whole link, so only the transfer-load bound makes
 * it see this; it must still stay below the replay. */
static const char *CROSS_PLAN =
    "{\"schedule\":\"gpipe\",\"dp_sync\":\"ring\",\"microbatch_size\":1,\"pipelines\":["
    "{\"microbatches\":8,\"stages\":[{\"gpus\":[\"a/0/0\"],\"layers\":[0,3]},"
    "{\"gpus\":[\"b/0/0\"],\"layers\":[4,7]}]},"
    "{\"microbatches\":8,\"stages\":[{\"gpus\":[\"a/0/1\"],\"layers\":[0,3]},"
    "{\"gpus\":[\"b/0/1\"],\"layers\":[4,7]}]}]}";

static void test_transfers_share_link(void **state)
{
    (void)state;
    world w;
    sim_detail d;
    run_inline(&w, SHARED_SYNC_TOPO, CROSS_PLAN, 16, &d);
    double volume_s = 2 * 8 * cost_activation_bytes(&w.j, 1) / 125e6;
    assert_true(d.est.iteration_ns * 1e-9 >= volume_s);
    assert_true(d.tm.iteration_ns >= d.est.iteration_ns);
    /* GPipe: every backward transfer follows the forward phase on the same
     * link pair, so the replay needs both volumes; the bound sees one */
    assert_true(d.tm.iteration_ns * 1e-9 >= 2 * volume_s);
    sim_detail_free(&d);
    free_world(&w);
}

static char *json_of(world *w, const sim_options *o)
{
    sim_detail d;
    run(w, o, &d);
    json_t *j = report_json(&w->t, &w->j, &w->p, &d);
    char *s = json_dumps(j, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(j);
    sim_detail_free(&d);
    return s;
}

static void test_deterministic(void **state)
{
    (void)state;
    world w;
    load_world(&w, FIXTURES "/two-dc.json", FIXTURES "/tiny-model.json", 32, 1024,
               FIXTURES "/two-dc-cross.plan.json");
    sim_options o;
    sim_options_default(&o);
    o.jitter_cv = 0.1;
    o.straggler_prob = 0.2;
    o.iterations = 3;
    o.seed = 7;
    char *a = json_of(&w, &o), *b = json_of(&w, &o);
    assert_string_equal(a, b);
    o.seed = 8;
    char *c = json_of(&w, &o);
    assert_true(strcmp(a, c) != 0); /* jitter draws depend on the seed */
    free(a);
    free(b);
    free(c);
    free_world(&w);
}

static void test_timeline(void **state)
{
    (void)state;
    world w;
    load_world(&w, FIXTURES "/two-dc.json", FIXTURES "/tiny-model.json", 32, 1024,
               FIXTURES "/two-dc-cross.plan.json");
    sim_options o;
    sim_options_default(&o);
    sim_detail d;
    run(&w, &o, &d);
    char path[] = "/tmp/gt-timeline-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gt_err e;
    assert_int_equal(timeline_write(path, &w.t, &d, NULL, &e), 0);
    size_t n = 0;
    char *buf = tu_read_gz(path, &n);
    assert_non_null(buf);
    json_error_t je;
    json_t *root = json_loadb(buf, n, 0, &je);
    assert_non_null(root);
    json_t *ev = json_object_get(root, "traceEvents");
    size_t i;
    json_t *x;
    int ops = 0, wan = 0;
    json_array_foreach(ev, i, x) {
        const char *cat = json_string_value(json_object_get(x, "cat"));
        if (cat && (!strcmp(cat, "forward") || !strcmp(cat, "backward")))
            ops++;
        if (cat && !strcmp(cat, "wan"))
            wan++;
    }
    assert_int_equal(ops, d.w.nops);
    assert_true(wan > 0);
    json_decref(root);
    free(buf);
    unlink(path);
    sim_detail_free(&d);
    free_world(&w);
}

/* Two pipelines whose stage-to-stage activations share one WAN link. */
static void test_temporal_two_pipelines(void **state)
{
    (void)state;
    int64_t first_arrival[2] = {0, 0}, iter[2];
    for (int pol = 0; pol < 2; pol++) {
        world w;
        load_world(&w, FIXTURES "/two-dc.json", FIXTURES "/tiny-model.json", 16, 1024,
                   FIXTURES "/two-dc-cross.plan.json");
        w.p.npipes = 2; /* keep pipelines 0 and 1 (their stages stay owned) */
        free(w.p.pipes[2].stages);
        free(w.p.pipes[3].stages);
        sim_options o;
        sim_options_default(&o);
        o.wan_policy = pol == 0 ? WAN_FAIR : WAN_TEMPORAL;
        o.tcp_connections = 64;
        sim_detail d;
        run(&w, &o, &d);
        /* arrival of pipeline 0's first activation at stage 1 */
        for (int id = 0; id < d.w.nops; id++)
            if (d.w.ops[id].pipe == 0 && d.w.ops[id].stage == 1 && d.w.ops[id].mb == 0 &&
                d.w.ops[id].kind == OP_FWD)
                first_arrival[pol] = d.tm.ops[id].arrival;
        iter[pol] = d.tm.iteration_ns;
        sim_detail_free(&d);
        free_world(&w);
    }
    assert_true(first_arrival[1] < first_arrival[0]);
    assert_true(iter[1] <= iter[0]);
}

/* Bandwidth 1 Gbps, halved at t = 0.5 s; 1e8 bytes after 10 ms latency:
 * 0.49 s x 125 MB/s = 61.25 MB, then 38.75 MB at 62.5 MB/s = 0.62 s: 1.12 s. */
static void test_bandwidth_step(void **state)
{
    (void)state;
    const char *topo =
        "{\"name\":\"s\",\"sites\":[{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\","
        "\"count\":1}],\"lan\":{\"gbps\":100}},{\"id\":\"b\",\"nodes\":[{\"gpu\":"
        "\"a100_sxm_80gb\",\"count\":1}],\"lan\":{\"gbps\":100}}],\"links\":[{\"a\":\"a\","
        "\"b\":\"b\",\"gbps\":1,\"latency_ms\":10}],\"tcp\":{\"window_mb\":1000}}";
    topology t;
    gt_err e;
    assert_int_equal(topo_parse(&t, "s", topo, strlen(topo), NULL, &e), 0);
    network net;
    eventq q;
    assert_int_equal(net_init(&net, &t, 4, -1, 0, &e), 0);
    assert_int_equal(eventq_init(&q), 0);
    int f = net_flow_new(&net, 0, 1, 1e8, 0, 0);
    assert_int_equal(eventq_push(&q, cost_ns(0.010), 2, f, 0), 0);
    assert_int_equal(eventq_push(&q, cost_ns(0.5), 4, 0, 0), 0);
    event ev;
    int64_t end = -1;
    while (eventq_pop(&q, &ev) > 0) {
        if (ev.kind == 2)
            net_flow_start(&net, f, ev.time, &q, 3);
        else if (ev.kind == 4)
            net_set_capacity(&net, net_wan_resource(&net, 0, 1), 0.5 * 125e6, ev.time, &q, 3);
        else if (net_flow_done_event(&net, ev.id, ev.version, ev.time, &q, 3) == 1)
            end = ev.time;
    }
    assert_true(rel_diff(end * 1e-9, 1.12) < 1e-9);
    eventq_free(&q);
    net_free(&net);
    topo_free(&t);
}

static void test_bubbletea(void **state)
{
    (void)state;
    world w;
    load_world(&w, FIXTURES "/one-node.json", FIXTURES "/tiny-model.json", 16, 1024,
               FIXTURES "/one-node-gpipe.plan.json");
    sim_options o;
    sim_options_default(&o);
    sim_detail d;
    run(&w, &o, &d);
    int64_t T = d.tm.iteration_ns;
    prefill_opts po = {.guard_s = 1e-4, .chunk_tokens = 256, .seed = 3};
    gt_err e;
    assert_int_equal(model_resolve("llama3-8b", &po.model, &e), 0);
    prefill_result pf;
    if (prefill_fill(&w.t, &w.j, &w.p, &d, &po, &pf, &e))
        fail_msg("%s", e.msg);
    assert_true(pf.nplaced > 0);
    double sum = 0;
    for (int i = 0; i < pf.nplaced; i++) {
        const prefill_piece *pc = &pf.placed[i];
        assert_true(pc->start >= 0 && pc->end <= T);
        /* never overlaps a training op of its GPU */
        for (int id = d.w.lanes[pc->lane].first_op; id >= 0; id = d.w.ops[id].next_on_lane)
            assert_true(pc->end <= d.tm.ops[id].start || pc->start >= d.tm.ops[id].end);
        const lane_time *lt = &d.tm.lanes[pc->lane];
        assert_true(pc->end <= lt->opt_start || pc->start >= lt->opt_end);
        sum += (pc->end - pc->start) * 1e-9;
    }
    assert_true(rel_diff(sum, pf.filled_s) < 1e-9);
    /* filled time never exceeds the idle + comm time it fills */
    double spare = 0;
    for (int l = 0; l < d.w.nlanes; l++)
        spare += (d.acc[l].idle_ns + d.acc[l].comm_ns) * 1e-9;
    assert_true(sum <= spare);
    assert_true(pf.util_after > pf.util_before);
    assert_int_equal(d.tm.iteration_ns, T); /* training untouched */
    prefill_free(&pf);
    sim_detail_free(&d);
    free_world(&w);
}

/* A GPU takes prefill only when its free memory holds the inference
 * weights and a KV cache: Llama-2-70B (~138 GB of bf16 weights) fits no
 * 80 GB A100, so nothing is placed; Llama-3-8B fits next to the tiny model. */
static void test_bubbletea_memory(void **state)
{
    (void)state;
    world w;
    load_world(&w, FIXTURES "/one-node.json", FIXTURES "/tiny-model.json", 16, 1024,
               FIXTURES "/one-node-gpipe.plan.json");
    sim_options o;
    sim_options_default(&o);
    sim_detail d;
    run(&w, &o, &d);
    const char *models[] = {"llama2-70b", "llama3-8b"};
    for (int k = 0; k < 2; k++) {
        prefill_opts po = {.guard_s = 1e-4, .chunk_tokens = 512, .seed = 1};
        gt_err e;
        assert_int_equal(model_resolve(models[k], &po.model, &e), 0);
        prefill_result pf;
        if (prefill_fill(&w.t, &w.j, &w.p, &d, &po, &pf, &e))
            fail_msg("%s", e.msg);
        double weights = 2.0 * cost_model_params(&po.model);
        for (int l = 0; l < d.w.nlanes; l++) {
            double free_b = topo_gpu_type(&w.t, d.w.lanes[l].gpu)->mem_bytes -
                            plan_gpu_memory(&w.p, &w.t, &w.j, d.w.lanes[l].gpu);
            for (int i = 0; i < pf.nplaced; i++)
                if (pf.placed[i].lane == l)
                    assert_true(free_b >= weights);
        }
        if (k == 0)
            assert_int_equal(pf.nplaced, 0);
        else
            assert_int_equal(pf.eligible_gpus, 4);
        prefill_free(&pf);
    }
    sim_detail_free(&d);
    free_world(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agree_one_node),    cmocka_unit_test(test_agree_interleaved),
        cmocka_unit_test(test_agree_worldwide),   cmocka_unit_test(test_shared_never_faster),
        cmocka_unit_test(test_deterministic),     cmocka_unit_test(test_timeline),
        cmocka_unit_test(test_temporal_two_pipelines), cmocka_unit_test(test_bandwidth_step),
        cmocka_unit_test(test_bubbletea),        cmocka_unit_test(test_concurrent_syncs_share_link),
        cmocka_unit_test(test_transfers_share_link),
        cmocka_unit_test(test_bubbletea_memory),
        cmocka_unit_test(test_estimate_without_op_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
