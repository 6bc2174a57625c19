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
double enc_stage_need(const enc_problem *pr, int bi, int a, int e, int inflight);
/* The pipeline's layer split as a partition_dp.h problem. */
pdp_problem enc_pipe_problem(const pipe_ctx *c);

#endif
