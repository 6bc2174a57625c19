/* test_validate.c — `geotrain validate` on a tiny row set in the format of
 * validation/runs.csv: a one-GPU row replays to the closed form m x (fwd +
 * bwd) + optimizer of its stage; errors are (simulated - measured) /
 * measured; the statistics are those of the rows; skipped rows carry their
 * reason; bad input fails with file:line; JSON has mean_rel_error; the
 * shipped set loads and every representable row replays. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "sim/cost.h"
#include "sim/validate.h"
#include "sim/validate_report.h"

static const char HEAD[] =
    "id,source,gpu,n_gpus,node_gpus,nic_gbps,model,layers,hidden,heads,kv_heads,ffn,vocab,"
    "seq,gated_mlp,bias,learned_pos,micro_batch,global_batch,tp,pp,dp,vp,schedule,sim_mode,"
    "recompute,sequence_parallel,precision,attention,metric,value,measured_iteration_s,role,"
    "skip,assumptions\n";

static const char ROWS[] =
    "T-one,test,a100_sxm_80gb,1,8,1600,m,4,1024,16,16,4096,32000,1024,0,1,1,2,8,1,1,1,1,"
    "1f1b,full,none,0,bf16,fused,iteration_s,1,0.5,fit,,\n"
    "T-tp,test,h100_sxm,8,8,3200,m,8,2048,16,16,8192,32000,2048,0,1,1,1,8,2,2,2,1,"
    "1f1b,full,full,1,bf16,fused,iteration_s,1,1,holdout,,\n"
    "T-skip,test,h100_sxm,8,8,3200,m,,,,,,,,0,1,1,,,,,,,,,,,,,iteration_s,1,,holdout,"
    "context parallelism not modelled,\n";

static void write_rows(char *path, size_t cap, const char *rows)
{
    char *text = malloc(strlen(HEAD) + strlen(rows) + 1);
    strcpy(text, HEAD);
    strcat(text, rows);
    write_temp(text, path, cap);
    free(text);
}

static void test_one_gpu_closed_form(void **state)
{
    (void)state;
    char path[64];
    write_rows(path, sizeof path, ROWS);
    gt_err e;
    gpu_catalog cat;
    assert_int_equal(gpu_catalog_load_default(&cat, &e), 0);
    val_row *rows;
    int n;
    if (val_load(path, &rows, &n, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(n, 3);
    double sim;
    assert_int_equal(val_simulate(&rows[0], &cat, -1, &sim, &e), 0);
    /* the same job by hand: 4 microbatches of 2 through one stage of 4 layers */
    model_spec m = {.layers = 4, .hidden = 1024, .heads = 16, .kv_heads = 16, .ffn = 4096,
                    .vocab = 32000, .seq_len = 1024, .bias = 1, .learned_pos = 1};
    snprintf(m.id, sizeof m.id, "T-one");
    job j;
    job_defaults(&j, &m);
    j.seq = 1024;
    const gpu_type *g = &cat.types[gpu_catalog_find(&cat, "a100_sxm_80gb")];
    int64_t want = 4 * (cost_stage_fwd_ns(&j, g, 1, 2, 0, 3, 1.0) +
                        cost_stage_bwd_ns(&j, g, 1, 2, 0, 3, 1.0)) +
                   cost_optimizer_ns(g, cost_stage_params(&m, 0, 3));
    assert_true(fabs(sim * 1e9 - (double)want) <= 4);

    val_report rep;
    assert_int_equal(val_run(rows, n, &cat, NULL, &rep, &e), 0);
    assert_true(rep.res[0].done && rep.res[1].done && !rep.res[2].done);
    assert_non_null(strstr(rep.res[2].why, "context parallelism"));
    double e0 = (rep.res[0].sim_s - 0.5) / 0.5, e1 = (rep.res[1].sim_s - 1) / 1;
    assert_true(fabs(rep.res[0].rel_err - e0) < 1e-12);
    assert_true(fabs(rep.overall.mean - (fabs(e0) + fabs(e1)) / 2) < 1e-12);
    assert_true(fabs(rep.overall.max - fmax(fabs(e0), fabs(e1))) < 1e-12);
    assert_int_equal(rep.fit.n, 1);
    assert_int_equal(rep.holdout.n, 1);
    assert_int_equal(rep.ngroups, 2);
    val_report_free(&rep);
    free(rows);
    gpu_catalog_free(&cat);
    unlink(path);
}

static void test_cli_json_and_bad_input(void **state)
{
    (void)state;
    char path[64];
    write_rows(path, sizeof path, ROWS);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "validate", "--runs", path, "--json", "-", "--quiet",
                                 NULL), 0);
    assert_int_equal(r.status, 0);
    /* with --json - stdout holds the JSON document only */
    json_error_t je;
    json_t *doc = json_loads(r.out, 0, &je);
    assert_non_null(doc);
    assert_true(json_is_real(json_object_get(doc, "mean_rel_error")));
    assert_int_equal(json_array_size(json_object_get(doc, "rows")), 2);
    assert_int_equal(json_array_size(json_object_get(doc, "skipped")), 1);
    json_decref(doc);
    tu_run_free(&r);
    unlink(path);
    /* a replayed row with tp = 0 is an input error naming the file and line */
    write_rows(path, sizeof path,
               "T-bad,test,h100_sxm,8,8,3200,m,8,2048,16,16,8192,32000,2048,0,1,1,1,8,0,2,2,"
               "1,1f1b,full,full,1,bf16,fused,iteration_s,1,1,holdout,,\n");
    assert_int_equal(tu_geotrain(&r, "validate", "--runs", path, NULL), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, ":2:"));
    tu_run_free(&r);
    unlink(path);
}

static void test_shipped_set_replays(void **state)
{
    (void)state;
    gt_err e;
    gpu_catalog cat;
    assert_int_equal(gpu_catalog_load_default(&cat, &e), 0);
    val_row *rows;
    int n;
    if (val_load("validation/runs.csv", &rows, &n, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(n, 593);
    val_report rep;
    assert_int_equal(val_run(rows, n, &cat, "KOR", &rep, &e), 0);
    int done = 0;
    for (int i = 0; i < n; i++) {
        done += rep.res[i].done;
        if (!rows[i].skip[0] && !strncmp(rows[i].id, "KOR", 3))
            assert_true(rep.res[i].done); /* representable rows all replay */
    }
    assert_true(done > 0);
    printf("  KOR rows: %d replayed, mean |error| %.1f %%\n", done, 100 * rep.overall.mean);
    val_report_free(&rep);
    free(rows);
    gpu_catalog_free(&cat);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_gpu_closed_form),
        cmocka_unit_test(test_cli_json_and_bad_input),
        cmocka_unit_test(test_shipped_set_replays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
