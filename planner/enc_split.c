/* enc_split.c — the full search's layer split (ENC_CUT_DP, encoding.h):
 * LS1's min-max split is not always the fastest plan. It balances each
 * stage's forward + backward time, but the simulator also charges each
 * stage's gradient sync (its bytes grow with its layers, and the first
 * stage's sync ends the iteration), the transfers and the memory each split
 * leaves for microbatches between pipelines: on DT-FM's case-2 pool a 13/11 cut computes
 * faster than Megatron's 12/12 and syncs more. So the decoder cuts the
 * placement three ways (min-max, uniform, speed-proportional), splits the
 * microbatches for each, and keeps the one the fitness (enc_estimate: the
 * estimator's compute, sync and transfers, plus the traffic floor) finds
 * fastest (with one pipeline, LS1's split stands). The split is still a function of the placement and genes, so
 * the memetic planner and the exact referee keep one search space, and the
 * memetic-uniform and memetic-nols ablations' splits of every placement are
 * candidates of the full planner. */
#include "enc_pipe.h"

#include <math.h>
#include <string.h>

typedef struct split {
    int *first, *mb;
} split;

static void save(const genome *g, int n, int D, split *x)
{
    memcpy(x->first, g->first, sizeof(int) * (size_t)n);
    memcpy(x->mb, g->mb, sizeof(int) * (size_t)D);
}

static void restore(genome *g, int n, int D, const split *x)
{
    memcpy(g->first, x->first, sizeof(int) * (size_t)n);
    memcpy(g->mb, x->mb, sizeof(int) * (size_t)D);
}

static bool same(const genome *g, int n, int D, const split *x)
{
    return !memcmp(g->first, x->first, sizeof(int) * (size_t)n) &&
           !memcmp(g->mb, x->mb, sizeof(int) * (size_t)D);
}


int enc_joint_split(const enc_problem *pr, genome *g, gt_err *e)
{
    static const enc_cut_rule alt[] = {ENC_CUT_UNIFORM, ENC_CUT_SPEED};
    enum { NALT = sizeof alt / sizeof *alt };
    int n = g->S * g->D, D = g->D;
    if (D == 1) /* no sync, and the transfers do not depend on the split:
                 * min-max then min-sum is what one pipeline's time is made of */
        return enc_decode_cuts(pr, g, ENC_CUT_MINMAX, NULL, e);
    int caps[D];
    enc_pipe_caps(pr, g, caps);
    if (enc_decode_cuts(pr, g, ENC_CUT_MINMAX, caps, e))
        return -1; /* LS1 is exact under the memory caps: no other split fits */
    int fa[NALT + 1][n], ma[NALT + 1][D];
    split cand[NALT + 1];
    enc_cut_rule rule[NALT + 1] = {ENC_CUT_MINMAX};
    int nc = 0;
    cand[nc] = (split){fa[nc], ma[nc]};
    save(g, n, D, &cand[nc++]);
    for (int r = 0; r < NALT; r++) {
        if (enc_decode_cuts(pr, g, alt[r], caps, NULL))
            continue;
        bool dup = false;
        for (int c = 0; c < nc && !dup; c++)
            dup = same(g, n, D, &cand[c]);
        if (!dup) {
            rule[nc] = alt[r];
            cand[nc] = (split){fa[nc], ma[nc]};
            save(g, n, D, &cand[nc++]);
        }
    }
    int best = 0;
    obj_metrics bm = {0};
    bool have = false;
    if (nc > 1) { /* ties go to the earlier rule (min-max first) */
        for (int c = 0; c < nc; c++) {
            restore(g, n, D, &cand[c]);
            /* enc_bound is a lower bound of the estimate: a split whose bound
             * does not beat the best estimate cannot win (half the cost) */
            if (have && !(enc_bound(pr, g).time_s < bm.time_s))
                continue;
            obj_metrics m;
            if (enc_estimate(pr, g, &m) == 1 && (!have || m.time_s < bm.time_s)) {
                bm = m;
                best = c;
                have = true;
            }
        }
    }
    restore(g, n, D, &cand[best]);
    g->split = (signed char)rule[best];
    g->est = bm; /* the caller's estimate, already made (ma_eval_genome) */
    g->est_ok = have;
    return 0;
}
