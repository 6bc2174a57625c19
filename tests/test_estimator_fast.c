/* test_estimator_fast.c — the estimator's per-stage fast path against its
 * oracle, the op-by-op recurrence (stage_path.h): on thousands of random
 * plans (GPipe and 1F1B, 1-3 pipelines of 1-7 stages, 1-40 microbatches,
 * gradient accumulation, tensor parallelism, every sync kind, overlapped
 * sync, 44 GPUs of two types over three sites: est_plans.h) every output the planners read
 * is the same to the nanosecond and to the last bit: the summary, each
 * lane's times and state accounts, each sync group's times, the WAN bytes,
 * the estimate before and after the transfer load bound. Plans the fast
 * path does not cover (interleaved) must go to the op path. Pipelines with
 * the same stages as an earlier one take its result without running: on a
 * shipped 8 x 8 plan of data-parallel replicas (where 7 of 8 do) the
 * outputs must again be the op path's. */
#include "testutil.h"

#include "est_plans.h"
#include "sim/estimator/estimator.h"
#include "sim/inputs/model.h"

static void same_i64(int64_t a, int64_t b, const char *what, int plan_no)
{
    if (a != b)
        fail_msg("plan %d: %s: fast %lld, op path %lld", plan_no, what, (long long)a,
                 (long long)b);
}

static void same_f64(double a, double b, const char *what, int plan_no)
{
    if (memcmp(&a, &b, sizeof a))
        fail_msg("plan %d: %s: fast %.17g, op path %.17g", plan_no, what, a, b);
}

static void same_outputs(const est_workspace *f, const est_workspace *o, const est_summary *sf,
                         const est_summary *so, int n)
{
    same_f64(sf->iteration_s, so->iteration_s, "iteration_s", n);
    same_f64(sf->energy_j, so->energy_j, "energy_j", n);
    same_f64(sf->carbon_g, so->carbon_g, "carbon_g", n);
    same_f64(sf->usd, so->usd, "usd", n);
    same_f64(sf->tokens_per_s, so->tokens_per_s, "tokens_per_s", n);
    same_f64(sf->peak_mem_frac, so->peak_mem_frac, "peak_mem_frac", n);
    same_i64(sf->gpus_used, so->gpus_used, "gpus_used", n);
    const timing *tf = est_workspace_timing(f), *to = est_workspace_timing(o);
    const workload *w = est_workspace_workload(o);
    same_i64(tf->iteration_ns, to->iteration_ns, "iteration_ns", n);
    same_i64(tf->unbounded_ns, to->unbounded_ns, "estimate before the transfer bound", n);
    same_i64(tf->xfer_all_ns, to->xfer_all_ns, "transfer bound, all streams", n);
    same_i64(tf->xfer_subset_ns, to->xfer_subset_ns, "transfer bound, best subset", n);
    same_f64(tf->wan_bytes, to->wan_bytes, "wan_bytes", n);
    assert_int_equal(est_workspace_workload(f)->nlanes, w->nlanes);
    assert_int_equal(est_workspace_workload(f)->ngroups, w->ngroups);
    const lane_account *af = est_workspace_accounts(f), *ao = est_workspace_accounts(o);
    for (int l = 0; l < w->nlanes; l++) {
        same_i64(tf->lanes[l].bwd_end, to->lanes[l].bwd_end, "bwd_end", n);
        same_i64(tf->lanes[l].sync_end, to->lanes[l].sync_end, "sync_end", n);
        same_i64(tf->lanes[l].sync_comm_ns, to->lanes[l].sync_comm_ns, "sync_comm_ns", n);
        same_i64(tf->lanes[l].opt_end, to->lanes[l].opt_end, "opt_end", n);
        same_i64(af[l].compute_ns, ao[l].compute_ns, "compute_ns", n);
        same_i64(af[l].comm_ns, ao[l].comm_ns, "comm_ns", n);
        same_i64(af[l].idle_ns, ao[l].idle_ns, "idle_ns", n);
        same_f64(af[l].energy_j, ao[l].energy_j, "lane energy_j", n);
    }
    for (int g = 0; g < w->ngroups; g++) {
        same_i64(tf->group_start[g], to->group_start[g], "group_start", n);
        same_i64(tf->group_end[g], to->group_end[g], "group_end", n);
    }
}

/* est_plans.h's topology into t. */
static void parse_topo(topology *t)
{
    est_parse_topo(t, "fast", TOPO);
}

static void test_fast_equals_op_path(void **state)
{
    (void)state;
    topology t;
    parse_topo(&t);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 18);
    est_workspace *fast = est_workspace_new(), *ops = est_workspace_new();
    assert_non_null(fast);
    assert_non_null(ops);
    est_workspace_set_path(ops, EST_PATH_OPS);
    int valid = 0, took_fast = 0, contended = 0, jumped = 0, reused = 0;
    for (int n = 0; n < 6000; n++) {
        job j;
        tiny_job(&j, pick(r, 8, 24));
        plan p;
        random_plan(r, &t, &j, &p);
        est_summary sf, so;
        gt_err ef, eo;
        int rf = estimate_plan_ws(fast, &t, &j, &p, &sf, &ef);
        int ro = estimate_plan_ws(ops, &t, &j, &p, &so, &eo);
        assert_int_equal(rf, ro);
        assert_int_equal(est_workspace_fast(ops), 0);
        if (rf == 0) {
            valid++;
            took_fast += est_workspace_fast(fast);
            jumped += est_workspace_skipped(fast) > 0;
            reused += est_workspace_reused(fast) > 0;
            contended += est_workspace_timing(ops)->iteration_ns >
                         est_workspace_timing(ops)->unbounded_ns;
            same_outputs(fast, ops, &sf, &so, n);
        } else {
            assert_string_equal(ef.msg, eo.msg);
        }
        plan_free(&p);
    }
    /* the comparison covered thousands of plans, the fast path ran on them,
     * jumped over a steady state on many, and the transfer bound was active
     * on some */
    assert_true(valid >= 3000);
    assert_int_equal(took_fast, valid);
    assert_true(jumped > valid / 4);
    assert_true(contended > 50);
    fprintf(stderr, "%d plans, %d on the fast path, %d with a jump, %d with the transfer bound "
                    "active, %d reusing a pipeline's result\n", valid, took_fast, jumped,
            contended, reused);
    est_workspace_free(fast);
    est_workspace_free(ops);
    gsl_rng_free(r);
    topo_free(&t);
}

/* Two topologies parsed into the same variable, two jobs with the same
 * plan: the fast path's caches (collectives, stage times) must follow the
 * content, not the address, and still equal the op path. */
static void test_caches_follow_inputs(void **state)
{
    (void)state;
    gt_err e;
    gpu_catalog cat;
    assert_int_equal(gpu_catalog_load_default(&cat, &e), 0);
    char slow[4096];
    snprintf(slow, sizeof slow, "%s", TOPO);
    char *at = strstr(slow, "\"gbps\":0.8");
    assert_non_null(at);
    memcpy(at, "\"gbps\":0.2", 10); /* a slower default WAN, same length */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    est_workspace *fast = est_workspace_new(), *ops = est_workspace_new();
    est_workspace_set_path(ops, EST_PATH_OPS);
    int compared = 0;
    for (int n = 0; n < 400; n++) {
        topology t;
        const char *text = n % 2 ? slow : TOPO;
        assert_int_equal(topo_parse(&t, "fast", text, strlen(text), &cat, &e), 0);
        job j;
        tiny_job(&j, 12);
        j.model.hidden = n % 4 < 2 ? 1024 : 2048; /* the job changes too */
        plan p;
        random_plan(r, &t, &j, &p);
        est_summary sf, so;
        gt_err ef, eo;
        int rf = estimate_plan_ws(fast, &t, &j, &p, &sf, &ef);
        assert_int_equal(rf, estimate_plan_ws(ops, &t, &j, &p, &so, &eo));
        if (rf == 0) {
            same_outputs(fast, ops, &sf, &so, n);
            compared++;
        }
        plan_free(&p);
        topo_free(&t);
    }
    assert_true(compared > 100);
    est_workspace_free(fast);
    est_workspace_free(ops);
    gsl_rng_free(r);
    gpu_catalog_free(&cat);
}

/* One topology changed in place between evaluations (the same address):
 * a WAN link's rate, a NIC's rate, a GPU type's intra-node link, each
 * toggled between two values, and rounds with nothing changed. Each round
 * evaluates the same 24 plans, so whatever a cache kept from the round
 * before is asked for again: the caches must see every change
 * (topo_digest.h) and the fast path still equal the op path. */
static void test_caches_follow_in_place_changes(void **state)
{
    (void)state;
    topology t;
    parse_topo(&t);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    enum { NP = 24 };
    plan p[NP];
    job j[NP];
    for (int i = 0; i < NP; i++) {
        tiny_job(&j[i], 12);
        random_plan(r, &t, &j[i], &p[i]);
    }
    est_workspace *fast = est_workspace_new(), *ops = est_workspace_new();
    est_workspace_set_path(ops, EST_PATH_OPS);
    double *knobs[] = {&t.wan[0 * t.nsites + 1].bw, &t.nodes[0].nic_bw,
                       &t.types[t.gpus[0].type].link_bw};
    double base[3] = {*knobs[0], *knobs[1], *knobs[2]};
    int compared = 0;
    for (int n = 0; n < 80; n++) {
        int k = n % 4; /* 3: nothing changes */
        if (k < 3)
            *knobs[k] = *knobs[k] == base[k] ? base[k] * 0.25 : base[k];
        for (int i = 0; i < NP; i++) {
            est_summary sf, so;
            gt_err ef, eo;
            int rf = estimate_plan_ws(fast, &t, &j[i], &p[i], &sf, &ef);
            assert_int_equal(rf, estimate_plan_ws(ops, &t, &j[i], &p[i], &so, &eo));
            if (rf == 0) {
                same_outputs(fast, ops, &sf, &so, n * NP + i);
                compared++;
            }
        }
    }
    assert_true(compared > 600);
    for (int i = 0; i < NP; i++)
        plan_free(&p[i]);
    est_workspace_free(fast);
    est_workspace_free(ops);
    gsl_rng_free(r);
    topo_free(&t);
}

/* The shipped 8 x 8 plan over Yuan et al.'s case 5: replicas whose stages
 * match an earlier pipeline's take its result; under both schedules, every
 * sync kind, overlapped sync, 1-40 microbatches and accumulation, the
 * outputs equal the op path's. */
static void test_replicas_reuse_equals_op_path(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    model_spec m;
    plan p;
    if (topo_load(&t, "topologies/yuan2022/case5.json", NULL, &e) ||
        model_resolve("gpt3-xl", &m, &e) ||
        plan_load(&p, "topologies/plans/case5-rank-order.plan.json", &t, &e))
        fail_msg("%s", e.msg);
    job j;
    job_defaults(&j, &m);
    est_workspace *fast = est_workspace_new(), *ops = est_workspace_new();
    est_workspace_set_path(ops, EST_PATH_OPS);
    int n = 0, reused = 0, compared = 0;
    for (int mb = 1; mb <= 40; mb += 3)
        for (int v = 0; v < 2 * SYNC_COUNT * 2; v++, n++) {
            p.schedule = v % 2 ? SCHED_1F1B : SCHED_GPIPE;
            p.sync = (sync_kind)(v / 2 % SYNC_COUNT);
            p.grad_sync = v / (2 * SYNC_COUNT) ? GSYNC_OVERLAP : GSYNC_AFTER_BACKWARD;
            p.accumulation = 0;
            j.accumulation = mb % 2 ? 1 : 2;
            j.batch = p.npipes * mb * p.microbatch_size * j.accumulation;
            for (int d = 0; d < p.npipes; d++)
                p.pipes[d].microbatches = mb;
            est_summary sf, so;
            gt_err ef, eo;
            int rf = estimate_plan_ws(fast, &t, &j, &p, &sf, &ef);
            assert_int_equal(estimate_plan_ws(ops, &t, &j, &p, &so, &eo), rf);
            if (rf) { /* GPipe's many microbatches in flight outgrow a V100 */
                assert_string_equal(ef.msg, eo.msg);
                continue;
            }
            compared++;
            assert_int_equal(est_workspace_fast(fast), 1);
            reused += est_workspace_reused(fast);
            same_outputs(fast, ops, &sf, &so, n);
        }
    assert_true(compared > n / 2);
    assert_true(reused >= compared); /* at least one pipeline a plan, in every case */
    est_workspace_free(fast);
    est_workspace_free(ops);
    plan_free(&p);
    topo_free(&t);
}

/* One mutation of a planner's search: two stages swap their GPUs, or a
 * layer moves across the boundary of two neighbour stages (when both keep
 * one). */
static void mutate(gsl_rng *r, plan *p)
{
    int pi = pick(r, 0, p->npipes - 1), pj = pick(r, 0, p->npipes - 1);
    plan_pipeline *a = &p->pipes[pi];
    if (pick(r, 0, 1) || a->nstages < 2) {
        plan_stage *x = &a->stages[pick(r, 0, a->nstages - 1)];
        plan_stage *y = &p->pipes[pj].stages[pick(r, 0, p->pipes[pj].nstages - 1)];
        plan_stage keep = *x;
        memcpy(x->gpus, y->gpus, sizeof x->gpus);
        x->ngpus = y->ngpus;
        memcpy(y->gpus, keep.gpus, sizeof y->gpus);
        y->ngpus = keep.ngpus;
        return;
    }
    int k = pick(r, 0, a->nstages - 2);
    plan_stage *x = &a->stages[k], *y = x + 1;
    if (pick(r, 0, 1) && x->last > x->first) {
        x->last--;
        y->first--;
    } else if (y->last > y->first) {
        x->last++;
        y->first++;
    }
}

/* Plan p in the kept workspace, in a fresh one and on the op path (ops,
 * which uses no cache: each group's collective built and priced on its
 * own): the same return, and when valid the same outputs to the bit, with
 * nothing taken from earlier evaluations in the fresh one. Returns the
 * kept workspace's result. */
static int kept_fresh_ops(est_workspace *kept, est_workspace *ops, const topology *t,
                          const job *j, const plan *p, int n)
{
    est_workspace *fresh = est_workspace_new();
    assert_non_null(fresh);
    est_summary sk, sf, so;
    gt_err ek, ef, eo;
    int rk = estimate_plan_ws(kept, t, j, p, &sk, &ek);
    assert_int_equal(estimate_plan_ws(fresh, t, j, p, &sf, &ef), rk);
    assert_int_equal(estimate_plan_ws(ops, t, j, p, &so, &eo), rk);
    if (rk == 0) {
        assert_int_equal(est_workspace_recalled(fresh), 0);
        assert_int_equal(est_workspace_xfer_taken(fresh), 0);
        same_outputs(kept, fresh, &sk, &sf, n);
        same_outputs(kept, ops, &sk, &so, n);
        assert_int_equal(est_workspace_skipped(kept), est_workspace_skipped(fresh));
    }
    est_workspace_free(fresh);
    return rk;
}

/* A search's plans in one workspace, which keeps the pipelines' end states
 * of earlier plans and takes them when a pipeline's recurrence comes again
 * (run_memo.h), against a fresh workspace for each plan and against the op
 * path: every output the same, to the bit. The plans alternate between
 * random seed plans and their mutations, a few steps from a seed, as a
 * planner's offspring stay near their parents, so stored states come back
 * often, in plans that differ elsewhere. */
static void test_memo_equals_fresh(void **state)
{
    (void)state;
    topology t;
    parse_topo(&t);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 29);
    est_workspace *kept = est_workspace_new(), *ops = est_workspace_new();
    est_workspace_set_path(ops, EST_PATH_OPS);
    int compared = 0, recalled = 0, n = 0;
    long xfer_taken = 0;
    for (int seed = 0; seed < 60; seed++) {
        job j[2];
        plan base[2];
        for (int s = 0; s < 2; s++) { /* two seed plans, alternated */
            tiny_job(&j[s], pick(r, 8, 24));
            random_plan(r, &t, &j[s], &base[s]);
        }
        for (int step = 0; step < 40; step++, n++) {
            int s = step % 2;
            plan p;
            assert_int_equal(plan_copy(&p, &base[s]), 0);
            for (int m = pick(r, 0, 3); m > 0; m--)
                mutate(r, &p);
            if (kept_fresh_ops(kept, ops, &t, &j[s], &p, n) == 0) {
                recalled += est_workspace_recalled(kept);
                xfer_taken += est_workspace_xfer_taken(kept);
                compared++;
            }
            plan_free(&p);
        }
        plan_free(&base[0]);
        plan_free(&base[1]);
    }
    fprintf(stderr, "%d plans compared, %d pipelines recalled, %ld resources' transfer bounds "
                    "kept\n", compared, recalled, xfer_taken);
    assert_true(compared > 1000);
    assert_true(recalled > compared / 2);
    assert_true(xfer_taken > compared); /* the kept bounds were read, not only made */
    est_workspace_free(kept);
    est_workspace_free(ops);
    gsl_rng_free(r);
    topo_free(&t);
}

/* A stage of p moves to a GPU no stage uses (its transfers then cross
 * resources no kept stream crossed before); nothing when none is free. */
static void move_to_free_gpu(gsl_rng *r, const topology *t, plan *p)
{
    int used[64] = {0};
    for (int d = 0; d < p->npipes; d++)
        for (int k = 0; k < p->pipes[d].nstages; k++)
            for (int x = 0; x < p->pipes[d].stages[k].ngpus; x++)
                used[p->pipes[d].stages[k].gpus[x]] = 1;
    plan_pipeline *pp = &p->pipes[pick(r, 0, p->npipes - 1)];
    plan_stage *s = &pp->stages[pick(r, 0, pp->nstages - 1)];
    int g = pick(r, 0, t->ngpus - 1);
    for (int tries = 0; tries < t->ngpus && used[g]; tries++)
        g = (g + 1) % t->ngpus;
    if (used[g] || s->ngpus != 1)
        return;
    s->gpus[0] = g;
}

/* Sharded data parallelism per pass (ZeRO-2/3, FSDP) makes a stage's op
 * durations depend on where every replica of the stage is and on the
 * plan's sharding (sim/models/dp_overlap.h), which the stores keyed by one
 * stage or one pipeline do not see: plans that alternate sharding kinds and
 * move one pipeline's GPUs must still give, in one kept workspace, what a
 * fresh workspace and the op path give, to the bit. */
static void test_memo_equals_fresh_sharded(void **state)
{
    (void)state;
    topology t;
    parse_topo(&t);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    est_workspace *kept = est_workspace_new(), *ops = est_workspace_new();
    est_workspace_set_path(ops, EST_PATH_OPS);
    int compared = 0, sharded = 0;
    for (int seed = 0; seed < 80; seed++) {
        job j;
        plan base;
        tiny_job(&j, pick(r, 8, 24));
        random_plan(r, &t, &j, &base);
        for (int step = 0; step < 20; step++) {
            plan p;
            assert_int_equal(plan_copy(&p, &base), 0);
            p.dp_shard = (shard_kind)pick(r, SHARD_NONE, SHARD_FSDP);
            if (step % 2)
                move_to_free_gpu(r, &t, &p);
            if (kept_fresh_ops(kept, ops, &t, &j, &p, compared) == 0) {
                compared++;
                sharded += p.dp_shard >= SHARD_ZERO2 && p.npipes > 1;
            }
            plan_free(&p);
        }
        plan_free(&base);
    }
    fprintf(stderr, "%d plans compared, %d sharded per pass\n", compared, sharded);
    assert_true(sharded > 100);
    est_workspace_free(kept);
    est_workspace_free(ops);
    gsl_rng_free(r);
    topo_free(&t);
}


/* A local search in one workspace: each plan one mutation from the last
 * (GPUs swapped, a layer moved, a stage onto a free GPU), a new seed plan
 * every 60 steps. The transfer bound keeps each resource's result across
 * evaluations and works out only those a changed stream crosses
 * (xfer_kept.c), and a sync group new to the collective cache takes the
 * collective of a group of the same shape with its resources renamed
 * (coll_shape.h); every output must equal a fresh workspace's (which keeps
 * nothing from earlier plans) and the op path's (no cache at all), to the
 * bit, and both must have happened often. */
static void test_kept_transfer_bound_along_walk(void **state)
{
    (void)state;
    topology t;
    parse_topo(&t);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 41);
    est_workspace *kept = est_workspace_new(), *ops = est_workspace_new();
    assert_non_null(kept);
    assert_non_null(ops);
    est_workspace_set_path(ops, EST_PATH_OPS);
    int compared = 0, contended = 0, n = 0;
    long taken = 0;
    for (int seed = 0; seed < 50; seed++) {
        job j;
        tiny_job(&j, pick(r, 8, 24));
        plan p;
        random_plan(r, &t, &j, &p);
        for (int step = 0; step < 60; step++, n++) {
            if (pick(r, 0, 4) == 0)
                move_to_free_gpu(r, &t, &p);
            else
                mutate(r, &p);
            if (kept_fresh_ops(kept, ops, &t, &j, &p, n) == 0) {
                taken += est_workspace_xfer_taken(kept);
                contended += est_workspace_timing(ops)->iteration_ns >
                             est_workspace_timing(ops)->unbounded_ns;
                compared++;
            }
        }
        plan_free(&p);
    }
    long renamed = est_workspace_coll_renamed(kept);
    fprintf(stderr, "%d plans compared, %d with the transfer bound active, %ld resources' "
                    "bounds taken as kept, %ld collectives renamed from a group of their "
                    "shape\n", compared, contended, taken, renamed);
    assert_true(compared > 2000);
    assert_true(contended > 50);
    assert_true(taken > 2 * (long)compared);
    assert_true(renamed > 100);
    est_workspace_free(kept);
    est_workspace_free(ops);
    gsl_rng_free(r);
    topo_free(&t);
}

/* The interleaved schedule has no per-stage form here: the op path runs. */
static void test_interleaved_takes_op_path(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    parse_topo(&t);
    job j;
    tiny_job(&j, 8);
    plan p;
    plan_init(&p, 1);
    p.schedule = SCHED_INTERLEAVED;
    p.microbatch_size = 1;
    plan_pipe_alloc(&p, 0, 4);
    p.pipes[0].microbatches = 4;
    for (int k = 0; k < 4; k++)
        p.pipes[0].stages[k] = (plan_stage){.ngpus = 1, .gpus = {k % 2 ? 8 : 0},
                                            .first = 2 * k, .last = 2 * k + 1};
    j.batch = 4;
    est_workspace *ws = est_workspace_new();
    est_summary s;
    if (estimate_plan_ws(ws, &t, &j, &p, &s, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(est_workspace_fast(ws), 0);
    assert_true(s.iteration_s > 0);
    est_workspace_free(ws);
    plan_free(&p);
    topo_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_equals_op_path),
        cmocka_unit_test(test_caches_follow_inputs),
        cmocka_unit_test(test_caches_follow_in_place_changes),
        cmocka_unit_test(test_interleaved_takes_op_path),
        cmocka_unit_test(test_replicas_reuse_equals_op_path),
        cmocka_unit_test(test_memo_equals_fresh),
        cmocka_unit_test(test_memo_equals_fresh_sharded),
        cmocka_unit_test(test_kept_transfer_bound_along_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
