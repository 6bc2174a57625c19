/* fuzz_gpu_catalog.c — the GPU catalog CSV reader (gpu_catalog_load, and the
 * CSV layer under it).
 *
 * Properties: no crash, leak or UB; errors name the file; an accepted catalog
 * has unique ids and positive, finite numbers with idle < TDP. */
#include <math.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    gpu_catalog c;
    gt_err e;
    if (gpu_catalog_load(&c, path, &e)) {
        FUZZ_REQUIRE(fuzz_names(&e, path), "error does not name the file: %s", e.msg);
        return 0;
    }
    FUZZ_REQUIRE(c.n > 0, "empty catalog accepted");
    for (int i = 0; i < c.n; i++) {
        const gpu_type *g = &c.types[i];
        FUZZ_REQUIRE(*g->id && gpu_catalog_find(&c, g->id) == i, "id %s", g->id);
        FUZZ_REQUIRE(isfinite(g->mem_bytes) && g->mem_bytes > 0 && g->peak_flops > 0 &&
                         g->mem_bw > 0 && g->link_bw > 0 && g->efficiency > 0 &&
                         g->efficiency <= 1 && g->idle_w >= 0 && g->idle_w < g->tdp_w,
                     "type %s has bad numbers", g->id);
        double w = gpu_comm_w(g);
        FUZZ_REQUIRE(w >= g->idle_w && w <= g->tdp_w, "comm power %g", w);
    }
    gpu_catalog_free(&c);
    return 0;
}
