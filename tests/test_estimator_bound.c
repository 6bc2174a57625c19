/* test_estimator_bound.c — the estimate stays a lower bound of the replay
 * with the transfer load bound's subsets of streams (load_bound.h): on
 * random plans whose transfers contend for NICs and shared WAN links
 * (est_plans.h), the estimate is never above the simulated iteration,
 * including the plans where the subset bound is what sets it. */
#include "est_plans.h"

#include "sim/engine/simulator.h"
#include "sim/estimator/estimator.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_below_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
