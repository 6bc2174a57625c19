/* encoding.h — the search space shared by the memetic and exact planners:
 * the genome (a permutation of all GPUs + shape genes + cut and microbatch
 * genes), its canonical form and its decoding to a plan (DESIGN 8).
 *
 * A genome with shape S x D puts perm[p*S + k] on stage k of pipeline p (one
 * GPU per stage); perm[D*S ..] are the unselected GPUs. For tensor
 * parallelism the "GPUs" are the units of a tp_view (cfg.tp): pr->t is the
 * view, pr->real the topology plans run on, and enc_to_plan puts each stage
 * on its unit's GPUs.
 * Decoding (enc_decode) does three things:
 *   1. canonical form: pipelines sorted by the classes of their GPUs, and the
 *      GPUs of each class (one node: same type, same links, interchangeable)
 *      handed out in index order, so that symmetric genomes decode to the
 *      same plan and hash alike (duplicate removal, the exact solver's
 *      "modulo symmetry");
 *   2. layer cuts per pipeline by LS1 (partition_dp.h: min-max then min-sum of
 *      the stages' forward+backward time under memory caps), uniform or
 *      speed-proportional, and with more than one pipeline, of the three, the
 *      one whose fitness is best (enc_split.c: sync and transfers count; the
 *      only place decoding calls the estimator); the ablations use one rule;
 *   3. microbatches per pipeline: each pipeline's most it can hold in memory,
 *      then water-filling (one microbatch at a time to the pipeline that would
 *      finish earliest: R + m * tau, where R is one microbatch's round trip
 *      and tau the bottleneck stage, or R/S under 1F1B when the in-flight
 *      limit binds).
 * The cut and microbatch genes are therefore a function of the placement,
 * shape, schedule and microbatch size: the layer split is the joint split of
 * its placement. This keeps the memetic planner and the exact referee on one
 * search space, so "memetic finds the exact optimum" is a well-posed test.
 *
 * Microbatch sizes searched: b0 * 2^i (b0 = the job's --microbatch) that
 * divide the batch, i = 0..ENC_MAX_B-1. Schedules: gpipe, 1f1b. Sync: ring,
 * hierarchical, ps. */
#ifndef GT_ENCODING_H
#define GT_ENCODING_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>
#include "objective.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"

#define ENC_MAX_B 6
#define ENC_NSCHED 2   /* gpipe, 1f1b (interleaved is not searched) */
#define ENC_NSYNC SYNC_COUNT /* every algorithm of plan.h is searched */

/* ENC_CUT_DP, the full search's rule: of the three splits below, the one
 * with the best fitness (enc_estimate: what the estimator charges for
 * compute, sync, transfers, plus the traffic floor; memory by the caps).
 * ENC_CUT_MINMAX: LS1 alone (partition_dp.h). ENC_CUT_UNIFORM: L/S layers
 * a stage (Megatron's 12/12). ENC_CUT_SPEED: layers in proportion to speed. */
typedef enum { ENC_CUT_DP, ENC_CUT_UNIFORM, ENC_CUT_SPEED, ENC_CUT_MINMAX } enc_cut_rule;

struct tp_view;

typedef struct enc_cfg {
    enc_cut_rule cuts;   /* DP (LS1) by default; the ablations use the others */
    bool all_gpus;       /* ablation: every plan uses every GPU it can */
    const struct tp_view *tp; /* search the units of this view (tp_view.h); NULL: GPUs */
} enc_cfg;

typedef struct enc_problem {
    const topology *t;   /* what the genome indexes: the GPUs, or a tp_view's units */
    const topology *real; /* what plans run on (t, or the view's real topology) */
    const job *j;
    enc_cfg cfg;
    int N, L, ntypes;
    int nclass;          /* classes of interchangeable GPUs = nodes */
    int *cls;            /* [N] class of each GPU */
    int *class_first;    /* [nclass] first GPU (a node's GPUs are consecutive) */
    int *class_size;     /* [nclass] */
    double *speed;       /* [N] achievable FLOP/s (peak x efficiency) */
    int nb;
    int bval[ENC_MAX_B]; /* microbatch sizes, ascending */
    int mtot[ENC_MAX_B]; /* microbatches per iteration, B / b */
    int64_t *lay_ns, *emb_ns, *head_ns; /* [nb * ntypes] fwd+bwd ns, one microbatch */
    double mem_layer, mem_emb, mem_head; /* training-state bytes: a layer, embedding, head */
    /* [b][fused]: under the unfused (0) or fused (1) attention kernel */
    double act_layer[ENC_MAX_B][2];      /* activation bytes per layer and microbatch */
    double tmp_mid[ENC_MAX_B][2], tmp_last[ENC_MAX_B][2]; /* memory_stage_temporary(): other / last stage */
    unsigned char *ty_fused; /* [ntypes] 1 when the type runs the fused kernel (attn_choice.h) */
    int smax;            /* min(N, L) */
    int cells;           /* all_gpus: the D*S every shape must use (0 = free) */
} enc_problem;

typedef struct genome {
    int S, D, bi;        /* stages, pipelines, index into bval */
    sched_kind sched;
    sync_kind sync;
    int *perm;           /* [N] */
    int *first;          /* [N]: first layer of stage (p, k) at p*S + k (decoded) */
    int *mb;             /* [N]: microbatches of pipeline p (decoded) */
    uint64_t hash, hash2; /* two independent hashes of the canonical form (decoded) */
    int status;          /* 0 not evaluated, 1 feasible, -1 infeasible */
    double fit;          /* objective value of the estimate (INFINITY if infeasible) */
    obj_metrics est;
    signed char split;   /* the cut rule the decoding used (decoded; ENC_CUT_DP: which one) */
    bool est_ok;         /* est holds this decoding's estimate (the joint split made it) */
} genome;

int enc_problem_init(enc_problem *pr, const topology *t, const job *j, const enc_cfg *cfg,
                     gt_err *e);
void enc_problem_free(enc_problem *pr);

int genome_alloc(genome *g, int N);
void genome_free(genome *g);
void genome_copy(genome *dst, const genome *src, int N);
/* Same canonical decoded genome (call after enc_decode on both). */
bool genome_same(const genome *a, const genome *b);

/* Set the grid (S x D distinct GPUs, row-major) and put every other GPU,
 * ascending, in the unselected tail. */
int enc_set_grid(const enc_problem *pr, genome *g, const int *grid, int S, int D);
/* The genome of a plan (another planner's, say) when the search space holds
 * it: equal stage counts, one GPU per stage (or one unit of pr's tp_view),
 * each used once, gpipe or 1f1b, a searched microbatch size. Cuts and
 * microbatches are left to enc_decode. Returns 0, or -1 when it does not fit
 * the space. */
int enc_from_plan(const enc_problem *pr, const plan *p, genome *g);
/* Re-slice the placed GPUs into S2 x D2 (S2*D2 <= S*D): read the grid
 * row-major (by pipeline) or column-major (by stage) and fill the new one the
 * same way; the GPUs left over become unselected. */
int enc_reshape(const enc_problem *pr, genome *g, int S2, int D2, bool by_stage);
/* A lone activation (or gradient) transfer of microbatch bval[bi] from GPU
 * `from` to GPU `to`, as the estimator prices it. */
int64_t enc_xfer_ns(const enc_problem *pr, int bi, int from, int to);

/* Whether (S, D, bi) is a shape the problem allows. */
bool enc_shape_ok(const enc_problem *pr, int S, int D, int bi);

/* Canonicalise, cut and split microbatches (see the header comment).
 * Returns 0, or -1 when the genome's shape is invalid or nothing fits in
 * memory (e may be NULL; otherwise it says why). */
int enc_decode(const enc_problem *pr, genome *g, gt_err *e);
/* The canonical form alone (shape check, hashes): enough to look a genome
 * up by its hashes before decoding it. -1 on an invalid shape. */
int enc_canonical(const enc_problem *pr, genome *g);
/* enc_decode with another cut rule than the problem's (the finalists' other
 * splits of a placement). */
int enc_decode_rule(const enc_problem *pr, genome *g, enc_cut_rule rule, gt_err *e);
/* A decoder's memory of the full search's candidate splits (ENC_CUT_DP,
 * enc_split.c) of the last placements it decoded: they depend on the
 * placement, shape, schedule and microbatch size but not on the sync, so a
 * placement decoded again with another sync (the genes sweep) skips the
 * layer cuts and only estimates. One per thread. The decoding is the one
 * enc_decode makes (tests/test_partition_dp.c). */
typedef struct enc_split_memo enc_split_memo;
enc_split_memo *enc_split_memo_new(const enc_problem *pr);
void enc_split_memo_free(enc_split_memo *m);
/* enc_decode (no error text) with m (NULL: plain enc_decode). */
int enc_decode_memo(const enc_problem *pr, genome *g, enc_split_memo *m);
/* The plan of a decoded genome. */
int enc_to_plan(const enc_problem *pr, const genome *g, const char *planner,
                const char *objective, plan *p, gt_err *e);

/* The planners' fitness of a decoded genome: the estimator's metrics
 * (estimate_plan), with the iteration time raised to the largest bytes /
 * bandwidth over the shared resources (WAN links other than per-pair ones,
 * node NICs, GPU links) of all activation, gradient and sync traffic (the
 * flows of sim/models/collective.h's algorithms). No sharing policy lets an
 * iteration end before its busiest resource has carried its bytes, so this
 * is a lower bound of the simulator that the contention-free estimator
 * misses (it sees every transfer alone); energy, carbon and cost grow by the
 * selected GPUs' idle power over the extra time. Returns 1 (feasible), -1
 * (the estimator refused the plan) or -2 (out of memory for the floor). */
int enc_estimate(const enc_problem *pr, const genome *g, obj_metrics *m);
/* The traffic floor alone (seconds); -1 when out of memory (then
 * enc_estimate fails too: an estimate without its floor could fall below
 * the exact referee's NIC-load bounds, exact_nic.c). */
double enc_traffic_floor(const enc_problem *pr, const genome *g);

/* Lower bounds of the estimator's metrics for a decoded genome: iteration
 * time from each pipeline's critical chain (first arrival + all its work +
 * the gradient's way back + optimizer, and under 1F1B ceil(m/S) round trips
 * of stage 0), energy from busy time at TDP plus idle power for the rest of
 * the bounded iteration; carbon and cost likewise. Valid for every objective
 * of objective.h through objective_value (it is monotone in all metrics). */
obj_metrics enc_bound(const enc_problem *pr, const genome *g);

/* The stage whose GPU bounds the plan: in the pipeline with the largest time
 * bound, the stage with the most work. Returns its grid index p*S + k. */
int enc_critical_cell(const enc_problem *pr, const genome *g);

/* Roughly what replaying a plan costs the simulator: its ops and flows, the
 * parameter server's D(D-1) concurrent flows per group weighted by D^2 more
 * (max-min sharing recomputes over all of them: measured 1 s at D = 16 and
 * 40 s at D = 32 for 8 stages and 2048 microbatches). Plans above
 * ENC_REPLAY_MAX_WORK are not replayed by the planners (nor by `geotrain
 * plan` for its "simulated" block): their estimate stands in. */
#define ENC_REPLAY_MAX_WORK 2e6
double enc_replay_work(const plan *p);

/* Finalists: candidates sorted by their estimated objective (g->fit,
 * ascending) are replayed with simulate_plan (default options) in that
 * order, keeping the best simulated objective `sobj`, until a candidate's
 * estimate is no better than the best simulated value so far: the estimator
 * being a lower bound of the simulator (sim/estimator/estimator.h), no later candidate
 * can win. Ties go to the earlier candidate. Within the limits: at most
 * lim->max replays, none after the first once the deadline passed or *stop
 * is set (an interrupted run still gets a plan).
 * When the first candidate is too large to replay (enc_replay_work), it
 * wins unreplayed: value and sim are then its fitness (replayed = 0).
 * The winner's plan goes to out (caller frees), with its metrics, its
 * simulated objective and how many candidates were replayed. */
typedef struct enc_final {
    plan p;
    obj_metrics est, sim;
    double value;
    int index;           /* which candidate won */
    int replayed;
} enc_final;
typedef struct enc_replay_limits {
    int max;                   /* most replays */
    double deadline;           /* CLOCK_MONOTONIC seconds, 0 = none (the first replay always) */
    const volatile int *stop;  /* set: no replay after the first */
} enc_replay_limits;
int enc_pick_final(const enc_problem *pr, const genome *const *cand, int n,
                   const objective *sobj, const char *planner, const char *objtext,
                   const enc_replay_limits *lim, enc_final *out, gt_err *e);
/* Replay one decoded genome (plan + simulated metrics). */
int enc_simulate(const enc_problem *pr, const genome *g, const char *planner,
                 const char *objtext, plan *p, obj_metrics *sim, gt_err *e);

/* --- seeds (DESIGN 8) ----------------------------------------------------- */

typedef enum {
    SEED_FASTEST,        /* GPUs by achievable FLOP/s, fastest first */
    SEED_FLOPS_PER_WATT, /* by FLOP/s per TDP watt */
    SEED_MEMORY,         /* by memory, largest first */
    SEED_PIPE_PER_SITE,  /* one pipeline per site */
    SEED_DP_PER_SITE,    /* one data-parallel group (stage) per site */
    SEED_RANDOM
} seed_kind;

/* Fill g with seed `kind` of shape S x D (S or D <= 0: the seed picks), the
 * given schedule, sync and microbatch size. rng is used by SEED_RANDOM only.
 * Returns -1 when the seed does not apply (e.g. too few sites). */
int enc_seed(const enc_problem *pr, seed_kind kind, int S, int D, sched_kind sched,
             sync_kind sync, int bi, gsl_rng *rng, genome *g);

/* A random genome (SEED_RANDOM) of shape S x D (S or D <= 0: drawn) with a
 * random sync and schedule, drawn from rng in that order: the sync, then
 * the schedule, then the genome. (Drawn inside enc_seed's argument list,
 * their order would be the compiler's: gcc and clang gave different plans.) */
int enc_seed_random(const enc_problem *pr, int S, int D, int bi, gsl_rng *rng, genome *g);

/* All GPUs of the site ranked `rank` (0 = most FLOP/s), fastest first, in
 * as many pipelines of the fewest stages that fit (1F1B, microbatch
 * bval[bi]) as the site holds: pipelines inside one site, data parallelism
 * across them. -1 when the site cannot hold one pipeline. */
int enc_seed_site(const enc_problem *pr, int rank, sched_kind sched, sync_kind sync, int bi,
                  genome *g);

/* The fewest stages with which one pipeline of the first GPUs of `kind`'s
 * order fits in memory (1F1B, microbatch bval[bi]); -1 if none. */
int enc_min_stages(const enc_problem *pr, seed_kind kind, int bi);

/* The reference plan of weighted:W and the first feasible seed: fastest
 * first, one pipeline of enc_min_stages stages, 1F1B, ring, the smallest
 * microbatch that fits. Returns -1 when the job fits on no subset of GPUs,
 * with e naming the smallest memory shortfall found. */
int enc_reference(const enc_problem *pr, genome *g, gt_err *e);

#endif
