/* fuzz_val_memory.c — the measured peak-memory rows' reader (mem_load,
 * validation/memory_runs.csv) and the memory model each replayed row runs
 * through (mem_simulate).
 *
 * Properties: errors name the file; mem_simulate either refuses with a
 * reason or gives a finite, positive byte count. */
#include <math.h>

#include "fuzz_common.h"
#include "sim/validation/validate_memory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    mem_row *rows;
    int n;
    gt_err e;
    if (mem_load(path, &rows, &n, &e)) {
        FUZZ_REQUIRE(fuzz_names(&e, path), "error does not name the file: %s", e.msg);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (rows[i].skip[0])
            continue;
        double bytes;
        if (mem_simulate(&rows[i], &bytes, &e) == 0)
            FUZZ_REQUIRE(isfinite(bytes) && bytes > 0, "row %s: %g bytes", rows[i].id, bytes);
    }
    free(rows);
    return 0;
}
