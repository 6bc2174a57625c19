/* test_exact_nic.c — the exact referee's NIC-load bounds (planner/exact_nic.c),
 * its row bound by the decoder's own cuts (planner/exact_cut.c) and by layer
 * granularity (planner/exact_grain.c):
 *   - closed forms on one site of two nodes of two GPUs: D rows of one stage
 *     (every member in its own pipeline, a ring over both nodes) load each
 *     NIC with 2 (D - 1) / D of the model's gradient bytes, and the bound of
 *     the selection and of the grid is that over the NIC rate, which is also
 *     the traffic floor; two rows each within one node load each NIC with
 *     the gradients once;
 *   - on random plans of generated multi-node pools (two sites, nodes of two
 *     and three GPUs, NICs of different rates), for every decoded plan: the
 *     grid's, the selection's and every partial placement's NIC bounds stay
 *     below the plan's traffic floor (enc_traffic_floor, which the estimate
 *     takes as its least time), the decoder's layer split of each row is
 *     one the cut masks allow, and the row's trip by the decoder's cuts is
 *     at most that row's one-microbatch trip in the decoded plan (the
 *     estimator's stage times); the row's granularity bound at most the
 *     least trip over every layer split (brute force) and the decoded one;
 *     and the bounds bite on many of them. */
#include "testutil.h"
#include "exact_partial.h"

#include <gsl/gsl_rng.h>
#include <math.h>

#include "planner/encoding.h"
#include "planner/exact.h"
#include "planner/exact_space.h"
#include "sim/models/cost.h"
#include "sim/models/dp_sync.h"

static const char *const TYPES[] = {"a100_sxm_80gb", "v100_sxm2_16gb", "t4", "l4", "h100_sxm"};

typedef struct pool {
    topology t;
    job j;
    enc_problem pr;
    exact_space *sp;
} pool;

static void pool_open(pool *p, const char *json, int layers, int batch)
{
    gt_err e;
    assert_int_equal(topo_parse(&p->t, "pool", json, strlen(json), NULL, &e), 0);
    model_spec m = {.layers = layers, .hidden = 1024, .heads = 16, .kv_heads = 16, .ffn = 4096,
                    .vocab = 32000, .seq_len = 1024, .bias = true, .learned_pos = true};
    snprintf(m.id, sizeof m.id, "tiny");
    job_defaults(&p->j, &m);
    p->j.batch = batch;
    enc_cfg c = {ENC_CUT_DP, false, NULL}; /* the exact referee's decoding */
    assert_int_equal(enc_problem_init(&p->pr, &p->t, &p->j, &c, &e), 0);
    assert_int_equal(exact_enumerate(&p->pr, 60, 1, &p->sp, &e), 0);
}

static void pool_close(pool *p)
{
    exact_space_free(p->sp);
    enc_problem_free(&p->pr);
    topo_free(&p->t);
}

/* The model's gradient bytes, per layer as the sync groups add them up. */
static double model_grads(const pool *p)
{
    double G = 0;
    for (int l = 0; l < p->pr.L; l++)
        G += dp_grad_bytes(&p->j, l, l, 1);
    return G;
}

static void closed_forms(void **state)
{
    (void)state;
    /* one site, two nodes of two A100 with a 10 Gb/s NIC (1.25e9 B/s) */
    static const char json[] =
        "{\"name\":\"two\",\"sites\":[{\"id\":\"x\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\","
        "\"count\":2,\"nic_gbps\":10,\"repeat\":2}],\"lan\":{\"gbps\":10,\"latency_ms\":0.1}}],"
        "\"links\":[]}";
    pool p;
    pool_open(&p, json, 4, 8);
    double G = model_grads(&p), bw = 1.25e9;
    /* 1 x 4: a ring of four members over two nodes, each NIC sends 3/2 G */
    int cnt[1] = {4}, grid4[4] = {0, 1, 2, 3};
    assert_int_equal(p.sp->ngroup, 1);
    double sel = exact_nic_sel(p.sp, 1, 4, cnt), grid = exact_nic_grid(p.sp, 1, 4, grid4);
    assert_true(rel_diff(sel, 1.5 * G / bw) < 1e-6);
    assert_true(rel_diff(grid, 1.5 * G / bw) < 1e-6);
    genome g;
    assert_int_equal(genome_alloc(&g, p.pr.N), 0);
    assert_int_equal(enc_set_grid(&p.pr, &g, grid4, 1, 4), 0);
    g.bi = 0;
    g.sched = SCHED_1F1B;
    g.sync = SYNC_RING;
    assert_int_equal(enc_decode(&p.pr, &g, NULL), 0);
    double floor_s = enc_traffic_floor(&p.pr, &g);
    assert_true(rel_diff(floor_s, 1.5 * G / bw) < 1e-6); /* tight */
    /* 2 x 2, each row within one node: each NIC sends G (ring of two) */
    int rows[4] = {0, 1, 2, 3};
    assert_true(rel_diff(exact_nic_grid(p.sp, 2, 2, rows), G / bw) < 1e-6);
    /* 2 x 2, each row across both nodes: no node is avoided by a row, and
     * with both rows' layers on the same node per stage the groups may stay
     * inside the nodes: only the cut masks can tell, and the bound stays
     * below the floor of the decoded plan */
    int across[4] = {0, 2, 1, 3};
    assert_int_equal(enc_set_grid(&p.pr, &g, across, 2, 2), 0);
    assert_int_equal(enc_decode(&p.pr, &g, NULL), 0);
    assert_true(exact_nic_grid(p.sp, 2, 2, across) <= enc_traffic_floor(&p.pr, &g));
    genome_free(&g);
    pool_close(&p);
}

/* Two sites: x with `a` nodes of two GPUs (type tx, NIC nx) and a node of
 * three (type ty), y with two nodes of two (type ty, NIC ny). */
static void nic_topology(int seed, char *buf, size_t cap)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)(901 + seed));
    const char *tx = TYPES[gsl_rng_uniform_int(r, 5)], *ty = TYPES[gsl_rng_uniform_int(r, 5)];
    int a = 1 + (int)gsl_rng_uniform_int(r, 2);
    double nx = 5 + 95 * gsl_rng_uniform(r), ny = 5 + 95 * gsl_rng_uniform(r);
    snprintf(buf, cap,
             "{\"name\":\"nic%d\",\"sites\":["
             "{\"id\":\"x\",\"nodes\":[{\"gpu\":\"%s\",\"count\":2,\"nic_gbps\":%.1f,\"repeat\":%d},"
             "{\"gpu\":\"%s\",\"count\":3,\"nic_gbps\":%.1f}],\"lan\":{\"gbps\":100,\"latency_ms\":0.05}},"
             "{\"id\":\"y\",\"nodes\":[{\"gpu\":\"%s\",\"count\":2,\"nic_gbps\":%.1f,\"repeat\":2}],"
             "\"lan\":{\"gbps\":100,\"latency_ms\":0.05}}],"
             "\"links\":[{\"a\":\"x\",\"b\":\"y\",\"gbps\":%.2f,\"latency_ms\":%.1f}]}",
             seed, tx, nx, a, ty, ny, ty, ny, 1 + 20 * gsl_rng_uniform(r), 2 + 40 * gsl_rng_uniform(r));
    gsl_rng_free(r);
}

/* The one-microbatch trip of pipeline p of a decoded genome, as the
 * estimator prices its stages (seconds). */
static double decoded_trip(const pool *po, const genome *g, int p)
{
    int64_t t = 0;
    for (int k = 0; k < g->S; k++) {
        const gpu_type *ty = topo_gpu_type(&po->t, g->perm[p * g->S + k]);
        int a = g->first[p * g->S + k], e = k + 1 < g->S ? g->first[p * g->S + k + 1] - 1 : po->pr.L - 1;
        t += cost_stage_fwd_ns(&po->j, ty, 1, po->pr.bval[g->bi], a, e, 1.0) +
             cost_stage_bwd_ns(&po->j, ty, 1, po->pr.bval[g->bi], a, e, 1.0);
    }
    return 1e-9 * (double)t;
}

/* The least one-microbatch trip of a row over every split of the L layers
 * into S stages of at least one layer (brute force over the cut points). */
static double least_split_trip(const pool *po, const int *row, int S, int bi)
{
    int L = po->pr.L, first[16];
    double best = INFINITY;
    assert_true(S <= 16);
    for (int k = 0; k < S; k++)
        first[k] = k;
    for (;;) {
        int64_t t = 0;
        for (int k = 0; k < S; k++) {
            const gpu_type *ty = topo_gpu_type(&po->t, row[k]);
            int a = first[k], e = k + 1 < S ? first[k + 1] - 1 : L - 1;
            t += cost_stage_fwd_ns(&po->j, ty, 1, po->pr.bval[bi], a, e, 1.0) +
                 cost_stage_bwd_ns(&po->j, ty, 1, po->pr.bval[bi], a, e, 1.0);
        }
        best = fmin(best, 1e-9 * (double)t);
        int k = S - 1; /* the next cut points, in lexicographic order */
        while (k > 0 && first[k] == L - S + k)
            k--;
        if (k == 0)
            return best;
        first[k]++;
        for (int x = k + 1; x < S; x++)
            first[x] = first[x - 1] + 1;
    }
}

typedef struct tally {
    int plans, nic, layers, cut, grain;
} tally;

/* Every bound of one decoded plan against its traffic floor and trips. */
static void check_plan(const pool *po, const genome *g, double floor_s, tally *n)
{
    const exact_space *sp = po->sp;
    const enc_problem *pr = &po->pr;
    int S = g->S, D = g->D, G = sp->ngroup, C = pr->nclass;
    int *cnt = calloc((size_t)G, sizeof *cnt), *left = calloc((size_t)G, sizeof *left);
    int *room = malloc(sizeof *room * (size_t)C), *touch = malloc(sizeof *touch * (size_t)C);
    uint64_t *lw = malloc(sizeof *lw * (size_t)(2 * pr->L));
    double *load = malloc(sizeof *load * (size_t)C);
    assert_true(cnt && left && room && touch && lw && load);
    for (int x = 0; x < S * D; x++)
        cnt[sp->group_of[pr->cls[g->perm[x]]]]++;
    bool one = exact_nic_one_site(sp, cnt);
    double grid = exact_nic_grid(sp, S, D, g->perm);
    assert_true(grid <= floor_s);
    assert_true(exact_nic_sel(sp, S, D, cnt) <= floor_s);
    n->nic += grid > 0;
    double lay = exact_nic_layers(sp, S, D, D, g->perm, one, lw, load);
    assert_true(lay <= floor_s);
    n->layers += lay > 0;
    for (int rows = 1; rows < D; rows++) { /* rows [0, rows) placed */
        exact_partial_left(sp, g->perm, S, D, rows, left, room);
        assert_true(exact_nic_rows(sp, S, D, rows, g->perm, left, room, one, touch) <= floor_s);
        assert_true(exact_nic_layers(sp, S, D, rows, g->perm, one, lw, load) <= floor_s);
    }
    for (int p = 0; p < D; p++) {
        const int *row = &g->perm[p * S];
        double cut = exact_cut_trip(sp, S, D, row, g->bi), real = decoded_trip(po, g, p);
        assert_true(cut <= real);
        n->cut += cut > 0.999 * real && S > 1;
        /* layer granularity: below every split's trip, at any size and over all */
        double grain = exact_grain_row(sp, S, row, g->bi), least = least_split_trip(po, row, S, g->bi);
        assert_true(grain <= least * (1 + 1e-12));
        assert_true(exact_grain_row(sp, S, row, -1) <= grain);
        assert_true(grain <= real * (1 + 1e-12));
        double vmax = 0;
        for (int k = 0; k < S; k++)
            vmax = fmax(vmax, exact_gspeed(sp, row[k]));
        n->grain += grain > pr->bval[g->bi] * sp->seq_f / vmax * 1.01; /* it sees more */
        const uint64_t *mask = exact_cut_masks(sp, S, D, row);
        for (int k = 0; k < S && mask; k++) /* the decoded split is one of the cuts */
            for (int l = g->first[p * S + k]; l < (k + 1 < S ? g->first[p * S + k + 1] : pr->L); l++)
                assert_true(mask[l] >> k & 1);
    }
    n->plans++;
    free(cnt);
    free(left);
    free(room);
    free(touch);
    free(lw);
    free(load);
}

static void bounds_below_decoded_plans(void **state)
{
    (void)state;
    tally n = {0, 0, 0, 0, 0};
    for (int seed = 0; seed < 6; seed++) {
        char json[4096];
        nic_topology(seed, json, sizeof json);
        pool po;
        pool_open(&po, json, 6 + seed % 4, 8 << (seed % 2));
        genome g;
        assert_int_equal(genome_alloc(&g, po.pr.N), 0);
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(r, (unsigned long)(17 + seed));
        for (int i = 0; i < 400; i++) {
            enc_seed(&po.pr, SEED_RANDOM, 0, 0, (sched_kind)(i & 1), (sync_kind)(i % 3),
                     (int)gsl_rng_uniform_int(r, (unsigned long)po.pr.nb), r, &g);
            if (!enc_shape_ok(&po.pr, g.S, g.D, g.bi) || enc_decode(&po.pr, &g, NULL))
                continue;
            obj_metrics m;
            if (enc_estimate(&po.pr, &g, &m) != 1)
                continue;
            double floor_s = enc_traffic_floor(&po.pr, &g);
            assert_true(floor_s <= m.time_s);
            check_plan(&po, &g, floor_s, &n);
        }
        gsl_rng_free(r);
        genome_free(&g);
        pool_close(&po);
    }
    printf("NIC bounds: %d plans checked; the rows' bound bit on %d, the layers' on %d; the "
           "decoder's cuts gave a row its own trip on %d rows; granularity beat the fastest "
           "GPU's trip by 1 %% on %d rows\n",
           n.plans, n.nic, n.layers, n.cut, n.grain);
    assert_true(n.plans >= 600);
    assert_true(n.nic > 50);    /* the bounds are not vacuous */
    assert_true(n.layers > 50);
    assert_true(n.cut > 100);
    assert_true(n.grain > 100);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_forms),
        cmocka_unit_test(bounds_below_decoded_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
