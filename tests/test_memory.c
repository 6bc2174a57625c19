/* test_memory.c — the memory model's terms against hand-computed byte
 * counts, and the measured-memory rows (validation/memory_runs.csv):
 *   - a Llama-shaped layer (gated MLP, grouped-query attention, no dropout)
 *     under each activation policy, counted tensor by tensor;
 *   - PyTorch FSDP's sharded state (16 bytes / N whatever the gradient dtype)
 *     against ZeRO-3's (2 + g + 12) / N, and FSDP without resharding;
 *   - the loss buffer of the last stage from the policy's bytes per logit;
 *   - a 2-stage 1F1B row replayed by mem_simulate, with and without full
 *     recomputation, equals the closed form of its fullest stage;
 *   - the allocator reserve fitted on the fitting rows reproduces a known
 *     10 % and the held-out error follows from it;
 *   - bad rows fail with file:line:column and the column's name;
 *   - the shipped memory rows and external iteration-time rows all replay;
 *   - the plan check's per-GPU memory (each distinct stage priced once) equals
 *     plan_gpu_memory's stage-by-stage sum exactly, also for a second plan
 *     checked into the same reused buffers;
 *   - `geotrain validate` puts the same memory report in its JSON, refuses a
 *     bad memory file with file:line:column and --external with --runs. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "sim/models/cost.h"
#include "sim/models/memory.h"
#include "sim/models/plan_check.h"
#include "sim/validation/validate.h"
#include "sim/validation/validate_memory.h"
#include "sim/validation/validate_report.h"

#define GIB 1073741824.0

static job llama8b(void)
{
    model_spec m = {.layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn = 14336,
                    .vocab = 128256, .seq_len = 8192, .gated_mlp = 1,
                    .norm = NORM_RMSNORM};
    snprintf(m.id, sizeof m.id, "llama8b");
    job j;
    job_defaults(&j, &m);
    j.seq = 8192;
    return j;
}

/* Bytes per token, h = 4096, a = 32, kv = 8, f = 14336, 16-bit:
 *   kept whatever t: 2 norm inputs + QKV input + MLP input = 4 x 2h = 32768
 *   split over t: Q 2h + K, V 2 x 2h kv/a = 12288; log-sum-exp 4a = 128;
 *     projection input 2h = 8192; SwiGLU 3 x 2f = 86016; sum 106624.
 * Unfused: the softmax output 2as = 524288 replaces the 128 (no dropout).
 * Per-op policy: layer input 2h + wq 2h + wv 2h kv/a + attention out 2h +
 *   lse 4a + w1 2f + w2 2h = 8192 + 55424. Full: the input 2h (/t with SP). */
static void test_llama_layer_policies(void **state)
{
    (void)state;
    job j = llama8b();
    double s = 8192;
    assert_true(rel_diff(memory_layer_activation_bytes(&j, 1, 1), s * (32768 + 106624)) < 1e-12);
    assert_true(rel_diff(memory_layer_activation_bytes(&j, 2, 8), 2 * s * (32768 + 106624 / 8.0)) <
                1e-12);
    j.sequence_parallel = true;
    assert_true(rel_diff(memory_layer_activation_bytes(&j, 1, 8), s * (32768 + 106624) / 8) <
                1e-12);
    j.recompute = RECOMPUTE_FULL;
    assert_true(rel_diff(memory_layer_activation_bytes(&j, 1, 8), s * 8192 / 8) < 1e-12);
    j.sequence_parallel = false;
    assert_true(rel_diff(memory_layer_activation_bytes(&j, 1, 8), s * 8192) < 1e-12);
    j.recompute = RECOMPUTE_NONE;
    mem_policy pol;
    memory_policy_of(&j, &pol);
    pol.act = MEM_ACT_OPS;
    assert_true(rel_diff(memory_layer_activation_policy(&j, &pol, 1, 1), s * (8192 + 55424)) <
                1e-12);
    j.attention = ATTN_UNFUSED;
    double unfused = 32768 + 106624 - 128 + 524288;
    assert_true(rel_diff(memory_layer_activation_bytes(&j, 1, 1), s * unfused) < 1e-12);
    j.recompute_attention = true; /* selective: the scores are recomputed */
    assert_true(rel_diff(memory_layer_activation_bytes(&j, 1, 1), s * (unfused - 524288)) <
                1e-12);
}

/* PyTorch FSDP shards the fp32 parameter (the optimizer's master copy) and
 * keeps fp32 sharded gradients: 4 + 4 + 8 = 16 bytes / N per parameter for
 * Adam, also with fp32 gradient reduction; ZeRO-3 holds 2 + 4 + 12 = 18 / N
 * then. Without resharding the 16-bit weights stay whole (2 bytes each) and
 * no per-layer gather buffer is needed. */
static void test_fsdp_state(void **state)
{
    (void)state;
    job j = llama8b();
    j.grad_bytes = 4;
    int L = j.model.layers;
    double psi = cost_stage_params(&j.model, 0, L - 1), N = 8;
    mem_terms f, z;
    memory_stage_terms(&j, 1, 0, L - 1, 1, 1, SHARD_FSDP, 8, &f);
    memory_stage_terms(&j, 1, 0, L - 1, 1, 1, SHARD_ZERO3, 8, &z);
    /* ... and FSDP2's root (embedding, final norm, head) stays gathered */
    double root = 2 * (cost_embedding_params(&j.model) + cost_head_params(&j.model));
    assert_true(rel_diff(f.params + f.grads + f.optimizer, 16 * psi / N + root) < 1e-12);
    assert_true(rel_diff(z.params + z.grads + z.optimizer, 18 * psi / N) < 1e-12);
    mem_policy pol;
    memory_policy_of(&j, &pol);
    pol.fsdp_keep_unsharded = 1;
    mem_terms k;
    memory_stage_terms_policy(&j, &pol, 1, 0, L - 1, 1, 1, SHARD_FSDP, 8, &k);
    assert_true(rel_diff(k.params + k.grads + k.optimizer, 2 * psi + 16 * psi / N) < 1e-12);
    assert_true(rel_diff(f.temporary - k.temporary, 4 * cost_layer_params(&j.model)) < 1e-12);
}

/* The last stage's loss buffer: loss_bytes x b x s x V / t (vocabulary-
 * parallel), here the largest temporary (no recomputation, no sharding),
 * beside the output projection's saved input e x b x s x h: whole without
 * sequence parallelism, 1/t with it (Megatron keeps the shard), whole again
 * where DTensor keeps the gathered input. */
static void test_loss_buffer(void **state)
{
    (void)state;
    job j = llama8b();
    int L = j.model.layers;
    mem_policy pol;
    memory_policy_of(&j, &pol);
    mem_terms t;
    memory_stage_terms_policy(&j, &pol, 2, 0, L - 1, 2, 1, SHARD_NONE, 1, &t);
    double out_in = 2.0 * 2 * 8192 * 4096;
    assert_true(rel_diff(t.temporary, 4.0 * 2 * 8192 * 128256 / 2 + out_in) < 1e-12);
    pol.loss_bytes = 14;
    memory_stage_terms_policy(&j, &pol, 2, 0, L - 1, 2, 1, SHARD_NONE, 1, &t);
    assert_true(rel_diff(t.temporary, 14.0 * 2 * 8192 * 128256 / 2 + out_in) < 1e-12);
    j.sequence_parallel = true;
    memory_stage_terms_policy(&j, &pol, 2, 0, L - 1, 2, 1, SHARD_NONE, 1, &t);
    assert_true(rel_diff(t.temporary, 14.0 * 2 * 8192 * 128256 / 2 + out_in / 2) < 1e-12);
    pol.tp_keeps_gathered = 1;
    memory_stage_terms_policy(&j, &pol, 2, 0, L - 1, 2, 1, SHARD_NONE, 1, &t);
    assert_true(rel_diff(t.temporary, 14.0 * 2 * 8192 * 128256 / 2 + out_in) < 1e-12);
    memory_stage_terms_policy(&j, &pol, 2, 0, L - 2, 2, 1, SHARD_NONE, 1, &t);
    assert_true(t.temporary == 0); /* not the last stage */
}

static const char MHEAD[] =
    "id,source,gpu,n_gpus,model,layers,hidden,heads,kv_heads,ffn,vocab,seq,gated_mlp,bias,"
    "learned_pos,micro_batch,microbatches,tp,pp,dp,vp,schedule,dp_shard,recompute,"
    "sequence_parallel,precision,attention,grad_dtype,loss_bytes,fsdp_keep_unsharded,"
    "tp_keeps_gathered,compile,"
    "measure,measured_gib,role,skip,assumptions\n";

/* A tiny GPT row (s = h = 1024, a = 16, V = 32000, 8 layers) on 2 stages. */
static void tiny_row(char *buf, size_t cap, const char *id, const char *rc, double gib,
                     const char *role)
{
    snprintf(buf, cap,
             "%s,test,a100_sxm_80gb,2,tiny,8,1024,16,16,4096,32000,1024,0,1,1,1,4,1,2,1,1,1f1b,"
             "none,%s,0,bf16,fused,bf16,4,0,0,0,reserved,%.17g,%s,,\n",
             id, rc, gib, role);
}

/* Closed forms (tests/test_training.c derives the same per-layer figure):
 * a layer keeps s(34h + 4a) = 35717120 bytes, stage 0 holds 2 microbatches
 * of 4 layers and stage 1 one, the last stage 4sV of logits; full
 * recomputation keeps 2sh per layer and re-creates one layer. */
static double tiny_alloc(int full)
{
    model_spec m = {.layers = 8, .hidden = 1024, .heads = 16, .kv_heads = 16, .ffn = 4096,
                    .vocab = 32000, .seq_len = 1024, .bias = 1, .learned_pos = 1};
    double s = 1024, h = 1024, act = s * (34 * h + 4 * 16), keep = full ? 2 * s * h : act;
    double p0 = cost_stage_params(&m, 0, 3), p1 = cost_stage_params(&m, 4, 7);
    double st0 = 16 * p0 + 4 * 2 * keep + (full ? act : 0);
    double logits = 4 * s * 32000 + 2 * s * h; /* + the output projection's input */
    double st1 = 16 * p1 + 4 * 1 * keep + (full && act > logits ? act : logits);
    return st0 > st1 ? st0 : st1;
}

static void test_rows_closed_form_and_reserve(void **state)
{
    (void)state;
    double a_none = tiny_alloc(0), a_full = tiny_alloc(1);
    char r1[512], r2[512], r3[512], text[2048], path[64];
    tiny_row(r1, sizeof r1, "M-none", "none", 1.1 * a_none / GIB, "fit");
    tiny_row(r2, sizeof r2, "M-full", "full", a_full / GIB, "holdout");
    snprintf(r3, sizeof r3, "M-skip,test,a100_sxm_80gb,2,tiny%s1,holdout,context parallelism,\n",
             ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,"); /* 28 empty layout fields */
    snprintf(text, sizeof text, "%s%s%s%s", MHEAD, r1, r2, r3);
    write_temp(text, path, sizeof path);
    mem_row *rows;
    int n;
    gt_err e;
    if (mem_load(path, &rows, &n, &e))
        fail_msg("%s", e.msg);
    unlink(path);
    assert_int_equal(n, 3);
    double b;
    assert_int_equal(mem_simulate(&rows[0], &b, &e), 0);
    assert_true(rel_diff(b, a_none) < 1e-12);
    assert_int_equal(mem_simulate(&rows[1], &b, &e), 0);
    assert_true(rel_diff(b, a_full) < 1e-12);
    mem_report rep;
    assert_int_equal(mem_run(rows, n, &rep, &e), 0);
    /* the fitting row is 10 % above the allocations: reserve 0.10 */
    assert_int_equal(rep.reserve_rows, 1);
    assert_true(fabs(rep.reserve - 0.10) < 1e-9);
    assert_true(fabs(rep.res[0].rel_err) < 1e-9);
    assert_true(fabs(rep.res[1].rel_err - 0.10) < 1e-9);   /* measured = allocations */
    assert_true(fabs(rep.res[1].raw_rel_err) < 1e-9);
    assert_int_equal(rep.holdout.n, 1);
    assert_true(fabs(rep.holdout.mean - 0.10) < 1e-9);
    assert_false(rep.res[2].done);
    assert_non_null(strstr(rep.res[2].why, "context parallelism"));
    mem_report_free(&rep);
    free(rows);
}

/* One bad field per case: the error names file:line:column and the column. */
static void expect_bad(const char *row, const char *field, const char *col_name,
                       const char *what)
{
    char text[2048], path[64], want[160];
    snprintf(text, sizeof text, "%s%s", MHEAD, row);
    write_temp(text, path, sizeof path);
    const char *line = strchr(text, '\n') + 1;
    int col = (int)(strstr(line, field) - line) + 1;
    snprintf(want, sizeof want, "%s:2:%d: column '%s'", path, col, col_name);
    mem_row *rows;
    int n;
    gt_err e;
    assert_int_not_equal(mem_load(path, &rows, &n, &e), 0);
    unlink(path);
    if (!strstr(e.msg, want) || !strstr(e.msg, what))
        fail_msg("got '%s', want '%s' ... '%s'", e.msg, want, what);
}

static void test_bad_rows(void **state)
{
    (void)state;
    char r[512];
    tiny_row(r, sizeof r, "M-bad", "sometimes", 10, "fit");
    expect_bad(r, "sometimes", "recompute", "expected one of none, selective, full, ops");
    tiny_row(r, sizeof r, "M-bad", "none", 10, "maybe");
    expect_bad(r, "maybe", "role", "expected one of fit, holdout");
    tiny_row(r, sizeof r, "M-bad", "none", 0, "fit");
    expect_bad(r, "0,fit", "measured_gib", "must be > 0");
    expect_bad("M-bad,test,a100_sxm_80gb,2,tiny,8,1024,16,16,4096,32000,1024,0,1,1,1,4,1,2,1,"
               "1,1f1b,none,none,0,bf16,fused,bf16,4,0,0,0,reserved,1x,fit,,\n",
               "1x", "measured_gib", "");
    expect_bad("M-bad,test,a100_sxm_80gb,2,tiny,8,1024,16,16,4096,32000,1024,0,1,1,1,4,0,2,1,"
               "1,1f1b,none,none,0,bf16,fused,bf16,4,0,0,0,reserved,1,fit,,\n",
               "0,2,1,1,1f1b", "tp", "must be >= 1");
    /* a missing column names the file */
    char path[64];
    write_temp("id,gpu\nx,y\n", path, sizeof path);
    mem_row *rows;
    int n;
    gt_err e;
    assert_int_not_equal(mem_load(path, &rows, &n, &e), 0);
    assert_non_null(strstr(e.msg, path));
    unlink(path);
}

/* The shipped memory rows and their report; returns the replayed count. */
static int shipped_report(mem_row **rows, int *n, mem_report *rep)
{
    gt_err e;
    if (mem_load("validation/memory_runs.csv", rows, n, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(mem_run(*rows, *n, rep, &e), 0);
    int done = 0;
    for (int i = 0; i < *n; i++)
        done += rep->res[i].done;
    return done;
}

/* The shipped rows: every row without a skip reason replays, fitting and
 * held-out rows both exist; the external rows replay through the
 * iteration-time path and none of their sources is in the validation set. */
static void test_shipped_rows_replay(void **state)
{
    (void)state;
    mem_row *rows;
    int n;
    mem_report rep;
    int done = shipped_report(&rows, &n, &rep);
    gt_err e;
    for (int i = 0; i < n; i++)
        if (!rows[i].skip[0] && !rep.res[i].done)
            fail_msg("%s: %s", rows[i].id, rep.res[i].why);
    assert_true(done >= 10 && rep.fit.n >= 1 && rep.holdout.n >= 1);
    mem_report_free(&rep);
    free(rows);

    gpu_catalog cat;
    assert_int_equal(gpu_catalog_load_default(&cat, &e), 0);
    val_row *ext, *set;
    int ne, ns;
    if (val_load("validation/external_runs.csv", &ext, &ne, &e) ||
        val_load("validation/runs.csv", &set, &ns, &e))
        fail_msg("%s", e.msg);
    int replayed = 0;
    for (int i = 0; i < ne; i++) {
        assert_string_equal(ext[i].role, "ext");
        for (int k = 0; k < ns; k++)
            assert_string_not_equal(ext[i].id, set[k].id);
        if (ext[i].skip[0])
            continue;
        double sim;
        if (val_simulate(&ext[i], &cat, -1, &sim, &e))
            fail_msg("%s: %s", ext[i].id, e.msg);
        assert_true(sim > 0 && isfinite(sim));
        replayed++;
    }
    assert_true(replayed >= 20);
    free(ext);
    free(set);
    gpu_catalog_free(&cat);
}

/* Every GPU of a 64-GPU plan (8 pipelines repeating their stages): the
 * check's figures against plan_gpu_memory, which prices every stage of
 * every pipeline afresh; then a layer moved in one pipeline only, checked
 * into the same buffers, so a figure kept from the first plan would show. */
static void expect_check_memory(const plan *p, const topology *t, const job *j,
                                plan_check_buf *b)
{
    gt_err e;
    if (plan_check_into(p, t, j, b, &e))
        fail_msg("%s", e.msg);
    double *all = NULL;
    assert_int_equal(plan_memory_all(p, t, j, t->ngpus, &all), 0);
    for (int g = 0; g < t->ngpus; g++) {
        double one = plan_gpu_memory(p, t, j, g);
        assert_true(one > 0);
        assert_true(b->mem[g] == one);
        assert_true(all[g] == one);
    }
    free(all);
}

/* A shipped topology and its rank-order plan with GPT3-XL, 8 microbatches per
 * pipeline and full recomputation (room for a moved layer on 16 GiB GPUs). */
static void load_check_case(const char *topo_path, const char *plan_path, topology *t,
                            plan *p, job *j)
{
    model_spec m;
    gt_err e;
    assert_int_equal(topo_load(t, topo_path, NULL, &e), 0);
    assert_int_equal(model_resolve("gpt3-xl", &m, &e), 0);
    assert_int_equal(plan_load(p, plan_path, t, &e), 0);
    job_defaults(j, &m);
    j->batch = 8 * p->npipes;
    j->recompute = RECOMPUTE_FULL;
    for (int d = 0; d < p->npipes; d++)
        p->pipes[d].microbatches = 8;
}

static void test_check_memory_per_gpu(void **state)
{
    (void)state;
    topology t;
    plan p;
    job j;
    load_check_case("topologies/yuan2022/case5.json", "topologies/plans/case5-rank-order.plan.json",
                    &t, &p, &j);
    assert_true(p.npipes > 1 && p.pipes[1].nstages > 1);
    plan_check_buf b = {0};
    expect_check_memory(&p, &t, &j, &b);
    double before = b.mem[p.pipes[1].stages[0].gpus[0]];
    p.pipes[1].stages[0].last++; /* stage 0 of pipeline 1 takes a layer from stage 1 */
    p.pipes[1].stages[1].first++;
    assert_true(p.pipes[1].stages[1].first <= p.pipes[1].stages[1].last);
    expect_check_memory(&p, &t, &j, &b);
    assert_true(b.mem[p.pipes[1].stages[0].gpus[0]] > before);
    plan_check_buf_free(&b);
    plan_free(&p);
    topo_free(&t);
}

/* The check keys a stage's memory on its attention kernel too: world-hetero's
 * rank-order plan runs the same layer ranges on H100s (fused attention) and
 * V100s (unfused, attn_choice.c), so a key without the kernel would hand the
 * V100 stages the H100 figure. Both must equal plan_gpu_memory's. */
static void test_check_memory_mixed_kernels(void **state)
{
    (void)state;
    topology t;
    plan p;
    job j;
    load_check_case("topologies/pools/world-hetero.json",
                    "topologies/plans/world-hetero-rank-order.plan.json", &t, &p, &j);
    plan_check_buf b = {0};
    expect_check_memory(&p, &t, &j, &b);
    /* pipeline 0 sits on H100s, pipeline 2 on V100s, with the same cuts */
    const plan_stage *h = &p.pipes[0].stages[0], *v = &p.pipes[2].stages[0];
    assert_int_equal(h->first, v->first);
    assert_int_equal(h->last, v->last);
    assert_true(b.mem[h->gpus[0]] != b.mem[v->gpus[0]]);
    plan_check_buf_free(&b);
    plan_free(&p);
    topo_free(&t);
}

/* The command: its JSON "memory" section is mem_run's report of the shipped
 * rows (same rows, same fitted reserve); bad input is an input error. */
static void test_validate_command(void **state)
{
    (void)state;
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "validate", "--only", "NONE", "--json", "-", NULL), 0);
    assert_int_equal(r.status, 0);
    json_error_t je;
    json_t *doc = json_loads(r.out, 0, &je);
    assert_non_null(doc);
    tu_run_free(&r);
    json_t *mem = json_object_get(doc, "memory");
    assert_non_null(mem);
    mem_row *rows;
    int n;
    mem_report rep;
    int done = shipped_report(&rows, &n, &rep);
    assert_int_equal((int)json_array_size(json_object_get(mem, "rows")), done);
    assert_true(fabs(json_real_value(json_object_get(mem, "reserve")) - rep.reserve) < 1e-12);
    mem_report_free(&rep);
    free(rows);
    json_decref(doc);

    char path[64];
    write_temp("# a comment line\nid,gpu\nx,y\n", path, sizeof path);
    assert_int_equal(tu_geotrain(&r, "validate", "--only", "NONE", "--memory", path, NULL), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, path));
    tu_run_free(&r);
    unlink(path);
    assert_int_equal(tu_geotrain(&r, "validate", "--external", "--runs", "validation/runs.csv",
                                 NULL), 0);
    assert_int_equal(r.status, 2);
    tu_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llama_layer_policies),
        cmocka_unit_test(test_fsdp_state),
        cmocka_unit_test(test_loss_buffer),
        cmocka_unit_test(test_rows_closed_form_and_reserve),
        cmocka_unit_test(test_bad_rows),
        cmocka_unit_test(test_shipped_rows_replay),
        cmocka_unit_test(test_check_memory_per_gpu),
        cmocka_unit_test(test_check_memory_mixed_kernels),
        cmocka_unit_test(test_validate_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
