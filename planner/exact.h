/* exact.h — the exact referee (docs/planner.md, `--planner exact`).
 *
 * Search space: the one of encoding.h (the memetic planner's): GPU
 * selection, shape S x D, placement on the grid, schedule (gpipe, 1f1b),
 * sync (ring, hierarchical, ps) and microbatch size; layers by LS1's DP and
 * microbatches by water-filling, as decoded from the placement; and, like
 * the memetic planner, each tensor-parallel degree over its unit view
 * (tp_view.h: one search per degree, the best simulated plan wins; a degree
 * it refuses makes the whole run refuse, since nothing would be proved).
 *
 * Search modulo symmetry, best first on four levels (docs/planner.md):
 *   - selections: a shape and counts per class (a class: the GPUs of a node
 *     and of every identical node of its site: same type, GPU count, NIC);
 *     bound for every placement of them from the counts alone (exact_sel.c):
 *     the batch's FLOPs over their summed speed, the rows' fill, round
 *     trips and bottleneck with the selection's fastest GPUs, what
 *     spanning nodes or sites costs, and the sync's bytes through the NICs
 *     (exact_nic.c); energy (carbon, cost) >= that
 *     time at idle power plus the FLOPs at the cheapest GPU's marginal joules
 *     (objective_value is monotone in these metrics);
 *   - placements, generated on demand for a selection whose bound beats the
 *     best value: rows sorted by class, nodes of a class numbered by first
 *     use, branches cut as soon as their rows' bound (round trip on the
 *     fastest GPU plus transfers, one cell ahead; the last row's entries
 *     into every node and site it must still reach) or their sync reaches
 *     the best value, each full row also by the decoder's own cuts of its
 *     GPUs (exact_cut.c) and the rows' NIC loads (exact_nic.c);
 *   - units (placement x microbatch size): the rows' round trips,
 *     bottlenecks and pipeline fill (exact_fill.c) sharing the microbatches,
 *     the sync and the NIC loads;
 *   - points: each (microbatch size, schedule) of an opened placement is
 *     decoded and bounded (enc_bound), and estimated (every sync) in order
 *     of its bound.
 * The first best value is the reference plan's estimate (a little above it).
 * The search ends when no placement or point bound beats the best value:
 * that value is then proved optimal. Then the same order is scanned
 * again with the simulator: every plan whose estimate beats the best
 * simulated value so far is replayed, until no bound can (exact_sim_search;
 * the placements the first search walked come from its record,
 * exact_walks.c).
 * The memetic planner replays its elite by the same rule (enc_pick_final),
 * so the two planners' objective_value are on the same (simulated) basis,
 * and the exact one is the simulated optimum of the space.
 *
 * The note says what was proved, first: "proved optimal for the simulator"
 * (both searches ran to their end), "proved optimal for the estimate only
 * (why)" (the replays were interrupted or hit EXACT_MAX_SIMS; pareto: the
 * front is exact for the estimate), or "interrupted: nothing proved".
 *
 * The proof for the simulator needs estimate <= replay; every replayed
 * plan is checked, and one whose estimate exceeds its replay makes the
 * note say "estimate only".
 *
 * Refuses (exit 1, "beyond the exact solver's reach") an instance whose
 * search passes its work cap: without --budget-s a fixed count of partial
 * placements visited (the reference machine's 60 s), so the same instance
 * is refused or solved on any machine; with --budget-s the clock; always
 * more than EXACT_MAX_SELECTIONS count vectors, EXACT_MAX_PLACEMENTS
 * placements or EXACT_MAX_CELLS cells of placements. */
#ifndef GT_EXACT_H
#define GT_EXACT_H

#include <stdbool.h>
#include "encoding.h"
#include "objective.h"
#include "pareto.h"
#include "planner.h"

#define EXACT_DEFAULT_LIMIT_S 60.0
#define EXACT_MAX_PLACEMENTS 5000000L
#define EXACT_MAX_CELLS 40000000L      /* their cells (memory: large grids) */
#define EXACT_MAX_SELECTIONS 1000000   /* count vectors x shapes (memory) */
#define EXACT_MAX_SIMS 5000
#define EXACT_MAX_SIMS_TEXT "5000" /* the same, for messages */

/* The registry entry (no configuration: cfg is unused). */
int planner_exact(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                  plan *out, planner_stats *st, gt_err *e);
/* objective "pareto": the exact front over the search space (estimates),
 * replayed by the simulator. */
int exact_front(const topology *t, const job *j, const planner_opts *o, pareto_front *out,
                planner_stats *st, gt_err *e);

/* --- the pieces, for tests and experiments ---------------------------------------- */

typedef struct exact_space exact_space;   /* enumerated placements with their bounds */

/* The classes and count vectors with their bounds (placements come on
 * demand); limit_s: the clock limit of the searches (0: the deterministic
 * work cap, see above); -1 when there are too many count vectors. */
int exact_enumerate(const enc_problem *pr, double limit_s, int threads, exact_space **out,
                    gt_err *e);
void exact_space_free(exact_space *s);
long exact_space_placements(const exact_space *s);
long exact_space_opened(const exact_space *s);   /* (placement, microbatch size) units decoded */

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
