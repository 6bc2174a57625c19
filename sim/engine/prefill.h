/* prefill.h — BubbleTea (Palak et al., arXiv 2411.14458): LLM-inference
 * prefill work placed into the bubbles of a fixed training timeline.
 *
 * After the simulated iteration is fixed, each selected GPU's idle intervals
 * (every stretch with no forward, backward or optimizer op running, shrunk
 * by the guard band at both ends) receive prefill chunks of requests whose
 * prompt lengths are drawn (seeded) from a request mix. A GPU takes part
 * only if its free memory (capacity minus the training plan's peak) holds
 * the inference model's weights plus the KV cache of one request of the
 * largest prompt in the mix. Prefill time of a chunk = its FLOPs (forward
 * only, with attention over the tokens already prefilled) / (peak x
 * efficiency). The training timeline is only read, never changed. */
#ifndef GT_PREFILL_H
#define GT_PREFILL_H

#include <stdint.h>
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/engine/simulate.h"
#include "sim/inputs/topology.h"

typedef struct prefill_opts {
    model_spec model;          /* the inference model, e.g. llama3_8b */
    const char *mix_path;      /* NULL = the shipped default mix */
    double guard_s;            /* kept free before and after each training op */
    int chunk_tokens;          /* largest chunk (chunked prefill), default 512 */
    uint64_t seed;
} prefill_opts;

typedef struct prefill_piece {
    int lane;
    int64_t start, end;
    int tokens;
    int request;
} prefill_piece;

typedef struct prefill_result {
    prefill_piece *placed;
    int nplaced, cap;
    double tokens, requests;   /* per iteration (completed requests) */
    double tokens_per_s, requests_per_s;
    double filled_s;           /* prefill GPU-seconds per iteration */
    double util_before, util_after;
    int eligible_gpus, gpus;
    char mix_source[256];
} prefill_result;

int prefill_fill(const topology *t, const job *j, const plan *p, const sim_detail *d,
                 const prefill_opts *o, prefill_result *out, gt_err *e);
void prefill_free(prefill_result *r);
/* Seconds to prefill `tokens` tokens after `done` tokens of one request. */
double prefill_chunk_s(const model_spec *m, const gpu_type *g, int done, int tokens);

#endif
