/* fuzz_plan.c — plan reader and checker (plan_parse + plan_check, docs/formats.md).
 *
 * The world is tests/bad/support/topo.json (4 sites, 16 GPUs: A100s and two
 * T4 nodes) and the 8-layer model tests/bad/support/model.json; the job's
 * batch is 16, then, so that the deeper checks (layers, GPUs, memory) are
 * reached too, whatever the plan's microbatches add up to.
 *
 * Properties: no crash, leak or UB; errors name the file; a parsed plan
 * survives plan_to_json -> plan_parse unchanged and copies equal; a plan that
 * passes plan_check has finite memory within every GPU it uses. */
#include <jansson.h>
#include <limits.h>
#include <math.h>

#include "fuzz_common.h"
#include "sim/models/cost.h"
#include "sim/inputs/plan.h"
#include "sim/models/plan_check.h"

#define NAME "fuzz.plan.json"
#define TOPO "tests/bad/support/topo.json"
#define MODEL "tests/bad/support/model.json"

static topology T;
static job J;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    gt_err e;
    model_spec m;
    if (topo_load(&T, TOPO, fuzz_catalog(), &e) || model_load_json(MODEL, &m, &e)) {
        fprintf(stderr, "fuzz_plan: %s (run from the repository root)\n", e.msg);
        abort();
    }
    job_defaults(&J, &m);
    J.batch = 16;
    return 0;
}

static void same_plan(const plan *a, const plan *b, const char *what)
{
    FUZZ_REQUIRE(a->npipes == b->npipes && a->schedule == b->schedule && a->sync == b->sync &&
                     a->microbatch_size == b->microbatch_size &&
                     !strcmp(a->planner, b->planner) && !strcmp(a->objective, b->objective),
                 "%s changed the plan's header", what);
    for (int pi = 0; pi < a->npipes; pi++) {
        const plan_pipeline *x = &a->pipes[pi], *y = &b->pipes[pi];
        FUZZ_REQUIRE(x->nstages == y->nstages && x->microbatches == y->microbatches,
                     "%s changed pipeline %d", what, pi);
        for (int k = 0; k < x->nstages; k++) {
            const plan_stage *s = &x->stages[k], *u = &y->stages[k];
            FUZZ_REQUIRE(s->first == u->first && s->last == u->last && s->ngpus == u->ngpus &&
                             !memcmp(s->gpus, u->gpus, sizeof(int) * (size_t)s->ngpus),
                         "%s changed pipelines[%d].stages[%d]", what, pi, k);
        }
    }
}

static void round_trip(const plan *p)
{
    json_t *j = plan_to_json(p, &T);
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    FUZZ_REQUIRE(text != NULL, "json_dumps");
    plan q;
    gt_err e;
    int rc = plan_parse(&q, "roundtrip.plan.json", text, strlen(text), &T, &e);
    FUZZ_REQUIRE(rc == 0, "written plan does not read back: %s\n%s", e.msg, text);
    same_plan(p, &q, "plan_to_json/plan_parse");
    plan_free(&q);
    free(text);
    plan c;
    FUZZ_REQUIRE(plan_copy(&c, p) == 0, "plan_copy");
    same_plan(p, &c, "plan_copy");
    plan_free(&c);
}

static void check_feasible(const plan *p, const job *j)
{
    for (int pi = 0; pi < p->npipes; pi++) {
        int S = plan_physical_stages(p, pi);
        FUZZ_REQUIRE(S >= 1 && S <= p->pipes[pi].nstages, "physical stages %d", S);
        for (int k = 0; k < p->pipes[pi].nstages; k++) {
            int f = plan_in_flight(p, pi, k);
            FUZZ_REQUIRE(f >= 1 && f <= p->pipes[pi].microbatches, "in flight %d", f);
        }
    }
    int used = 0;
    for (int g = 0; g < T.ngpus; g++) {
        double m = plan_gpu_memory(p, &T, j, g);
        FUZZ_REQUIRE(isfinite(m) && m >= 0, "GPU %d memory %g", g, m);
        FUZZ_REQUIRE(m <= topo_gpu_type(&T, g)->mem_bytes, "GPU %d needs %g bytes", g, m);
        used += m > 0;
    }
    FUZZ_REQUIRE(used == plan_gpus_used(p), "GPUs used %d vs %d", used, plan_gpus_used(p));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plan p;
    gt_err e;
    if (plan_parse(&p, NAME, (const char *)data, size, &T, &e)) {
        FUZZ_REQUIRE(fuzz_names(&e, NAME), "error does not name the file: %s", e.msg);
        return 0;
    }
    round_trip(&p);
    job j = J;
    if (plan_check(&p, &T, &j, &e) == 0)
        check_feasible(&p, &j);
    long long total = 0;
    for (int pi = 0; pi < p.npipes; pi++)
        total += p.pipes[pi].microbatches;
    if (total <= INT_MAX / p.microbatch_size && (int)total * p.microbatch_size != j.batch) {
        j.batch = (int)total * p.microbatch_size;
        if (plan_check(&p, &T, &j, &e) == 0)
            check_feasible(&p, &j);
    }
    plan_free(&p);
    return 0;
}
