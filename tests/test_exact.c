/* test_exact.c — the exact referee (planner/exact.h) against brute force:
 *   - enc_bound() never exceeds the estimator's metrics (random genomes);
 *   - on tiny instances the branch-and-bound optimum equals the best of every
 *     plan of the search space estimated one by one (all GPU sequences, all
 *     shapes, microbatch sizes, schedules and syncs), for every objective:
 *     this checks the enumeration modulo symmetry and both levels of bounds;
 *   - the traffic floor stays below the simulation, and under GPipe adds the
 *     forward and the backward phase (hand-computed two-site case);
 *   - with identical nodes (one class), the optimum of the estimate and of the
 *     replay, time and energy, equals the best of every GPU permutation;
 *   - the memory caps of the pipeline bound (planner/exact_rows.c) against
 *     the decoder's own memory test; the unit bound that uses them below
 *     the estimate of random plans (below);
 *   - the sync bounds (planner/exact_sync.c) of a grid, of its selection and
 *     of each of its partial placements never exceed the estimate of any
 *     plan decoded from that grid, with every sync, on random genomes of
 *     multi-site pools (where they bite), nor does the unit bound;
 *   - it says it proved optimality and how many plans it examined, and
 *     refuses an instance beyond its reach (exit 1) with how long it would take. */
#include "testutil.h"
#include "exact_partial.h"

#include <gsl/gsl_rng.h>
#include <math.h>

#include "planner/enc_pipe.h"
#include "planner/encoding.h"
#include "planner/exact.h"
#include "planner/exact_space.h"
#include "planner/objective.h"
#include "sim/models/cost.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/simulator.h"

static const char *const TYPES[] = {"a100_sxm_80gb", "v100_sxm2_32gb", "t4", "l4", "rtx_4090"};

/* n GPUs (3..5) of 2 types on 2 sites; costs and link speeds from the seed. */
static void tiny_topology(int seed, char *buf, size_t cap, int *ngpus)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)(77 + seed));
    int t0 = (int)gsl_rng_uniform_int(r, 5), t1 = (t0 + 1 + (int)gsl_rng_uniform_int(r, 4)) % 5;
    int a = 1 + (int)gsl_rng_uniform_int(r, 3), b = 1 + (int)gsl_rng_uniform_int(r, 2);
    *ngpus = a + b;
    snprintf(buf, cap,
             "{\"name\":\"tiny%d\",\"sites\":["
             "{\"id\":\"x\",\"carbon_g_per_kwh\":%d,\"pue\":1.1,\"price_kwh\":0.1,"
             "\"nodes\":[{\"gpu\":\"%s\",\"count\":%d}],\"lan\":{\"gbps\":10,\"latency_ms\":0.5}},"
             "{\"id\":\"y\",\"carbon_g_per_kwh\":%d,\"pue\":1.3,\"price_kwh\":0.2,"
             "\"nodes\":[{\"gpu\":\"%s\",\"count\":%d}],\"lan\":{\"gbps\":10,\"latency_ms\":0.5}}],"
             "\"links\":[{\"a\":\"x\",\"b\":\"y\",\"gbps\":%.2f,\"latency_ms\":%.1f}]}",
             seed, 200 + (int)gsl_rng_uniform_int(r, 300), TYPES[t0], a,
             100 + (int)gsl_rng_uniform_int(r, 300), TYPES[t1], b, 0.3 + 5 * gsl_rng_uniform(r),
             5 + 60 * gsl_rng_uniform(r));
    gsl_rng_free(r);
}

static void tiny_job(int seed, job *j)
{
    model_spec m = {.layers = 4 + seed % 5, .hidden = 1024 + 512 * (seed % 3), .heads = 16,
                    .kv_heads = 16, .ffn = 4096 + 2048 * (seed % 3), .vocab = 32000,
                    .seq_len = 1024, .bias = true, .learned_pos = true};
    snprintf(m.id, sizeof m.id, "tiny");
    job_defaults(j, &m);
    j->batch = 4 << (seed % 3);
}

/* --- brute force ---------------------------------------------------------------------- */

typedef struct brute {
    const enc_problem *pr;
    genome g;
    int *seq;
    char *used;
    obj_metrics *m;
    int n, cap;
    obj_metrics *sim;   /* when set: every plan replayed too (time INFINITY: refused) */
} brute;

static void brute_eval(brute *b, int len)
{
    const enc_problem *pr = b->pr;
    for (int S = 1; S <= len && S <= pr->smax; S++) {
        if (len % S)
            continue;
        for (int bi = 0; bi < pr->nb; bi++)
            for (int sc = 0; sc < ENC_NSCHED; sc++)
                for (int sy = 0; sy < ENC_NSYNC; sy++) {
                    if (!enc_shape_ok(pr, S, len / S, bi))
                        continue;
                    enc_set_grid(pr, &b->g, b->seq, S, len / S);
                    b->g.bi = bi;
                    b->g.sched = (sched_kind)sc;
                    b->g.sync = (sync_kind)sy;
                    if (enc_decode(pr, &b->g, NULL))
                        continue;
                    plan p;
                    gt_err e;
                    est_summary s;
                    assert_int_equal(enc_to_plan(pr, &b->g, "b", "t", &p, &e), 0);
                    if (estimate_plan(pr->t, pr->j, &p, &s, &e) == 0) {
                        if (b->n == b->cap) {
                            b->cap = b->cap ? 2 * b->cap : 1024;
                            b->m = realloc(b->m, sizeof *b->m * (size_t)b->cap);
                            if (b->sim)
                                b->sim = realloc(b->sim, sizeof *b->sim * (size_t)b->cap);
                        }
                        if (b->sim) {
                            plan q;
                            obj_metrics sm = {INFINITY, INFINITY, INFINITY, INFINITY};
                            if (enc_simulate(pr, &b->g, "b", "time", &q, &sm, &e) == 0)
                                plan_free(&q);
                            b->sim[b->n] = sm;
                        }
                        b->m[b->n++] = obj_from_estimate(&s);
                        obj_metrics lb = enc_bound(pr, &b->g);
                        assert_true(lb.time_s <= s.iteration_s);
                        assert_true(lb.energy_j <= s.energy_j);
                        assert_true(lb.carbon_g <= s.carbon_g);
                        assert_true(lb.usd <= s.usd);
                    }
                    plan_free(&p);
                }
    }
}

/* Every injective sequence of GPUs, of every length. */
static void brute_dfs(brute *b, int len)
{
    if (len > 0)
        brute_eval(b, len);
    if (len == b->pr->N)
        return;
    for (int g = 0; g < b->pr->N; g++)
        if (!b->used[g]) {
            b->used[g] = 1;
            b->seq[len] = g;
            brute_dfs(b, len + 1);
            b->used[g] = 0;
        }
}

static const char *const OBJS[] = {"time", "energy", "weighted:0.3", "energy-within:0.25",
                                   "carbon", "cost"};

static void exact_equals_brute_force(void **state)
{
    (void)state;
    for (int seed = 0; seed < 6; seed++) {
        char json[2048];
        int n;
        tiny_topology(seed, json, sizeof json, &n);
        topology t;
        job j;
        gt_err e;
        assert_int_equal(topo_parse(&t, "tiny", json, strlen(json), NULL, &e), 0);
        tiny_job(seed, &j);
        enc_problem pr;
        assert_int_equal(enc_problem_init(&pr, &t, &j, NULL, &e), 0);
        brute b = {&pr, {0}, calloc((size_t)pr.N, sizeof(int)), calloc((size_t)pr.N, 1), NULL, 0, 0, NULL};
        assert_int_equal(genome_alloc(&b.g, pr.N), 0);
        brute_dfs(&b, 0);
        assert_true(b.n > 0);
        exact_space *sp;
        assert_int_equal(exact_enumerate(&pr, 60, 1, &sp, &e), 0);
        double tfast = INFINITY;
        for (int i = 0; i < b.n; i++)
            tfast = fmin(tfast, b.m[i].time_s);
        obj_metrics ref = b.m[0];
        for (size_t o = 0; o < sizeof OBJS / sizeof *OBJS; o++) {
            objective obj;
            assert_int_equal(objective_parse(OBJS[o], &obj, &e), 0);
            objective_set_refs(&obj, &ref);
            objective_set_fastest(&obj, tfast);
            double best = INFINITY;
            for (int i = 0; i < b.n; i++)
                best = fmin(best, objective_value(&obj, &b.m[i]));
            exact_result r;
            assert_int_equal(exact_search(sp, &obj, NULL, &r, &e), 0);
            assert_true(r.proved);
            if (rel_diff(r.top[0].fit, best) > 1e-12)
                fprintf(stderr, "seed %d %s: exact %.15g brute %.15g (%d plans)\n", seed,
                        OBJS[o], r.top[0].fit, best, b.n);
            assert_true(rel_diff(r.top[0].fit, best) <= 1e-12);
            exact_result_free(&r);
        }
        printf("tiny instance %d: %d GPUs, %d plans by brute force, %ld placements\n", seed, n,
               b.n, exact_space_placements(sp));
        exact_space_free(sp);
        genome_free(&b.g);
        free(b.seq);
        free(b.used);
        free(b.m);
        enc_problem_free(&pr);
        topo_free(&t);
    }
}

/* --- class symmetry: identical nodes, estimate and replay ------------------------------ */

/* 4 GPUs: two identical one-GPU nodes (same site, type, NIC) and a two-GPU
 * node of another type elsewhere, or (odd seeds) a two-node site of two
 * GPUs each and nothing else: the nodes of a group are interchangeable. */
static void twin_topology(int seed, char *buf, size_t cap)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)(311 + seed));
    int t0 = (int)gsl_rng_uniform_int(r, 5), t1 = (t0 + 1 + (int)gsl_rng_uniform_int(r, 4)) % 5;
    if (seed % 2)
        snprintf(buf, cap,
                 "{\"name\":\"twin%d\",\"sites\":["
                 "{\"id\":\"x\",\"carbon_g_per_kwh\":300,\"pue\":1.2,\"price_kwh\":0.1,"
                 "\"nodes\":[{\"gpu\":\"%s\",\"count\":2,\"nic_gbps\":%d,\"repeat\":2}],"
                 "\"lan\":{\"gbps\":10,\"latency_ms\":0.5}}],\"links\":[]}",
                 seed, TYPES[t0], 1 + (int)gsl_rng_uniform_int(r, 20));
    else
        snprintf(buf, cap,
                 "{\"name\":\"twin%d\",\"sites\":["
                 "{\"id\":\"x\",\"carbon_g_per_kwh\":%d,\"pue\":1.1,\"price_kwh\":0.1,"
                 "\"nodes\":[{\"gpu\":\"%s\",\"count\":1,\"repeat\":2}],"
                 "\"lan\":{\"gbps\":%d,\"latency_ms\":0.5}},"
                 "{\"id\":\"y\",\"carbon_g_per_kwh\":%d,\"pue\":1.3,\"price_kwh\":0.2,"
                 "\"nodes\":[{\"gpu\":\"%s\",\"count\":2}],\"lan\":{\"gbps\":10,\"latency_ms\":0.5}}],"
                 "\"links\":[{\"a\":\"x\",\"b\":\"y\",\"gbps\":%.2f,\"latency_ms\":%.1f}]}",
                 seed, 200 + (int)gsl_rng_uniform_int(r, 300), TYPES[t0],
                 1 + (int)gsl_rng_uniform_int(r, 20), 100 + (int)gsl_rng_uniform_int(r, 300),
                 TYPES[t1], 0.3 + 5 * gsl_rng_uniform(r), 5 + 60 * gsl_rng_uniform(r));
    gsl_rng_free(r);
}

/* The referee merges identical nodes into one class and searches counts per
 * class: its optimum must still be the best of every GPU permutation, for
 * the estimate and for the replay, time and energy. */
static void class_symmetry_equals_brute_force(void **state)
{
    (void)state;
    static const char *const objs[] = {"time", "energy"};
    for (int seed = 0; seed < 4; seed++) {
        char json[2048];
        twin_topology(seed, json, sizeof json);
        topology t;
        job j;
        gt_err e;
        assert_int_equal(topo_parse(&t, "twin", json, strlen(json), NULL, &e), 0);
        tiny_job(seed + 1, &j);
        enc_problem pr;
        assert_int_equal(enc_problem_init(&pr, &t, &j, NULL, &e), 0);
        brute b = {&pr, {0}, calloc((size_t)pr.N, sizeof(int)), calloc((size_t)pr.N, 1), NULL,
                   0, 0, malloc(sizeof(obj_metrics))};
        assert_int_equal(genome_alloc(&b.g, pr.N), 0);
        brute_dfs(&b, 0);
        assert_true(b.n > 0);
        exact_space *sp;
        assert_int_equal(exact_enumerate(&pr, 60, 1, &sp, &e), 0);
        for (size_t o = 0; o < 2; o++) {
            objective obj;
            assert_int_equal(objective_parse(objs[o], &obj, &e), 0);
            objective_set_refs(&obj, &b.m[0]);
            double best = INFINITY, sbest = INFINITY;
            for (int i = 0; i < b.n; i++) {
                best = fmin(best, objective_value(&obj, &b.m[i]));
                if (isfinite(b.sim[i].time_s))
                    sbest = fmin(sbest, objective_value(&obj, &b.sim[i]));
            }
            exact_result r;
            assert_int_equal(exact_search(sp, &obj, NULL, &r, &e), 0);
            assert_true(r.proved);
            assert_true(rel_diff(r.top[0].fit, best) <= 1e-12);
            enc_final f;
            int replayed, above;
            bool proved;
            assert_int_equal(exact_sim_search(sp, &obj, &obj, &r.top[0], NULL, 5000, &f,
                                              &replayed, &above, &proved, &e), 0);
            if (rel_diff(f.value, sbest) > 1e-12 || above)
                fprintf(stderr, "twin %d %s: exact sim %.15g brute %.15g (%d above)\n", seed,
                        objs[o], f.value, sbest, above);
            assert_true(proved);
            assert_int_equal(above, 0);
            assert_true(rel_diff(f.value, sbest) <= 1e-12);
            plan_free(&f.p);
            exact_result_free(&r);
        }
        printf("twin instance %d: %d GPUs in %d nodes, %d plans replayed by brute force, %ld "
               "placements\n", seed, pr.N, pr.nclass, b.n, exact_space_placements(sp));
        exact_space_free(sp);
        genome_free(&b.g);
        free(b.seq);
        free(b.used);
        free(b.m);
        free(b.sim);
        enc_problem_free(&pr);
        topo_free(&t);
    }
}

/* GPT-3 350M with `batch` on t: the job, its search space and a genome. */
static void gpt3_350m_space(const topology *t, int batch, job *j, enc_problem *pr, genome *g)
{
    gt_err e;
    model_spec m;
    assert_int_equal(model_resolve("gpt3_350m", &m, &e), 0);
    job_defaults(j, &m);
    j->batch = batch;
    assert_int_equal(enc_problem_init(pr, t, j, NULL, &e), 0);
    assert_int_equal(genome_alloc(g, pr->N), 0);
}

/* --- bounds on random genomes of a larger instance ------------------------------------------ */

static void bound_below_estimate(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    assert_int_equal(topo_load(&t, "topologies/pools/us-hetero.json", NULL, &e), 0);
    job j;
    enc_problem pr;
    genome g;
    gpt3_350m_space(&t, 64, &j, &pr, &g);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    int checked = 0;
    for (int i = 0; i < 400; i++) {
        enc_seed(&pr, SEED_RANDOM, 0, 0, (sched_kind)(i & 1), (sync_kind)(i % 3),
                 (int)gsl_rng_uniform_int(r, (unsigned long)pr.nb), r, &g);
        if (!enc_shape_ok(&pr, g.S, g.D, g.bi) || enc_decode(&pr, &g, NULL))
            continue;
        plan p;
        est_summary s;
        assert_int_equal(enc_to_plan(&pr, &g, "b", "t", &p, &e), 0);
        if (estimate_plan(&t, &j, &p, &s, &e) == 0) {
            obj_metrics lb = enc_bound(&pr, &g);
            assert_true(lb.time_s <= s.iteration_s);
            assert_true(lb.energy_j <= s.energy_j);
            assert_true(lb.carbon_g <= s.carbon_g);
            assert_true(lb.usd <= s.usd);
            checked++;
        }
        plan_free(&p);
    }
    assert_true(checked > 100);
    gsl_rng_free(r);
    genome_free(&g);
    enc_problem_free(&pr);
    topo_free(&t);
}

/* --- the referee's bounds of placements on random genomes ------------------------------ */

/* The memory caps of exact_rows.c against the decoder's own test
 * (enc_stage_need): a stage one layer above its cap fits nowhere (any first
 * layer, one microbatch in flight), so no split holds more; returns how
 * many (size, type) caps are below L (where the cap can bite). */
static int check_layer_caps(const exact_space *sp, const enc_problem *pr)
{
    int below = 0;
    for (int bi = 0; bi < pr->nb; bi++)
        for (int ty = 0; ty < pr->ntypes; ty++) {
            int n = sp->layer_cap[bi * pr->ntypes + ty] + 1;
            double mem = pr->t->types[ty].mem_bytes;
            if (n > pr->L)
                continue;
            below++;
            for (int a = 0; a + n <= pr->L; a++)
                assert_true(enc_stage_need(pr, bi, ty, a, a + n - 1, 1) > mem);
        }
    return below;
}

/* For a decoded genome: its unit bound, its selection's sync bound and the
 * sync bound of each of its partial placements, against its estimate.
 * Returns whether the sync bound was positive (it applied). */
static bool check_placement_bounds(const exact_space *sp, const enc_problem *pr, const genome *g,
                                   const obj_metrics *est)
{
    int S = g->S, D = g->D, G = sp->ngroup;
    int *cnt = calloc((size_t)G, sizeof(int)), *left = calloc((size_t)G, sizeof(int));
    int *room = malloc(sizeof(int) * (size_t)pr->nclass);
    obj_metrics lb = exact_grid_bound(sp, S, D, g->perm, g->bi);
    assert_true(lb.time_s <= est->time_s);
    assert_true(lb.energy_j <= est->energy_j);
    assert_true(lb.carbon_g <= est->carbon_g);
    assert_true(lb.usd <= est->usd);
    double sync = exact_sync_bound(sp, S, D, g->perm, 0);
    assert_true(sync <= est->time_s);
    for (int x = 0; x < S * D; x++)
        cnt[sp->group_of[pr->cls[g->perm[x]]]]++;
    assert_true(exact_sel_sync_bound(sp, S, D, cnt, 0) <= est->time_s);
    /* the bound of the plan's selection (exact_sel.c), where it is one */
    for (int s = 0; s < sp->nsel; s++)
        if (sp->sel[s].S == S && sp->sel[s].D == D &&
            !memcmp(&sp->sel_cnt[sp->sel[s].off], cnt, sizeof(int) * (size_t)G)) {
            assert_true(sp->sel[s].lb.time_s <= est->time_s);
            assert_true(sp->sel[s].lb.energy_j <= est->energy_j);
        }
    for (int rows = 1; rows < D; rows++) { /* rows [0, rows) placed */
        exact_partial_left(sp, g->perm, S, D, rows, left, room);
        double b = exact_partial_sync_bound(sp, S, D, rows, g->perm, cnt, left, room, 0);
        assert_true(b <= est->time_s);
    }
    free(cnt);
    free(left);
    free(room);
    return sync > 0;
}

static void placement_bounds_below_estimate(void **state)
{
    (void)state;
    static const char *const pools[] = {"topologies/pools/us-hetero.json",
                                        "topologies/pools/euasia-hetero.json",
                                        "topologies/real/aws-us-4.json"};
    for (size_t i = 0; i < sizeof pools / sizeof *pools; i++) {
        topology t;
        gt_err e;
        assert_int_equal(topo_load(&t, pools[i], NULL, &e), 0);
        job j;
        enc_problem pr;
        genome g;
        gpt3_350m_space(&t, 64, &j, &pr, &g);
        exact_space *sp;
        assert_int_equal(exact_enumerate(&pr, 60, 1, &sp, &e), 0);
        gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(r, 13 + i);
        int checked = 0, applied = 0, capped = check_layer_caps(sp, &pr);
        for (int k = 0; k < 600 && checked < 150; k++) {
            enc_seed(&pr, SEED_RANDOM, 0, 0, (sched_kind)(k & 1), (sync_kind)(k % 3),
                     (int)gsl_rng_uniform_int(r, (unsigned long)pr.nb), r, &g);
            if (!enc_shape_ok(&pr, g.S, g.D, g.bi) || enc_decode(&pr, &g, NULL))
                continue;
            obj_metrics m;
            if (enc_estimate(&pr, &g, &m) != 1)
                continue;
            applied += check_placement_bounds(sp, &pr, &g, &m);
            checked++;
        }
        printf("%s: placement bounds of %d plans checked, the sync bound applied to %d, "
               "%d memory caps below L\n",
               pools[i], checked, applied, capped);
        assert_true(checked >= 80);
        assert_true(applied > 20);
        assert_true(capped > 0); /* the memory caps can bite */
        gsl_rng_free(r);
        exact_space_free(sp);
        genome_free(&g);
        enc_problem_free(&pr);
        topo_free(&t);
    }
}

/* The planners' fitness raises the estimate to the busiest resource's bytes
 * over its bandwidth: that must stay below what the simulator finds. */
static void traffic_floor_below_simulation(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    assert_int_equal(topo_load(&t, "topologies/pools/world-hetero.json", NULL, &e), 0);
    job j;
    enc_problem pr;
    genome g;
    gpt3_350m_space(&t, 32, &j, &pr, &g);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9);
    int checked = 0, raised = 0;
    for (int i = 0; i < 300 && checked < 40; i++) {
        enc_seed(&pr, SEED_RANDOM, 0, 0, (sched_kind)(i & 1), (sync_kind)(i % 3),
                 (int)gsl_rng_uniform_int(r, (unsigned long)pr.nb), r, &g);
        if (!enc_shape_ok(&pr, g.S, g.D, g.bi) || enc_decode(&pr, &g, NULL))
            continue;
        obj_metrics fit;
        if (enc_estimate(&pr, &g, &fit) != 1)
            continue;
        plan p;
        obj_metrics sim;
        assert_int_equal(enc_simulate(&pr, &g, "t", "time", &p, &sim, &e), 0);
        double floor_s = enc_traffic_floor(&pr, &g);
        if (floor_s > sim.time_s * (1 + 1e-9))
            fprintf(stderr, "floor %.9g > simulated %.9g (S=%d D=%d sync %d)\n", floor_s,
                    sim.time_s, g.S, g.D, g.sync);
        assert_true(floor_s <= sim.time_s * (1 + 1e-9));
        assert_true(fit.time_s <= sim.time_s * (1 + 1e-9));
        raised += fit.time_s == floor_s;
        checked++;
        plan_free(&p);
    }
    printf("traffic floor: %d plans checked, %d of them raised by it\n", checked, raised);
    assert_true(checked >= 40);
    gsl_rng_free(r);
    genome_free(&g);
    enc_problem_free(&pr);
    topo_free(&t);
}

/* GPipe's forward and backward phases do not overlap in a pipeline: one
 * A100 in each of two sites behind a 0.2 Gbps WAN, 2 stages, GPipe: the
 * floor is the activations' time on the WAN one way plus the gradients' the
 * other way (2 m a / bw, hand-computed from the topology), where 1F1B's is
 * one way (m a / bw); both stay below the simulation. */
static void gpipe_phases_floor(void **state)
{
    (void)state;
    static const char json[] =
        "{\"name\":\"two\",\"sites\":["
        "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
        "\"lan\":{\"gbps\":100,\"latency_ms\":0.5}},"
        "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
        "\"lan\":{\"gbps\":100,\"latency_ms\":0.5}}],"
        "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":0.2,\"latency_ms\":20}]}";
    topology t;
    gt_err e;
    assert_int_equal(topo_parse(&t, "two", json, strlen(json), NULL, &e), 0);
    job j;
    enc_problem pr;
    genome g;
    gpt3_350m_space(&t, 16, &j, &pr, &g);
    static const int grid[] = {0, 1};
    double bw = topo_wan(&t, 0, 1)->bw;
    assert_true(bw == topo_wan(&t, 1, 0)->bw);
    for (int sc = 0; sc < 2; sc++) {
        assert_int_equal(enc_set_grid(&pr, &g, grid, 2, 1), 0);
        g.bi = 0;
        g.sched = sc ? SCHED_1F1B : SCHED_GPIPE;
        g.sync = SYNC_RING;
        assert_int_equal(enc_decode(&pr, &g, NULL), 0);
        double one_way = g.mb[0] * cost_activation_bytes(&j, pr.bval[0]) / bw;
        double floor_s = enc_traffic_floor(&pr, &g);
        assert_true(rel_diff(floor_s, sc ? one_way : 2 * one_way) < 1e-12);
        plan p;
        obj_metrics sim;
        assert_int_equal(enc_simulate(&pr, &g, "t", "time", &p, &sim, &e), 0);
        assert_true(floor_s <= sim.time_s);
        plan_free(&p);
    }
    genome_free(&g);
    enc_problem_free(&pr);
    topo_free(&t);
}

/* --- the rows sharing the microbatches (exact_rows.c), hand-computed ---------------------- */

static void rows_fill_hand_cases(void **state)
{
    (void)state;
    /* one row, trip 1 s, last stage 0.1 s, bottleneck 0.2 s, 5 microbatches:
     * the fill needs 1 + 4 x 0.1 = 1.4 s, the bottleneck 5 x 0.2 = 1.0 s */
    double rt[2] = {1, 1}, cl[2] = {0.1, 0.1}, bn[2] = {0.2, 0.2};
    double T = exact_rows_fill(rt, cl, bn, 1, 5);
    assert_true(T <= 1.4 && T > 1.4 - 1e-9);
    /* the bottleneck binds: 0.5 s per microbatch, 5 of them = 2.5 s */
    bn[0] = 0.5;
    T = exact_rows_fill(rt, cl, bn, 1, 5);
    assert_true(T <= 2.5 && T > 2.5 - 1e-9);
    /* two equal rows share 4 microbatches, 2 each: 1 + 0.1 = 1.1 s */
    bn[0] = 0.2;
    T = exact_rows_fill(rt, cl, bn, 2, 4);
    assert_true(T <= 1.1 && T > 1.1 - 1e-9);
    /* a slow row (trip 3 s) still passes one: the bound is its trip */
    rt[1] = 3;
    T = exact_rows_fill(rt, cl, bn, 2, 4);
    assert_true(T <= 3 && T > 3 - 1e-9);
}

/* --- the command ------------------------------------------------------------------------------ */

static void proves_and_refuses(void **state)
{
    (void)state;
    char dir[64], out[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(out, sizeof out, "%s/x.json", dir);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "plan", "-t", FIXTURES "/small-geo.json", "-m",
                                 FIXTURES "/tiny-model.json", "--batch", "32", "--planner",
                                 "exact", "-o", out, NULL), 0);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "proved optimal for the simulator"));
    assert_non_null(strstr(r.out, "plans examined"));
    tu_run_free(&r);
    /* 64 V100 in 8 nodes: far beyond enumeration */
    assert_int_equal(tu_geotrain(&r, "plan", "-t", "topologies/yuan2022/case5.json", "-m",
                                 "gpt3-xl", "--batch", "64", "--planner", "exact", "--budget-s",
                                 "5", "-o", out, NULL), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "beyond the exact solver's reach"));
    assert_non_null(strstr(r.err, "would take"));
    tu_run_free(&r);
    /* without --budget-s: refused by the reference machine's figure, so on
     * every machine alike */
    assert_int_equal(tu_geotrain(&r, "plan", "-t", "topologies/yuan2022/case5.json", "-m",
                                 "gpt3-xl", "--batch", "64", "--planner", "exact", "-o", out,
                                 NULL), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "beyond the exact solver's reach"));
    tu_run_free(&r);
    tu_rmtree(dir);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_equals_brute_force),
        cmocka_unit_test(class_symmetry_equals_brute_force),
        cmocka_unit_test(bound_below_estimate),
        cmocka_unit_test(placement_bounds_below_estimate),
        cmocka_unit_test(rows_fill_hand_cases),
        cmocka_unit_test(traffic_floor_below_simulation),
        cmocka_unit_test(gpipe_phases_floor),
        cmocka_unit_test(proves_and_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
