/* partition_dp.h — LS1: the exact min-max cut of L layers into S contiguous
 * stages under memory caps (DESIGN 8, "exact min-max layer re-partition for a
 * fixed placement").
 *
 * Stage k (0-based, in pipeline order) holds layers [a, e]. The caller gives
 * the cost of a stage (integer ns, e.g. forward + backward of one microbatch
 * on the stage's GPU) and whether the stage's memory can hold the range.
 * Both must be monotone: a range's cost never falls and its fit never improves
 * when the range grows (true of the cost model: more layers, more FLOPs and
 * bytes; the embedding and head only add).
 *
 * pdp_solve() returns the cuts minimising the largest stage cost, and among
 * those the sum of stage costs (the pipeline's fill), in two exact phases:
 *   1. the smallest bottleneck tau*. With `uniform` set (a stage's cost and
 *      fit depend only on how many layers it holds and on whether it holds
 *      the first or the last layer, as in the cost model) by binary search
 *      over tau with a greedy feasibility test: each stage takes as many
 *      layers as fit under tau; greedy ends are then never earlier than any
 *      feasible split's, O((L + S) log(max cost)). Otherwise (per-layer
 *      costs differ) by dynamic programming, O(S L w);
 *   2. the least sum with every stage <= tau*: dynamic programming over
 *      (stage, last layer), O(S L w) where w is the widest stage that fits.
 * Ties are broken deterministically (later cuts first). */
#ifndef GT_PARTITION_DP_H
#define GT_PARTITION_DP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct pdp_problem {
    int L, S;
    int64_t (*cost)(const void *ctx, int k, int a, int e);
    bool (*fits)(const void *ctx, int k, int a, int e);   /* NULL = always */
    const void *ctx;
    bool uniform;   /* layers alike (see above): allows the fast phase 1 */
} pdp_problem;

typedef struct pdp_result {
    int64_t max_cost;   /* the bottleneck stage's cost */
    int64_t sum_cost;   /* sum over stages */
} pdp_result;

/* first[k] = first layer of stage k (first[0] = 0; stage k ends at
 * first[k+1] - 1, the last stage at L - 1). Returns 0, or -1 when no split
 * fits (S > L, or memory) or on out-of-memory. */
int pdp_solve(const pdp_problem *p, int *first, pdp_result *r);

/* Whether some split has every stage fitting and costing at most tau
 * (INT64_MAX: memory only). Greedy, O(L + S) calls. */
bool pdp_feasible(const pdp_problem *p, int64_t tau);

#endif
