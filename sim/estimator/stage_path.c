/* stage_path.c — the per-stage fast path of the estimator (stage_path.h).
 *
 * Rounds. Each lane keeps its running end, its latest forward and backward
 * ends; one round runs at most one forward and one backward per stage in an
 * order that respects every dependency of the op list (workload.c):
 *   1F1B   round r: F(k, r+S-1-k) for k = S-1..0, then B(k, r) for k = S-1..0
 *          (stage k's lane order is its warm-up forwards in rounds < 0, then
 *          F, B pairs, then the cool-down backwards; F(k) reads stage k-1's
 *          forward of the round before, B(k) stage k+1's of this round)
 *   GPipe  forward round r: F(k, r-k) for k = S-1..0; then backward round r:
 *          B(k, r-(S-1-k)) for k = 0..S-1 (each reads the round before)
 * A steady round holds every stage's op(s). The state after a round (every
 * end) determines the rest, and max-plus arithmetic commutes with adding a
 * constant: when a steady round's ends are all the previous round's plus
 * lambda, each further steady round is that round plus lambda again, with
 * the same blocked time and durations, so the jump adds n x lambda to the
 * state and n x the round's sums. Times are the op path's to the
 * nanosecond; the jump is taken only while nothing nears the time cap. */
#include "sim/models/path.h"
#include "sim/estimator/stage_path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/timecap.h"
#include "sim/inputs/freq.h"
#include "sim/models/cost.h"
#include "sim/models/dp_overlap.h"
#include "sim/estimator/run_memo.h"

enum { F = OP_FWD, B = OP_BWD };

struct sp_stage {
    int64_t dur[2];       /* forward, backward op */
    int64_t xin_ns[2];    /* lone transfer into F (from stage k-1) / B (from k+1) */
    int has_in[2];        /* the op waits for another op's output */
    int xfer[2];          /* ... carried over a link (bytes > 0) */
    int wan[2];           /* ... that crosses sites */
    int64_t total;        /* optimizer + every op of the lane: tail of its first op */
    int64_t opt, drain;   /* optimizer step; least time from the lane's end to the iteration's */
    int64_t fchain;       /* least tail of the forward stream in (stage_chains) */
    /* state */
    int64_t end[2];       /* latest forward / backward end */
    int64_t lane_end, done, comm;
    long nx[2];           /* transfers so far, per input */
    int64_t first[2], min_tail[2];
    int64_t tail[2];      /* tail of the latest transfer's op */
};
typedef struct sp_stage sp_stage;

/* One stage after one steady round, for finding the period. */
struct sp_hist {
    int64_t end[2], lane_end, done, comm, tail[2];
};
typedef struct sp_hist sp_hist;

static int grow(void **v, int *cap, int n, size_t size)
{
    if (n <= *cap)
        return 0;
    void *x = realloc(*v, size * (size_t)n);
    if (!x)
        return -1;
    *v = x;
    *cap = n;
    return 0;
}

/* Does pipeline pi qualify (1, 0 when not), and its stages' durations and
 * transfers; -1 when out of memory. */
static int prepare_pipe(sp_stage *st, stage_costs *sc, const topology *t, const job *j,
                        const plan *p, int pi, double act)
{
    const plan_pipeline *pp = &p->pipes[pi];
    int S = pp->nstages;
    if (plan_physical_stages(p, pi) != S)
        return 0;
    for (int k = 0; k < S; k++) {
        sp_stage *s = &st[k];
        const gpu_type *g = topo_gpu_type(t, pp->stages[k].gpus[0]);
        int64_t dur[2][2], fns, bns;
        int32_t clk[2][2];
        if (stage_costs_get(sc, t, j, p, pi, k, &fns, &bns))
            return -1;
        workload_stage_clocks(t, p, pi, k, fns, bns, dur, clk);
        for (int kind = 0; kind < 2; kind++) {
            /* every microbatch alike and every op at the maximum clock */
            if (dur[kind][0] != dur[kind][1] || !freq_is_max(g, clk[kind][0]) ||
                !freq_is_max(g, clk[kind][1]))
                return 0;
            s->dur[kind] = dur[kind][0];
            int from = kind == F ? k - 1 : k + 1;
            s->has_in[kind] = kind == B || k > 0;
            s->xfer[kind] = from >= 0 && from < S &&
                            pp->stages[from].gpus[0] != pp->stages[k].gpus[0];
            s->xin_ns[kind] = 0;
            s->wan[kind] = 0;
            if (s->xfer[kind]) {
                int a = pp->stages[from].gpus[0], b = pp->stages[k].gpus[0];
                double lat, rate;
                path_lone(t, a, b, &lat, &rate);
                s->xin_ns[kind] = cost_transfer_ns(act, lat, rate);
                s->wan[kind] = t->gpus[a].site != t->gpus[b].site;
            }
        }
    }
    return 1;
}

/* What prepare_pipe gives a stage, as stored. */
typedef struct sp_prep {
    int64_t dur[2], xin_ns[2];
    int has_in[2], xfer[2], wan[2];
} sp_prep;

/* The plan entries prepare_pipe reads of pipeline pi (with the topology
 * and the job, fixed between stage_path_forget calls) into sp->key. */
static size_t prep_key(stage_path *sp, const plan *p, int pi)
{
    const plan_pipeline *pp = &p->pipes[pi];
    int64_t *key = sp->key;
    size_t n = 0;
    key[n++] = p->schedule;
    key[n++] = p->microbatch_size;
    key[n++] = pp->nstages;
    key[n++] = plan_physical_stages(p, pi);
    for (int k = 0; k < pp->nstages; k++) {
        const plan_stage *s = &pp->stages[k];
        key[n++] = s->gpus[0];
        key[n++] = s->ngpus;
        key[n++] = s->first;
        key[n++] = s->last;
        key[n++] = s->freq_fwd_mhz;
        key[n++] = s->freq_bwd_mhz;
    }
    return n;
}

/* prepare_pipe through sp->prep: 1 when pipeline pi qualifies (st filled),
 * 0 when not, -1 when out of memory. */
static int prepare_stored(stage_path *sp, sp_stage *st, stage_costs *sc, const topology *t,
                          const job *j, const plan *p, int pi, double act)
{
    if (dp_overlap_applies(p)) /* the durations depend on other pipelines' GPUs */
        return prepare_pipe(st, sc, t, j, p, pi, act);
    int S = p->pipes[pi].nstages;
    size_t nkey = prep_key(sp, p, pi), len, size = sizeof(sp_prep) * (size_t)S + sizeof(int);
    const unsigned char *v = run_memo_get(&sp->prep, sp->key, nkey, &len);
    if (v && len == size) {
        const sp_prep *x = (const sp_prep *)(const void *)v;
        for (int k = 0; k < S; k++)
            for (int kind = 0; kind < 2; kind++) {
                st[k].dur[kind] = x[k].dur[kind];
                st[k].xin_ns[kind] = x[k].xin_ns[kind];
                st[k].has_in[kind] = x[k].has_in[kind];
                st[k].xfer[kind] = x[k].xfer[kind];
                st[k].wan[kind] = x[k].wan[kind];
            }
        int ok;
        memcpy(&ok, v + size - sizeof ok, sizeof ok);
        return ok;
    }
    int ok = prepare_pipe(st, sc, t, j, p, pi, act);
    if (ok < 0 || grow((void **)&sp->val, &sp->cap_val, (int)size, 1))
        return -1;
    sp_prep *x = (sp_prep *)(void *)sp->val;
    for (int k = 0; k < S && ok; k++)
        x[k] = (sp_prep){{st[k].dur[F], st[k].dur[B]}, {st[k].xin_ns[F], st[k].xin_ns[B]},
                         {st[k].has_in[F], st[k].has_in[B]}, {st[k].xfer[F], st[k].xfer[B]},
                         {st[k].wan[F], st[k].wan[B]}};
    if (!ok)
        memset(x, 0, size - sizeof ok);
    memcpy(sp->val + size - sizeof ok, &ok, sizeof ok);
    return run_memo_put(&sp->prep, sp->key, nkey, sp->val, size) ? -1 : ok;
}

void stage_path_forget(stage_path *sp)
{
    run_memo_clear(&sp->prep);
}

int stage_path_prepare(stage_path *sp, stage_costs *sc, const topology *t, const job *j,
                       const plan *p)
{
    if (p->schedule != SCHED_GPIPE && p->schedule != SCHED_1F1B)
        return 0;
    int nlanes = 0;
    for (int pi = 0; pi < p->npipes; pi++)
        nlanes += p->pipes[pi].nstages;
    int Smax = 1;
    for (int pi = 0; pi < p->npipes; pi++)
        Smax = p->pipes[pi].nstages > Smax ? p->pipes[pi].nstages : Smax;
    if (grow((void **)&sp->st, &sp->cap_st, nlanes, sizeof *sp->st) ||
        grow((void **)&sp->lanes, &sp->cap_lanes, nlanes, sizeof *sp->lanes) ||
        grow((void **)&sp->streams, &sp->cap_streams, 2 * nlanes, sizeof *sp->streams) ||
        grow((void **)&sp->key, &sp->cap_key, 4 + 6 * Smax, sizeof *sp->key))
        return -1;
    double act = cost_activation_bytes(j, p->microbatch_size), transfers = 0;
    int acc = plan_accumulation(p, j);
    for (int pi = 0, lane0 = 0; pi < p->npipes; pi++) {
        int ok = prepare_stored(sp, &sp->st[lane0], sc, t, j, p, pi, act);
        if (ok <= 0)
            return ok;
        for (int k = 0; k < p->pipes[pi].nstages; k++)
            transfers += (double)(sp->st[lane0 + k].xfer[F] + sp->st[lane0 + k].xfer[B]) *
                         p->pipes[pi].microbatches * acc;
        lane0 += p->pipes[pi].nstages;
    }
    /* byte sums are n x act only when every partial sum is an exact integer
     * (the op path adds them one transfer at a time) */
    if (act != nearbyint(act) || act * transfers >= 0x1p53)
        return 0;
    sp->act = act;
    return 1;
}

/* One op of stage k: ready when its lane is free and its input (produced at
 * xs, then carried) has arrived; the same arithmetic as the op path. */
static void run_op(sp_stage *s, int kind, int64_t xs)
{
    int64_t ready = s->lane_end, arrival = 0;
    if (s->has_in[kind])
        arrival = t_add(xs, s->xfer[kind] ? s->xin_ns[kind] : 0);
    else
        xs = 0;
    int64_t start = ready > arrival ? ready : arrival;
    int64_t end = t_add(start, s->dur[kind]);
    if (s->xfer[kind]) {
        if (arrival > ready) { /* blocked from max(xs, ready) to the arrival */
            int64_t from = xs > ready ? xs : ready;
            if (arrival > from)
                s->comm += arrival - from;
        }
        int64_t tail = s->total - s->done;
        if (s->nx[kind]++ == 0 || xs < s->first[kind])
            s->first[kind] = xs;
        if (s->nx[kind] == 1 || tail < s->min_tail[kind])
            s->min_tail[kind] = tail;
        s->tail[kind] = tail;
    }
    s->done += s->dur[kind];
    s->lane_end = end;
    s->end[kind] = end;
}

/* Steady-round bookkeeping of one phase: the last H rounds' states. */
typedef struct phase {
    stage_path *sp;
    sp_stage *st;
    sp_hist *hist;        /* [H][S] */
    int S, H, kinds;      /* kinds run in this phase: bit 0 forward, bit 1 backward */
    int recorded;         /* steady rounds recorded so far */
} phase;

static sp_hist *hist_at(const phase *ph, int h)
{
    return &ph->hist[(size_t)(h % ph->H) * (size_t)ph->S];
}

/* Rounds h-1 and h-1-c differ by one constant in every end? */
static int64_t period_shift(const phase *ph, int c)
{
    const sp_hist *a = hist_at(ph, ph->recorded - 1), *b = hist_at(ph, ph->recorded - 1 - c);
    int64_t lambda = a[0].lane_end - b[0].lane_end;
    if (lambda <= 0)
        return 0;
    for (int k = 0; k < ph->S; k++) {
        if (a[k].lane_end - b[k].lane_end != lambda)
            return 0;
        for (int kind = 0; kind < 2; kind++)
            if ((ph->kinds >> kind & 1) && a[k].end[kind] - b[k].end[kind] != lambda)
                return 0;
    }
    return lambda;
}

/* Rounds r+1 .. r+q*c, q periods of c rounds, each the one c rounds before
 * plus lambda: the state moves by q x lambda, the sums by q x a period's. */
static void jump(phase *ph, int c, int q, int64_t lambda)
{
    const sp_hist *a = hist_at(ph, ph->recorded - 1), *b = hist_at(ph, ph->recorded - 1 - c);
    ph->sp->skipped += (long)q * c;
    for (int k = 0; k < ph->S; k++) {
        sp_stage *s = &ph->st[k];
        int64_t done = a[k].done - b[k].done;
        s->lane_end += q * lambda;
        s->done += q * done;
        s->comm += q * (a[k].comm - b[k].comm);
        for (int kind = 0; kind < 2; kind++) {
            if (!(ph->kinds >> kind & 1))
                continue;
            s->end[kind] += q * lambda;
            if (s->xfer[kind]) { /* one transfer a round; the last skipped has the least tail */
                s->nx[kind] += (long)q * c;
                int64_t tail = a[k].tail[kind] - q * done;
                s->min_tail[kind] = tail < s->min_tail[kind] ? tail : s->min_tail[kind];
                s->tail[kind] = tail;
            }
        }
    }
}

/* After steady round r of a phase whose steady rounds end at `last`:
 * records it, and when the last c rounds repeat the c before them shifted
 * by one lambda, jumps over whole periods to near the end of the steady
 * phase. Returns the round to continue after. */
static int steady_round(phase *ph, int r, int last)
{
    sp_hist *h = hist_at(ph, ph->recorded++);
    for (int k = 0; k < ph->S; k++) {
        const sp_stage *s = &ph->st[k];
        h[k] = (sp_hist){{s->end[F], s->end[B]}, s->lane_end, s->done, s->comm,
                         {s->tail[F], s->tail[B]}};
    }
    int n = last - r;
    for (int c = 1; c < ph->H && c < ph->recorded && c <= n; c++) {
        int64_t lambda = period_shift(ph, c);
        if (!lambda)
            continue;
        int q = n / c;
        for (int k = 0; k < ph->S; k++) /* nothing may come near the cap, where the op path saturates */
            if (lambda > (GT_TIME_CAP_NS / 4 - ph->st[k].lane_end) / q)
                return r;
        jump(ph, c, q, lambda);
        ph->recorded = 0;
        return r + q * c;
    }
    return r;
}

static void flush_1f1b(phase *ph, int m)
{
    sp_stage *st = ph->st;
    int S = ph->S;
    ph->kinds = 3;
    ph->recorded = 0;
    for (int r = -(S - 1); r < m; r++) {
        for (int k = S - 1; k >= 0; k--) {
            int i = r + S - 1 - k;
            if (i >= 0 && i < m)
                run_op(&st[k], F, k > 0 ? st[k - 1].end[F] : 0);
        }
        for (int k = S - 1; k >= 0 && r >= 0; k--)
            run_op(&st[k], B, k < S - 1 ? st[k + 1].end[B] : st[k].end[F]);
        if (r >= 0 && r <= m - S)
            r = steady_round(ph, r, m - S);
    }
}

static void flush_gpipe(phase *ph, int m)
{
    sp_stage *st = ph->st;
    int S = ph->S;
    ph->kinds = 1;
    ph->recorded = 0;
    for (int r = 0; r < m + S - 1; r++) {
        for (int k = S - 1; k >= 0; k--) {
            int i = r - k;
            if (i >= 0 && i < m)
                run_op(&st[k], F, k > 0 ? st[k - 1].end[F] : 0);
        }
        if (r >= S - 1 && r <= m - 1)
            r = steady_round(ph, r, m - 1);
    }
    ph->kinds = 2;
    ph->recorded = 0;
    for (int r = 0; r < m + S - 1; r++) {
        for (int k = 0; k < S; k++) {
            int i = r - (S - 1 - k);
            if (i >= 0 && i < m)
                run_op(&st[k], B, k < S - 1 ? st[k + 1].end[B] : st[k].end[F]);
        }
        if (r >= S - 1 && r <= m - 1)
            r = steady_round(ph, r, m - 1);
    }
}

/* A stream's least tail counts the consumer's drain instead of its optimizer
 * (as lane_drains does on the op path). */
static void add_stream(stage_path *sp, const sp_stage *s, int kind, int src, int dst)
{
    if (!s->nx[kind])
        return;
    sp->streams[sp->nstreams++] =
        (xfer_stream){src, dst, s->nx[kind] * sp->act, s->nx[kind], s->first[kind],
                      kind == F ? s->fchain : t_add(s->min_tail[kind] - s->opt, s->drain)};
}

/* Each stage's drain (load_bound.h): stage k's last op, its last backward,
 * feeds stage k-1's last backward; stage 0's ends the chain. */
static void stage_drains(sp_stage *st, int S)
{
    for (int k = 0; k < S; k++) {
        st[k].drain = st[k].opt;
        if (k == 0 || !st[k - 1].has_in[B])
            continue;
        int64_t d = lane_drain_ns(st[k - 1].xfer[B] ? st[k - 1].xin_ns[B] : 0, st[k - 1].dur[B],
                                  st[k - 1].drain);
        st[k].drain = d > st[k].drain ? d : st[k].drain;
    }
}

/* The forward stream into stage k: its least tail is its last transfer's
 * (every term below shrinks along the lane), where the op path's chain
 * (lane_chains, load_bound.c) reads: stage k's work left plus its drain, or
 * its last forward, the lone transfer on and the next stage's chain. */
static void stage_chains(sp_stage *st, int S)
{
    for (int k = S - 1; k >= 0; k--) {
        sp_stage *s = &st[k];
        s->fchain = t_add(s->min_tail[F] - s->opt, s->drain);
        if (k + 1 < S && st[k + 1].nx[F]) {
            int64_t c = t_add(s->dur[F], t_add(st[k + 1].xfer[F] ? st[k + 1].xin_ns[F] : 0,
                                               st[k + 1].fchain));
            s->fchain = c > s->fchain ? c : s->fchain;
        }
    }
}

/* st[0..S) takes the end state of from[0..S), a run of the same
 * recurrence; only which links cross sites stays st's own. */
static void take_state(sp_stage *st, const sp_stage *from, int S)
{
    for (int k = 0; k < S; k++) {
        int wan[2] = {st[k].wan[F], st[k].wan[B]};
        st[k] = from[k];
        st[k].wan[F] = wan[F];
        st[k].wan[B] = wan[B];
    }
}

/* Do two pipelines' stages run the same recurrence (durations, transfers,
 * totals: everything but which links cross sites)? */
static int same_stages(const sp_stage *a, const sp_stage *b, int S)
{
    for (int k = 0; k < S; k++)
        for (int kind = 0; kind < 2; kind++)
            if (a[k].dur[kind] != b[k].dur[kind] || a[k].xin_ns[kind] != b[k].xin_ns[kind] ||
                a[k].has_in[kind] != b[k].has_in[kind] || a[k].xfer[kind] != b[k].xfer[kind] ||
                a[k].total != b[k].total)
                return 0;
    return 1;
}

/* An earlier pipeline of the plan with the same stages and microbatches
 * has run exactly this recurrence: its end state is this one's (data
 * parallel replicas on like GPUs and links are the common case). */
static int reuse_earlier(stage_path *sp, const plan *p, int pi, int lane0)
{
    int S = p->pipes[pi].nstages, m = p->pipes[pi].microbatches;
    sp_stage *st = &sp->st[lane0];
    for (int pj = 0, l0 = 0; pj < pi; l0 += p->pipes[pj].nstages, pj++) {
        if (p->pipes[pj].nstages != S || p->pipes[pj].microbatches != m ||
            !same_stages(&sp->st[l0], st, S))
            continue;
        take_state(st, &sp->st[l0], S);
        sp->reused++;
        return 1;
    }
    return 0;
}

/* The words the recurrence of pipeline pi reads (its stages' durations,
 * lone transfers, inputs and optimizer step; its microbatches, flushes and
 * schedule), into sp->key; returns how many. */
static size_t memo_key(stage_path *sp, const plan *p, const workload *w, int pi,
                       const sp_stage *st)
{
    int S = p->pipes[pi].nstages;
    int64_t *key = sp->key;
    size_t n = 0;
    key[n++] = p->schedule;
    key[n++] = S;
    key[n++] = p->pipes[pi].microbatches;
    key[n++] = w->accumulation;
    for (int k = 0; k < S; k++) {
        const sp_stage *s = &st[k];
        key[n++] = s->dur[F];
        key[n++] = s->dur[B];
        key[n++] = s->xin_ns[F];
        key[n++] = s->xin_ns[B];
        key[n++] = s->has_in[F] | s->has_in[B] << 1 | s->xfer[F] << 2 | s->xfer[B] << 3;
        key[n++] = s->opt;
    }
    return n;
}

/* A stored end state of the same recurrence (from an earlier plan), taken
 * with the rounds it jumped; 1 when found. */
static int recall(stage_path *sp, size_t nkey, sp_stage *st, int S)
{
    size_t len;
    const unsigned char *v = run_memo_get(&sp->memo, sp->key, nkey, &len);
    if (!v || len != sizeof *st * (size_t)S + sizeof(long))
        return 0;
    long skipped; /* the states are 8-byte aligned in the memo's pool */
    memcpy(&skipped, v + sizeof *st * (size_t)S, sizeof skipped);
    take_state(st, (const sp_stage *)(const void *)v, S);
    sp->skipped += skipped;
    sp->recalled++;
    return 1;
}

/* Stores the end state the pipeline's run left, and the rounds it jumped. */
static int remember(stage_path *sp, size_t nkey, const sp_stage *st, int S, long skipped)
{
    size_t len = sizeof *st * (size_t)S;
    if (grow((void **)&sp->val, &sp->cap_val, (int)(len + sizeof skipped), 1))
        return -1;
    memcpy(sp->val, st, len);
    memcpy(sp->val + len, &skipped, sizeof skipped);
    return run_memo_put(&sp->memo, sp->key, nkey, sp->val, len + sizeof skipped);
}

int stage_path_run(stage_path *sp, const plan *p, const workload *w, timing *tm)
{
    sp->nstreams = 0;
    sp->wan_bytes = 0;
    sp->skipped = 0;
    sp->reused = 0;
    sp->recalled = 0;
    int Smax = 1;
    for (int pi = 0; pi < p->npipes; pi++)
        Smax = p->pipes[pi].nstages > Smax ? p->pipes[pi].nstages : Smax;
    if (grow((void **)&sp->hist, &sp->cap_hist, (2 * Smax + 2) * Smax, sizeof *sp->hist) ||
        grow((void **)&sp->key, &sp->cap_key, 4 + 6 * Smax, sizeof *sp->key))
        return -1;
    long wan = 0;
    for (int pi = 0, lane0 = 0; pi < p->npipes; pi++) {
        int S = p->pipes[pi].nstages, m = p->pipes[pi].microbatches;
        sp_stage *st = &sp->st[lane0];
        for (int k = 0; k < S; k++) {
            sp_stage *s = &st[k];
            s->opt = w->lanes[lane0 + k].opt_ns;
            s->total = s->opt +
                       (int64_t)m * w->accumulation * (s->dur[F] + s->dur[B]);
            s->end[F] = s->end[B] = s->lane_end = s->done = s->comm = 0;
            s->nx[F] = s->nx[B] = 0;
            s->tail[F] = s->tail[B] = 0;
        }
        phase ph = {sp, st, sp->hist, S, 2 * S + 2, 0, 0};
        size_t nkey = 0;
        if (!reuse_earlier(sp, p, pi, lane0) &&
            !recall(sp, nkey = memo_key(sp, p, w, pi, st), st, S)) {
            long before = sp->skipped;
            for (int f = 0; f < w->accumulation; f++)
                (p->schedule == SCHED_GPIPE ? flush_gpipe : flush_1f1b)(&ph, m);
            if (remember(sp, nkey, st, S, sp->skipped - before))
                return -1;
        }
        stage_drains(st, S);
        stage_chains(st, S);
        for (int k = 0; k < S; k++) {
            const sp_stage *s = &st[k];
            int l = lane0 + k;
            if (t_over(s->lane_end) || s->lane_end >= GT_TIME_CAP_NS / 4)
                return 1;
            sp->lanes[l] = (sp_lane){s->done, s->comm, s->lane_end - s->dur[B], s->lane_end};
            tm->lanes[l].bwd_end = s->lane_end;
            add_stream(sp, s, F, l - 1, l);
            add_stream(sp, s, B, l + 1, l);
            wan += s->wan[F] * s->nx[F] + s->wan[B] * s->nx[B];
        }
        lane0 += S;
    }
    sp->wan_bytes = (double)wan * sp->act;
    return 0;
}

void stage_path_free(stage_path *sp)
{
    free(sp->st);
    free(sp->lanes);
    free(sp->streams);
    free(sp->hist);
    free(sp->key);
    free(sp->val);
    run_memo_free(&sp->memo);
    run_memo_free(&sp->prep);
    *sp = (stage_path){0};
}
