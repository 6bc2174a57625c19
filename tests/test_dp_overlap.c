/* test_dp_overlap.c — the compute slowdown beside sharded data-parallel
 * collectives (sim/models/dp_overlap.h), against hand-computed answers:
 *   a pass of d ns beside c ns of ring collectives takes d + s min(c, d):
 *     FSDP / ZeRO-3 forward beside the weights' all-gather, backward beside
 *     the all-gather and the gradients' reduce-scatter; ZeRO-2 backward only;
 *     no sharding, ZeRO-1 and a single replica unchanged;
 *   the ring's time from the topology: inside a node the GPU link, across
 *     nodes the NIC and the LAN latency per step (slowest hop sets a step);
 *   both regimes are exercised (c < d and c > d: the charge is capped at s d);
 *   the estimator and the simulator still replay the same op times;
 *   an allocation that fails while the ring is priced is an error the
 *   caller reports, never a pass left uncharged: this binary is linked with
 *   the linker's --wrap of malloc, calloc and realloc (Makefile), and every
 *   allocation in turn is made to fail. */
#include "testutil.h"

#include "alloc_wrap.h"

#include <math.h>

#include "sim/engine/simulate.h"
#include "sim/estimator/estimator.h"
#include "sim/models/cost.h"
#include "sim/models/dp_overlap.h"
#include "sim/models/workload.h"

#define TINY FIXTURES "/tiny-model.json"

/* > 0: the allocation that many calls from now fails (1 = the next one);
 * then disarmed. fired: that failure happened. */
static long fail_in;
static int fired;

static int fail_now(void)
{
    if (fail_in <= 0 || --fail_in > 0)
        return 0;
    fired = 1;
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

/* Four A100s in one node (NVLink between every pair). */
static const char *ONE_NODE =
    "{\"name\":\"one-node\",\"sites\":[{\"id\":\"s1\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\","
    "\"count\":4,\"nic_gbps\":100}],\"lan\":{\"gbps\":100,\"latency_ms\":0.01}}],\"links\":[]}";
/* Two nodes of one A100 behind a 100 Gb/s NIC: the ring crosses the LAN. */
static const char *TWO_NODES =
    "{\"name\":\"two-nodes\",\"sites\":[{\"id\":\"s1\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\","
    "\"count\":1,\"nic_gbps\":100,\"repeat\":2}],\"lan\":{\"gbps\":100,\"latency_ms\":0.02}}],"
    "\"links\":[]}";

typedef struct world {
    topology t;
    job j;
    plan p;
} world;

/* npipes pipelines of one stage holding all 8 layers, on GPUs gpu[0..). */
static void load(world *w, const char *topo, const char *shard, int npipes, int mb,
                 const char *const *gpu)
{
    gt_err e;
    char tpath[64], plan[1024];
    write_temp(topo, tpath, sizeof tpath);
    if (topo_load(&w->t, tpath, NULL, &e))
        fail_msg("%s", e.msg);
    unlink(tpath);
    model_spec m;
    if (model_resolve(TINY, &m, &e))
        fail_msg("%s", e.msg);
    job_defaults(&w->j, &m);
    w->j.batch = npipes * mb;
    int n = snprintf(plan, sizeof plan,
                     "{\"schedule\":\"1f1b\",\"dp_sync\":\"ring\",\"microbatch_size\":%d,"
                     "\"dp_shard\":\"%s\",\"pipelines\":[", mb, shard);
    for (int q = 0; q < npipes; q++)
        n += snprintf(plan + n, sizeof plan - (size_t)n,
                      "%s{\"microbatches\":1,\"stages\":[{\"gpus\":[\"%s\"],\"layers\":[0,7]}]}",
                      q ? "," : "", gpu[q]);
    snprintf(plan + n, sizeof plan - (size_t)n, "]}");
    if (plan_parse(&w->p, "plan", plan, strlen(plan), &w->t, &e))
        fail_msg("%s", e.msg);
}

static void unload(world *w)
{
    plan_free(&w->p);
    topo_free(&w->t);
}

/* Stage 0 of pipeline 0: the op times the workload gives and the kernel
 * model's own (no slowdown). */
static void times(const world *w, int64_t got[2], int64_t base[2])
{
    assert_int_equal(workload_stage_base_ns(&w->t, &w->j, &w->p, 0, 0, &got[0], &got[1]), 0);
    const gpu_type *g = topo_gpu_type(&w->t, w->p.pipes[0].stages[0].gpus[0]);
    int b = w->p.microbatch_size;
    base[0] = cost_stage_fwd_ns(&w->j, g, 1, b, 0, 7, 1.0);
    base[1] = cost_stage_bwd_ns(&w->j, g, 1, b, 0, 7, 1.0);
}

/* d + s min(c, d), c in seconds; returns 1 when c < d (not capped). */
static int64_t want(int64_t d, double c_s, int *uncapped)
{
    double c = c_s * 1e9;
    if (uncapped)
        *uncapped = c < (double)d;
    return d + llround(DP_OVERLAP_SLOWDOWN * fmin(c, (double)d));
}

static const char *const IN_NODE[] = {"s1/0/0", "s1/0/1", "s1/0/2", "s1/0/3"};

/* One node, D members: a ring phase of B bytes is (D-1) steps of B/D over
 * the GPU link (no latency inside a node). */
static void test_one_node_closed_form(void **state)
{
    (void)state;
    int seen_uncapped = 0;
    const char *shards[] = {"fsdp", "zero3", "zero2"};
    int Ds[] = {2, 4}, mbs[] = {1, 64};
    for (int s = 0; s < 3; s++)
        for (int x = 0; x < 2; x++)
            for (int y = 0; y < 2; y++) {
                world w;
                int D = Ds[x];
                load(&w, ONE_NODE, shards[s], D, mbs[y], IN_NODE);
                int64_t got[2], base[2];
                times(&w, got, base);
                double bw = w.t.types[w.t.gpus[0].type].link_bw;
                double P = cost_stage_params(&w.j.model, 0, 7);
                double W = 2 * P, G = w.j.grad_bytes * P;
                double phase_w = (D - 1) * (W / D / bw), phase_g = (D - 1) * (G / D / bw);
                int gathers = s < 2, u;
                double cf = gathers ? phase_w : 0, cb = cf + phase_g;
                assert_int_equal(got[0], want(base[0], cf, NULL));
                assert_int_equal(got[1], want(base[1], cb, &u));
                seen_uncapped |= u;
                if (!gathers)
                    assert_int_equal(got[0], base[0]); /* ZeRO-2 keeps whole weights */
                assert_true(got[1] > base[1]);
                unload(&w);
            }
    assert_true(seen_uncapped);
}

/* Across two nodes a ring step pays the LAN latency and moves B/2 at the NIC
 * rate (the slower of NIC and LAN): c = 1 x (lat + B/2/rate). On this slow
 * NIC (against NVLink) one sequence computes for less than its traffic (the charge is capped
 * at s d), a microbatch of 64 for more. */
static void test_two_nodes_latency_and_nic(void **state)
{
    (void)state;
    static const char *const gpus[] = {"s1/0/0", "s1/1/0"};
    int mbs[] = {1, 64}, capped[2][2];
    for (int y = 0; y < 2; y++) {
        world w;
        load(&w, TWO_NODES, "fsdp", 2, mbs[y], gpus);
        int64_t got[2], base[2];
        times(&w, got, base);
        double rate = 100e9 / 8, lat = 0.02e-3; /* 100 Gb/s, 0.02 ms */
        double P = cost_stage_params(&w.j.model, 0, 7);
        double cw = lat + 2 * P / 2 / rate, cg = lat + w.j.grad_bytes * P / 2 / rate;
        int u0, u1;
        assert_int_equal(got[0], want(base[0], cw, &u0));
        assert_int_equal(got[1], want(base[1], cw + cg, &u1));
        capped[y][0] = !u0;
        capped[y][1] = !u1;
        unload(&w);
    }
    assert_true(capped[0][0] && capped[0][1]);   /* capped: d x (1 + s) */
    assert_true(!capped[1][0] && !capped[1][1]); /* overlapped part only */
}

/* What is not charged: no sharding, ZeRO-1 (one sync per step) and a single
 * replica of a sharded plan. */
static void test_not_charged(void **state)
{
    (void)state;
    const char *shards[] = {"none", "zero1", "fsdp"};
    int npipes[] = {2, 2, 1};
    for (int c = 0; c < 3; c++) {
        world w;
        load(&w, ONE_NODE, shards[c], npipes[c], 4, IN_NODE);
        int64_t got[2], base[2];
        times(&w, got, base);
        assert_int_equal(got[0], base[0]);
        assert_int_equal(got[1], base[1]);
        unload(&w);
    }
}

/* The simulator's ops carry the slowed times, and the estimator replays the
 * same op list: equal op by op (one replica per GPU pair, the sync after the
 * backward meets no pipeline transfer). */
static void test_estimator_equals_simulator(void **state)
{
    (void)state;
    world w;
    load(&w, ONE_NODE, "fsdp", 2, 4, IN_NODE);
    int64_t got[2], base[2];
    times(&w, got, base);
    sim_options o;
    sim_options_default(&o);
    o.est_op_times = true; /* the estimate op by op, to compare with the replay */
    sim_detail d;
    gt_err e;
    if (sim_detail_run(&w.t, &w.j, &w.p, &o, &d, &e))
        fail_msg("%s", e.msg);
    for (int i = 0; i < d.w.nops; i++) {
        assert_int_equal(d.w.ops[i].dur_ns, got[d.w.ops[i].kind]);
        assert_int_equal(d.tm.ops[i].start, d.est.ops[i].start);
        assert_int_equal(d.tm.ops[i].end, d.est.ops[i].end);
    }
    assert_int_equal(d.tm.iteration_ns, d.est.iteration_ns);
    sim_detail_free(&d);
    unload(&w);
}

/* The ring's buffer cannot be allocated: dp_overlap_traffic_s and the op
 * times say so (-1, outputs untouched) instead of charging nothing. */
static void test_ring_out_of_memory_is_an_error(void **state)
{
    (void)state;
    world w;
    load(&w, ONE_NODE, "fsdp", 4, 4, IN_NODE);
    double c[2] = {-7, -7}, ok[2];
    assert_int_equal(dp_overlap_traffic_s(&w.t, &w.j, &w.p, 0, 0, ok), 0);
    assert_true(ok[0] > 0 && ok[1] > ok[0]); /* forward: gather; backward: + scatter */
    fired = 0;
    fail_in = 1;
    assert_int_equal(dp_overlap_traffic_s(&w.t, &w.j, &w.p, 0, 0, c), -1);
    assert_true(fired);
    assert_true(c[0] == -7 && c[1] == -7);
    int64_t f = -7, b = -7;
    fired = 0;
    fail_in = 1;
    assert_int_equal(workload_stage_base_ns(&w.t, &w.j, &w.p, 0, 0, &f, &b), -1);
    assert_true(fired);
    fail_in = 0;
    unload(&w);
}

/* Every allocation of a workload build and of an estimate made to fail in
 * turn (until one runs without reaching the failure): each either fails
 * with a message or gives exactly the result of the run without failures.
 * The ring's buffer is among them (the old fallback gave the op times
 * without the slowdown there, i.e. a different result and no error). */
static void test_every_failed_allocation_is_reported(void **state)
{
    (void)state;
    world w;
    load(&w, ONE_NODE, "fsdp", 4, 4, IN_NODE);
    gt_err e;
    workload ref;
    if (workload_build(&ref, &w.t, &w.j, &w.p, &e))
        fail_msg("%s", e.msg);
    est_summary sref;
    if (estimate_plan(&w.t, &w.j, &w.p, &sref, &e))
        fail_msg("%s", e.msg);
    int failed_build = 0, failed_est = 0, ring_named = 0;
    for (long n = 1;; n++) {
        workload x;
        fired = 0;
        e.msg[0] = 0;
        fail_in = n;
        int rc = workload_build(&x, &w.t, &w.j, &w.p, &e);
        fail_in = 0;
        if (rc == 0) {
            assert_int_equal(x.nops, ref.nops);
            for (int i = 0; i < x.nops; i++)
                assert_int_equal(x.ops[i].dur_ns, ref.ops[i].dur_ns);
            workload_free(&x);
        } else {
            assert_true(fired && e.msg[0]);
            failed_build++;
            ring_named |= strstr(e.msg, "ring") != NULL;
        }
        if (!fired)
            break;
    }
    for (long n = 1;; n++) {
        est_workspace *ws = est_workspace_new();
        assert_non_null(ws);
        est_summary s;
        fired = 0;
        e.msg[0] = 0;
        fail_in = n;
        int rc = estimate_plan_ws(ws, &w.t, &w.j, &w.p, &s, &e);
        fail_in = 0;
        if (rc == 0) {
            assert_true(s.iteration_s == sref.iteration_s);
        } else {
            assert_true(fired && e.msg[0]);
            failed_est++;
        }
        est_workspace_free(ws);
        if (!fired)
            break;
    }
    assert_true(failed_build > 0 && failed_est > 0);
    assert_true(ring_named);
    workload_free(&ref);
    unload(&w);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_node_closed_form),
        cmocka_unit_test(test_two_nodes_latency_and_nic),
        cmocka_unit_test(test_not_charged),
        cmocka_unit_test(test_estimator_equals_simulator),
        cmocka_unit_test(test_ring_out_of_memory_is_an_error),
        cmocka_unit_test(test_every_failed_allocation_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
