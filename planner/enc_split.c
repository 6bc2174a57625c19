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
#include <stdlib.h>
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


enum { NALT = 2, NCAND = NALT + 1 };

/* The candidate splits of a placement (genome.perm, S, D, bi, sched: the
 * sync plays no part in them), as enc_joint_split makes them, kept for the
 * same placement decoded with another sync (LS's genes sweep tries every
 * sync of each schedule and microbatch size). */
typedef struct memo_entry {
    int S, D, bi, nc;
    sched_kind sched;
    enc_cut_rule rule[NCAND];
    int *perm, *first, *mb; /* [N], [NCAND * N], [NCAND * N] */
} memo_entry;

#define MEMO_ENTRIES 12 /* the (schedule, microbatch size) pairs of one sweep */

struct enc_split_memo {
    const enc_problem *pr;
    int N, n, next;
    memo_entry e[MEMO_ENTRIES];
    int *buf;
};

enc_split_memo *enc_split_memo_new(const enc_problem *pr)
{
    enc_split_memo *m = calloc(1, sizeof *m);
    size_t N = (size_t)pr->N, per = N * (1 + 2 * NCAND);
    if (!m || !(m->buf = malloc(sizeof(int) * per * MEMO_ENTRIES))) {
        free(m);
        return NULL;
    }
    m->pr = pr;
    m->N = pr->N;
    for (int i = 0; i < MEMO_ENTRIES; i++) {
        int *b = m->buf + per * (size_t)i;
        m->e[i] = (memo_entry){.perm = b, .first = b + N, .mb = b + N * (1 + NCAND)};
    }
    return m;
}

void enc_split_memo_free(enc_split_memo *m)
{
    if (m)
        free(m->buf);
    free(m);
}

static memo_entry *memo_find(enc_split_memo *m, const genome *g)
{
    for (int i = 0; i < m->n; i++) {
        memo_entry *x = &m->e[i];
        if (x->S == g->S && x->D == g->D && x->bi == g->bi && x->sched == g->sched &&
            !memcmp(x->perm, g->perm, sizeof(int) * (size_t)(g->S * g->D)))
            return x;
    }
    return NULL;
}

static void memo_put(enc_split_memo *m, const genome *g, const split *cand,
                     const enc_cut_rule *rule, int nc)
{
    memo_entry *x = &m->e[m->next];
    m->next = (m->next + 1) % MEMO_ENTRIES;
    if (m->n < MEMO_ENTRIES)
        m->n++;
    int n = g->S * g->D;
    x->S = g->S;
    x->D = g->D;
    x->bi = g->bi;
    x->sched = g->sched;
    x->nc = nc;
    memcpy(x->perm, g->perm, sizeof(int) * (size_t)n);
    for (int c = 0; c < nc; c++) {
        x->rule[c] = rule[c];
        memcpy(&x->first[c * m->N], cand[c].first, sizeof(int) * (size_t)n);
        memcpy(&x->mb[c * m->N], cand[c].mb, sizeof(int) * (size_t)g->D);
    }
}

/* The distinct splits of the three rules (min-max first): their count, or
 * -1 when LS1 finds none (LS1 is exact under the memory caps: no other
 * split fits). */
static int candidates(const enc_problem *pr, genome *g, gt_err *e, split *cand,
                      enc_cut_rule *rule)
{
    static const enc_cut_rule alt[NALT] = {ENC_CUT_UNIFORM, ENC_CUT_SPEED};
    int n = g->S * g->D, D = g->D;
    int caps[D];
    enc_pipe_caps(pr, g, caps);
    if (enc_decode_cuts(pr, g, ENC_CUT_MINMAX, caps, e))
        return -1;
    int nc = 0;
    rule[0] = ENC_CUT_MINMAX;
    save(g, n, D, &cand[nc++]);
    for (int r = 0; r < NALT; r++) {
        if (enc_decode_cuts(pr, g, alt[r], caps, NULL))
            continue;
        bool dup = false;
        for (int c = 0; c < nc && !dup; c++)
            dup = same(g, n, D, &cand[c]);
        if (!dup) {
            rule[nc] = alt[r];
            save(g, n, D, &cand[nc++]);
        }
    }
    return nc;
}

int enc_joint_split_memo(const enc_problem *pr, genome *g, gt_err *e, enc_split_memo *memo)
{
    int n = g->S * g->D, D = g->D;
    if (D == 1) /* no sync, and the transfers do not depend on the split:
                 * min-max then min-sum is what one pipeline's time is made of */
        return enc_decode_cuts(pr, g, ENC_CUT_MINMAX, NULL, e);
    int fa[NCAND][n], ma[NCAND][D];
    split cand[NCAND];
    enc_cut_rule rule[NCAND];
    for (int c = 0; c < NCAND; c++)
        cand[c] = (split){fa[c], ma[c]};
    if (memo && memo->pr != pr)
        memo = NULL;
    const memo_entry *x = memo ? memo_find(memo, g) : NULL;
    int nc;
    if (x) { /* the same placement's splits, made for another sync */
        nc = x->nc;
        for (int c = 0; c < nc; c++) {
            rule[c] = x->rule[c];
            memcpy(cand[c].first, &x->first[c * memo->N], sizeof(int) * (size_t)n);
            memcpy(cand[c].mb, &x->mb[c * memo->N], sizeof(int) * (size_t)D);
        }
    } else {
        if ((nc = candidates(pr, g, e, cand, rule)) < 0)
            return -1;
        if (memo)
            memo_put(memo, g, cand, rule, nc);
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

int enc_joint_split(const enc_problem *pr, genome *g, gt_err *e)
{
    return enc_joint_split_memo(pr, g, e, NULL);
}
