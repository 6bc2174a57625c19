/* test_estimator_bound.c — the estimate stays a lower bound of the replay
 * with the transfer load bound's subsets of streams (load_bound.h): on
 * random plans whose transfers contend for NICs and shared WAN links
 * (est_plans.h), the estimate is never above the simulated iteration,
 * including the plans where the subset bound is what sets it. */
#include "est_plans.h"

#include "sim/engine/simulator.h"
#include "sim/estimator/estimator.h"
#include "sim/base/timecap.h"
#include "sim/models/collective.h"

static void load_topo(topology *t)
{
    gt_err e;
    gpu_catalog cat;
    assert_int_equal(gpu_catalog_load_default(&cat, &e), 0);
    if (topo_parse(t, "bound", TOPO, strlen(TOPO), &cat, &e))
        fail_msg("%s", e.msg);
    gpu_catalog_free(&cat);
}

static void test_estimate_below_replay(void **state)
{
    (void)state;
    topology t;
    load_topo(&t);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 17);
    sim_options o;
    sim_options_default(&o);
    est_workspace *ws = est_workspace_new();
    int checked = 0, decisive = 0;
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
        }
        plan_free(&p);
    }
    assert_true(checked >= 1500);
    assert_true(decisive >= 20); /* the subsets were tested where they matter */
    fprintf(stderr, "%d plans replayed, estimate <= replay on all; the subset bound sets the "
                    "estimate on %d\n", checked, decisive);
    est_workspace_free(ws);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_floor_by_hand),
        cmocka_unit_test(test_estimate_below_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
