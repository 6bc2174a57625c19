/* test_memetic_cache.c — the store the searches of one memetic run share
 * (planner/memetic_cache.h): a split saved is the split restored, the pool
 * stops at its count limit, and a search that takes estimates and splits
 * from a store another search filled ends on exactly what it ends on alone
 * (plan, objective value, evaluation count, note), while the store did
 * spare it estimates. The oracle is the same search without the store. */
#include "testutil.h"

#include <jansson.h>
#include <string.h>

#include "planner/memetic.h"
#include "planner/memetic_cache.h"
#include "gen_pool.h"

/* --- splits ----------------------------------------------------------------------------- */

static void split_round_trip(void **state)
{
    (void)state;
    genome a, b;
    assert_int_equal(genome_alloc(&a, 8), 0);
    assert_int_equal(genome_alloc(&b, 8), 0);
    a.S = 2;
    a.D = 3;
    int first[] = {0, 13, 0, 12, 0, 11}, mb[] = {5, 6, 5};
    memcpy(a.first, first, sizeof first);
    memcpy(a.mb, mb, sizeof mb);
    a.split = ENC_CUT_UNIFORM;
    split_pool p = {NULL, 0, 0, 2 * (2 + 6 + 3)}; /* room for two splits exactly */
    cache_entry x = {1, 3, {0, 0, 0, 0}, 1, ENC_CUT_UNIFORM, 0, -1};
    x.off = ma_split_save(&p, &a);
    assert_int_equal(x.off, 0);
    assert_true(ma_split_save(&p, &a) > 0);
    assert_int_equal(ma_split_save(&p, &a), -1); /* the limit is a count */
    b.S = 2;
    b.D = 3;
    b.status = 1;
    assert_true(ma_split_restore(&p, &x, &b));
    assert_memory_equal(b.first, first, sizeof first);
    assert_memory_equal(b.mb, mb, sizeof mb);
    assert_int_equal(b.split, ENC_CUT_UNIFORM);
    assert_int_equal(b.status, 0); /* undecided, as after a decode */
    b.D = 2; /* another shape under the same key: refused, never misread */
    assert_false(ma_split_restore(&p, &x, &b));
    cache_entry none = x;
    none.off = -1;
    assert_false(ma_split_restore(&p, &none, &b));
    free(p.v);
    genome_free(&a);
    genome_free(&b);
}

/* --- a shared store changes nothing ----------------------------------------------------- */

static void make_pool(topology *t)
{
    const gen_pool_spec s = {12, 3, 2, 3, NULL, "a100:1,v100:1,t4:1"};
    gen_pool(&s, NULL, t);
}

typedef struct outcome {
    char *plan;
    double value;
    long evals;
    char note[256];
} outcome;

static outcome run(const topology *t, const job *j, const char *objective,
                   const memetic_cfg *cfg, ma_store *shared)
{
    memetic_cfg c = *cfg;
    c.shared = shared;
    planner_opts o = {objective, 1, 0, 12, 1, false, 0, NULL, NULL, 0};
    plan p;
    planner_stats st;
    gt_err e;
    assert_int_equal(memetic_run(t, j, &o, &c, &p, &st, &e), 0);
    json_t *js = plan_to_json(&p, t);
    outcome r = {json_dumps(js, JSON_SORT_KEYS), st.objective_value, st.evaluations, ""};
    snprintf(r.note, sizeof r.note, "%s", st.note);
    json_decref(js);
    plan_free(&p);
    return r;
}

static void store_changes_nothing(void **state)
{
    (void)state;
    topology t;
    make_pool(&t);
    model_spec m;
    gt_err e;
    assert_int_equal(model_resolve("gpt3_350m", &m, &e), 0);
    job j;
    job_defaults(&j, &m);
    j.batch = 32;
    /* the full search, objective weighted (it runs no ablation inside),
     * fills the store; each ablation then searches with it and alone */
    ma_store st;
    ma_store_init(&st);
    outcome full = run(&t, &j, "weighted:0.5", &MEMETIC_CFG, &st);
    free(full.plan);
    const memetic_cfg *abl[] = {&MEMETIC_PLAINX_CFG, &MEMETIC_ALL_GPUS_CFG, &MEMETIC_UNIFORM_CFG,
                                &MEMETIC_NOLS_CFG};
    for (size_t a = 0; a < sizeof abl / sizeof *abl; a++) {
        long before = st.reused;
        outcome with = run(&t, &j, "time", abl[a], &st);
        outcome alone = run(&t, &j, "time", abl[a], NULL);
        assert_string_equal(with.plan, alone.plan);
        assert_true(with.value == alone.value);
        assert_int_equal(with.evals, alone.evals);
        assert_string_equal(with.note, alone.note);
        printf("%s: %ld of %ld evaluations taken from the store\n", abl[a]->name,
               st.reused - before, with.evals);
        /* the same cut rule as the full search: many of its genomes are met again */
        if (abl[a]->enc.cuts == ENC_CUT_DP)
            assert_true(st.reused > before);
        free(with.plan);
        free(alone.plan);
    }
    ma_store_free(&st);
    topo_free(&t);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_round_trip),
        cmocka_unit_test(store_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
