/* fuzz_traces.h — the four trace readers of sim/inputs/trace.h, one target each:
 * fuzz_trace_bw.c, fuzz_trace_avail.c, fuzz_trace_mix.c, fuzz_trace_profile.c
 * define TRACE_TARGET and include this file.
 *
 * Properties: no crash, leak or UB; errors name the file; what is accepted
 * keeps the documented invariants (trace.h): bandwidth series start at 0 with
 * increasing times and positive rates; availability events in time order with
 * valid node indices; prefill mixes sorted with probabilities summing to 1;
 * every profile row is found again by its key. */
#include <math.h>

#include "fuzz_common.h"
#include "sim/inputs/trace.h"

static inline void check_bw(const bwtrace *t)
{
    FUZZ_REQUIRE(t->n >= 1 && t->t_ns[0] == 0, "n %d, first time", t->n);
    for (int i = 0; i < t->n; i++) {
        FUZZ_REQUIRE(t->bw[i] > 0 && isfinite(t->bw[i]), "bw[%d] = %g", i, t->bw[i]);
        FUZZ_REQUIRE(i == 0 || t->t_ns[i] > t->t_ns[i - 1], "times at %d", i);
        FUZZ_REQUIRE(bwtrace_at(t, t->t_ns[i]) == t->bw[i], "bwtrace_at sample %d", i);
        int64_t nx = bwtrace_next_change(t, t->t_ns[i]);
        FUZZ_REQUIRE(i + 1 < t->n ? nx == t->t_ns[i + 1] : nx == INT64_MAX, "next %d", i);
    }
    FUZZ_REQUIRE(bwtrace_at(t, -1) == t->bw[0], "before the start");
}

static inline void check_avail(const avail_trace *a)
{
    int live = 0, peak = 0;
    for (int i = 0; i < a->n; i++) {
        const avail_event *v = &a->ev[i];
        FUZZ_REQUIRE(v->node >= 0 && v->node < a->nnodes, "event %d node %d", i, v->node);
        FUZZ_REQUIRE(i == 0 || v->t_ns >= a->ev[i - 1].t_ns, "event %d time", i);
        live += v->kind == AVAIL_ADD ? 1 : -1;
        FUZZ_REQUIRE(live >= 0, "more removes than adds at %d", i);
        peak = live > peak ? live : peak;
    }
    FUZZ_REQUIRE(peak == a->max_live, "max_live %d vs %d", a->max_live, peak);
    for (int k = 0; k < a->nnodes; k++)
        FUZZ_REQUIRE(a->nodes[k][0], "node %d has no name", k);
}

static inline void check_mix(const prefill_mix *m)
{
    double sum = 0;
    for (int i = 0; i < m->n; i++) {
        FUZZ_REQUIRE(m->prob[i] > 0 && m->prob[i] <= 1, "prob[%d] = %g", i, m->prob[i]);
        FUZZ_REQUIRE(i == 0 || m->tokens[i] > m->tokens[i - 1], "tokens at %d", i);
        sum += m->prob[i];
    }
    FUZZ_REQUIRE(m->n >= 1 && fabs(sum - 1) < 1e-9, "sum %g", sum);
    double slack = 1e-9 * m->tokens[m->n - 1];
    FUZZ_REQUIRE(m->mean_tokens >= m->tokens[0] - slack &&
                     m->mean_tokens <= m->tokens[m->n - 1] + slack,
                 "mean %g", m->mean_tokens);
}

static inline void check_profile(const profile *p)
{
    for (int i = 0; i < p->n; i++) {
        const profile_row *r = &p->rows[i];
        FUZZ_REQUIRE(r->fwd_ns >= 0 && r->bwd_ns >= 0, "row %d times", i);
        FUZZ_REQUIRE(profile_find(p, r->gpu, r->model, r->kind, r->b, r->seq) == r,
                     "row %d not found by its key", i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    gt_err e;
    int rc;
#if TRACE_TARGET == 0
    bwtrace t = {0};
    if (!(rc = bwtrace_load(path, &t, &e)))
        check_bw(&t);
    bwtrace_free(&t);
#elif TRACE_TARGET == 1
    avail_trace t = {0};
    if (!(rc = avail_load(path, &t, &e)))
        check_avail(&t);
    avail_free(&t);
#elif TRACE_TARGET == 2
    prefill_mix t = {0};
    if (!(rc = prefill_mix_load(path, &t, &e)))
        check_mix(&t);
    prefill_mix_free(&t);
#else
    profile t = {0};
    if (!(rc = profile_load(path, fuzz_catalog(), &t, &e)))
        check_profile(&t);
    profile_free(&t);
#endif
    if (rc)
        FUZZ_REQUIRE(fuzz_names(&e, path), "error does not name the file: %s", e.msg);
    return 0;
}
