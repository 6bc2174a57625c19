/* exact.h — the exact referee (DESIGN 8, `--planner exact`).
 *
 * Search space: the one of encoding.h (the memetic planner's): GPU
 * selection, shape S x D, placement on the grid, schedule (gpipe, 1f1b),
 * sync (ring, hierarchical, ps) and microbatch size; layers by LS1's DP and
 * microbatches by water-filling, as decoded from the placement; and, like
 * the memetic planner, each tensor-parallel degree over its unit view
 * (tp_view.h: one search per degree, the best simulated plan wins; a degree
 * it refuses makes the whole run refuse, since nothing would be proved).
 *
 * Enumeration modulo symmetry: GPUs of one node are interchangeable (same
 * type, same links) and pipelines are unordered, so a placement is a sorted
 * multiset of rows, each row a sequence of node classes within the nodes'
 * GPU counts. Branch and bound, best first, on two levels:
 *   - a placement's bound holds for every microbatch size, schedule, cut and
 *     microbatch split: iteration time >= the batch's FLOPs over the summed
 *     speed of its GPUs, and >= one smallest microbatch's round trip through
 *     each pipeline on its fastest GPU plus the transfers; energy (carbon,
 *     cost) >= that time at idle power plus the FLOPs at the cheapest GPU's
 *     marginal joules (objective_value is monotone in these metrics);
 *   - a placement whose bound beats the best value found is opened: each
 *     (microbatch size, schedule) is decoded and bounded (enc_bound), and
 *     those points are estimated (every sync) in order of their bound.
 * The search ends when no placement or point bound beats the best value:
 * that value is then proved optimal. Then the same order is scanned
 * again with the simulator: every plan whose estimate beats the best
 * simulated value so far is replayed, until no bound can (exact_sim_search).
 * The memetic planner replays its elite by the same rule (enc_pick_final),
 * so the two planners' objective_value are on the same (simulated) basis,
 * and the exact one is the simulated optimum of the space.
 *
 * The note says what was proved, first: "proved optimal for the simulator"
 * (both searches ran to their end), "proved optimal for the estimate only
 * (why)" (the replays were interrupted or hit EXACT_MAX_SIMS; pareto: the
 * front is exact for the estimate), or "interrupted: nothing proved".
 *
 * Refuses (exit 1) instances with more than EXACT_MAX_PLACEMENTS placements,
 * or whose estimated run time (placements x the cost of enumerating and, for
 * the share expected to be opened, decoding them) exceeds the limit, saying
 * how long they would take. Without --budget-s the cost is the reference
 * machine's (a fixed figure per GPU, one thread) and the limit
 * EXACT_DEFAULT_LIMIT_S, so the same instance is refused or solved on any
 * machine; with --budget-s the cost is measured on this machine. */
#ifndef GT_EXACT_H
#define GT_EXACT_H

#include <stdbool.h>
#include "encoding.h"
#include "objective.h"
#include "pareto.h"
#include "planner.h"

#define EXACT_DEFAULT_LIMIT_S 60.0
#define EXACT_MAX_PLACEMENTS 5000000L
#define EXACT_MAX_SIMS 5000
#define EXACT_MAX_SIMS_TEXT "5000" /* the same, for messages */

int planner_exact(const topology *t, const job *j, const planner_opts *o, plan *out,
                  planner_stats *st, gt_err *e);
/* objective "pareto": the exact front over the search space (estimates),
 * replayed by the simulator. */
int exact_front(const topology *t, const job *j, const planner_opts *o, pareto_front *out,
                planner_stats *st, gt_err *e);

/* --- the pieces, for tests and experiments ---------------------------------------- */

typedef struct exact_space exact_space;   /* enumerated placements with their bounds */

/* Enumerate and bound the placements; -1 (with the estimate) when beyond
 * reach of limit_s (0: the deterministic default, see above). */
int exact_enumerate(const enc_problem *pr, double limit_s, int threads, exact_space **out,
                    gt_err *e);
void exact_space_free(exact_space *s);
long exact_space_placements(const exact_space *s);
long exact_space_opened(const exact_space *s);   /* placements decoded so far */

#define EXACT_TOPK 1   /* the estimate's optimum (the simulated search starts there) */

typedef struct exact_result {
    int ntop;
    genome top[EXACT_TOPK]; /* the best plans by estimate, best first (decoded) */
    long examined;          /* plans whose estimate the search looked at */
    long estimated;         /* of which new estimator calls (others were cached) */
    bool proved;            /* false when stopped early */
} exact_result;

/* Branch and bound for one objective (refs / time limit already set): the
 * EXACT_TOPK best plans by estimate, proved when r->proved. Estimates are
 * cached in the space, so several objectives share them. */
int exact_search(exact_space *s, const objective *obj, const volatile int *stop,
                 exact_result *r, gt_err *e);
void exact_result_free(exact_result *r);
/* The best plan by the simulated objective `sobj`: candidates in order of
 * their bound, each estimated (cached) and, when its estimated objective
 * `obj` beats the best simulated value so far, replayed; ends when the next
 * bound cannot beat it (the estimator is a lower bound of the simulator).
 * *replayed counts the simulations (at most max_sims; proved is false when
 * that cap or a stop request ended the search); *above counts the replayed
 * plans whose estimate exceeded their replay (where the lower-bound
 * assumption fails, so the proof does not hold). */
int exact_sim_search(exact_space *s, const objective *obj, const objective *sobj,
                     const genome *start, const volatile int *stop, int max_sims,
                     enc_final *f, int *replayed, int *above, bool *proved, gt_err *e);
/* The exact time x energy front of the space (estimates), into `a`. */
int exact_pareto(exact_space *s, const volatile int *stop, pareto_archive *a, long *examined,
                 gt_err *e);

#endif
