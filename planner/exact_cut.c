/* exact_cut.c — the exact referee's bound of a row by the decoder's own
 * cuts (exact_space.h): the least time one microbatch takes through a
 * pipeline of given GPUs over every layer split the decoder can give it,
 * per microbatch size, memoized by the row's GPU types.
 *
 * Why it holds. The space's plans are decoded (encoding.c, enc_split.c):
 * each pipeline's layer split is one rule's cuts of that pipeline alone,
 * at the plan's microbatch size, schedule and the microbatches m the rule
 * was run with (its memory cap or its share, 1 <= m <= M - D + 1): LS1's
 * min-max under the memory caps, and with several pipelines (ENC_CUT_DP)
 * also the uniform and the speed-proportional cuts (enc_cut_row gives the
 * same cuts). The planners' bound of a plan (enc_bound, a lower bound of
 * the estimate) has each pipeline end no earlier than its last stage's
 * work after the first microbatch's forward reached it, plus the way back:
 * at least the sum over its stages of one microbatch's forward and backward
 * (cost_stage_fwd_ns + cost_stage_bwd_ns of its layers, as enc_bound
 * prices them) plus its transfers. So every plan holding this row lasts at
 * least the least of those sums over the rules, schedules and m, plus its
 * transfers. The sums depend on the GPUs' types only, hence the memo. A
 * split's time can exceed the best split's by far (min-max balances the
 * stages, not their sum), which no bound over all splits can see. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "enc_pipe.h"
#include "exact_space.h"
#include "sim/base/word_hash.h"
#include "sim/models/cost.h"

/* Rows of more stages are not bounded by their cuts (a row's first bound
 * costs a few hundred LS1 solves; 2^S type sequences of two types), nor
 * microbatch sizes whose cuts may be made for more than EXACT_CUT_MAX_M
 * microbatches where memory binds them (one LS1 solve per count: E2's 128
 * microbatches): a row that may be cut so at some size is not bounded by
 * its cuts at all. Without a cap on the solves, the bench mix's 16 GB GPUs
 * (memory binds from a few microbatches on) made the 14-GPU instance 5x
 * slower (0.8 s -> 4.3 s CPU, docs/planner.md). */
#define EXACT_CUT_MAX_S 24
#define EXACT_CUT_MAX_M 32
/* LS1 solves the memo may make in all (a count, so deterministic): rows
 * first met once they are spent are not bounded by their cuts. */
#define EXACT_CUT_MAX_SOLVES 20000L

/* One microbatch's forward and backward through stages of cuts first[S]. */
static int64_t trip_ns(const enc_problem *pr, const int *gpus, int S, int bi, const int *first)
{
    int64_t t = 0;
    for (int k = 0; k < S; k++) {
        const gpu_type *ty = topo_gpu_type(pr->t, gpus[k]);
        int a = first[k], e = k + 1 < S ? first[k + 1] - 1 : pr->L - 1;
        t = t_add(t, t_add(cost_stage_fwd_ns(pr->j, ty, 1, pr->bval[bi], a, e, 1.0),
                           cost_stage_bwd_ns(pr->j, ty, 1, pr->bval[bi], a, e, 1.0)));
    }
    return t;
}

/* Whether memory does not bind the row's min-max cuts at size bi with m
 * microbatches under sched: every stage's largest range (L - S + 1 layers,
 * with the embedding or the head) fits its GPU with its microbatches in
 * flight (the need grows with the layers and the microbatches in flight,
 * enc_stage_need). Then LS1's problem is the unconstrained one (its costs
 * depend on neither m nor the schedule), and so are its cuts. */
static bool memory_slack(const enc_problem *pr, const int *gpus, int S, int bi, sched_kind sc,
                         int m)
{
    int L = pr->L, n = L - S + 1;
    for (int k = 0; k < S; k++) {
        int ty = pr->t->gpus[gpus[k]].type, fl = enc_in_flight(sc, S, k, m);
        double mem = pr->t->types[ty].mem_bytes;
        const int ranges[3][2] = {{0, n - 1}, {L - n, L - 1}, {1, n}};
        for (int x = 0; x < 3; x++) {
            int a = ranges[x][0], e = ranges[x][1];
            if (e <= L - 1 && a <= e && enc_stage_need(pr, bi, ty, a, e, fl) > mem)
                return false;
        }
    }
    return true;
}

/* The least trip at size bi over the rules, schedules and m (INFINITY:
 * no min-max cut fits); each cut's stage of every layer added to mask[l]
 * (bit k: some cut puts layer l on stage k). The uniform and speed cuts
 * depend on neither m nor the schedule (only whether they fit, and taking
 * them anyway only lowers the least and widens the masks: enc_cut_row sets
 * them either way); 1F1B holds at most S microbatches in flight, so its
 * min-max cuts stop changing at m = S. */
static double least_trip(const enc_problem *pr, const int *gpus, int S, int D, int bi, int *first,
                         uint64_t *mask, long *solves)
{
    static const enc_cut_rule all[] = {ENC_CUT_MINMAX, ENC_CUT_UNIFORM, ENC_CUT_SPEED};
    bool joint = pr->cfg.cuts == ENC_CUT_DP && D > 1;
    int nr = joint ? 3 : 1, M = pr->mtot[bi];
    enc_cut_rule one = pr->cfg.cuts == ENC_CUT_DP ? ENC_CUT_MINMAX : pr->cfg.cuts;
    int64_t best = INT64_MAX;
    bool fits = false, free_done = false;
    for (int r = 0; r < nr; r++) {
        enc_cut_rule rule = joint ? all[r] : one;
        bool dp = rule == ENC_CUT_MINMAX;
        for (int sc = 0; sc < (dp ? ENC_NSCHED : 1); sc++)
            for (int m = 1; m <= (dp ? M - D + 1 : 1); m++) {
                if (sc == SCHED_1F1B && m > S)
                    break;
                /* where memory does not bind, one solve stands for all */
                if (dp && memory_slack(pr, gpus, S, bi, (sched_kind)sc, m)) {
                    if (free_done)
                        continue;
                    free_done = true;
                }
                bool ok = !enc_cut_row(pr, gpus, S, bi, m, (sched_kind)sc, rule, first);
                *solves += dp;
                if (rule == ENC_CUT_MINMAX && !ok)
                    continue;
                fits |= rule == ENC_CUT_MINMAX;
                int64_t t = trip_ns(pr, gpus, S, bi, first);
                best = t < best ? t : best;
                for (int k = 0; k < S && mask; k++)
                    for (int l = first[k]; l < (k + 1 < S ? first[k + 1] : pr->L); l++)
                        mask[l] |= 1ULL << k;
            }
    }
    /* no min-max cut fits: the decoder gives up (LS1 is exact under the caps) */
    return fits ? 1e-9 * (double)best * (1 - 1e-12) : INFINITY;
}

static uint64_t seq_hash(const exact_space *sp, int S, int D, const int *gpus)
{
    uint64_t h = WORD_HASH_FNV_BASIS ^ (uint64_t)(S * 131 + D);
    for (int k = 0; k < S; k++)
        h = word_hash_fnv(h, (uint64_t)(sp->pr->t->gpus[gpus[k]].type + 1));
    return h;
}

/* The memo's slot of the row (S, D, types of gpus), open addressing; a
 * row not met before takes a free slot (*fresh: its values are to be
 * computed) unless the memo is half full or its LS1 solves are spent: -1,
 * no bound. Rows are only ever added, so a row's bound never changes
 * during a run: the walk's windows rely on that (a placement whose key
 * fell below a window it was cut above would be lost). */
static long memo_slot(const exact_space *sp, int S, int D, const int *gpus, bool *fresh)
{
    exact_cut_memo *m = sp->cuts;
    int W = sp->pr->smax + 2;
    uint64_t h = seq_hash(sp, S, D, gpus);
    for (long i = 0; i < m->cap; i++) {
        long x = (long)((h + (uint64_t)i) % (uint64_t)m->cap);
        int *key = &m->key[x * W];
        if (key[0] == 0) {
            if (2 * (m->n + 1) > m->cap || m->solves >= EXACT_CUT_MAX_SOLVES)
                return -1;
            key[0] = S;
            key[1] = D;
            for (int k = 0; k < S; k++)
                key[2 + k] = sp->pr->t->gpus[gpus[k]].type;
            m->n++;
            *fresh = true;
            return x;
        }
        bool same = key[0] == S && key[1] == D;
        for (int k = 0; k < S && same; k++)
            same = key[2 + k] == sp->pr->t->gpus[gpus[k]].type;
        if (same) {
            *fresh = false;
            return x;
        }
    }
    return -1;
}

int exact_cut_init(exact_space *sp)
{
    exact_cut_memo *m = sp->cuts = calloc(1, sizeof *sp->cuts);
    if (!m)
        return -1;
    m->cap = 1L << 15;
    m->n = 0;
    m->key = calloc((size_t)(m->cap * (sp->pr->smax + 2)), sizeof *m->key);
    m->trip = malloc(sizeof *m->trip * (size_t)(m->cap * sp->pr->nb));
    m->first = malloc(sizeof *m->first * (size_t)sp->pr->smax);
    m->mask = calloc((size_t)(m->cap * sp->pr->L), sizeof *m->mask);
    m->mask_ok = calloc((size_t)m->cap, 1);
    return m->key && m->trip && m->first && m->mask && m->mask_ok ? 0 : -1;
}

void exact_cut_free(exact_cut_memo *m)
{
    if (!m)
        return;
    free(m->key);
    free(m->trip);
    free(m->first);
    free(m->mask);
    free(m->mask_ok);
    free(m);
}

/* The memo's value of the row: per size its least trip, and in *mask the
 * stages of each layer over all its cuts; NULL: not bounded (memo_slot). */
static const double *row_trips(const exact_space *sp, int S, int Dgrid, const int *gpus,
                               const uint64_t **mask)
{
    /* D only chooses the rules (one pipeline: min-max alone) and bounds the
     * microbatches a cut is made for (M - D + 1): with D = 2 for every
     * grid of several pipelines the cuts enumerated are a superset, so one
     * entry serves every D (a bound a little weaker, far fewer solves) */
    int D = Dgrid > 1 ? 2 : 1;
    const enc_problem *pr = sp->pr;
    exact_cut_memo *m = sp->cuts;
    bool fresh = true;
    long x = memo_slot(sp, S, D, gpus, &fresh);
    if (x < 0)
        return NULL;
    double *v = &m->trip[x * pr->nb];
    uint64_t *mk = &m->mask[x * pr->L];
    if (fresh) {
        for (int l = 0; l < pr->L; l++)
            mk[l] = 0;
        bool some_big = false; /* then no size is bounded: the masks would miss its cuts */
        for (int bi = 0; bi < pr->nb; bi++)
            some_big |= D <= pr->mtot[bi] && pr->mtot[bi] - D + 1 > EXACT_CUT_MAX_M &&
                        !memory_slack(pr, gpus, S, bi, SCHED_GPIPE, pr->mtot[bi] - D + 1);
        m->mask_ok[x] = !some_big;
        for (int bi = 0; bi < pr->nb; bi++) {
            /* (no plan of several pipelines at a size of one microbatch) */
            bool shape = D <= pr->mtot[bi];
            v[bi] = some_big ? 0 : shape ? least_trip(pr, gpus, S, D, bi, m->first, mk, &m->solves)
                                         : INFINITY;
        }
    }
    *mask = m->mask_ok[x] ? mk : NULL;
    return v;
}

const uint64_t *exact_cut_masks(const exact_space *sp, int S, int D, const int *gpus)
{
    const uint64_t *mask = NULL;
    if (S > EXACT_CUT_MAX_S || !row_trips(sp, S, D, gpus, &mask))
        return NULL;
    return mask;
}

double exact_cut_trip(const exact_space *sp, int S, int D, const int *gpus, int bi)
{
    const enc_problem *pr = sp->pr;
    if (S < 2 || S > EXACT_CUT_MAX_S)
        return 0; /* one stage: every split is the same, the other bounds see it */
    const uint64_t *mask;
    const double *v = row_trips(sp, S, D, gpus, &mask);
    if (!v)
        return 0;
    if (bi >= 0)
        return v[bi];
    double least = INFINITY;
    for (int b = 0; b < pr->nb; b++)
        least = exact_min(least, v[b]);
    return least;
}
