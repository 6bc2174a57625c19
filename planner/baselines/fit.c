/* fit.c — the memory-option ladder of the baselines (fit.h). */
#include "fit.h"

#include <stdio.h>
#include <string.h>

#include "common.h"

/* Adam's first and second moments are two of the 16 bytes per parameter
 * of mixed-precision training (bf16 weights 2 + grads 2, fp32 master copy
 * 4, fp32 moments 4 + 4: Rajbhandari et al., "ZeRO", SC 2020, section 3.1);
 * in bf16 they take 2 + 2, i.e. 4 bytes less. */
#define BL_FIT_BF16_MOMENTS_SAVING 4.0

typedef struct rung {
    int microbatch;
    bool recompute, bf16;
} rung;

/* The rungs after the job as given, in order, into r; returns how many. */
static int ladder(const bl_fit_opts *f, const job *j, rung *r, int cap)
{
    int n = 0;
    for (int level = 0; level < 3; level++) {
        bool rec = level >= 1, bf = level == 2;
        if ((rec && !f->recompute) || (bf && !f->opt_bf16) ||
            (bf && j->opt_bytes_per_param <= BL_FIT_BF16_MOMENTS_SAVING))
            continue;
        if (rec && j->recompute == RECOMPUTE_FULL && !bf)
            continue; /* the job recomputes already: level 0 covered it */
        for (int b = j->microbatch; b >= 1 && n < cap; b /= 2) {
            if (level == 0 && b == j->microbatch)
                continue; /* the job as given */
            if (b != j->microbatch && (!f->microbatch || j->batch % b))
                continue;
            r[n++] = (rung){b, rec, bf};
            if (!f->microbatch)
                break;
        }
    }
    return n;
}

static void describe(const bl_fit_opts *f, const job *j, const rung *r, char *buf, size_t cap)
{
    size_t o = (size_t)snprintf(buf, cap, "default does not fit; %s options used:", f->system);
    if (r->recompute && o < cap)
        o += (size_t)snprintf(buf + o, cap - o, " full activation recomputation,");
    if (r->bf16 && o < cap)
        o += (size_t)snprintf(buf + o, cap - o, " bf16 Adam moments (%g B/param),",
                              j->opt_bytes_per_param - BL_FIT_BF16_MOMENTS_SAVING);
    if (o < cap)
        snprintf(buf + o, cap - o, " microbatch %d%s", r->microbatch,
                 r->microbatch != j->microbatch ? "" : " (as the job)");
}

int bl_fit(planner_fn run, const void *cfg, const bl_fit_opts *f, const topology *t,
           const job *j, const planner_opts *o, plan *out, planner_stats *st, gt_err *e)
{
    double t0 = bl_now();
    gt_err first;
    first.msg[0] = '\0';
    if (run(cfg, t, j, o, out, st, &first) == 0)
        return 0;
    rung r[64];
    int n = ladder(f, j, r, 64);
    for (int i = 0; i < n && !bl_out_of_time(o, t0); i++) {
        job jr = *j;
        jr.microbatch = r[i].microbatch;
        if (r[i].recompute)
            jr.recompute = RECOMPUTE_FULL;
        if (r[i].bf16)
            jr.opt_bytes_per_param = j->opt_bytes_per_param - BL_FIT_BF16_MOMENTS_SAVING;
        gt_err re;
        if (run(cfg, t, &jr, o, out, st, &re))
            continue;
        out->recompute_full = jr.recompute == RECOMPUTE_FULL && j->recompute != RECOMPUTE_FULL;
        out->opt_bytes_per_param = r[i].bf16 ? jr.opt_bytes_per_param : 0;
        if (st) {
            char what[160], note[sizeof st->note];
            describe(f, j, &r[i], what, sizeof what);
            snprintf(note, sizeof note, "%s; %s", what, st->note);
            memcpy(st->note, note, sizeof note);
        }
        return 0;
    }
    if (n == 0) {
        *e = first;
        return -1;
    }
    char tried[128] = "";
    const char *names[] = {f->microbatch ? "smaller microbatches" : NULL,
                           f->recompute ? "activation recomputation" : NULL,
                           f->opt_bf16 ? "bf16 Adam moments" : NULL};
    for (int i = 0; i < 3; i++)
        if (names[i])
            snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s",
                     tried[0] ? ", " : "", names[i]);
    return gt_fail(e, "%s (nor with %s's memory options: %s)", first.msg, f->system, tried);
}
