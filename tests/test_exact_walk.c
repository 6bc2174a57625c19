/* test_exact_walk.c — the exact referee's walk over placements
 * (planner/exact_space.c) against brute force: on small pools of three
 * sites with nodes of one and two GPUs, for every selection (shape and
 * counts per class) and a threshold between its best and worst grids,
 * every S x D grid of the selection's GPUs (all of them, every order) whose
 * unit bound (the least over microbatch sizes of exact_unit_bound's
 * formula, exact_grid_bound) lies below the threshold has a placement the
 * walk generates with that same bound. The walk's cuts (a partial row's
 * next cell and fastest GPU, the last row's entries into every node and
 * site it must still reach, the rows' sync) are lower bounds of that unit
 * bound, so they may only cut grids at or above the threshold; a grid is
 * matched by its bound since symmetric grids (rows permuted, identical
 * nodes swapped) have identical bounds. */
#include "testutil.h"

#include <gsl/gsl_rng.h>
#include <math.h>

#include "planner/encoding.h"
#include "planner/exact.h"
#include "planner/exact_space.h"

static const char *const TYPES[] = {"a100_sxm_80gb", "v100_sxm2_32gb", "t4", "l4", "h100_sxm"};

/* Three sites: x with two nodes of one GPU, y with a node of two, z with a
 * node of one (5 GPUs); types, WAN and LAN speeds from the seed. */
static void walk_topology(int seed, char *buf, size_t cap)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)(311 + seed));
    const char *ty[3];
    for (int i = 0; i < 3; i++)
        ty[i] = TYPES[gsl_rng_uniform_int(r, 5)];
    double w[3], l[3];
    for (int i = 0; i < 3; i++) {
        w[i] = 0.5 + 10 * gsl_rng_uniform(r);
        l[i] = 2 + 60 * gsl_rng_uniform(r);
    }
    snprintf(buf, cap,
             "{\"name\":\"walk%d\",\"sites\":["
             "{\"id\":\"x\",\"nodes\":[{\"gpu\":\"%s\",\"count\":1},{\"gpu\":\"%s\",\"count\":1}],"
             "\"lan\":{\"gbps\":%.1f,\"latency_ms\":0.2}},"
             "{\"id\":\"y\",\"nodes\":[{\"gpu\":\"%s\",\"count\":2}],\"lan\":{\"gbps\":10,"
             "\"latency_ms\":0.5}},"
             "{\"id\":\"z\",\"nodes\":[{\"gpu\":\"%s\",\"count\":1}],\"lan\":{\"gbps\":10,"
             "\"latency_ms\":0.5}}],"
             "\"links\":[{\"a\":\"x\",\"b\":\"y\",\"gbps\":%.2f,\"latency_ms\":%.1f},"
             "{\"a\":\"x\",\"b\":\"z\",\"gbps\":%.2f,\"latency_ms\":%.1f},"
             "{\"a\":\"y\",\"b\":\"z\",\"gbps\":%.2f,\"latency_ms\":%.1f}]}",
             seed, ty[0], ty[0], 1 + 20 * gsl_rng_uniform(r), ty[1], ty[2], w[0], l[0], w[1],
             l[1], w[2], l[2]);
    gsl_rng_free(r);
}

static void walk_job(int seed, job *j)
{
    model_spec m = {.layers = 4 + seed % 4, .hidden = 1024 + 512 * (seed % 3), .heads = 16,
                    .kv_heads = 16, .ffn = 4096, .vocab = 32000, .seq_len = 1024,
                    .bias = true, .learned_pos = true};
    snprintf(m.id, sizeof m.id, "tiny");
    job_defaults(j, &m);
    j->batch = 4 << (seed % 3);
}

static double grid_key(const exact_space *sp, int S, int D, const int *gpus)
{
    double k = INFINITY;
    for (int bi = 0; bi < sp->pr->nb; bi++)
        k = fmin(k, exact_grid_bound(sp, S, D, gpus, bi).time_s);
    return k;
}

static int group_of_gpu(const exact_space *sp, int g)
{
    const enc_problem *pr = sp->pr;
    for (int c = 0; c < pr->nclass; c++)
        if (pr->class_first[c] <= g && g < pr->class_first[c] + pr->class_size[c])
            return sp->group_of[c];
    return -1;
}

typedef struct grids {
    const exact_space *sp;
    int S, D, *cnt, *gpus;
    char *used;
    double *key;
    int n, cap;
} grids;

/* Every grid of distinct GPUs using cnt[g] GPUs of each group. */
static void grids_dfs(grids *b, int at)
{
    if (at == b->S * b->D) {
        if (b->n == b->cap) {
            b->cap = b->cap ? 2 * b->cap : 256;
            b->key = realloc(b->key, sizeof *b->key * (size_t)b->cap);
            assert_non_null(b->key);
        }
        b->key[b->n++] = grid_key(b->sp, b->S, b->D, b->gpus);
        return;
    }
    for (int g = 0; g < b->sp->pr->N; g++) {
        int gr = group_of_gpu(b->sp, g);
        if (b->used[g] || !b->cnt[gr])
            continue;
        b->used[g] = 1;
        b->cnt[gr]--;
        b->gpus[at] = g;
        grids_dfs(b, at + 1);
        b->cnt[gr]++;
        b->used[g] = 0;
    }
}

/* A pool (JSON text) with a job: its problem, exact space and the brute
 * force's scratch. */
typedef struct pool {
    topology t;
    enc_problem pr;
    exact_space *sp;
    int *cnt, *gpus;
    char *used;
} pool;

static void pool_open(pool *p, const char *json, const job *j)
{
    gt_err e;
    assert_int_equal(topo_parse(&p->t, "pool", json, strlen(json), NULL, &e), 0);
    assert_int_equal(enc_problem_init(&p->pr, &p->t, j, NULL, &e), 0);
    assert_int_equal(exact_enumerate(&p->pr, 60, 1, &p->sp, &e), 0);
    p->cnt = malloc(sizeof *p->cnt * (size_t)p->sp->ngroup);
    p->gpus = malloc(sizeof(int) * 8);
    p->used = calloc((size_t)p->pr.N, 1);
    assert_true(p->cnt && p->gpus && p->used);
}

static void pool_close(pool *p)
{
    free(p->cnt);
    free(p->gpus);
    free(p->used);
    exact_space_free(p->sp);
    enc_problem_free(&p->pr);
    topo_free(&p->t);
}

/* The unit bounds of every grid of selection s, into b (b->key, b->n). */
static void selection_grids(const exact_space *sp, int s, int *cnt, int *gpus, char *used,
                            grids *b)
{
    const xsel *q = &sp->sel[s];
    memcpy(cnt, &sp->sel_cnt[q->off], sizeof *cnt * (size_t)sp->ngroup);
    *b = (grids){sp, q->S, q->D, cnt, gpus, used, NULL, 0, 0};
    grids_dfs(b, 0);
}

static double least_key(const grids *b)
{
    double lo = INFINITY;
    for (int i = 0; i < b->n; i++)
        lo = fmin(lo, b->key[i]);
    return lo;
}

/* The selection's bound (exact_sel.c) holds for each of its grids, whose
 * least unit bound is lo (both through exact_bound_from's rounding slack);
 * returns whether it is within 10 % of it. */
static bool selection_below(const exact_space *sp, int s, double lo, int seed)
{
    const xsel *q = &sp->sel[s];
    if (!(q->lb.time_s <= lo * (1 + 1e-12)))
        fprintf(stderr, "seed %d selection %d (%d x %d): bound %.9g above its best grid's "
                        "%.9g\n", seed, s, q->S, q->D, q->lb.time_s, lo);
    assert_true(q->lb.time_s <= lo * (1 + 1e-12));
    return isfinite(lo) && q->lb.time_s > 0.9 * lo;
}

static void walk_keeps_grids_below_threshold(void **state)
{
    (void)state;
    long checked = 0, below = 0, cut = 0, sel_checked = 0, sel_tight = 0;
    for (int seed = 0; seed < 8; seed++) {
        char json[4096];
        walk_topology(seed, json, sizeof json);
        job j;
        walk_job(seed, &j);
        pool po;
        pool_open(&po, json, &j);
        exact_space *sp = po.sp;
        const enc_problem *ppr = &po.pr;
        int *cnt = po.cnt, *gpus = po.gpus;
        char *used = po.used;
        for (int s = 0; s < sp->nsel; s++) {
            const xsel *q = &sp->sel[s];
            grids b;
            selection_grids(sp, s, cnt, gpus, used, &b);
            double lo = least_key(&b), hi = 0;
            for (int i = 0; i < b.n; i++)
                if (isfinite(b.key[i]))
                    hi = fmax(hi, b.key[i]);
            sel_checked++;
            sel_tight += selection_below(sp, s, lo, seed);
            if (!isfinite(lo)) {
                free(b.key);
                continue;
            }
            /* between the best and the worst grid: the walk has to cut */
            xprune x = {NULL, NULL, -INFINITY, lo + 0.6 * (hi - lo) + 1e-12};
            int *out = NULL;
            long n = 0, cap = 0;
            double next;
            assert_int_equal(exact_expand(sp, s, &x, &out, &n, &cap, &next), 0);
            for (int i = 0; i < b.n; i++) {
                checked++;
                if (!(b.key[i] < x.thr))
                    continue;
                below++;
                bool found = false;
                for (long k = 0; k < n && !found; k++) {
                    double pk = INFINITY;
                    for (int bi = 0; bi < ppr->nb; bi++)
                        pk = fmin(pk, exact_unit_bound(sp, out[k], bi).time_s);
                    found = fabs(pk - b.key[i]) <= 1e-12 * fabs(b.key[i]);
                }
                if (!found)
                    fprintf(stderr, "seed %d selection %d (%d x %d): a grid of bound %.9g "
                                    "below %.9g was cut\n", seed, s, q->S, q->D, b.key[i], x.thr);
                assert_true(found);
            }
            cut += b.n;
            free(out);
            free(b.key);
        }
        pool_close(&po);
    }
    printf("walk: %ld grids of 8 three-site pools, %ld below the threshold, each generated; "
           "%ld selection bounds below their best grid's, %ld of them above 90 %% of it\n",
           checked, below, sel_checked, sel_tight);
    assert_true(sel_tight > 0);
    (void)cut;
    assert_true(below > 0 && below < checked);
}

/* Two sites (x: two nodes of two GPUs; y: a node of two and one of one)
 * far apart, and a job of long sequences and small layers: activations
 * large and gradients small, so that rows each within one site (and node)
 * syncing across the WAN can beat a row crossing it, and the selection
 * bound's least of the two cases is what holds. */
static void pure_topology(int seed, char *buf, size_t cap)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)(577 + seed));
    const char *ty[3];
    for (int i = 0; i < 3; i++)
        ty[i] = TYPES[gsl_rng_uniform_int(r, 5)];
    snprintf(buf, cap,
             "{\"name\":\"pure%d\",\"sites\":["
             "{\"id\":\"x\",\"nodes\":[{\"gpu\":\"%s\",\"count\":2},{\"gpu\":\"%s\",\"count\":2}],"
             "\"lan\":{\"gbps\":%.1f,\"latency_ms\":0.2}},"
             "{\"id\":\"y\",\"nodes\":[{\"gpu\":\"%s\",\"count\":2},{\"gpu\":\"%s\",\"count\":1}],"
             "\"lan\":{\"gbps\":10,\"latency_ms\":0.5}}],"
             "\"links\":[{\"a\":\"x\",\"b\":\"y\",\"gbps\":%.2f,\"latency_ms\":%.1f}]}",
             seed, ty[0], ty[0], 2 + 20 * gsl_rng_uniform(r), ty[1], ty[2],
             0.5 + 5 * gsl_rng_uniform(r), 5 + 40 * gsl_rng_uniform(r));
    gsl_rng_free(r);
}

static void selection_bound_below_every_grid(void **state)
{
    (void)state;
    long checked = 0, tight = 0;
    for (int seed = 0; seed < 6; seed++) {
        char json[4096];
        pure_topology(seed, json, sizeof json);
        job j;
        model_spec m = {.layers = 4, .hidden = 256 + 128 * (seed % 2), .heads = 4,
                        .kv_heads = 4, .ffn = 1024, .vocab = 1024, .seq_len = 8192,
                        .bias = true, .learned_pos = true};
        snprintf(m.id, sizeof m.id, "long");
        job_defaults(&j, &m);
        j.batch = 4 << (seed % 2);
        pool po;
        pool_open(&po, json, &j);
        exact_space *sp = po.sp;
        for (int s = 0; s < sp->nsel; s++) {
            const xsel *q = &sp->sel[s];
            if (q->S * q->D > 6)
                continue; /* 7! grids and more: slow */
            grids b;
            selection_grids(sp, s, po.cnt, po.gpus, po.used, &b);
            checked++;
            tight += selection_below(sp, s, least_key(&b), seed);
            free(b.key);
        }
        pool_close(&po);
    }
    printf("selections: %ld of two-site pools below every grid, %ld above 90 %% of the best\n",
           checked, tight);
    assert_true(tight > checked / 4);
}

/* The simulated search of one pool, after the search on the estimate;
 * with_record false drops the record that search leaves (exact_walks.c).
 * Returns its best value; *walked gets the visits the simulated search
 * made and *plan its plan's first GPU and shape. */
static double sim_after_search(const char *json, const job *j, bool with_record, long *walked,
                               int *plan)
{
    pool po;
    pool_open(&po, json, j);
    objective obj;
    gt_err e;
    assert_int_equal(objective_parse("time", &obj, &e), 0);
    genome ref;
    obj_metrics m;
    assert_int_equal(genome_alloc(&ref, po.pr.N), 0);
    assert_int_equal(enc_reference(&po.pr, &ref, &e), 0);
    assert_int_equal(enc_estimate(&po.pr, &ref, &m), 1);
    objective_set_refs(&obj, &m);
    genome_free(&ref);
    exact_result r;
    assert_int_equal(exact_search(po.sp, &obj, NULL, &r, &e), 0);
    assert_true(r.proved);
    if (!with_record)
        exact_walks_free(&po.sp->walks_rec);
    long v0 = po.sp->visited;
    enc_final f;
    int replayed, above;
    bool proved;
    assert_int_equal(exact_sim_search(po.sp, &obj, &obj, &r.top[0], NULL, 5000, &f, &replayed,
                                      &above, &proved, &e), 0);
    assert_true(proved);
    *walked = po.sp->visited - v0;
    plan[0] = f.p.npipes;
    plan[1] = f.p.pipes[0].nstages;
    plan[2] = f.p.pipes[0].stages[0].gpus[0];
    double v = f.value;
    plan_free(&f.p);
    exact_result_free(&r);
    pool_close(&po);
    return v;
}

/* The record of the first search's walks serves the simulated search: the
 * same optimum and plan as when it walks every window again, with fewer
 * visits. */
static void record_serves_the_simulated_search(void **state)
{
    (void)state;
    long with = 0, without = 0;
    for (int seed = 0; seed < 8; seed++) {
        char json[4096];
        walk_topology(seed, json, sizeof json);
        job j;
        walk_job(seed, &j);
        long a, b;
        int pa[3], pb[3];
        double va = sim_after_search(json, &j, true, &a, pa);
        double vb = sim_after_search(json, &j, false, &b, pb);
        assert_true(va == vb);
        assert_memory_equal(pa, pb, sizeof pa);
        assert_true(a <= b);
        with += a;
        without += b;
    }
    printf("record: the simulated searches of 8 pools visit %ld partial placements with the "
           "record, %ld without, same optima and plans\n", with, without);
    assert_true(with < without);
}

/* The store refuses a placement past EXACT_MAX_CELLS cells in all (the
 * memory of large grids), and the refusal says so. */
static void cells_cap_refuses(void **state)
{
    (void)state;
    char json[4096];
    walk_topology(0, json, sizeof json);
    job j;
    walk_job(0, &j);
    pool po;
    pool_open(&po, json, &j);
    int cell[2] = {0, 0};
    obj_metrics lb = {1, 1, 1, 1};
    assert_int_equal(exact_place_add(po.sp, 1, 1, cell, lb), 0);
    assert_int_equal(exact_place_add(po.sp, 1, 1, cell, lb), 0); /* found again */
    long kept = po.sp->ncls;
    po.sp->ncls = EXACT_MAX_CELLS - 1; /* as if the store were that full */
    cell[0] = 1;
    assert_int_equal(exact_place_add(po.sp, 2, 1, cell, lb), -2); /* one cell past it */
    assert_int_equal(po.sp->nplace, 1);
    gt_err e;
    exact_refuse(po.sp, &e);
    assert_non_null(strstr(e.msg, "cells in all"));
    po.sp->ncls = kept;
    pool_close(&po);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(walk_keeps_grids_below_threshold),
        cmocka_unit_test(selection_bound_below_every_grid),
        cmocka_unit_test(record_serves_the_simulated_search),
        cmocka_unit_test(cells_cap_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
