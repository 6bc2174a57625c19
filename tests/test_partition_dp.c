/* test_partition_dp.c — LS1's DP (planner/partition_dp.h) against brute force
 * over every layer split: on random monotone costs with random memory caps,
 * and on the real cost model through the encoding's decoder (one pipeline of
 * real GPUs, memory checked by plan_check). Both compare the lexicographic
 * optimum (largest stage cost, then sum) and feasibility. */
#include "testutil.h"

#include <gsl/gsl_rng.h>

#include "planner/encoding.h"
#include "planner/partition_dp.h"
#include "sim/cost.h"
#include "sim/memory.h"

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

/* All compositions of L into S positive parts: best (max, sum) or -1. */
static int brute(const pdp_problem *p, int64_t *bmax, int64_t *bsum)
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
        if (ok && (!found || mx < *bmax || (mx == *bmax && sm < *bsum))) {
            *bmax = mx;
            *bsum = sm;
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
        int brc = brute(&p, &bmax, &bsum);
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
    double need = cost_stage_memory(c->j, c->pr->bval[c->g->bi], a, e, 1, inflight);
    return need <= topo_gpu_type(c->pr->t, c->g->perm[k])->mem_bytes;
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
        model_spec m = {.layers = 6 + (int)gsl_rng_uniform_int(rng, 7), .hidden = 2048,
                        .heads = 16, .kv_heads = 16, .ffn = 8192, .vocab = 50000,
                        .seq_len = 2048, .bias = true, .learned_pos = true};
        snprintf(m.id, sizeof m.id, "m");
        job j;
        job_defaults(&j, &m);
        j.batch = 16;
        enc_problem pr;
        assert_int_equal(enc_problem_init(&pr, &t, &j, NULL, &e), 0);
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
            assert_int_equal(brute(&p, &bmax, &bsum), 0);
            int64_t mx = 0, sm = 0;
            for (int k = 0; k < g.S; k++) {
                int last = k + 1 < g.S ? g.first[k + 1] - 1 : pr.L - 1;
                int64_t v = surrogate(&pr, g.bi, g.perm[k], g.first[k], last);
                mx = v > mx ? v : mx;
                sm += v;
            }
            assert_true(mx == bmax);
            assert_true(sm == bsum);
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

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_costs),
        cmocka_unit_test(real_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
