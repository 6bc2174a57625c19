/* fuzz_topo.c — topology reader (topo_parse, docs/formats.md).
 *
 * Properties: no crash, leak or UB on any input; a rejected input gets an
 * error that names the file; an accepted topology is consistent (every GPU's
 * name resolves back to it, every path has a positive rate), prints, and
 * survives a write/read round trip (topo_to_json -> topo_parse) unchanged in
 * shape. */
#include <jansson.h>
#include <math.h>

#include "fuzz_common.h"
#include "sim/inputs/topology.h"
#include "sim/models/path.h"

#define NAME "fuzz.json"

static FILE *devnull;

static void check_topology(const topology *t)
{
    FUZZ_REQUIRE(t->ngpus > 0 && t->ngpus <= TOPO_MAX_GPUS, "ngpus %d", t->ngpus);
    FUZZ_REQUIRE(t->nsites > 0 && t->nsites <= TOPO_MAX_SITES, "nsites %d", t->nsites);
    int step = t->ngpus > 256 ? t->ngpus / 256 : 1;
    for (int g = 0; g < t->ngpus; g += step) {
        char name[256];
        topo_gpu_name(t, g, name, sizeof name);
        FUZZ_REQUIRE(topo_gpu_lookup(t, name) == g, "GPU %d named %s", g, name);
        FUZZ_REQUIRE(topo_gpu_type(t, g)->mem_bytes > 0, "GPU %d type", g);
    }
    for (int a = 0; a < t->ngpus; a += step) {
        int b = (a * 7 + 3) % t->ngpus;
        double lat, rate;
        path_lone(t, a, b, &lat, &rate);
        FUZZ_REQUIRE(lat >= 0 && isfinite(lat), "path %d->%d latency %g", a, b, lat);
        FUZZ_REQUIRE(rate > 0 && !isnan(rate), "path %d->%d rate %g", a, b, rate);
    }
    for (int s = 0; s < t->nsites; s++)
        FUZZ_REQUIRE(t->sites[s].ngpus > 0, "site %s has no GPUs", t->sites[s].id);
}

static void round_trip(const topology *t)
{
    json_t *j = topo_to_json(t);
    FUZZ_REQUIRE(j != NULL, "topo_to_json");
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    json_decref(j);
    FUZZ_REQUIRE(text != NULL, "json_dumps");
    topology u;
    gt_err e;
    int rc = topo_parse(&u, "roundtrip.json", text, strlen(text), fuzz_catalog(), &e);
    FUZZ_REQUIRE(rc == 0, "written topology does not read back: %s\n%s", e.msg, text);
    FUZZ_REQUIRE(u.nsites == t->nsites && u.nnodes == t->nnodes && u.ngpus == t->ngpus,
                 "round trip changed the shape");
    for (int g = 0; g < t->ngpus; g++)
        FUZZ_REQUIRE(u.gpus[g].type == t->gpus[g].type && u.gpus[g].node == t->gpus[g].node,
                     "round trip changed GPU %d", g);
    topo_free(&u);
    free(text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_catalog();
    devnull = fopen("/dev/null", "w");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topology t;
    gt_err e;
    if (topo_parse(&t, NAME, (const char *)data, size, fuzz_catalog(), &e)) {
        FUZZ_REQUIRE(fuzz_names(&e, NAME), "error does not name the file: %s", e.msg);
        return 0;
    }
    check_topology(&t);
    if (devnull)
        topo_print_summary(&t, devnull);
    round_trip(&t);
    topo_free(&t);
    return 0;
}
