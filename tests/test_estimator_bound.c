/* test_estimator_bound.c — the estimate stays a lower bound of the replay
 * with the transfer load bound's subsets of streams (load_bound.h): on
 * random plans whose transfers contend for NICs and shared WAN links
 * (est_plans.h), the estimate is never above the simulated iteration,
 * including the plans where the subset bound is what sets it. */
#include "est_plans.h"

#include <math.h>

#include "sim/engine/simulator.h"
#include "sim/estimator/estimator.h"
#include "sim/estimator/load_bound.h"
#include "sim/models/plan_check.h"
#include "sim/base/timecap.h"
#include "sim/models/collective.h"
#include "sim/models/cost.h"
#include "sim/models/path.h"
#include "sim/models/workload.h"

static void load_topo(topology *t) { est_parse_topo(t, "bound", TOPO); }

static void test_estimate_below_replay(void **state)
{
    (void)state;
    topology t;
    load_topo(&t);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    sim_options o;
    sim_options_default(&o);
    est_workspace *ws = est_workspace_new(), *every = est_workspace_new();
    est_workspace_set_every_subset(every, 1);
    int checked = 0, decisive = 0, skipped = 0;
    for (int n = 0; n < 3000 && checked < 1500; n++) {
        job j;
        tiny_job(&j, pick(r, 8, 24));
        plan p;
        random_plan(r, &t, &j, &p);
        est_summary s;
        sim_result sr;
        gt_err e;
        if (estimate_plan_ws(ws, &t, &j, &p, &s, &e) == 0) {
            if (simulate_plan(&t, &j, &p, &o, &sr, &e))
                fail_msg("plan %d: %s", n, e.msg);
            /* to the nanosecond: both are whole ns times 1e-9, and the load
             * bounds round their terms so that no replay is below them
             * (load_floor_ns) */
            if (s.iteration_s > sr.iteration_s)
                fail_msg("plan %d: estimate %.9f s above the replay %.9f s", n, s.iteration_s,
                         sr.iteration_s);
            checked++;
            const timing *tm = est_workspace_timing(ws);
            decisive += tm->xfer_subset_ns == tm->iteration_ns &&
                        tm->xfer_subset_ns > tm->xfer_all_ns &&
                        tm->xfer_subset_ns > tm->unbounded_ns;
            /* the resources skipped by their subsets' ceiling change nothing:
             * trying all of them gives the same estimate, to the ns */
            est_summary sa;
            assert_int_equal(estimate_plan_ws(every, &t, &j, &p, &sa, &e), 0);
            const timing *ta = est_workspace_timing(every);
            if (ta->iteration_ns != tm->iteration_ns)
                fail_msg("plan %d: estimate %lld ns, %lld ns with every subset tried", n,
                         (long long)tm->iteration_ns, (long long)ta->iteration_ns);
            assert_true(ta->xfer_subset_ns >= tm->xfer_subset_ns);
            skipped += ta->xfer_subset_ns > tm->xfer_subset_ns;
        }
        plan_free(&p);
    }
    assert_true(checked >= 1500);
    assert_true(decisive >= 20); /* the subsets were tested where they matter */
    assert_true(skipped >= 20);  /* and skipped where they do not */
    fprintf(stderr, "%d plans replayed, estimate <= replay on all; the subset bound sets the "
                    "estimate on %d; skipping resources changed the best subset (not the "
                    "estimate) on %d\n", checked, decisive, skipped);
    est_workspace_free(ws);
    est_workspace_free(every);
    gsl_rng_free(r);
    topo_free(&t);
}

/* The load bounds index resources through an array (every key of a small
 * topology, per-pair WAN keys too: lb_array_keys) or through a hash table
 * (the per-pair keys of a large one). On case 5's per-pair WAN links, both
 * bounds of the op path give the same group ends and estimate either way,
 * on random plans. */
static void test_array_keys_equal_hash(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    if (topo_load(&t, "topologies/yuan2022/case5.json", NULL, &e))
        fail_msg("%s", e.msg);
    assert_true(path_any_per_pair(&t));
    assert_true(lb_array_keys(&t) > path_dense_count(&t));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    int compared = 0, raised = 0;
    for (int n = 0; n < 400; n++) {
        job j;
        tiny_job(&j, pick(r, 8, 24));
        plan p;
        random_plan(r, &t, &j, &p);
        if (plan_check(&p, &t, &j, &e)) {
            plan_free(&p);
            continue;
        }
        workload w;
        assert_int_equal(workload_build(&w, &t, &j, &p, &e), 0);
        timing ta, th;
        assert_int_equal(timing_alloc(&ta, &w, &e), 0);
        assert_int_equal(timing_alloc(&th, &w, &e), 0);
        lb_work la = {0}, lh = {.array_keys = path_dense_count(&t)};
        assert_int_equal(estimate_run_ws(&t, &w, p.sync, &ta, &la, &e), 0);
        assert_int_equal(estimate_run_ws(&t, &w, p.sync, &th, &lh, &e), 0);
        assert_int_equal(ta.iteration_ns, th.iteration_ns);
        assert_int_equal(ta.xfer_all_ns, th.xfer_all_ns);
        assert_int_equal(ta.xfer_subset_ns, th.xfer_subset_ns);
        for (int g = 0; g < w.ngroups; g++)
            assert_int_equal(ta.group_end[g], th.group_end[g]);
        compared++;
        raised += ta.iteration_ns > ta.unbounded_ns;
        lb_work_free(&la);
        lb_work_free(&lh);
        timing_free(&ta);
        timing_free(&th);
        workload_free(&w);
        plan_free(&p);
    }
    assert_true(compared > 200);
    assert_true(raised > 10); /* the bounds were active */
    gsl_rng_free(r);
    topo_free(&t);
}

/* load_floor_ns by hand: the latency rounded to the nearest ns (half away
 * from zero, as the replay rounds a flow's), plus bytes / capacity less
 * half a ns per flow, rounded up, never below zero. */
static void test_load_floor_by_hand(void **state)
{
    (void)state;
    /* 1,000 bytes at 10 GB/s = exactly 100 ns */
    assert_int_equal(load_floor_ns(0, 1000, 10e9, 1), 100);     /* ceil(99.5) */
    assert_int_equal(load_floor_ns(0, 1000, 10e9, 4), 98);      /* ceil(98) */
    assert_int_equal(load_floor_ns(0, 1000, 10e9, 5), 98);      /* ceil(97.5) */
    assert_int_equal(load_floor_ns(0, 1003, 10e9, 1), 100);     /* ceil(99.8) */
    assert_int_equal(load_floor_ns(0, 1008, 10e9, 1), 101);     /* ceil(100.3) */
    assert_int_equal(load_floor_ns(2.5e-9, 1000, 10e9, 1), 103); /* 3 + 100 */
    assert_int_equal(load_floor_ns(2.4e-9, 1000, 10e9, 1), 102); /* 2 + 100 */
    assert_int_equal(load_floor_ns(7e-9, 10, 10e9, 10), 7);     /* 1 ns - 5 ns: nothing */
    assert_int_equal(load_floor_ns(0, 1e30, 1, 1), GT_TIME_CAP_NS);
    /* never above the old nearest-ns rounding of each term, which a replay
     * could pass by 1 ns */
    for (double b = 1; b < 5000; b += 0.37)
        assert_true(load_floor_ns(1.5e-9, b, 10e9, 1) <= cost_ns(1.5e-9) + cost_ns(b / 10e9));
}

/* One GPipe pipeline of M microbatches of 1 sample over the 8 layers of
 * tiny_job, stage k on GPU k, its layers from first[k] to first[k+1] - 1. */
static void gpipe_plan(job *j, plan *p, int S, const int *first, int M)
{
    tiny_job(j, 8);
    plan_init(p, 1);
    p->schedule = SCHED_GPIPE;
    p->sync = SYNC_RING;
    p->microbatch_size = 1;
    plan_pipe_alloc(p, 0, S);
    p->pipes[0].microbatches = M;
    for (int k = 0; k < S; k++)
        p->pipes[0].stages[k] =
            (plan_stage){.first = first[k], .last = k + 1 < S ? first[k + 1] - 1 : 7,
                         .ngpus = 1, .gpus = {k}};
    j->batch = M;
}

/* The estimate of (t, j, p) on the fast path and on the op path: its
 * transfer bound and iteration are want, and it is not above the replay. */
static double check_both_paths(const topology *t, const job *j, const plan *p, int64_t want)
{
    gt_err e;
    sim_options o;
    sim_options_default(&o);
    sim_result sr;
    if (simulate_plan(t, j, p, &o, &sr, &e))
        fail_msg("%s", e.msg);
    for (int path = 0; path < 2; path++) {
        est_workspace *ws = est_workspace_new();
        if (path)
            est_workspace_set_path(ws, EST_PATH_OPS);
        est_summary s;
        if (estimate_plan_ws(ws, t, j, p, &s, &e))
            fail_msg("%s", e.msg);
        const timing *tm = est_workspace_timing(ws);
        assert_int_equal(est_workspace_fast(ws), !path);
        assert_int_equal(tm->xfer_all_ns, want);
        assert_int_equal(tm->iteration_ns, want);
        assert_true(s.iteration_s <= sr.iteration_s);
        est_workspace_free(ws);
    }
    return sr.iteration_s;
}

/* Two sites, one A100 each, joined by a 1 Gbps WAN link (the TCP window is
 * wide enough not to cap it), so the forward activations of a 2-stage GPipe
 * pipeline queue on a link of their own. */
static const char *const TWO_SITES =
    "{\"name\":\"two\",\"sites\":["
    "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.05}},"
    "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.05}}],"
    "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":1,\"latency_ms\":20}],"
    "\"tcp\":{\"window_mb\":256,\"connections\":16}}";

/* The drain by hand (load_bound.h): GPipe, stage 0 on site a, stage 1 on
 * site b, M microbatches. The contention-free recurrence is run here on its
 * own (F0 back to back; F1(i) after F1(i-1) and F0(i)'s lone transfer; the
 * backwards likewise in reverse), then each link's bound in closed form:
 *   forward link a->b: F0's end + the M activations' floor over 1 Gbps,
 *     then stage 1's last forward and its M backwards, then stage 1's
 *     drain: its last backward's gradient still crosses b->a (lone), stage
 *     0 runs its last backward and its optimizer step. The old tail stopped
 *     at stage 1's own optimizer step.
 *   backward link b->a: B1(0)'s end + the M gradients' floor, then B0 and
 *     stage 0's optimizer step.
 * The estimate is the largest of the three, on both paths, and stays below
 * the replay. */
static void test_drain_by_hand(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    est_parse_topo(&t, "two", TWO_SITES);
    enum { M = 24 };
    job j;
    plan p;
    gpipe_plan(&j, &p, 2, (const int[]){0, 4}, M);
    workload w;
    if (workload_build(&w, &t, &j, &p, &e))
        fail_msg("%s", e.msg);
    /* the inputs: op durations, optimizer steps, transfer bytes */
    int64_t dur[2][2] = {{0}}, opt[2] = {w.lanes[0].opt_ns, w.lanes[1].opt_ns};
    double bytes[2] = {0}; /* activation (into F1), gradient (into B0) */
    for (int i = 0; i < w.nops; i++) {
        const wl_op *o = &w.ops[i];
        dur[o->lane][o->kind] = o->dur_ns;
        if (o->xfer_bytes > 0)
            bytes[o->kind] = o->xfer_bytes;
    }
    assert_true(bytes[0] > 0 && bytes[1] > 0);
    double lat, rate;
    path_lone(&t, 0, 1, &lat, &rate);
    assert_true(fabs(rate - 1e9 / 8) < 1e-3); /* the WAN link, not the TCP window */
    int64_t xf = cost_transfer_ns(bytes[0], lat, rate), xb = cost_transfer_ns(bytes[1], lat, rate);
    /* the contention-free recurrence */
    int64_t f1 = 0, b1 = 0, b0 = 0, b1_first = 0;
    for (int i = 0; i < M; i++) {
        int64_t arr = (i + 1) * dur[0][0] + xf;
        f1 = (f1 > arr ? f1 : arr) + dur[1][0];
    }
    for (int i = 0; i < M; i++) {
        b1 = (i == 0 ? f1 : b1) + dur[1][1];
        if (i == 0)
            b1_first = b1;
        int64_t arr = b1 + xb, free0 = i == 0 ? M * dur[0][0] : b0;
        b0 = (free0 > arr ? free0 : arr) + dur[0][1];
    }
    int64_t unbounded = (b0 + opt[0] > b1 + opt[1]) ? b0 + opt[0] : b1 + opt[1];
    int64_t drain1 = xb + dur[0][1] + opt[0];
    assert_true(drain1 > opt[1]); /* the chain, not stage 1's own step */
    int64_t fwd = dur[0][0] + load_floor_ns(lat, M * bytes[0], 1e9 / 8, M) + dur[1][0] +
                  M * dur[1][1] + drain1;
    int64_t bwd = b1_first + load_floor_ns(lat, M * bytes[1], 1e9 / 8, M) + dur[0][1] + opt[0];
    int64_t want = fwd > bwd ? fwd : bwd;
    want = want > unbounded ? want : unbounded;
    assert_true(fwd > unbounded && fwd > bwd); /* the forward link sets it ... */
    assert_true(fwd - drain1 + opt[1] < fwd);  /* ... higher than the old tail did */
    double replay = check_both_paths(&t, &j, &p, want);
    fprintf(stderr, "drain by hand: estimate %.6f s (old tail %.6f s), replay %.6f s\n",
            (double)want * 1e-9, (double)(fwd - drain1 + opt[1]) * 1e-9, replay);
    workload_free(&w);
    plan_free(&p);
    topo_free(&t);
}

/* Site a: one A100; site b: a node of two (NVLink); 0.1 Gbps between. */
static const char *const THREE_GPUS =
    "{\"name\":\"three\",\"sites\":["
    "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.05}},"
    "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.05}}],"
    "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":0.1,\"latency_ms\":20}],"
    "\"tcp\":{\"window_mb\":256,\"connections\":16}}";

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The forward chain by hand (load_bound.h), the pattern of E2's n8-s5: a
 * 3-stage GPipe pipeline whose first hop crosses a slow WAN link and whose
 * last stage (4 layers) has more left to run than the middle one (2). Once
 * the last activation has crossed the link, stage 1 runs its last forward,
 * hands it over NVLink, and stage 2 still runs that forward and all M
 * backwards; then the drains: stage 2's last gradient to stage 1, its last
 * backward, the gradient over the WAN, stage 0's last backward, its
 * optimizer step. The tail before stopped at stage 1's own work. With the
 * link at 0.1 Gbps the M activations' load dominates every other bound, so
 * the estimate is this one, on both paths, and below the replay. */
static void test_forward_chain_by_hand(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    est_parse_topo(&t, "three", THREE_GPUS);
    assert_int_equal(t.ngpus, 3);
    assert_true(t.gpus[1].node == t.gpus[2].node && t.gpus[0].site != t.gpus[1].site);
    enum { M = 16 };
    job j;
    plan p;
    gpipe_plan(&j, &p, 3, (const int[]){0, 2, 4}, M);
    workload w;
    if (workload_build(&w, &t, &j, &p, &e))
        fail_msg("%s", e.msg);
    int64_t F[3], B[3], opt[3];
    double act = 0, grad = 0;
    for (int i = 0; i < w.nops; i++) {
        const wl_op *o = &w.ops[i];
        (o->kind == OP_FWD ? F : B)[o->lane] = o->dur_ns;
        if (o->xfer_bytes > 0)
            *(o->kind == OP_FWD ? &act : &grad) = o->xfer_bytes;
    }
    for (int k = 0; k < 3; k++)
        opt[k] = w.lanes[k].opt_ns;
    assert_true(F[2] > F[1] && B[2] > B[1]); /* the last stage has more to do */
    double lat01, r01, lat12, r12;
    path_lone(&t, 0, 1, &lat01, &r01);
    path_lone(&t, 1, 2, &lat12, &r12);
    int64_t xf12 = cost_transfer_ns(act, lat12, r12), xb21 = cost_transfer_ns(grad, lat12, r12),
            xb10 = cost_transfer_ns(grad, lat01, r01);
    int64_t drain1 = max64(opt[1], xb10 + B[0] + opt[0]);
    int64_t drain2 = max64(opt[2], xb21 + B[1] + drain1);
    int64_t lane1 = F[1] + M * B[1] + drain1;      /* stage 1's own work + drain */
    int64_t chain = F[1] + xf12 + F[2] + M * B[2] + drain2;
    assert_true(chain > lane1);
    int64_t want = F[0] + load_floor_ns(lat01, M * act, 0.1e9 / 8, M) + chain;
    double replay = check_both_paths(&t, &j, &p, want);
    fprintf(stderr, "forward chain by hand: estimate %.6f s (stage 1's own tail: %.6f s), "
                    "replay %.6f s\n", (double)want * 1e-9, (double)(want - chain + lane1) * 1e-9,
            replay);
    workload_free(&w);
    plan_free(&p);
    topo_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_floor_by_hand),
        cmocka_unit_test(test_drain_by_hand),
        cmocka_unit_test(test_forward_chain_by_hand),
        cmocka_unit_test(test_estimate_below_replay),
        cmocka_unit_test(test_array_keys_equal_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
