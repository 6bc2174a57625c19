/* enc_pipe.h — what the files of the encoding share about one pipeline
 * (private to planner/encoding.c, enc_fitness.c, enc_seeds.c): its layer
 * problem for partition_dp.h, in-flight activations and a stage's memory. */
#ifndef GT_ENC_PIPE_H
#define GT_ENC_PIPE_H

#include "encoding.h"
#include "partition_dp.h"

#define ENC_GIB 1073741824.0

typedef struct pipe_ctx {
    const enc_problem *pr;
    const int *gpus;   /* S */
    int S, bi, m;
    sched_kind sched;
} pipe_ctx;

/* Microbatches of activations alive on stage k of S (m per pipeline). */
int enc_in_flight(sched_kind sched, int S, int k, int m);
/* cost_stage_memory() from precomputed pieces (the hot path of the DP). */
double enc_stage_need(const enc_problem *pr, int bi, int ty, int a, int e, int inflight);
/* The pipeline's layer split as a partition_dp.h problem. */
pdp_problem enc_pipe_problem(const pipe_ctx *c);

/* Each pipeline's most microbatches it holds in memory (cap[g->D]): the
 * same for every cut rule. */
void enc_pipe_caps(const enc_problem *pr, const genome *g, int *cap);
/* Cuts and microbatches of a canonical genome by one cut rule (the body of
 * enc_decode; ENC_CUT_DP is taken as ENC_CUT_MINMAX); caps from
 * enc_pipe_caps, or NULL to compute them. */
int enc_decode_cuts(const enc_problem *pr, genome *g, enc_cut_rule rule, const int *caps,
                    gt_err *e);
/* The cuts (first[S]) rule gives a pipeline of GPUs gpus[S] at microbatch
 * size bi holding m microbatches under sched, as the decoder makes them
 * (min-max: LS1 under the memory caps; uniform, speed-proportional); -1
 * when they do not fit in memory (the uniform and speed cuts are written
 * even then). The exact referee bounds rows by them. */
int enc_cut_row(const enc_problem *pr, const int *gpus, int S, int bi, int m, sched_kind sched,
                enc_cut_rule rule, int *first);
/* ENC_CUT_DP (enc_split.c): the LS1 min-max split, the uniform and the
 * speed-proportional splits, the one the fitness ranks first. */
int enc_joint_split(const enc_problem *pr, genome *g, gt_err *e);
/* The same, taking the placement's candidate splits from memo when it has
 * them (another sync of the same placement), and keeping them there (memo
 * may be NULL). */
int enc_joint_split_memo(const enc_problem *pr, genome *g, gt_err *e, enc_split_memo *memo);

#endif
