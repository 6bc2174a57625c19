/* test_estimator_alloc.c — a planner evaluation allocates nothing once its
 * workspace has seen plans of the same sizes (estimator.h: "no allocation
 * per evaluation"). This binary is linked with the linker's --wrap of
 * malloc, calloc and realloc (Makefile), so every allocation the library
 * makes passes through the counters below: the workload and its sync
 * groups, the timing, the load bounds, the plan check and memory figures,
 * the caches. */
#include "testutil.h"

#include "alloc_wrap.h"
#include "est_plans.h"
#include "sim/estimator/estimator.h"

static long allocs;

void *__wrap_malloc(size_t n)
{
    allocs++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    allocs++;
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    allocs++;
    return __real_realloc(p, n);
}

#define NPLANS 300

/* Evaluates every plan once in ws; returns how many were valid. */
static int evaluate_all(est_workspace *ws, const topology *t, const job *jobs, const plan *p,
                        double *iter)
{
    int valid = 0;
    for (int n = 0; n < NPLANS; n++) {
        est_summary s;
        gt_err e;
        if (estimate_plan_ws(ws, t, &jobs[n], &p[n], &s, &e) == 0) {
            valid++;
            iter[n] = s.iteration_s;
        } else {
            iter[n] = -1;
        }
    }
    return valid;
}

/* Random plans (GPipe and 1F1B, every sync kind, overlap, accumulation,
 * tensor parallelism: est_plans.h), evaluated three times over in one
 * workspace: the first pass grows the buffers and fills the caches, and
 * must allocate (else the counters would not see the library at all); the
 * second and third allocate nothing and give the same estimates. */
static void test_no_allocation_in_steady_state(void **state)
{
    (void)state;
    gt_err e;
    gpu_catalog cat;
    assert_int_equal(gpu_catalog_load_default(&cat, &e), 0);
    topology t;
    if (topo_parse(&t, "alloc", TOPO, strlen(TOPO), &cat, &e))
        fail_msg("%s", e.msg);
    gpu_catalog_free(&cat);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    static job jobs[NPLANS];
    static plan plans[NPLANS];
    for (int n = 0; n < NPLANS; n++) {
        tiny_job(&jobs[n], pick(r, 8, 24));
        random_plan(r, &t, &jobs[n], &plans[n]);
    }
    est_workspace *ws = est_workspace_new();
    assert_non_null(ws);
    static double first[NPLANS], again[NPLANS];
    long before = allocs;
    int valid = evaluate_all(ws, &t, jobs, plans, first);
    assert_true(valid > NPLANS / 2);
    assert_true(allocs > before);
    for (int pass = 0; pass < 2; pass++) {
        before = allocs;
        assert_int_equal(evaluate_all(ws, &t, jobs, plans, again), valid);
        if (allocs != before)
            fail_msg("pass %d: %ld allocations over %d evaluations", pass + 2, allocs - before,
                     NPLANS);
        for (int n = 0; n < NPLANS; n++)
            assert_memory_equal(&first[n], &again[n], sizeof first[n]);
    }
    est_workspace_free(ws);
    for (int n = 0; n < NPLANS; n++)
        plan_free(&plans[n]);
    gsl_rng_free(r);
    topo_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_allocation_in_steady_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
