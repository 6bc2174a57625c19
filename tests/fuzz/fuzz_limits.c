/* fuzz_limits.c — the arithmetic limits (issue 16, item 3; sim/base/timecap.h).
 *
 * The input's bytes pick a two-site topology at the edges of the accepted
 * ranges (WAN 1e-9 .. 1e7 Gbps, latency 0 .. 1e6 ms, TCP window 1e-6 .. 1e6
 * MB, 1 .. 64 connections, LAN and NIC rates over the same range), the
 * schedule and 1 .. 64 microbatches of the 8-layer model of
 * tests/bad/support/model.json, split over one A100 per site. The plan is
 * estimated and replayed (simulate_plan). The overflow oracle is the lone
 * activation transfer between the two stages, L = latency + bytes / rate in
 * double precision, which every microbatch's path must contain:
 *
 *   - success: iteration and energy finite and > 0, iteration under the cap,
 *     and iteration >= L (a wrapped int64 would break one of these);
 *   - failure: only the time-cap error; it must come when L alone is past
 *     the cap, and must not come when L < 1 s (64 microbatches of a tiny
 *     model then finish in minutes).
 * Plus: no sanitizer report (signed overflow, float-to-int out of range). */
#include <math.h>

#include "fuzz_common.h"
#include "sim/models/cost.h"
#include "sim/inputs/plan.h"
#include "sim/engine/simulator.h"
#include "sim/base/timecap.h"
#include "sim/models/path.h"

#define MODEL "tests/bad/support/model.json"

static model_spec M;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    gt_err e;
    if (model_load_json(MODEL, &M, &e)) {
        fprintf(stderr, "fuzz_limits: %s (run from the repository root)\n", e.msg);
        abort();
    }
    fuzz_catalog();
    return 0;
}

/* A byte -> 10^(lo + (hi - lo) * byte / 255): both ends of the range reached. */
static double edge(uint8_t b, double lo, double hi)
{
    return pow(10, lo + (hi - lo) * b / 255.0);
}

static uint8_t take(const uint8_t **d, size_t *n)
{
    if (*n == 0)
        return 0;
    (*n)--;
    return *(*d)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    double wan = edge(take(&data, &size), -9, 7), lan = edge(take(&data, &size), -9, 7);
    double nic = edge(take(&data, &size), -9, 7);
    uint8_t lb = take(&data, &size);
    double lat_ms = lb == 0 ? 0 : edge(lb, -3, 6);
    double win = edge(take(&data, &size), -6, 6);
    int conns = 1 + take(&data, &size) % 64, mb = 1 + take(&data, &size) % 64;
    const char *sched = take(&data, &size) & 1 ? "gpipe" : "1f1b";
    char tj[2048], pj[512];
    snprintf(tj, sizeof tj,
             "{\"name\": \"limits\", \"sites\": ["
             "{\"id\": \"a\", \"nodes\": [{\"gpu\": \"a100_sxm_80gb\", \"count\": 1, "
             "\"nic_gbps\": %.17g}], \"lan\": {\"gbps\": %.17g, \"latency_ms\": 0}},"
             "{\"id\": \"b\", \"nodes\": [{\"gpu\": \"a100_sxm_80gb\", \"count\": 1, "
             "\"nic_gbps\": %.17g}], \"lan\": {\"gbps\": %.17g, \"latency_ms\": 0}}],"
             "\"default_wan\": {\"gbps\": %.17g, \"latency_ms\": %.17g},"
             "\"tcp\": {\"window_mb\": %.17g, \"connections\": %d}}",
             nic, lan, nic, lan, wan, lat_ms, win, conns);
    snprintf(pj, sizeof pj,
             "{\"schedule\": \"%s\", \"pipelines\": [{\"microbatches\": %d, \"stages\": ["
             "{\"gpus\": [\"a/0/0\"], \"layers\": [0, 3]},"
             "{\"gpus\": [\"b/0/0\"], \"layers\": [4, 7]}]}]}",
             sched, mb);
    topology t;
    plan p;
    gt_err e;
    if (topo_parse(&t, "limits.json", tj, strlen(tj), fuzz_catalog(), &e))
        return 0; /* outside the accepted ranges: refused at input, fine */
    if (plan_parse(&p, "limits.plan.json", pj, strlen(pj), &t, &e)) {
        topo_free(&t);
        return 0;
    }
    job j;
    job_defaults(&j, &M);
    j.batch = mb;
    j.microbatch = 1;
    double lat, rate;
    path_lone(&t, 0, 1, &lat, &rate);
    double L = lat + cost_activation_bytes(&j, 1) / rate;
    sim_options o;
    sim_options_default(&o);
    sim_result r;
    int rc = simulate_plan(&t, &j, &p, &o, &r, &e);
    double cap_s = (double)GT_TIME_CAP_NS * 1e-9;
    if (rc == 0) {
        FUZZ_REQUIRE(isfinite(r.iteration_s) && r.iteration_s > 0 && r.iteration_s < cap_s,
                     "iteration %g s out of (0, cap)", r.iteration_s);
        FUZZ_REQUIRE(isfinite(r.energy_j) && r.energy_j > 0, "energy %g J", r.energy_j);
        FUZZ_REQUIRE(isfinite(r.est_iteration_s) && r.est_iteration_s > 0,
                     "estimate %g s", r.est_iteration_s);
        FUZZ_REQUIRE(r.iteration_s >= L * (1 - 1e-9) - 1e-9,
                     "iteration %.9g s below the lone transfer %.9g s", r.iteration_s, L);
        FUZZ_REQUIRE(L < cap_s * 1.000001, "lone transfer %g s past the cap but accepted", L);
    } else {
        FUZZ_REQUIRE(strstr(e.msg, "(the time cap)") != NULL, "unexpected error: %s", e.msg);
        FUZZ_REQUIRE(L >= 1, "time-cap error with a lone transfer of %g s: %s", L, e.msg);
    }
    plan_free(&p);
    topo_free(&t);
    return 0;
}
