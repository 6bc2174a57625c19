/* test_registry.c — the planner table and how a row is run
 * (planner/planner.h, planner/registry.c, planner/planner.c): every row is
 * whole (unique name, an entry function, seed planners that exist and are
 * plain planners, a memetic row's configuration naming the row); and
 * planner_plan hands a planner exactly the plans its seed planners give
 * when run on their own (the oracle: those planners run directly), frees
 * them, leaves the caller's options alone, takes the seeds' time out of a
 * budget by at most a quarter, and hands nothing to a row without seeds. */
#include "testutil.h"

#include <jansson.h>
#include <string.h>

#include "planner/memetic.h"
#include "planner/planner.h"
#include "sim/inputs/plan.h"

#define SMALL_GEO FIXTURES "/small-geo.json"
#define TINY FIXTURES "/tiny-model.json"

static void load(topology *t, job *j)
{
    gt_err e;
    model_spec m;
    if (topo_load(t, SMALL_GEO, NULL, &e) || model_resolve(TINY, &m, &e)) {
        print_message("%s\n", e.msg);
        fail();
    }
    job_defaults(j, &m);
    j->batch = 32;
    j->seq = 1024;
}

static char *plan_text(const topology *t, const plan *p)
{
    json_t *j = plan_to_json(p, t);
    char *txt = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(j);
    return txt;
}

static void test_rows_are_whole(void **state)
{
    (void)state;
    int n;
    const planner_def *all = planner_all(&n);
    assert_true(n > 0);
    assert_null(all[n].name); /* the table ends with the NULL row */
    int memetic_rows = 0;
    for (int i = 0; i < n; i++) {
        const planner_def *d = &all[i];
        assert_non_null(d->name);
        assert_non_null(d->run);
        assert_non_null(d->summary);
        assert_ptr_equal(planner_find(d->name), d);
        for (int k = 0; k < i; k++)
            assert_string_not_equal(all[k].name, d->name);
        for (int s = 0; d->seeds && d->seeds[s]; s++) {
            const planner_def *sd = planner_find(d->seeds[s]);
            if (!sd)
                fail_msg("%s: seed planner '%s' is not registered", d->name, d->seeds[s]);
            assert_ptr_not_equal(sd, d);
            assert_null(sd->seeds); /* seeds are plain planners (planner.c runs no seeds' seeds) */
        }
        const memetic_cfg *mc = memetic_config(d);
        if (mc) {
            memetic_rows++;
            assert_string_equal(mc->name, d->name); /* the name written into its plans */
        }
    }
    assert_int_equal(memetic_rows, 5); /* memetic and its four ablations */
    assert_null(memetic_config(planner_find("greedy")));
    assert_null(memetic_config(NULL));
}

/* What the stub planner saw. */
static struct {
    int calls, nseeds;
    char *text[4];
    double budget_s;
    const char *cfg;
} seen;

static int stub_run(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                    plan *out, planner_stats *st, gt_err *e)
{
    (void)j, (void)e;
    seen.calls++;
    seen.cfg = cfg;
    seen.nseeds = o->nseeds;
    seen.budget_s = o->budget_s;
    assert_true(o->nseeds <= 4);
    assert_true(o->nseeds == 0 || o->seeds);
    for (int i = 0; i < o->nseeds; i++)
        seen.text[i] = plan_text(t, &o->seeds[i]);
    memset(st, 0, sizeof *st);
    return plan_copy(out, &o->seeds[0]);
}

static void seen_free(void)
{
    for (int i = 0; i < seen.nseeds; i++)
        free(seen.text[i]);
    memset(&seen, 0, sizeof seen);
}

static void test_seeds_handed_in(void **state)
{
    (void)state;
    topology t;
    job j;
    load(&t, &j);
    static const char *const SEEDS[] = {"greedy", "megatron", NULL};
    static const char CFG[] = "the stub's configuration";
    planner_def d = {"stub", stub_run, "test", false, CFG, SEEDS};
    planner_opts o = {.objective = "time", .seed = 5, .generations = 7};
    plan p;
    planner_stats st;
    gt_err e;
    memset(&seen, 0, sizeof seen);
    assert_int_equal(planner_plan(&d, &t, &j, &o, &p, &st, &e), 0);
    assert_int_equal(seen.calls, 1);
    assert_ptr_equal(seen.cfg, CFG);
    assert_int_equal(seen.nseeds, 2);
    assert_null(o.seeds); /* the caller's options are its own */
    assert_int_equal(o.nseeds, 0);
    /* the oracle: each seed planner run alone, with no generations of the
     * seeded planner's (seeds run with their own defaults) */
    planner_opts so = {.objective = "time", .seed = 5};
    for (int i = 0; i < 2; i++) {
        plan q;
        planner_stats qs;
        assert_int_equal(planner_plan(planner_find(SEEDS[i]), &t, &j, &so, &q, &qs, &e), 0);
        char *want = plan_text(&t, &q);
        assert_string_equal(seen.text[i], want);
        free(want);
        plan_free(&q);
    }
    char *got = plan_text(&t, &p);
    assert_string_equal(got, seen.text[0]); /* the stub returned seed 0 */
    free(got);
    plan_free(&p);
    seen_free();

    /* a time budget: the seeds take at most a quarter of it */
    o.budget_s = 100;
    assert_int_equal(planner_plan(&d, &t, &j, &o, &p, &st, &e), 0);
    assert_int_equal(seen.nseeds, 2);
    assert_true(seen.budget_s >= 75 && seen.budget_s <= 100);
    assert_true(o.budget_s == 100);
    plan_free(&p);
    seen_free();
    topo_free(&t);
}

static int stub_no_seeds(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                         plan *out, planner_stats *st, gt_err *e)
{
    (void)cfg, (void)t, (void)j, (void)out, (void)st;
    seen.calls++;
    seen.nseeds = o->nseeds;
    seen.text[0] = (char *)o->seeds;
    return gt_fail(e, "no plan from the stub");
}

/* A row without seeds gets none, even when the caller's options carry some;
 * the planner's error comes back as it is. */
static void test_no_seeds_for_plain_rows(void **state)
{
    (void)state;
    topology t;
    job j;
    load(&t, &j);
    planner_def d = {"plain", stub_no_seeds, "test", false, NULL, NULL};
    plan bogus;
    memset(&bogus, 0, sizeof bogus);
    planner_opts o = {.objective = "time", .seeds = &bogus, .nseeds = 1};
    plan p;
    planner_stats st;
    gt_err e;
    memset(&seen, 0, sizeof seen);
    assert_int_equal(planner_plan(&d, &t, &j, &o, &p, &st, &e), -1);
    assert_string_equal(e.msg, "no plan from the stub");
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.nseeds, 0);
    assert_null(seen.text[0]);
    assert_ptr_equal(o.seeds, &bogus);
    memset(&seen, 0, sizeof seen);
    topo_free(&t);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_are_whole),
        cmocka_unit_test(test_seeds_handed_in),
        cmocka_unit_test(test_no_seeds_for_plain_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
