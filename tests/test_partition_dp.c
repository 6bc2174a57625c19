/* test_partition_dp.c — LS1's DP (planner/partition_dp.h) against brute force
 * over every layer split: on random monotone costs with random memory caps,
 * and on the real cost model through the encoding's decoder (one pipeline of
 * real GPUs, memory checked by plan_check). Both compare the lexicographic
 * optimum (largest stage cost, then sum) and feasibility. And the full
 * search's joint split (ENC_CUT_DP, planner/enc_split.c) against the three
 * rules decoded one by one: its estimated time is their minimum, on random
 * placements of 2-4 pipelines (where sync counts; one pipeline keeps LS1's).
 * And LS2 (planner/local_search.c) on four GPUs with a slow one among them:
 * from every stage order it reaches the best of all 24 orders, each decoded
 * with its own split (the oracle). And the documented miss, DT-FM's case 2:
 * the joint split keeps Megatron's 12/12 where LS1 cuts 13/11, and 12/12
 * replays faster. */
#include "testutil.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "planner/encoding.h"
#include "planner/local_search.h"
#include "planner/planner.h"
#include "planner/partition_dp.h"
#include "sim/models/cost.h"
#include "sim/models/attn_choice.h"
#include "sim/models/memory.h"
#include "sim/models/plan_check.h"

#define MAXL 12

typedef struct rnd_problem {
    int L, S;
    int64_t per[MAXL][MAXL];       /* per[k][l]: cost of layer l on stage k */
    int64_t first_x[MAXL], last_x[MAXL];
    int64_t w[MAXL], cap[MAXL], emb, head;
} rnd_problem;

static int64_t rp_cost(const void *vc, int k, int a, int e)
{
    const rnd_problem *p = vc;
    int64_t c = 0;
    for (int l = a; l <= e; l++)
        c += p->per[k][l];
    return c + (a == 0 ? p->first_x[k] : 0) + (e == p->L - 1 ? p->last_x[k] : 0);
}

static bool rp_fits(const void *vc, int k, int a, int e)
{
    const rnd_problem *p = vc;
    int64_t need = (e - a + 1) * p->w[k] + (a == 0 ? p->emb : 0) + (e == p->L - 1 ? p->head : 0);
    return need <= p->cap[k];
}

/* Whether split a is the documented tie-break's pick over b: the later cuts
 * first (compared from the last stage's first layer down). */
static bool later_cuts(const int *a, const int *b, int S)
{
    for (int k = S - 1; k > 0; k--)
        if (a[k] != b[k])
            return a[k] > b[k];
    return false;
}

/* All compositions of L into S positive parts: best (max, sum) or -1, and in
 * bfirst the split pdp_solve must return: of the best, the one with the
 * latest cuts. */
static int brute(const pdp_problem *p, int64_t *bmax, int64_t *bsum, int *bfirst)
{
    int first[MAXL + 1], found = 0;
    int L = p->L, S = p->S;
    /* cut positions: S-1 distinct points in 1..L-1, increasing */
    int c[MAXL];
    for (int i = 0; i < S - 1; i++)
        c[i] = i + 1;
    for (;;) {
        first[0] = 0;
        for (int i = 0; i < S - 1; i++)
            first[i + 1] = c[i];
        int64_t mx = 0, sm = 0;
        bool ok = true;
        for (int k = 0; k < S && ok; k++) {
            int e = k + 1 < S ? first[k + 1] - 1 : L - 1;
            ok = !p->fits || p->fits(p->ctx, k, first[k], e);
            int64_t v = p->cost(p->ctx, k, first[k], e);
            mx = v > mx ? v : mx;
            sm += v;
        }
        if (ok && (!found || mx < *bmax || (mx == *bmax && sm < *bsum) ||
                   (mx == *bmax && sm == *bsum && later_cuts(first, bfirst, S)))) {
            *bmax = mx;
            *bsum = sm;
            memcpy(bfirst, first, sizeof(int) * (size_t)S);
            found = 1;
        }
        /* next combination */
        int i = S - 2;
        while (i >= 0 && c[i] == L - 1 - (S - 2 - i))
            i--;
        if (i < 0)
            break;
        c[i]++;
        for (int k = i + 1; k < S - 1; k++)
            c[k] = c[k - 1] + 1;
    }
    return found ? 0 : -1;
}

static void check_split(const pdp_problem *p, const int *first, const pdp_result *r)
{
    int64_t mx = 0, sm = 0;
    assert_int_equal(first[0], 0);
    for (int k = 0; k < p->S; k++) {
        int e = k + 1 < p->S ? first[k + 1] - 1 : p->L - 1;
        assert_true(e >= first[k]);
        if (p->fits)
            assert_true(p->fits(p->ctx, k, first[k], e));
        int64_t v = p->cost(p->ctx, k, first[k], e);
        mx = v > mx ? v : mx;
        sm += v;
    }
    if (mx != r->max_cost || sm != r->sum_cost) {
        fprintf(stderr, "L=%d S=%d split:", p->L, p->S);
        for (int k = 0; k < p->S; k++)
            fprintf(stderr, " %d", first[k]);
        fprintf(stderr, " got max %lld sum %lld, reported %lld %lld\n", (long long)mx,
                (long long)sm, (long long)r->max_cost, (long long)r->sum_cost);
    }
    assert_true(mx == r->max_cost);
    assert_true(sm == r->sum_cost);
}

static void random_costs(void **state)
{
    (void)state;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    int feasible = 0, infeasible = 0;
    for (int trial = 0; trial < 3000; trial++) {
        rnd_problem rp;
        memset(&rp, 0, sizeof rp);
        rp.L = 1 + (int)gsl_rng_uniform_int(rng, MAXL);
        rp.S = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)rp.L);
        bool uniform = gsl_rng_uniform(rng) < 0.5; /* per-stage uniform layers (ties) */
        for (int k = 0; k < rp.S; k++) {
            int64_t base = 1 + (int64_t)gsl_rng_uniform_int(rng, 20);
            for (int l = 0; l < rp.L; l++)
                rp.per[k][l] = uniform ? base : 1 + (int64_t)gsl_rng_uniform_int(rng, 50);
            rp.first_x[k] = (int64_t)gsl_rng_uniform_int(rng, 30);
            rp.last_x[k] = (int64_t)gsl_rng_uniform_int(rng, 30);
            rp.w[k] = 1 + (int64_t)gsl_rng_uniform_int(rng, 5);
            rp.cap[k] = (int64_t)gsl_rng_uniform_int(rng, 40);
        }
        rp.emb = (int64_t)gsl_rng_uniform_int(rng, 8);
        rp.head = (int64_t)gsl_rng_uniform_int(rng, 8);
        bool memory = gsl_rng_uniform(rng) < 0.7;
        pdp_problem p = {rp.L, rp.S, rp_cost, memory ? rp_fits : NULL, &rp, uniform};
        int64_t bmax = 0, bsum = 0;
        int bfirst[MAXL + 1];
        int brc = brute(&p, &bmax, &bsum, bfirst);
        int first[MAXL];
        pdp_result r;
        int rc = pdp_solve(&p, first, &r);
        assert_int_equal(rc, brc);
        assert_int_equal(pdp_feasible(&p, INT64_MAX), brc == 0);
        if (rc == 0) {
            feasible++;
            check_split(&p, first, &r);
            assert_true(r.max_cost == bmax);
            assert_true(r.sum_cost == bsum);
            /* the solve's cached memory answers pick the very split the
             * callbacks alone define */
            assert_memory_equal(first, bfirst, sizeof(int) * (size_t)rp.S);
            assert_true(pdp_feasible(&p, bmax));
            assert_false(pdp_feasible(&p, bmax - 1));
        } else {
            infeasible++;
        }
    }
    assert_true(feasible > 1000);
    assert_true(infeasible > 100);
    gsl_rng_free(rng);
}

/* --- the real cost model through the decoder ------------------------------------ */

static const char *TOPO =
    "{\"name\":\"dp\",\"sites\":["
    "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2},{\"gpu\":\"t4\",\"count\":2}],"
    "\"lan\":{\"gbps\":10,\"latency_ms\":0.5}},"
    "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"v100_sxm2_16gb\",\"count\":2},{\"gpu\":\"l4\",\"count\":2}],"
    "\"lan\":{\"gbps\":10,\"latency_ms\":0.5}}],"
    "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":1,\"latency_ms\":20}]}";

/* The decoder's stage cost: fwd+bwd of one microbatch, layers x per-layer ns
 * plus the head on the last layer (encoding.h's surrogate). */
static int64_t surrogate(const enc_problem *pr, int bi, int gpu, int a, int e)
{
    size_t x = (size_t)bi * (size_t)pr->ntypes + (size_t)pr->t->gpus[gpu].type;
    return pr->lay_ns[x] * (e - a + 1) + (a == 0 ? pr->emb_ns[x] : 0) +
           (e == pr->L - 1 ? pr->head_ns[x] : 0);
}

typedef struct real_ctx {
    const enc_problem *pr;
    const genome *g;
    const job *j;
} real_ctx;

static int64_t real_cost(const void *vc, int k, int a, int e)
{
    const real_ctx *c = vc;
    return surrogate(c->pr, c->g->bi, c->g->perm[k], a, e);
}

static bool real_fits(const void *vc, int k, int a, int e)
{
    const real_ctx *c = vc;
    int S = c->g->S, m = c->g->mb[0];
    int inflight = c->g->sched == SCHED_GPIPE ? m : (S - k < m ? S - k : m);
    const gpu_type *ty = topo_gpu_type(c->pr->t, c->g->perm[k]);
    job jb; /* the kernel this GPU type runs under --attention auto */
    double need = cost_stage_memory(attn_job_on(c->j, ty, &jb), c->pr->bval[c->g->bi], a, e, 1,
                                    inflight);
    return need <= ty->mem_bytes;
}

/* A job on a GPT-like model of `layers` layers (hidden 2048). */
static void test_job(job *j, int layers, int batch)
{
    model_spec m = {.layers = layers, .hidden = 2048, .heads = 16, .kv_heads = 16, .ffn = 8192,
                    .vocab = 50000, .seq_len = 2048, .bias = true, .learned_pos = true};
    snprintf(m.id, sizeof m.id, "m");
    job_defaults(j, &m);
    j->batch = batch;
}

static void real_model(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    assert_int_equal(topo_parse(&t, "dp", TOPO, strlen(TOPO), NULL, &e), 0);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    int checked = 0, infeasible = 0;
    for (int trial = 0; trial < 200; trial++) {
        job j;
        test_job(&j, 6 + (int)gsl_rng_uniform_int(rng, 7), 16);
        enc_problem pr;
        enc_cfg ls1 = {ENC_CUT_MINMAX, false, NULL}; /* LS1 alone */
        assert_int_equal(enc_problem_init(&pr, &t, &j, &ls1, &e), 0);
        genome g;
        assert_int_equal(genome_alloc(&g, pr.N), 0);
        enc_seed(&pr, SEED_RANDOM, 1 + (int)gsl_rng_uniform_int(rng, 6), 1,
                 gsl_rng_uniform(rng) < 0.5 ? SCHED_1F1B : SCHED_GPIPE, SYNC_RING, 0, rng, &g);
        g.S = 1 + (int)gsl_rng_uniform_int(rng, 6);
        g.D = 1;
        int rc = enc_decode(&pr, &g, NULL);
        if (rc == 0) {
            real_ctx c = {&pr, &g, &j};
            pdp_problem p = {pr.L, g.S, real_cost, real_fits, &c, false};
            int64_t bmax, bsum;
            int bfirst[MAXL + 1];
            assert_int_equal(brute(&p, &bmax, &bsum, bfirst), 0);
            int64_t mx = 0, sm = 0;
            for (int k = 0; k < g.S; k++) {
                int last = k + 1 < g.S ? g.first[k + 1] - 1 : pr.L - 1;
                int64_t v = surrogate(&pr, g.bi, g.perm[k], g.first[k], last);
                mx = v > mx ? v : mx;
                sm += v;
            }
            assert_true(mx == bmax);
            assert_true(sm == bsum);
            /* the decoder's split (its solve caches the memory answers) is the
             * one the brute force's tie-break picks */
            assert_memory_equal(g.first, bfirst, sizeof(int) * (size_t)g.S);
            plan pl;
            assert_int_equal(enc_to_plan(&pr, &g, "t", "time", &pl, &e), 0);
            assert_int_equal(plan_check(&pl, &t, &j, &e), 0);
            plan_free(&pl);
            checked++;
        } else {
            infeasible++;
        }
        genome_free(&g);
        enc_problem_free(&pr);
    }
    assert_true(checked > 50);
    gsl_rng_free(rng);
    topo_free(&t);
}

/* ENC_CUT_DP keeps, of the min-max, uniform and speed-proportional splits,
 * the one enc_estimate finds fastest: decode the same genome under each rule
 * alone (its own problem) and compare. */
static double rule_time(const topology *t, const job *j, enc_cut_rule rule, const genome *g0,
                        int *first, int *mb)
{
    enc_problem pr;
    gt_err e;
    enc_cfg c = {rule, false, NULL};
    assert_int_equal(enc_problem_init(&pr, t, j, &c, &e), 0);
    genome g;
    assert_int_equal(genome_alloc(&g, pr.N), 0);
    genome_copy(&g, g0, pr.N);
    double v = INFINITY;
    obj_metrics m;
    if (enc_decode(&pr, &g, NULL) == 0 && enc_estimate(&pr, &g, &m) == 1)
        v = m.time_s;
    if (first)
        memcpy(first, g.first, sizeof(int) * (size_t)pr.N);
    if (mb) /* the rule's microbatch split too: with the other's, its cuts may not fit */
        memcpy(mb, g.mb, sizeof(int) * (size_t)g.D);
    genome_free(&g);
    enc_problem_free(&pr);
    return v;
}

static double replay_s(const enc_problem *pr, const genome *g)
{
    plan p;
    obj_metrics sim;
    gt_err e;
    assert_int_equal(enc_simulate(pr, g, "t", "time", &p, &sim, &e), 0);
    plan_free(&p);
    return sim.time_s;
}

static void joint_split(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    assert_int_equal(topo_parse(&t, "dp", TOPO, strlen(TOPO), NULL, &e), 0);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    int checked = 0, not_minmax = 0, clear = 0;
    for (int trial = 0; trial < 120; trial++) {
        job j;
        test_job(&j, 6 + (int)gsl_rng_uniform_int(rng, 19), 32);
        enc_problem pr;
        assert_int_equal(enc_problem_init(&pr, &t, &j, NULL, &e), 0);
        genome g;
        assert_int_equal(genome_alloc(&g, pr.N), 0);
        int D = 1 + (int)gsl_rng_uniform_int(rng, 4), S = 1 + (int)gsl_rng_uniform_int(rng, 8 / D);
        enc_seed(&pr, SEED_RANDOM, S, D, gsl_rng_uniform(rng) < 0.5 ? SCHED_1F1B : SCHED_GPIPE,
                 (sync_kind)gsl_rng_uniform_int(rng, 3), 0, rng, &g);
        g.S = S;
        g.D = D;
        genome g0;
        assert_int_equal(genome_alloc(&g0, pr.N), 0);
        genome_copy(&g0, &g, pr.N);
        obj_metrics mj;
        if (enc_decode(&pr, &g, NULL) == 0 && enc_estimate(&pr, &g, &mj) == 1) {
            int fm[pr.N], mm[D];
            double tm = rule_time(&t, &j, ENC_CUT_MINMAX, &g0, fm, mm);
            double tu = rule_time(&t, &j, ENC_CUT_UNIFORM, &g0, NULL, NULL);
            double ts = rule_time(&t, &j, ENC_CUT_SPEED, &g0, NULL, NULL);
            /* one pipeline: LS1's split stands (no sync to weigh) */
            double best = D == 1 ? tm : fmin(tm, fmin(tu, ts));
            assert_true(isfinite(best));
            assert_true(fabs(mj.time_s - best) <= 1e-12 * best);
            if (memcmp(fm, g.first, sizeof(int) * (size_t)(S * D))) {
                /* a split other than min-max won on the estimate: the
                 * simulator must agree that it is no slower */
                genome gm;
                assert_int_equal(genome_alloc(&gm, pr.N), 0);
                genome_copy(&gm, &g, pr.N);
                memcpy(gm.first, fm, sizeof(int) * (size_t)pr.N);
                memcpy(gm.mb, mm, sizeof(int) * (size_t)D);
                double rj = replay_s(&pr, &g), rm = replay_s(&pr, &gm);
                print_message("joint %.9g s, min-max %.9g s (estimates %.9g, %.9g)\n", rj, rm,
                              mj.time_s, tm);
                /* the estimate is a lower bound of the replay, so where it
                 * tells the splits apart (1 %) and is tight on the joint
                 * split's plan (replay within 0.1 %: no contention it
                 * misses), the replay must rank them alike: rj ~ est(joint)
                 * < est(min-max) <= rm. Plans whose replay sees contention
                 * the estimate does not are left to the planner's finalists
                 * (both splits are replayed there). */
                if (mj.time_s < tm * 0.99 && rj <= mj.time_s * 1.001) {
                    assert_true(rj < rm);
                    clear++;
                }
                genome_free(&gm);
                not_minmax++;
            }
            checked++;
        }
        genome_free(&g0);
        genome_free(&g);
        enc_problem_free(&pr);
    }
    printf("joint split: %d placements, %d where LS1's min-max split was not the fastest "
           "(%d by more than 1 %% on a tight estimate, all faster on the replay)\n",
           checked, not_minmax, clear);
    /* no floor on `clear`: since unfused attention on V100s and T4s, few random
     * plans of this pool have a tight estimate; the documented miss (case 2,
     * 12/12 against 13/11) checks the joint split on the replay below */
    assert_true(checked > 30);
    gsl_rng_free(rng);
    topo_free(&t);
}

/* The decoder's memory of candidate splits (enc_decode_memo, encoding.h):
 * placements decoded again under other genes, in random order as the genes
 * sweep does, decode exactly as enc_decode alone does (the oracle): same
 * status, canonical permutation, cuts, microbatches, rule and estimate. */
static void split_memo(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    assert_int_equal(topo_parse(&t, "dp", TOPO, strlen(TOPO), NULL, &e), 0);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 17);
    int decoded = 0, failed = 0, again = 0;
    for (int trial = 0; trial < 80; trial++) {
        job j;
        test_job(&j, 6 + (int)gsl_rng_uniform_int(rng, 19), 32);
        enc_problem pr;
        assert_int_equal(enc_problem_init(&pr, &t, &j, NULL, &e), 0);
        enc_split_memo *memo = enc_split_memo_new(&pr);
        assert_non_null(memo);
        genome g, a, b;
        assert_int_equal(genome_alloc(&g, pr.N), 0);
        assert_int_equal(genome_alloc(&a, pr.N), 0);
        assert_int_equal(genome_alloc(&b, pr.N), 0);
        for (int place = 0; place < 15; place++) {
            int D = 1 + (int)gsl_rng_uniform_int(rng, 4), S = 1 + (int)gsl_rng_uniform_int(rng, 8 / D);
            enc_seed(&pr, SEED_RANDOM, S, D, SCHED_GPIPE, SYNC_RING, 0, rng, &g);
            g.S = S;
            g.D = D;
            for (int v = 0; v < 8; v++) { /* genes of the same placement */
                genome_copy(&a, &g, pr.N);
                a.sched = gsl_rng_uniform(rng) < 0.5 ? SCHED_1F1B : SCHED_GPIPE;
                a.sync = (sync_kind)gsl_rng_uniform_int(rng, ENC_NSYNC);
                a.bi = (int)gsl_rng_uniform_int(rng, (unsigned long)pr.nb);
                genome_copy(&b, &a, pr.N);
                int ra = enc_decode(&pr, &a, NULL), rb = enc_decode_memo(&pr, &b, memo);
                assert_int_equal(ra, rb);
                again += v > 0;
                if (ra) {
                    failed++;
                    continue;
                }
                decoded++;
                assert_memory_equal(a.perm, b.perm, sizeof(int) * (size_t)pr.N);
                assert_memory_equal(a.first, b.first, sizeof(int) * (size_t)(S * D));
                assert_memory_equal(a.mb, b.mb, sizeof(int) * (size_t)D);
                assert_int_equal(a.split, b.split);
                assert_int_equal(a.est_ok, b.est_ok);
                if (a.est_ok)
                    assert_memory_equal(&a.est, &b.est, sizeof a.est);
            }
        }
        genome_free(&g);
        genome_free(&a);
        genome_free(&b);
        enc_split_memo_free(memo);
        enc_problem_free(&pr);
    }
    printf("split memo: %d genomes decoded alike (%d of placements met before), %d refused alike\n",
           decoded, again, failed);
    assert_true(decoded > 1000);
    gsl_rng_free(rng);
    topo_free(&t);
}

/* --- stage order and split together (LS2, planner/local_search.c) --------------- */

/* One site, four nodes of one GPU each (four classes): three A100s and a
 * T4. All transfers cost the same, so LS2's shortest transfer path cannot
 * tell the orders apart; only decoding each order with its own split and
 * evaluating it can (where the T4 sits decides its layers, 4/1/4/3 against
 * 4/4/1/3, and the in-flight activations each stage holds). */
static const char *ORDER_TOPO =
    "{\"name\":\"order\",\"sites\":[{\"id\":\"s\",\"nodes\":["
    "{\"gpu\":\"a100_sxm_80gb\",\"count\":1},{\"gpu\":\"a100_sxm_80gb\",\"count\":1},"
    "{\"gpu\":\"t4\",\"count\":1},{\"gpu\":\"a100_sxm_80gb\",\"count\":1}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.05}}]}";

static void eval_time(void *ctx, genome *g)
{
    const enc_problem *pr = ctx;
    g->status = enc_decode(pr, g, NULL) == 0 ? enc_estimate(pr, g, &g->est) : -1;
    g->fit = g->status == 1 ? g->est.time_s : INFINITY;
}

static void order_of(genome *g, int x)
{
    static const int PERMS[24][4] = {
        {0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {0, 3, 2, 1},
        {1, 0, 2, 3}, {1, 0, 3, 2}, {1, 2, 0, 3}, {1, 2, 3, 0}, {1, 3, 0, 2}, {1, 3, 2, 0},
        {2, 0, 1, 3}, {2, 0, 3, 1}, {2, 1, 0, 3}, {2, 1, 3, 0}, {2, 3, 0, 1}, {2, 3, 1, 0},
        {3, 0, 1, 2}, {3, 0, 2, 1}, {3, 1, 0, 2}, {3, 1, 2, 0}, {3, 2, 0, 1}, {3, 2, 1, 0}};
    memcpy(g->perm, PERMS[x], sizeof PERMS[x]);
    g->S = 4;
    g->D = 1;
    g->bi = 0;
    g->sched = SCHED_1F1B;
    g->sync = SYNC_RING;
    g->status = 0;
}

static void order_and_split(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    assert_int_equal(topo_parse(&t, "order", ORDER_TOPO, strlen(ORDER_TOPO), NULL, &e), 0);
    job j;
    test_job(&j, 12, 16);
    enc_problem pr;
    assert_int_equal(enc_problem_init(&pr, &t, &j, NULL, &e), 0);
    genome g, tmp, best;
    assert_int_equal(genome_alloc(&g, pr.N) || genome_alloc(&tmp, pr.N) ||
                         genome_alloc(&best, pr.N), 0);
    /* the oracle: every order, each with its decoded split */
    double opt = INFINITY;
    int t4_at = -1, worse = 0;
    for (int x = 0; x < 24; x++) {
        order_of(&g, x);
        eval_time(&pr, &g);
        if (g.status == 1 && g.fit < opt) {
            opt = g.fit;
            for (int k = 0; k < 4; k++)
                t4_at = g.perm[k] == 2 ? k : t4_at;
        }
    }
    assert_true(isfinite(opt));
    /* from every order, LS2 to a fixpoint reaches the oracle's optimum */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int x = 0; x < 24; x++) {
        order_of(&g, x);
        eval_time(&pr, &g);
        if (g.status != 1)
            continue;
        worse += g.fit > opt * (1 + 1e-12);
        ls_env env = {&pr, eval_time, &pr, rng, &tmp, &best, 8, 0, 0};
        for (int r = 0; r < 8 && ls_stage_order(&env, &g); r++)
            ;
        if (!(g.fit <= opt * (1 + 1e-12)))
            print_message("start %d: LS2 ends at %.9g s, the best order %.9g s\n", x, g.fit, opt);
        assert_true(g.fit <= opt * (1 + 1e-12));
    }
    printf("order and split: the best of 24 orders puts the T4 at stage %d (%.6f s); LS2 "
           "reaches it from all %d starts that are slower\n", t4_at, opt, worse);
    assert_true(worse > 0); /* the order matters: the test can fail */
    gsl_rng_free(rng);
    genome_free(&g);
    genome_free(&tmp);
    genome_free(&best);
    enc_problem_free(&pr);
    topo_free(&t);
}

/* --- the documented miss: DT-FM's case 2 --------------------------------------- */

/* Yuan et al.'s case-2 pool, GPT3-XL (24 layers), batch 1024, full
 * recomputation: Megatron's grid search picks 2 stages x 32 pipelines cut
 * 12/12. On that placement LS1's min-max split is 13/11 (the head makes the
 * last stage's compute heavier), which computes faster and syncs more: the
 * joint split must keep 12/12, and the simulator must agree that it is the
 * faster of the two. */
static void case2_split(void **state)
{
    (void)state;
    gt_err e;
    topology t;
    assert_int_equal(topo_load(&t, "topologies/yuan2022/case2.json", NULL, &e), 0);
    model_spec m;
    assert_int_equal(model_resolve("gpt3-xl", &m, &e), 0);
    job j;
    job_defaults(&j, &m);
    j.batch = 1024;
    j.recompute = RECOMPUTE_FULL;
    planner_opts o = {"time", 1, 0, 0, 1, false, 0, NULL, NULL, 0};
    plan pm;
    planner_stats st;
    assert_int_equal(planner_plan(planner_find("megatron"), &t, &j, &o, &pm, &st, &e), 0);
    assert_int_equal(pm.pipes[0].nstages, 2);
    enc_problem pj, pl;
    enc_cfg ls1 = {ENC_CUT_MINMAX, false, NULL};
    assert_int_equal(enc_problem_init(&pj, &t, &j, NULL, &e), 0);
    assert_int_equal(enc_problem_init(&pl, &t, &j, &ls1, &e), 0);
    genome gj, gl;
    assert_int_equal(genome_alloc(&gj, pj.N) || genome_alloc(&gl, pl.N), 0);
    assert_int_equal(enc_from_plan(&pj, &pm, &gj), 0);
    assert_int_equal(enc_from_plan(&pl, &pm, &gl), 0);
    assert_int_equal(enc_decode(&pj, &gj, NULL), 0);
    assert_int_equal(enc_decode(&pl, &gl, NULL), 0);
    int L = pj.L;
    assert_int_equal(gl.first[1], L / 2 + 1); /* min-max: 13/11 */
    assert_int_equal(gj.first[1], L / 2);     /* joint: 12/12, as Megatron */
    double rj = replay_s(&pj, &gj), rl = replay_s(&pl, &gl);
    printf("case 2: joint split 12/12 replays %.6f s, LS1's 13/11 %.6f s\n", rj, rl);
    assert_true(rj < rl);
    genome_free(&gj);
    genome_free(&gl);
    enc_problem_free(&pj);
    enc_problem_free(&pl);
    plan_free(&pm);
    topo_free(&t);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_costs),
        cmocka_unit_test(real_model),
        cmocka_unit_test(joint_split),
        cmocka_unit_test(split_memo),
        cmocka_unit_test(order_and_split),
        cmocka_unit_test(case2_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
