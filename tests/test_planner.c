/* test_planner.c — the memetic planner against answers known independently:
 *   - on seeded random small instances (4-9 GPUs of 2-3 types on 2-3 sites,
 *     8-16 layers) it finds the exact referee's optimum for every objective
 *     but pareto (relative 1e-9), with a fixed generation budget;
 *   - every plan it writes passes plan_check, fits memory and uses each GPU
 *     once; the same seed gives the same plan with 1 and 2 threads, and
 *     without --budget-s `geotrain plan` writes the same file on every run
 *     and thread count (with it, the note says the plan may vary);
 *   - a T4 behind a 0.1 Gbps link only hurts: the time-optimal plan leaves it
 *     out; the energy plan uses fewer or more efficient GPUs than the time plan;
 *   - bad input: no subset fits (exit 1, the shortfall), a batch that cannot be
 *     split (exit 1, the admissible values), --budget-s with --generations
 *     (exit 2); the pareto front is non-dominated and written with its CSV. */
#include "testutil.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <time.h>

#include "planner/exact.h"
#include "sim/models/memory.h"
#include "planner/islands.h"
#include "planner/memetic.h"
#include "planner/objective.h"
#include "planner/planner.h"
#include "planner/tp_view.h"
#include "planner/baselines/baselines.h"
#include "sim/models/cost.h"
#include "sim/base/jsonio.h"
#include "sim/models/plan_check.h"
#include <signal.h>
#include <jansson.h>

/* Generated instances of memetic_finds_exact (x 6 objectives). 15: since the
 * full planner runs its four ablations' searches too, each case costs about
 * five searches; E2 measures the hit rate on more instances and seeds. */
#define NINST 15
/* Generations per memetic run: 0, the planner's default (at most 300,
 * stopping after 40 without improvement), so the test checks the planner
 * as a user runs it. (With a fixed 25, instance 26 missed the optimum under
 * the kernel compute model before every evaluated local-search neighbour
 * became a candidate finalist, memetic_search.c kid_keep.) */
#define TEST_GENS 0

static const char *const OBJECTIVES[] = {"time", "energy", "weighted:0.5", "energy-within:0.2",
                                         "carbon", "cost"};
#define NOBJ ((int)(sizeof OBJECTIVES / sizeof *OBJECTIVES))

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- random small instances -------------------------------------------------------- */

static const char *const TYPES[] = {"a100_sxm_80gb", "v100_sxm2_32gb", "t4", "l4", "h100_sxm",
                                    "rtx_4090", "v100_sxm2_16gb"};

typedef struct instance {
    char json[4096];
    int ngpus, layers, hidden, batch;
} instance;

/* 2-3 sites, 4-9 GPUs, 2-3 types; one node per (site, type). */
static void make_instance(int seed, instance *in)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)(1000 + seed));
    int nsites = 2 + (int)gsl_rng_uniform_int(r, 2), ntypes = 2 + (int)gsl_rng_uniform_int(r, 2);
    int types[3], n = 4 + (int)gsl_rng_uniform_int(r, 6);
    for (int i = 0; i < ntypes; i++) {
        bool again;
        do {
            types[i] = (int)gsl_rng_uniform_int(r, sizeof TYPES / sizeof *TYPES);
            again = false;
            for (int k = 0; k < i; k++)
                again |= types[k] == types[i];
        } while (again);
    }
    /* GPUs per (site, type): every type somewhere, every site something */
    int cnt[3][3] = {{0}};
    for (int i = 0; i < ntypes; i++)
        cnt[i % nsites][i]++;
    for (int x = ntypes; x < n; x++)
        cnt[gsl_rng_uniform_int(r, (unsigned long)nsites)][gsl_rng_uniform_int(r, (unsigned long)ntypes)]++;
    for (int s = 0; s < nsites; s++) { /* a site without GPUs gets one */
        int tot = 0;
        for (int i = 0; i < ntypes; i++)
            tot += cnt[s][i];
        if (!tot)
            cnt[s][gsl_rng_uniform_int(r, (unsigned long)ntypes)]++;
    }
    int o = snprintf(in->json, sizeof in->json, "{\"name\":\"rnd%d\",\"sites\":[", seed);
    in->ngpus = 0;
    for (int s = 0; s < nsites; s++) {
        o += snprintf(in->json + o, sizeof in->json - (size_t)o,
                      "%s{\"id\":\"s%d\",\"carbon_g_per_kwh\":%d,\"pue\":%.2f,\"price_kwh\":%.3f,"
                      "\"nodes\":[", s ? "," : "", s, 100 + (int)gsl_rng_uniform_int(r, 500),
                      1.05 + 0.3 * gsl_rng_uniform(r), 0.05 + 0.2 * gsl_rng_uniform(r));
        int first = 1;
        for (int i = 0; i < ntypes; i++)
            if (cnt[s][i]) {
                o += snprintf(in->json + o, sizeof in->json - (size_t)o,
                              "%s{\"gpu\":\"%s\",\"count\":%d,\"nic_gbps\":%d}", first ? "" : ",",
                              TYPES[types[i]], cnt[s][i], 10 + 15 * (int)gsl_rng_uniform_int(r, 3));
                first = 0;
                in->ngpus += cnt[s][i];
            }
        o += snprintf(in->json + o, sizeof in->json - (size_t)o,
                      "],\"lan\":{\"gbps\":%d,\"latency_ms\":0.5}}", 10 + 10 * (int)gsl_rng_uniform_int(r, 5));
    }
    o += snprintf(in->json + o, sizeof in->json - (size_t)o, "],\"links\":[");
    int first = 1;
    for (int a = 0; a < nsites; a++)
        for (int b = a + 1; b < nsites; b++) {
            o += snprintf(in->json + o, sizeof in->json - (size_t)o,
                          "%s{\"a\":\"s%d\",\"b\":\"s%d\",\"gbps\":%.2f,\"latency_ms\":%.1f}",
                          first ? "" : ",", a, b, 0.2 + 5 * gsl_rng_uniform(r),
                          5 + 70 * gsl_rng_uniform(r));
            first = 0;
        }
    snprintf(in->json + o, sizeof in->json - (size_t)o, "]}");
    in->layers = 8 + (int)gsl_rng_uniform_int(r, 9);
    static const int H[] = {1024, 1536, 2048};
    in->hidden = H[gsl_rng_uniform_int(r, 3)];
    static const int BATCH[] = {8, 16, 32};
    in->batch = BATCH[gsl_rng_uniform_int(r, 3)];
    gsl_rng_free(r);
}

static void load_instance(const instance *in, topology *t, job *j)
{
    gt_err e;
    if (topo_parse(t, "rnd", in->json, strlen(in->json), NULL, &e)) {
        fprintf(stderr, "%s\n%s\n", e.msg, in->json);
        fail();
    }
    model_spec m = {.layers = in->layers, .hidden = in->hidden, .heads = 16, .kv_heads = 16,
                    .ffn = 4 * in->hidden, .vocab = 32000, .seq_len = 1024, .bias = true,
                    .learned_pos = true};
    snprintf(m.id, sizeof m.id, "rnd");
    job_defaults(j, &m);
    j->batch = in->batch;
}

/* --- plans are valid ------------------------------------------------------------------- */

static void check_plan(const topology *t, const job *j, const plan *p)
{
    gt_err e;
    if (plan_check(p, t, j, &e)) {
        fprintf(stderr, "plan_check: %s\n", e.msg);
        fail();
    }
    int *seen = calloc((size_t)t->ngpus, sizeof *seen);
    for (int pi = 0; pi < p->npipes; pi++)
        for (int k = 0; k < p->pipes[pi].nstages; k++)
            for (int x = 0; x < p->pipes[pi].stages[k].ngpus; x++) {
                int g = p->pipes[pi].stages[k].gpus[x];
                assert_int_equal(seen[g]++, 0);
                assert_true(plan_gpu_memory(p, t, j, g) <= topo_gpu_type(t, g)->mem_bytes);
            }
    free(seen);
}

/* --- memetic == exact --------------------------------------------------------------------- */

static void memetic_finds_exact(void **state)
{
    (void)state;
    int agree = 0, total = 0;
    double t_exact = 0, t_ma = 0;
    for (int i = 0; i < NINST; i += tu_stride()) {
        instance in;
        make_instance(i, &in);
        topology t;
        job j;
        load_instance(&in, &t, &j);
        for (int o = 0; o < NOBJ; o++) {
            planner_opts opts = {OBJECTIVES[o], 1, 0, TEST_GENS, 2, false, 0, NULL, NULL, 0};
            plan px, pm;
            planner_stats sx, sm;
            gt_err e;
            double t0 = now_s();
            int rx = planner_exact(NULL, &t, &j, &opts, &px, &sx, &e);
            if (rx)
                fprintf(stderr, "instance %d %s: exact: %s\n", i, OBJECTIVES[o], e.msg);
            assert_int_equal(rx, 0);
            double t1 = now_s();
            assert_int_equal(planner_plan(planner_find("memetic"), &t, &j, &opts, &pm, &sm, &e), 0);
            t_exact += t1 - t0;
            t_ma += now_s() - t1;
            check_plan(&t, &j, &pm);
            check_plan(&t, &j, &px);
            total++;
            bool same = rel_diff(sm.objective_value, sx.objective_value) <= 1e-9;
            agree += same;
            if (!same)
                fprintf(stderr, "instance %d (%d GPUs, %d layers, batch %d) %s: memetic %.12g "
                                "exact %.12g (%s)\n", i, in.ngpus, in.layers, in.batch,
                        OBJECTIVES[o], sm.objective_value, sx.objective_value, sx.note);
            plan_free(&px);
            plan_free(&pm);
        }
        topo_free(&t);
    }
    printf("memetic found the exact optimum in %d of %d cases (exact %.2f s, memetic %.2f s)\n",
           agree, total, t_exact, t_ma);
    assert_int_equal(agree, total);
}

/* --- determinism: 1 and 2 threads ---------------------------------------------------------- */

static char *plan_text(const topology *t, const plan *p)
{
    json_t *j = plan_to_json(p, t);
    char *txt = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(j);
    return txt;
}

/* us-hetero (32 GPUs: large enough for the children to be evaluated in
 * parallel) and GPT-3 350M with batch 64. */
static void load_us_hetero(topology *t, job *j)
{
    gt_err e;
    assert_int_equal(topo_load(t, "topologies/pools/us-hetero.json", NULL, &e), 0);
    model_spec m;
    assert_int_equal(model_resolve("gpt3_350m", &m, &e), 0);
    job_defaults(j, &m);
    j->batch = 64;
}

static void same_plan_any_threads(void **state)
{
    (void)state;
    topology t;
    job j;
    gt_err e;
    load_us_hetero(&t, &j);
    static const char *const objs[] = {"time", "energy"};
    for (int o = 0; o < 2; o += tu_stride()) {
        char *txt[2];
        double val[2];
        for (int th = 1; th <= 2; th++) {
            planner_opts opts = {objs[o], 7, 0, 6, th, false, 0, NULL, NULL, 0};
            plan p;
            planner_stats st;
            assert_int_equal(planner_plan(planner_find("memetic"), &t, &j, &opts, &p, &st, &e), 0);
            check_plan(&t, &j, &p);
            txt[th - 1] = plan_text(&t, &p);
            val[th - 1] = st.objective_value;
            plan_free(&p);
        }
        assert_string_equal(txt[0], txt[1]);
        assert_true(val[0] == val[1]);
        free(txt[0]);
        free(txt[1]);
    }
    topo_free(&t);
}

/* Without --budget-s the stopping rules count (generations, stagnation,
 * evaluations, replays): `geotrain plan` writes the same file, byte for
 * byte, on every run and at 1 or 2 OpenMP threads, for the memetic planner
 * and the exact referee; with --budget-s the plan's note says the plan may
 * depend on the machine's speed. */
static char *plan_file(const char *threads, const char *const *args, const char *out)
{
    setenv("OMP_NUM_THREADS", threads, 1);
    tu_run r;
    assert_int_equal(tu_geotrainv(&r, args), 0);
    unsetenv("OMP_NUM_THREADS");
    if (r.status)
        fprintf(stderr, "%s", r.err);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    char *txt = tu_read_file(out, NULL);
    assert_non_null(txt);
    return txt;
}

static void default_run_same_file(void **state)
{
    (void)state;
    char dir[64], out[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(out, sizeof out, "%s/p.json", dir);
    /* us-hetero: 32 GPUs, enough for children to be evaluated in parallel */
    const char *ma[] = {"plan", "-t", "topologies/pools/us-hetero.json", "-m",
                        FIXTURES "/tiny-model.json", "--batch", "64", "-o", out, NULL};
    const char *ex[] = {"plan", "-t", FIXTURES "/small-geo.json", "-m",
                        FIXTURES "/tiny-model.json", "--batch", "32", "--planner", "exact",
                        "-o", out, NULL};
    const char *const *runs[] = {ma, ex};
    for (int k = 0; k < 2; k++) {
        char *a = plan_file("1", runs[k], out), *b = plan_file("2", runs[k], out);
        assert_string_equal(a, b);
        assert_null(strstr(a, "machine speed"));
        free(a);
        free(b);
    }
    const char *bud[] = {"plan", "-t", "topologies/pools/us-hetero.json", "-m", "gpt3_350m",
                         "--batch", "64", "--budget-s", "0.5", "-o", out, NULL};
    char *d = plan_file("1", bud, out);
    assert_non_null(strstr(d, "the plan may depend on machine speed"));
    free(d);
    tu_rmtree(dir);
}

/* --- the island model ------------------------------------------------------------------------ */

/* One island is the plain planner (same seed, same plan); two islands give a
 * valid plan, the same one on every run. */
static void islands_one_is_plain(void **state)
{
    (void)state;
    topology t;
    job j;
    gt_err e;
    load_us_hetero(&t, &j);
    /* 8 generations in epochs of 3: two migrations, enough for the second
     * island's members to reach the first (what the 2-island runs check). */
    planner_opts opts = {"time", 3, 0, 8, 1, false, 0, NULL, NULL, 0};
    plan plain;
    planner_stats sp;
    assert_int_equal(planner_plan(planner_find("memetic"), &t, &j, &opts, &plain, &sp, &e), 0);
    char *txt[3];
    txt[0] = plan_text(&t, &plain);
    for (int k = 1; k <= 2; k++)
        for (int rep = 0; rep < (k == 2 ? 2 : 1); rep++) {
            island_cfg ic = {k, 3, 0, 0, 8, 0, NULL};
            plan p;
            planner_stats st;
            island_report r;
            /* the seeds as planner_plan hands them to the plain planner */
            const planner_def *d = planner_find("memetic");
            planner_opts os = opts;
            assert_int_equal(planner_seeds_run(d, &t, &j, &os), 0);
            if (memetic_islands(NULL, &t, &j, &os, memetic_config(d), &ic, &p, &st, &r, &e))
                fail_msg("%s", e.msg);
            planner_seeds_free(&os);
            assert_true(r.have_plan);
            assert_int_equal(r.islands, k);
            check_plan(&t, &j, &p);
            if (k == 1) {
                char *one = plan_text(&t, &p);
                assert_string_equal(one, txt[0]);
                assert_true(st.objective_value == sp.objective_value);
                free(one);
            } else {
                txt[1 + rep] = plan_text(&t, &p);
            }
            plan_free(&p);
        }
    assert_string_equal(txt[1], txt[2]);
    for (int i = 0; i < 3; i++)
        free(txt[i]);
    plan_free(&plain);
    topo_free(&t);
}

/* --- tensor parallelism (tp_view.h) ----------------------------------------------------------- */

static const char *V100_NODE =
    "{\"name\":\"v100-node\",\"sites\":[{\"id\":\"s\",\"nodes\":["
    "{\"gpu\":\"v100_sxm2_16gb\",\"count\":8,\"nic_gbps\":25},"
    "{\"gpu\":\"v100_sxm2_16gb\",\"count\":3,\"nic_gbps\":25}],"
    "\"lan\":{\"gbps\":25,\"latency_ms\":0.05}}],\"links\":[]}";

/* The unit view: 8/4 + 3/4 = 2 units of degree 4, each 4 consecutive GPUs of
 * one node with 4x the memory and FLOP/s; degrees 1, 2, 4, 8 (16 > the
 * biggest node). */
static void tp_view_units(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    assert_int_equal(topo_parse(&t, "v100-node", V100_NODE, strlen(V100_NODE), NULL, &e), 0);
    model_spec m;
    assert_int_equal(model_resolve("gpt3-xl", &m, &e), 0);
    int deg[8];
    assert_int_equal(tp_degrees(&t, &m, deg, 8), 4);
    assert_int_equal(deg[3], 8);
    tp_view v;
    assert_int_equal(tp_view_build(&v, &t, 4, &e), 0);
    assert_int_equal(v.t.ngpus, 2);
    assert_int_equal(v.t.nodes[1].ngpus, 0);
    /* the decoder's check (all of the stage + one overhead <= the unit's
     * memory) is then cost_stage_memory's (a quarter + one overhead per GPU) */
    assert_true(topo_gpu_type(&v.t, 1)->mem_bytes ==
                4 * topo_gpu_type(&t, 0)->mem_bytes - 3 * COST_RUNTIME_OVERHEAD_BYTES);
    plan_stage s = {.ngpus = 1, .gpus = {1}, .first = 0, .last = 0};
    tp_view_expand_stage(&v, &s);
    assert_int_equal(s.ngpus, 4);
    for (int x = 0; x < 4; x++) {
        assert_int_equal(s.gpus[x], 4 + x);
        assert_int_equal(t.gpus[s.gpus[x]].node, 0);
    }
    tp_view_free(&v);
    topo_free(&t);
}

static const char *V100_8 =
    "{\"name\":\"v100-8\",\"sites\":[{\"id\":\"s\",\"nodes\":["
    "{\"gpu\":\"v100_sxm2_16gb\",\"count\":8,\"nic_gbps\":25}],"
    "\"lan\":{\"gbps\":25,\"latency_ms\":0.05}}],\"links\":[]}";

/* On one node of 16 GB V100s GPT-3 XL does not fit a GPU; Megatron splits
 * layers by tensor parallelism too. The memetic planner searches the same
 * degrees, so it must be no slower, and every plan it writes is valid. */
static void tensor_parallel_no_worse_than_megatron(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    assert_int_equal(topo_parse(&t, "v100-8", V100_8, strlen(V100_8), NULL, &e), 0);
    model_spec m;
    assert_int_equal(model_resolve("gpt3-xl", &m, &e), 0);
    job j;
    job_defaults(&j, &m);
    j.batch = 32;
    planner_opts opts = {"time", 1, 0, TEST_GENS, 1, false, 0, NULL, NULL, 0};
    plan pm, pg;
    planner_stats sm, sg;
    assert_int_equal(planner_plan(planner_find("memetic"), &t, &j, &opts, &pm, &sm, &e), 0);
    assert_int_equal(planner_plan(planner_find("megatron"), &t, &j, &opts, &pg, &sg, &e), 0);
    check_plan(&t, &j, &pm);
    assert_true(sm.objective_value <= sg.objective_value * (1 + 1e-9));
    plan_free(&pm);
    plan_free(&pg);
    topo_free(&t);
}

/* --- what a slow GPU and the energy objective do ----------------------------------------------- */

static const char *SLOW_T4 =
    "{\"name\":\"slow-t4\",\"sites\":["
    "{\"id\":\"main\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":4,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.05}},"
    "{\"id\":\"far\",\"nodes\":[{\"gpu\":\"t4\",\"count\":1,\"nic_gbps\":10}],"
    "\"lan\":{\"gbps\":10,\"latency_ms\":0.5}}],"
    "\"links\":[{\"a\":\"main\",\"b\":\"far\",\"gbps\":0.1,\"latency_ms\":40}]}";

static void tiny_job(job *j, int batch)
{
    gt_err e;
    model_spec m;
    assert_int_equal(model_load_json(FIXTURES "/tiny-model.json", &m, &e), 0);
    job_defaults(j, &m);
    j->batch = batch;
}

static bool uses_site(const topology *t, const plan *p, int site)
{
    for (int pi = 0; pi < p->npipes; pi++)
        for (int k = 0; k < p->pipes[pi].nstages; k++)
            if (t->gpus[p->pipes[pi].stages[k].gpus[0]].site == site)
                return true;
    return false;
}

static void slow_gpu_left_out(void **state)
{
    (void)state;
    topology t;
    job j;
    gt_err e;
    assert_int_equal(topo_parse(&t, "slow-t4", SLOW_T4, strlen(SLOW_T4), NULL, &e), 0);
    tiny_job(&j, 32);
    planner_opts opts = {"time", 1, 0, TEST_GENS, 1, false, 0, NULL, NULL, 0};
    plan p, x;
    planner_stats st, sx;
    assert_int_equal(planner_plan(planner_find("memetic"), &t, &j, &opts, &p, &st, &e), 0);
    assert_int_equal(planner_exact(NULL, &t, &j, &opts, &x, &sx, &e), 0);
    check_plan(&t, &j, &p);
    assert_false(uses_site(&t, &p, 1));
    assert_false(uses_site(&t, &x, 1));
    assert_true(rel_diff(st.objective_value, sx.objective_value) <= 1e-9);
    plan_free(&p);
    plan_free(&x);
    topo_free(&t);
}

/* Mean FLOP/s per TDP watt of the GPUs a plan uses. */
static double flops_per_watt(const topology *t, const plan *p)
{
    double sum = 0;
    int n = 0;
    for (int pi = 0; pi < p->npipes; pi++)
        for (int k = 0; k < p->pipes[pi].nstages; k++) {
            const gpu_type *g = topo_gpu_type(t, p->pipes[pi].stages[k].gpus[0]);
            sum += g->peak_flops * g->efficiency / g->tdp_w;
            n++;
        }
    return sum / n;
}

static void energy_uses_fewer_or_greener(void **state)
{
    (void)state;
    static const char *const topos[] = {FIXTURES "/small-geo.json", "topologies/pools/us-hetero.json"};
    for (int i = 0; i < 2; i += tu_stride()) {
        topology t;
        job j;
        gt_err e;
        assert_int_equal(topo_load(&t, topos[i], NULL, &e), 0);
        tiny_job(&j, 64);
        /* 30 generations, not the default stopping rule: the property is one
         * of the two objectives' optima, far apart on both pools (1-2 GPUs
         * against 2-8), and the default's runs were a fifth of this suite's time */
        planner_opts ot = {"time", 1, 0, 30, 2, false, 0, NULL, NULL, 0};
        planner_opts oe = {"energy", 1, 0, 30, 2, false, 0, NULL, NULL, 0};
        plan pt, pe;
        planner_stats st, se;
        assert_int_equal(planner_plan(planner_find("memetic"), &t, &j, &ot, &pt, &st, &e), 0);
        assert_int_equal(planner_plan(planner_find("memetic"), &t, &j, &oe, &pe, &se, &e), 0);
        int gt = plan_gpus_used(&pt), ge = plan_gpus_used(&pe);
        double ft = flops_per_watt(&t, &pt), fe = flops_per_watt(&t, &pe);
        printf("%s: time plan %d GPUs (%.3g FLOP/J), energy plan %d GPUs (%.3g FLOP/J)\n",
               topos[i], gt, ft, ge, fe);
        assert_true(ge < gt || fe > ft);
        plan_free(&pt);
        plan_free(&pe);
        topo_free(&t);
    }
}

/* --- the command: bad input, pareto, Ctrl-C ------------------------------------------------------- */

static void bad_input(void **state)
{
    (void)state;
    char dir[64], topo[128], out[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(topo, sizeof topo, "%s/two-t4.json", dir);
    snprintf(out, sizeof out, "%s/p.json", dir);
    assert_int_equal(tu_write_file(topo, "{\"name\":\"two-t4\",\"sites\":[{\"id\":\"s\","
                                         "\"nodes\":[{\"gpu\":\"t4\",\"count\":2}],"
                                         "\"lan\":{\"gbps\":10,\"latency_ms\":1}}],\"links\":[]}"), 0);
    tu_run r;
    /* a 7B model on 32 GB: no subset fits; the shortfall is named */
    assert_int_equal(tu_geotrain(&r, "plan", "-t", topo, "-m", "llama2-7b", "--batch", "8", "-o",
                                 out, NULL), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "fits on no subset"));
    assert_non_null(strstr(r.err, "lacks"));
    assert_false(tu_exists(out));
    tu_run_free(&r);
    /* 30 sequences in microbatches of 4: the admissible sizes are listed */
    assert_int_equal(tu_geotrain(&r, "plan", "-t", FIXTURES "/small-geo.json", "-m",
                                 FIXTURES "/tiny-model.json", "--batch", "30", "--microbatch", "4",
                                 "-o", out, NULL), 0);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "admissible"));
    assert_non_null(strstr(r.err, " 1 2 3 5 6 10 15 30"));
    tu_run_free(&r);
    /* two budgets contradict each other: usage */
    assert_int_equal(tu_geotrain(&r, "plan", "-t", FIXTURES "/small-geo.json", "-m",
                                 FIXTURES "/tiny-model.json", "--budget-s", "5", "--generations",
                                 "10", "-o", out, NULL), 0);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--help"));
    tu_run_free(&r);
    tu_rmtree(dir);
}

static void pareto_front_written(void **state)
{
    (void)state;
    char dir[64], out[128], csv[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(out, sizeof out, "%s/front.json", dir);
    snprintf(csv, sizeof csv, "%s/front.csv", dir);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "plan", "-t", FIXTURES "/small-geo.json", "-m",
                                 FIXTURES "/tiny-model.json", "--batch", "32", "--objective",
                                 "pareto", "--generations", "12", "-o", out, NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    assert_true(tu_exists(csv));
    json_error_t je;
    json_t *root = json_load_file(out, 0, &je);
    assert_non_null(root);
    json_t *plans = json_object_get(root, "plans");
    size_t n = json_array_size(plans);
    assert_true(n >= 2);
    topology t;
    job j;
    gt_err e;
    assert_int_equal(topo_load(&t, FIXTURES "/small-geo.json", NULL, &e), 0);
    tiny_job(&j, 32);
    double *tm = calloc(n, sizeof *tm), *en = calloc(n, sizeof *en);
    for (size_t i = 0; i < n; i++) {
        json_t *pj = json_array_get(plans, i), *sim = json_object_get(pj, "simulated");
        tm[i] = json_real_value(json_object_get(sim, "iteration_time_s"));
        en[i] = json_real_value(json_object_get(sim, "energy_j"));
        char *txt = json_dumps(pj, 0);
        plan p;
        assert_int_equal(plan_parse(&p, "front", txt, strlen(txt), &t, &e), 0);
        check_plan(&t, &j, &p);
        plan_free(&p);
        free(txt);
    }
    for (size_t a = 0; a < n; a++) /* sorted by time, energy falling: non-dominated */
        if (a + 1 < n) {
            assert_true(tm[a] < tm[a + 1]);
            assert_true(en[a] > en[a + 1]);
        }
    size_t len = 0;
    char *c = tu_read_file(csv, &len);
    assert_non_null(c);
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += c[i] == '\n';
    assert_int_equal(lines, (int)n + 1);
    free(c);
    free(tm);
    free(en);
    json_decref(root);
    topo_free(&t);
    tu_rmtree(dir);
}

/* Ctrl-C: the best plan so far is written and the exit code is 130. */
static void interrupt_writes_best(void **state)
{
    (void)state;
    char dir[64], out[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(out, sizeof out, "%s/p.json", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        /* 64 GPUs, 1024 microbatches: generations take long enough to interrupt */
        execl("./geotrain", "geotrain", "plan", "-t", "topologies/yuan2022/case5.json", "-m",
              "gpt3-xl", "--batch", "1024", "--budget-s", "60", "-o", out, (char *)NULL);
        _exit(127);
    }
    struct timespec ts = {2, 0};
    nanosleep(&ts, NULL);
    kill(pid, SIGINT);
    int ws;
    double t0 = now_s();
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    assert_true(now_s() - t0 < 30);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 130);
    tu_run r;
    assert_int_equal(tu_geotrain(&r, "plan", "check", "-t", "topologies/yuan2022/case5.json",
                                 "-m", "gpt3-xl", "--batch", "1024", out, NULL), 0);
    assert_int_equal(r.status, 0);
    tu_run_free(&r);
    tu_rmtree(dir);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memetic_finds_exact),
        cmocka_unit_test(islands_one_is_plain),
        cmocka_unit_test(tp_view_units),
        cmocka_unit_test(tensor_parallel_no_worse_than_megatron),
        cmocka_unit_test(same_plan_any_threads),
        cmocka_unit_test(default_run_same_file),
        cmocka_unit_test(slow_gpu_left_out),
        cmocka_unit_test(energy_uses_fewer_or_greener),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(pareto_front_written),
        cmocka_unit_test(interrupt_writes_best),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
