/* test_topogen.c — the topology generator (topologies/gen.h): measured pairs
 * carry the shipped measurement, unmeasured ones the distance fit, whose
 * held-out error is computed, printed and bounded; seeding is reproducible;
 * every generated topology loads with topo_load and equals its file. */
#include "testutil.h"

#include <math.h>
#include <unistd.h>

#include "sim/base/csv.h"
#include "sim/inputs/topology.h"
#include "topologies/gen.h"

#define GBPS 125000000.0

static topogen_data DATA; /* read-only after the group setup */

static int setup(void **state)
{
    (void)state;
    gt_err e;
    if (topogen_data_load(&DATA, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    topogen_data_free(&DATA);
    return 0;
}

static void gen(topogen_opts *o, topology *t)
{
    gt_err e = {{0}};
    o->data = &DATA;
    int rc = topo_generate(o, t, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    assert_int_equal(rc, 0);
}

static void gen_file(topogen_opts *o, char *path, size_t cap)
{
    topology t;
    gt_err e;
    gen(o, &t);
    write_temp("", path, cap);
    assert_int_equal(topo_write(&t, path, &e), 0);
    topo_free(&t);
}

/* The shipped table read independently of the generator's loader. */
typedef struct row {
    double lat, ab, ba;
} row;

static int table_row(const char *a, const char *b, row *out)
{
    csv_reader r;
    gt_err e;
    assert_int_equal(csv_open(&r, "topologies/wan_measured.csv", &e), 0);
    int ca = csv_col(&r, "a", 1, &e), cb = csv_col(&r, "b", 1, &e);
    int cl = csv_col(&r, "latency_ms", 1, &e), cab = csv_col(&r, "a_to_b_gbps", 1, &e);
    int cba = csv_col(&r, "b_to_a_gbps", 1, &e), found = 0;
    while (!found && csv_next(&r, &e) == 1)
        if (!strcmp(csv_get(&r, ca), a) && !strcmp(csv_get(&r, cb), b)) {
            assert_int_equal(csv_double(&r, cl, 0, 1e9, 1, NAN, &out->lat, &e), 0);
            assert_int_equal(csv_double(&r, cab, 0, 1e9, 1, NAN, &out->ab, &e), 0);
            assert_int_equal(csv_double(&r, cba, 0, 1e9, 1, NAN, &out->ba, &e), 0);
            found = 1;
        }
    csv_close(&r);
    return found;
}

/* Two listed regions: no random choice, the link is the table's row. */
static void check_measured_pair(const char *a, const char *b)
{
    row m;
    assert_true(table_row(a, b, &m));
    topogen_opts o;
    topogen_defaults(&o);
    snprintf(o.regions, sizeof o.regions, "%s,%s", a, b);
    char path[64];
    gen_file(&o, path, sizeof path);
    topology t;
    gt_err e;
    assert_int_equal(topo_load(&t, path, NULL, &e), 0);
    assert_int_equal(t.nsites, 2);
    assert_string_equal(t.sites[0].region, a);
    const topo_link *ab = topo_wan(&t, 0, 1), *ba = topo_wan(&t, 1, 0);
    printf("  %s <-> %s: table %.3f ms, %.3f / %.3f Gbps; generated %.3f ms, %.3f / %.3f\n",
           a, b, m.lat, m.ab, m.ba, ab->lat_s * 1e3, ab->bw / GBPS, ba->bw / GBPS);
    assert_true(rel_diff(ab->lat_s * 1e3, m.lat) < 1e-12);
    assert_true(rel_diff(ab->bw / GBPS, m.ab) < 1e-12);
    assert_true(rel_diff(ba->bw / GBPS, m.ba) < 1e-12);
    topo_free(&t);
    unlink(path);
}

static void measured_pairs_equal_the_table(void **state)
{
    (void)state;
    check_measured_pair("aws:us-east-1", "aws:us-west-2");
    check_measured_pair("aws:eu-central-1", "gcp:asia-east1");
    check_measured_pair("azure:koreacentral", "gcp:europe-west4");
}

/* azure:centralus has no Skyplane latency: the fit gives it. */
static void unmeasured_pair_uses_the_fit(void **state)
{
    (void)state;
    const char *a = "aws:ap-south-1", *b = "azure:centralus";
    int ia = -1, ib = -1;
    for (int i = 0; i < DATA.n; i++) {
        ia = strcmp(DATA.regions[i].id, a) ? ia : i;
        ib = strcmp(DATA.regions[i].id, b) ? ib : i;
    }
    assert_true(ia >= 0 && ib >= 0);
    assert_true(isnan(DATA.lat_ms[ia * DATA.n + ib]));
    topogen_opts o;
    topogen_defaults(&o);
    snprintf(o.regions, sizeof o.regions, "%s,%s", a, b);
    topology t;
    gen(&o, &t);
    double km = topogen_region_km(&DATA, ia, ib);
    double want = topogen_fit_latency_ms(&DATA.fit, km);
    printf("  %s <-> %s: %.0f km, fit %.3f ms, generated %.3f ms\n", a, b, km, want,
           topo_wan(&t, 0, 1)->lat_s * 1e3);
    assert_true(rel_diff(topo_wan(&t, 0, 1)->lat_s * 1e3, want) < 1e-5); /* 6 digits */
    assert_non_null(strstr(topo_wan(&t, 0, 1)->source, "latency fit,"));
    topo_free(&t);
}

static void distance_is_great_circle(void **state)
{
    (void)state;
    /* London - New York is 5,570 km; a quarter meridian is 10,008 km */
    assert_true(fabs(topogen_distance_km(51.5074, -0.1278, 40.7128, -74.006) - 5570) < 15);
    assert_true(fabs(topogen_distance_km(0, 0, 90, 0) - 10007.5) < 1);
    assert_true(topogen_distance_km(10, 20, 10, 20) == 0);
}

static void print_err(const char *what, const topogen_fit_error *x)
{
    printf("  %s: latency RMSE %.1f ms, MAE %.1f ms, |rel| median %.1f %% p90 %.1f %% (%d "
           "pairs); bandwidth RMSE %.3f ln, |rel| median %.1f %% p90 %.1f %% (%d directions)\n",
           what, x->lat_rmse_ms, x->lat_mae_ms, 100 * x->lat_medrel, 100 * x->lat_p90rel,
           x->nlat, x->bw_rmse_ln, 100 * x->bw_medrel, 100 * x->bw_p90rel, x->nbw);
}

/* The fit's error on measured pairs it did not see, and physical sanity. */
static void fit_error_on_held_out_pairs_is_bounded(void **state)
{
    (void)state;
    const topogen_fit *f = &DATA.fit;
    printf("  fit: one-way ms = %.4f + %.6f * km (%.0f km/ms); ln Gbps by sender: ", f->lat_a,
           f->lat_b, 1 / f->lat_b);
    for (int p = 0; p < DATA.nprov; p++)
        printf("%s %.3f%+.3g*km  ", DATA.providers[p], f->bw_c[p], f->bw_k[p]);
    printf("\n");
    /* light in fibre covers ~200 km per ms: no route can beat it */
    assert_true(f->lat_b > 1.0 / 200);
    assert_true(f->lat_a >= 0 && f->lat_a < 10);
    for (int p = 0; p < DATA.nprov; p++)
        assert_true(f->bw_k[p] < 0); /* farther is slower */
    topogen_fit_error out, in;
    gt_err e;
    assert_int_equal(topogen_fit_holdout(&DATA, 5, &out, &e), 0);
    assert_int_equal(topogen_fit_holdout(&DATA, 1, &in, &e), 0);
    print_err("held out (5-fold)", &out);
    print_err("in sample", &in);
    assert_true(out.nlat > 700 && out.nbw > 1500);
    assert_true(out.lat_medrel < 0.25 && out.lat_rmse_ms < 30);
    assert_true(out.bw_medrel < 0.5 && out.bw_rmse_ln < 0.8);
    /* held out can't be much better than in sample (that would mean a leak) */
    assert_true(out.lat_rmse_ms >= 0.95 * in.lat_rmse_ms);
}

static void read_all(const char *path, char **buf, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    *len = (size_t)ftell(fp);
    rewind(fp);
    *buf = malloc(*len + 1);
    assert_int_equal(fread(*buf, 1, *len, fp), *len);
    fclose(fp);
}

static int same_file(const char *a, const char *b)
{
    char *x, *y;
    size_t nx, ny;
    read_all(a, &x, &nx);
    read_all(b, &y, &ny);
    int same = nx == ny && memcmp(x, y, nx) == 0;
    free(x);
    free(y);
    return same;
}

static void same_seed_same_bytes_other_seed_differs(void **state)
{
    (void)state;
    char a[64], b[64], c[64];
    topogen_opts o;
    topogen_defaults(&o);
    o.sites = 6;
    o.gpus = 48;
    o.seed = 7;
    snprintf(o.gpus_dist, sizeof o.gpus_dist, "random");
    o.bw_jitter = 0.2;
    gen_file(&o, a, sizeof a);
    gen_file(&o, b, sizeof b);
    o.seed = 8;
    gen_file(&o, c, sizeof c);
    assert_true(same_file(a, b));
    assert_false(same_file(a, c));
    unlink(a);
    unlink(b);
    unlink(c);
}

/* Changing the mix must not move the sites (independent streams). */
static void stages_draw_from_independent_streams(void **state)
{
    (void)state;
    topogen_opts o;
    topogen_defaults(&o);
    o.sites = 5;
    o.seed = 11;
    topology t1, t2;
    gen(&o, &t1);
    snprintf(o.mix, sizeof o.mix, "t4:1,l4:2");
    gen(&o, &t2);
    for (int s = 0; s < 5; s++)
        assert_string_equal(t1.sites[s].region, t2.sites[s].region);
    topo_free(&t1);
    topo_free(&t2);
}

static int count_type(const topology *t, const char *id)
{
    int n = 0;
    for (int g = 0; g < t->ngpus; g++)
        n += !strcmp(t->types[t->gpus[g].type].id, id);
    return n;
}

/* Written, read back by topo_load, and equal to the in-memory topology. */
static void check_roundtrip(topogen_opts *o, int want_sites, long want_gpus)
{
    topology t, r;
    gt_err e;
    char path[64];
    gen(o, &t);
    write_temp("", path, sizeof path);
    assert_int_equal(topo_write(&t, path, &e), 0);
    int rc = topo_load(&r, path, NULL, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(r.nsites, want_sites);
    if (want_gpus)
        assert_int_equal(r.ngpus, want_gpus);
    assert_int_equal(r.ngpus, t.ngpus);
    assert_int_equal(r.nnodes, t.nnodes);
    for (int a = 0; a < t.nsites; a++) {
        assert_true(t.sites[a].ngpus >= 1);
        assert_true(r.sites[a].carbon_g_per_kwh > 0);
        assert_true(r.sites[a].lan_lat_s == t.sites[a].lan_lat_s);
        for (int b = 0; b < t.nsites; b++)
            if (a != b) {
                assert_true(topo_wan(&r, a, b)->bw == topo_wan(&t, a, b)->bw);
                assert_true(topo_wan(&r, a, b)->lat_s == topo_wan(&t, a, b)->lat_s);
            }
    }
    for (int k = 0; k < t.nnodes; k++)
        assert_int_equal(r.nodes[k].type, t.nodes[k].type);
    topo_free(&t);
    topo_free(&r);
    unlink(path);
}

static void generated_topologies_load(void **state)
{
    (void)state;
    static const struct { const char *dist, *mix, *per, *regions; int sites; long gpus; } C[] = {
        {"even", "", "node", "any", 6, 48},
        {"random", "h100:0.2,a100:0.3,t4:0.5", "node", "any", 8, 101},
        {"zipf:1.2", "a100,v100", "site", "aws,gcp", 10, 300},
        {"uniform:1:20", "h100:1/t4:1/l4:1,4090:1", "node", "europe", 3, 0},
        {"fixed", "", "node", "aws:us-east-1,gcp:us-central1,azure:westeurope", 0, 0},
        {"even", "", "node", "any", 43, 43},
    };
    for (size_t k = 0; k < sizeof C / sizeof *C; k++) {
        topogen_opts o;
        topogen_defaults(&o);
        snprintf(o.gpus_dist, sizeof o.gpus_dist, "%s", C[k].dist);
        if (*C[k].mix)
            snprintf(o.mix, sizeof o.mix, "%s", C[k].mix);
        snprintf(o.mix_per, sizeof o.mix_per, "%s", C[k].per);
        snprintf(o.regions, sizeof o.regions, "%s", C[k].regions);
        o.sites = C[k].sites;
        o.gpus = C[k].gpus;
        o.node_size = 4;
        o.bw_jitter = 0.1;
        o.seed = 100 + k;
        check_roundtrip(&o, C[k].sites ? C[k].sites : 3, C[k].gpus ? C[k].gpus
                        : C[k].sites ? 0 : 24);
    }
}

/* Per-node typing lands within one node of the asked shares. */
static void mix_shares_are_met_within_a_node(void **state)
{
    (void)state;
    topogen_opts o;
    topogen_defaults(&o);
    o.sites = 7;
    o.gpus = 400;
    o.node_size = 8;
    snprintf(o.gpus_dist, sizeof o.gpus_dist, "zipf:1");
    snprintf(o.mix, sizeof o.mix, "h100:0.2,a100:0.3,t4:0.5");
    topology t;
    gen(&o, &t);
    printf("  400 GPUs: %d h100 (80), %d a100 (120), %d t4 (200)\n", count_type(&t, "h100_sxm"),
           count_type(&t, "a100_sxm_80gb"), count_type(&t, "t4"));
    assert_true(abs(count_type(&t, "h100_sxm") - 80) <= 8);
    assert_true(abs(count_type(&t, "a100_sxm_80gb") - 120) <= 8);
    assert_true(abs(count_type(&t, "t4") - 200) <= 8);
    topo_free(&t);
}

static void expect_bad(topogen_opts *o, const char *needle)
{
    gt_err e = {{0}};
    assert_int_not_equal(topogen_check(o, &DATA, &e), 0);
    if (!strstr(e.msg, needle))
        fail_msg("'%s' does not name '%s'", e.msg, needle);
    topology t;
    o->data = &DATA;
    assert_int_not_equal(topo_generate(o, &t, &e), 0);
}

static void bad_options_are_named(void **state)
{
    (void)state;
    topogen_opts o;
    topogen_defaults(&o);
    o.sites = 99;
    expect_bad(&o, "--sites 99");
    topogen_defaults(&o);
    snprintf(o.mix, sizeof o.mix, "t4:1,x999:1"); /* not a catalog GPU type */
    expect_bad(&o, "x999");
    topogen_defaults(&o);
    snprintf(o.mix, sizeof o.mix, "t4:x");
    expect_bad(&o, "weight of 't4'");
    topogen_defaults(&o);
    snprintf(o.regions, sizeof o.regions, "aws,atlantis");
    expect_bad(&o, "atlantis");
    topogen_defaults(&o);
    snprintf(o.gpus_dist, sizeof o.gpus_dist, "uniform:5:2");
    expect_bad(&o, "uniform:5:2");
    topogen_defaults(&o);
    o.gpus = 2;
    expect_bad(&o, "--gpus 2");
    topogen_defaults(&o);
    o.bw_jitter = 1.5;
    expect_bad(&o, "--bw-jitter");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measured_pairs_equal_the_table),
        cmocka_unit_test(unmeasured_pair_uses_the_fit),
        cmocka_unit_test(distance_is_great_circle),
        cmocka_unit_test(fit_error_on_held_out_pairs_is_bounded),
        cmocka_unit_test(same_seed_same_bytes_other_seed_differs),
        cmocka_unit_test(stages_draw_from_independent_streams),
        cmocka_unit_test(generated_topologies_load),
        cmocka_unit_test(mix_shares_are_met_within_a_node),
        cmocka_unit_test(bad_options_are_named),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
