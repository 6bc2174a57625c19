/* fuzz_model.c — inline model files (model_parse_json, the reader behind
 * `-m FILE.json`).
 *
 * Properties: no crash, leak or UB; errors name the file; an accepted model
 * passes model_validate and gives finite, positive parameter counts, FLOPs
 * and memory under the default job. */
#include <math.h>

#include "fuzz_common.h"
#include "sim/models/cost.h"
#include "sim/models/memory.h"
#include "sim/inputs/model.h"

#define NAME "fuzz.model.json"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    model_spec m;
    gt_err e;
    if (model_parse_json(NAME, (const char *)data, size, &m, &e)) {
        FUZZ_REQUIRE(fuzz_names(&e, NAME), "error does not name the file: %s", e.msg);
        return 0;
    }
    FUZZ_REQUIRE(model_validate(&m, NAME, &e) == 0, "accepted but invalid: %s", e.msg);
    job j;
    job_defaults(&j, &m);
    int L = m.layers;
    double p = cost_model_params(&m), f = cost_iteration_flops(&j);
    double mem = cost_stage_memory(&j, 1, 0, L - 1, 1, 1);
    double half = cost_stage_memory(&j, 1, L / 2, L - 1, 1, 1);
    FUZZ_REQUIRE(isfinite(p) && p > 0, "params %g", p);
    FUZZ_REQUIRE(isfinite(f) && f > 0, "flops %g", f);
    FUZZ_REQUIRE(isfinite(mem) && mem >= half && half > 0, "memory %g / %g", mem, half);
    return 0;
}
