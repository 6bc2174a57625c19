/* dp_overlap.h — the compute slowdown under sharded data parallelism: the
 * NCCL collectives that ZeRO-2 / ZeRO-3 / PyTorch FSDP run beside every
 * forward and backward pass take SMs and memory bandwidth from the compute
 * kernels they overlap.
 *
 * Per pass of a stage, the sharded frameworks all-gather the stage's weights
 * for the forward (ZeRO-3 / FSDP: they are resharded after use) and again for
 * the backward, and reduce-scatter its gradients after the backward (ZeRO-2
 * too): PyTorch FSDP's post-backward hook reduce-scatters on every backward
 * that runs outside `no_sync()`, and Composer (llm-foundry's trainer) enters
 * `no_sync()` only for DDP models (composer/trainer/dist_strategy.py,
 * `ddp_sync_context`). While such a collective runs, the compute beside it is
 * slower: on average by DP_OVERLAP_SLOWDOWN (Lee et al., "Characterizing
 * Compute-Communication Overlap in GPU-Accelerated Distributed Deep
 * Learning", arXiv:2507.03114: 18.9 % average, 40 % maximum computational
 * slowdown against the same compute without communication, GPT and LLaMA
 * training on 4 A100, H100, MI250 and MI210).
 *
 * A pass that takes d seconds beside c seconds of such collectives takes
 * d + DP_OVERLAP_SLOWDOWN x min(c, d): only the overlapped part of the
 * compute slows down. c is the ring's contention-free time over the
 * replicas of the stage (the slowest hop of the ring sets each step). The
 * op durations carry the term, so the estimator and the simulator still
 * replay the same op list. Plain data parallelism and ZeRO-1 (one sync per
 * step, overlapping only the last backward) are not charged. */
#ifndef GT_DP_OVERLAP_H
#define GT_DP_OVERLAP_H

#include <stdint.h>
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"

#define DP_OVERLAP_SLOWDOWN 0.189

/* 1 when the plan's op durations carry the term (it shards per pass, over
 * more than one replica): they then depend on the plan's sharding and on
 * where every replica of a stage is, which a store keyed by one stage or
 * one pipeline does not see (the estimator's stage and pipeline stores
 * work them out afresh for such a plan). */
int dp_overlap_applies(const plan *p);
/* Seconds of data-parallel collectives that run beside one forward
 * (c[0]) and one backward (c[1]) of listed stage k of pipeline pi: 0 unless
 * the plan shards per pass (zero2: backward only; zero3, fsdp: both) over
 * more than one replica. The stage's ring is built and ordered once for
 * both. Returns 0, or -1 when out of memory (c untouched: the caller
 * reports it; no pass goes uncharged silently). */
int dp_overlap_traffic_s(const topology *t, const job *j, const plan *p, int pi, int k,
                         double c[2]);
/* An op of `ns` beside `traffic_s` seconds of collectives. */
int64_t dp_overlap_ns(int64_t ns, double traffic_s);

#endif
