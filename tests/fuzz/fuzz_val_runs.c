/* fuzz_val_runs.c — the validation set reader (val_load, validation/runs.csv)
 * and the in-memory case each replayed row becomes (val_build: a one-site
 * topology, the row's job and its Megatron-order plan).
 *
 * Properties: errors name the file; every accepted row that is replayed
 * (empty `skip`) has tp, pp, dp, vp and micro_batch >= 1 and a positive
 * measured time; val_build either refuses with a reason or builds a plan of
 * replicas pipelines whose topology holds tp x pp x replicas GPUs. The
 * replay itself is not run (a valid row may take seconds; the `limits`
 * target fuzzes the simulator). */
#include "fuzz_common.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"
#include "sim/inputs/job.h"
#include "sim/validation/validate.h"

static void build_row(const val_row *r)
{
    topology t;
    job j;
    plan p;
    gt_err e;
    int D = val_replicas(r);
    if (val_build(r, fuzz_catalog(), -1, D, &t, &j, &p, &e))
        return;
    FUZZ_REQUIRE(p.npipes == D, "row %s: %d pipelines for %d replicas", r->id, p.npipes, D);
    FUZZ_REQUIRE((long)t.ngpus == (long)r->tp * r->pp * D, "row %s: %d GPUs", r->id, t.ngpus);
    plan_free(&p);
    topo_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    val_row *rows;
    int n;
    gt_err e;
    if (val_load(path, &rows, &n, &e)) {
        FUZZ_REQUIRE(fuzz_names(&e, path), "error does not name the file: %s", e.msg);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const val_row *r = &rows[i];
        if (r->skip[0])
            continue;
        FUZZ_REQUIRE(r->tp >= 1 && r->pp >= 1 && r->dp >= 1 && r->vp >= 1 &&
                         r->micro_batch >= 1 && r->measured_s > 0,
                     "row %s accepted with a bad layout", r->id);
        build_row(r);
    }
    free(rows);
    return 0;
}
