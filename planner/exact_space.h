/* exact_space.h — what the exact referee's files share (private to
 * planner/exact*.c): the selections (shape x counts per class), the
 * placements generated so far with their bounds, the units (placement x
 * microbatch size) and points (unit x schedule) opened so far, and the
 * helpers that grow, bound and decode them. exact_space.c owns the classes
 * and count vectors; exact_expand.c the generation of placements and the
 * bounds of partial placements; exact_sel.c the
 * bound of a selection; exact_walks.c the record of the walks; exact_place.c the store of placements;
 * exact_sync.c the bound from data-parallel sync and the path tables;
 * exact_nic.c the bound from the sync's bytes through the NICs;
 * exact_search.c the best-first searches and the opening of units; exact.c
 * the planner. */
#ifndef GT_EXACT_SPACE_H
#define GT_EXACT_SPACE_H

#include <stdint.h>

#include "exact.h"

#define EXACT_BATCH 16      /* points estimated per parallel batch (fixed: determinism) */
#define EXACT_OPEN 64       /* units opened per batch */
#define EXACT_ARCHIVE 4096  /* pareto: large enough never to thin on small instances */

typedef struct xpoint {
    int place;
    signed char bi, sched;
    int res[ENC_NSYNC];     /* index into the results, -1 = not estimated yet */
    obj_metrics lb;
} xpoint;

/* A selection: a shape and how many GPUs of each group it uses (counts per
 * class, the first level of the search). */
typedef struct xsel {
    int S, D;
    long off;               /* its counts in sel_cnt */
    obj_metrics lb;         /* bound of every placement of these GPUs */
    double T, ready;        /* its time bound, and the rows' part (exact_sel.c) */
} xsel;

/* The record of the walks of the search on the estimate, for the simulated
 * search after it (exact_walks.c): per selection its placements (a list in
 * place/key/link from head to tail), how far up the walks covered and the
 * least key they cut. */
typedef struct exact_walks {
    const objective *obj;   /* the keys' objective */
    bool recording;         /* the first search: record; then: take */
    double *cover, *next;   /* per selection */
    int *head, *tail;       /* per selection: its first and last entry, -1: none */
    int *place, *link;      /* per entry: the placement, the selection's next entry */
    double *key;
    long n, cap;
} exact_walks;

/* The memo of exact_cut.c: per row (S, D, GPU types; open addressing on
 * key[slot * (smax + 2)], 0 empty, rows only added) its least trip per
 * microbatch size; written by the serial walk and unit bounds only. */
typedef struct exact_cut_memo {
    int *key;
    double *trip;
    int *first;             /* scratch cuts */
    uint64_t *mask;         /* [cap * L]: per slot and layer, the stages its cuts give it */
    char *mask_ok;          /* per slot: its masks cover every microbatch size */
    long n, cap;
    long solves;            /* LS1 solves made so far (capped: exact_cut.c) */
} exact_cut_memo;

struct exact_space {
    const enc_problem *pr;
    int threads;
    bool par;               /* parallel work: only worth it on the larger instances */
    /* groups of identical nodes (same site, type, GPU count, NIC): the
     * enc_problem's node classes of group g are gnode[gfirst[g] .. +gcount[g]) */
    int ngroup;
    int *gfirst, *gcount, *gnode, *group_of;
    int nsel;
    xsel *sel;
    int *sel_cnt;
    char *seen;             /* per selection: its placements were generated */
    long walked;            /* how many selections that is (the others were cut) */
    /* placements generated so far (node classes per cell, row-major) */
    int nplace, capplace;
    int *pS, *pD;
    long *poff;             /* placement -> offset of its classes in cls */
    int *cls;
    long ncls, capcls;
    bool cells_full;        /* a placement was refused: EXACT_MAX_CELLS */
    obj_metrics *plb;       /* placement bounds */
    /* a unit: placement p with microbatch size bi, u = p * ENC_MAX_B + bi */
    long *pfirst;           /* first point of an opened unit, -1 = not opened */
    signed char *pnpts;     /* its number of points (one per schedule that decodes) */
    int *hash;              /* open addressing: placement index + 1, 0 = empty */
    long caphash;
    long opened;
    long visited;           /* partial placements the searches visited */
    long max_visits;        /* deterministic work cap (no --budget-s), or 0 */
    double deadline;        /* CLOCK_MONOTONIC seconds (--budget-s), or 0 */
    double limit_s;
    double *layer_s;        /* [bi * ntypes + type]: least s per layer of any stage */
    int *layer_cap;         /* [bi * ntypes + type]: most layers a stage holds (exact_rows.c) */
    double *type_speed;     /* [type]: most FLOP/s of any stage (the bounds' speed) */
    double *grain_c;        /* [type]: least s per layer over every size (exact_grain.c) */
    double seq_f;           /* FLOPs of one sequence through the model (fwd + bwd) */
    double *mb_flops;       /* [bi]: FLOPs of one microbatch through the model (fwd + bwd) */
    /* per ordered GPU pair a*N + b (a != b): the path's latency and rate
     * (topo_path), and per microbatch size the lone activation transfer
     * enc_xfer_ns prices (xns[bi*N*N + a*N + b]); NULL above EXACT_TABLE_GPUS */
    double *lat, *rate;
    int64_t *xns;
    /* least round trips (smallest microbatch) out of and into each site
     * and into each node class (one allocation, leave_s) */
    double *leave_s, *enter_s, *enter_n;
    double *glat, *grate;   /* [level][g][h]: the sync bound's pairs of groups (exact_sync.c) */
    double *gtrip;          /* [bi][level][g][h]: least round trips between groups (exact_sel.c) */
    double grad_total, grad_first;  /* gradient bytes: the model, layer 0 (exact_sync.c) */
    double *layer_grad;     /* [L]: each layer's gradient bytes (exact_sync.c) */
    exact_walks walks_rec;  /* the first search's walks (exact_walks.c) */
    exact_cut_memo *cuts;   /* rows' least trips by the decoder's cuts (exact_cut.c) */
    xpoint *pts;
    long npts, cappts;
    obj_metrics *res;
    signed char *res_ok;
    long nres, capres;
};

/* What a bound adds up over GPUs (exact_space.c): idle power, the least
 * marginal energy per FLOP and the summed speed. */
typedef struct exact_terms {
    double idle, idle_c, idle_u;     /* sum of PUE x idle W (x carbon, x price per J) */
    double marg, marg_c, marg_u;     /* least marginal J (gCO2e, USD) per FLOP */
    double speed;                    /* summed FLOP/s */
} exact_terms;

/* A GPU of group g (the first of its first node). */
static inline int exact_group_gpu(const exact_space *sp, int g)
{
    return sp->pr->class_first[sp->gnode[sp->gfirst[g]]];
}
/* CLOCK_MONOTONIC seconds (the deadline of --budget-s). */
double exact_now_s(void);
/* The terms of the GPUs of counts per group cnt (exact_space.c). */
void exact_sel_terms(const exact_space *sp, const int *cnt, exact_terms *t);
/* The bounds' speed of GPU g: the most FLOP/s the cost model gives any
 * stage on its type (exact_layer_times), so they hold for profiles too. */
double exact_gspeed(const exact_space *sp, int g);
/* Add k GPUs like `gpu` to t. */
void exact_add_gpus(const exact_space *sp, int gpu, int k, exact_terms *t);
/* The metrics bound from a time bound T for GPUs t of a shape of S stages. */
obj_metrics exact_bound_from(const exact_space *sp, const exact_terms *t, int S, double T);
/* GPU ids of cells [0, n) (node classes -> GPUs in index order per class). */
void exact_cells_gpus(const exact_space *sp, const int *cell, int n, int *used, int *gpus);
/* Per microbatch size and type the least seconds per layer, per type the
 * most FLOP/s, per size the FLOPs of a microbatch (exact_unit.c). */
int exact_layer_times(exact_space *sp);

/* The layer-granularity bound of a row's compute (exact_grain.c): per type
 * the least seconds per layer over every microbatch size (grain_c); GPU
 * gpu's per-layer time at size bi (bi < 0: over every size); a row's
 * least compute for one microbatch, sum of its c plus L - S layers at its
 * least (bi < 0: over every size); and that sum from a sum of c and its
 * least (0 when S is 0 or least is infinite). */
int exact_grain_init(exact_space *sp);
double exact_grain_of(const exact_space *sp, int gpu, int bi);
double exact_grain_row(const exact_space *sp, int S, const int *gpus, int bi);
double exact_grain_split(double sum, double least, int S, int L);

/* fmin and fmax for the walk's hot loops, inlined: the same value for
 * numbers that are never NaN (times, rates, speeds, INFINITY). */
static inline double exact_min(double a, double b)
{
    return b < a ? b : a;
}
static inline double exact_max(double a, double b)
{
    return b > a ? b : a;
}

/* Grow *p (capacity *cap elements of elem bytes) to hold need; -1 when out
 * of memory. */
int exact_grow(void **p, long *cap, long need, size_t elem);
/* The genome of a placement: classes -> GPUs in index order per class. */
void exact_placement_genome(const exact_space *sp, int place, int bi, int sched, int sync,
                            genome *g, int *used);
/* Bounding a selection's placements: the key function and the threshold
 * of the search that expands it (a placement whose key reaches thr, or that
 * skip covers, is never generated). */
typedef struct xprune {
    const objective *obj;          /* NULL: by time */
    const pareto_archive *skip;
    double lo, thr;                /* generate the keys in [lo, thr) */
} xprune;
double exact_key(const xprune *x, const obj_metrics *m);
bool exact_pruned(const xprune *x, const obj_metrics *m);
/* Generate (exact_expand.c) the placements of selection `s` that the pruning keeps (rows
 * sorted by their groups, nodes of a group numbered by first use), adding
 * each to the space once and its index to *out (grown as needed); *next
 * gets the least key the threshold cut (a bound of every placement of `s`
 * not generated yet; INFINITY: none). Returns 0, -1 out of memory, -2
 * beyond the work cap or the deadline. */
int exact_expand(exact_space *sp, int s, const xprune *x, int **out, long *n, long *cap,
                 double *next);
/* The index of placement (S, D, node class per cell c), stored with bound
 * lb if new (exact_place.c); -1 out of memory, -2 beyond
 * EXACT_MAX_PLACEMENTS. */
int exact_place_add(exact_space *sp, int S, int D, const int *c, obj_metrics lb);
/* The refusal, once the cap or the deadline ended a search. */
int exact_refuse(const exact_space *sp, gt_err *e);

/* A lone activation transfer of microbatch bval[bi] from GPU a to b, as
 * enc_xfer_ns prices it (from the table when there is one). */
int64_t exact_xfer_ns(const exact_space *sp, int bi, int a, int b);
/* The path tables and gradient sizes the sync bound needs (exact_sync.c). */
int exact_sync_init(exact_space *sp);
/* A lower bound of the iteration from data-parallel sync alone (seconds)
 * for the S x D grid `gpus` (row-major GPU ids) whose stage 0 cannot end
 * its last backward before `ready` s (a bound of the rows); 0 when it
 * does not apply (exact_sync.c says when and why it holds). */
double exact_sync_bound(const exact_space *sp, int S, int D, const int *gpus, double ready);

/* Fold the pairs between row r's GPUs and the earlier rows' (gpus,
 * row-major) into the least latency and highest rate per level (lat3[l],
 * rate3[l]; 0 any two rows, 1 across nodes, 2 across sites): what the two
 * functions below read in their _x forms instead of scanning every pair. */
void exact_cross_row(const exact_space *sp, int S, int r, const int *gpus, double *lat3,
                     double *rate3);
double exact_sync_bound_x(const exact_space *sp, int S, int D, const int *gpus, double ready,
                          const double *lat3, const double *rate3);
double exact_partial_sync_bound_x(const exact_space *sp, int S, int D, int rows,
                                  const int *gpus, const int *cnt, const int *left,
                                  const int *room, double ready, const double *lat3,
                                  const double *rate3);
/* The pairs of GPUs that stand for every pair between groups g and h at
 * `level` (0 any, 1 other nodes, 2 other sites): one GPU of each group's
 * first node when g != h; when g == h two nodes of the group and two GPUs
 * of one node (identical nodes); -1 where there is none. */
void exact_group_pairs(const exact_space *sp, int g, int h, int level, int pairs[2][2]);
/* The same for every placement of a selection (counts per group cnt). */
double exact_sel_sync_bound(const exact_space *sp, int S, int D, const int *cnt, double ready);
/* The same when every group's members must span `level` (0 any two rows,
 * 1 two nodes, 2 two sites): what a selection whose rows each lie in one
 * node (site) pays when they lie in several. */
double exact_sel_sync_level(const exact_space *sp, int S, int D, const int *cnt, int level,
                            double ready);
/* The NIC-load bound (exact_nic.c): a lower bound of the traffic floor
 * from the sync's bytes out of the NICs of rows' nodes that some row
 * avoids. exact_nic_rows: once the first `rows` rows are placed (gpus,
 * row-major; left per group and room per node class what the rest may
 * take, NULL for a full placement), one_site when the placement lies in
 * one site, touch[nclass] scratch. exact_nic_grid: a full S x D grid.
 * exact_nic_sel: every placement of counts cnt. 0 when it does not apply. */
double exact_nic_rows(const exact_space *sp, int S, int D, int rows, const int *gpus,
                      const int *left, const int *room, bool one_site, int *touch);
double exact_nic_grid(const exact_space *sp, int S, int D, const int *gpus);
double exact_nic_sel(const exact_space *sp, int S, int D, const int *cnt);
/* The same from each layer's sync group once the rows' layers are known
 * to the decoder's cuts (exact_cut_masks): a group no node can hold whole
 * loads every node sure to hold one of its members. Rows 0..rows-1 of gpus
 * placed; scratch of 2 L words and nclass doubles; 0 beyond 64 nodes. */
double exact_nic_layers(const exact_space *sp, int S, int D, int rows, const int *gpus,
                        bool one_site, uint64_t *wscratch, double *load);
/* Whether the GPUs of counts cnt lie in one site. */
bool exact_nic_one_site(const exact_space *sp, const int *cnt);
/* The least seconds one microbatch of size bi (bi < 0: any size) takes
 * through the row of GPUs gpus[S] of an S x D grid, over the cuts the
 * decoder can give it, transfers left out (exact_cut.c; 0 for one stage,
 * above EXACT_CUT_MAX_S stages, for a size whose cuts it does not
 * enumerate or a row the memo does not take; INFINITY when no cut fits);
 * memoized by the row's GPU types. */
double exact_cut_trip(const exact_space *sp, int S, int D, const int *gpus, int bi);
/* Per layer, the stages (bit k) the decoder's cuts of that row can give it
 * (L masks; NULL above EXACT_CUT_MAX_S stages, when a size's cuts were not
 * enumerated or the row is not in the memo, exact_cut.c). */
const uint64_t *exact_cut_masks(const exact_space *sp, int S, int D, const int *gpus);
int exact_cut_init(exact_space *sp);
void exact_cut_free(exact_cut_memo *m);
/* The bound of a selection from its counts alone (exact_sel.c): the least
 * over microbatch sizes of its rows' fill, round trips and bottleneck, and
 * of what spanning several nodes or sites costs; flops_T is the batch's
 * FLOPs over the selection's speed. *ready gets the rows' part (a bound of
 * stage 0's last backward, for the sync bounds). INFINITY: no plan. */
double exact_sel_time(const exact_space *sp, int S, int D, const int *cnt, double flops_T,
                      double *ready);
/* The per-size round trips between groups that exact_sel_time reads. */
int exact_sel_init(exact_space *sp);
/* The same for every completion of a placement whose first `rows` rows are
 * placed (gpus, row-major): cnt the selection's counts per group, left what
 * it has still to place, room[c] the free GPUs of each node class. */
double exact_partial_sync_bound(const exact_space *sp, int S, int D, int rows, const int *gpus,
                                const int *cnt, const int *left, const int *room, double ready);

/* The bound of placement p with microbatch size bi: the placement bound
 * with that size's round trip and transfers (INFINITY: shape not allowed). */
obj_metrics exact_unit_bound(const exact_space *sp, int p, int bi);
/* The same, or once the rows' round trips and the batch's FLOPs alone are
 * cut by `cut` (NULL: never), that weaker bound (then cut too). */
obj_metrics exact_unit_bound_cut(const exact_space *sp, int p, int bi, const xprune *cut);
/* The same for any S x D grid of GPUs (row-major ids). */
obj_metrics exact_grid_bound(const exact_space *sp, int S, int D, const int *gpus, int bi);
/* The same, or once its rows' round trips and FLOPs alone are cut by `cut`
 * (NULL: never), that weaker bound (then cut too). */
obj_metrics exact_grid_bound_cut(const exact_space *sp, int S, int D, const int *gpus, int bi,
                                 const xprune *cut);
/* The bound of a pipeline by layer granularity and memory (exact_rows.c). */
/* Per microbatch size and type, the most layers one stage can hold
 * (layer_cap); -1 out of memory. */
int exact_rows_init(exact_space *sp);
/* The least bottleneck over the splits of L layers into S stages of at
 * least one layer and at most cap[k] (NULL: no caps), stage k taking l_k
 * c[k]: a lower bound, by bisection; 0 when a c[k] is 0, INFINITY when no
 * split fits. */
double exact_least_bottleneck(const double *c, const int *cap, int S, int L);
/* The least time in which D rows of round trip rt[r], least last-stage
 * time cl[r] and bottleneck bn[r] pass m microbatches between them, each
 * row at least one: row r passes at most min(floor((T - rt) / cl) + 1,
 * floor(T / bn)) in T. A lower bound, by bisection. */
double exact_rows_fill(const double *rt, const double *cl, const double *bn, int D, int m);
/* The pipeline-fill bound (exact_fill.c): a row of S stages at most v[k]
 * FLOP/s fast with lone transfers X[k] before stage k (NULL: none) passing
 * m microbatches of W FLOPs; 0 when it does not apply. */
double exact_fill_row(const double *v, const double *X, int S, int m, double W);
/* lb[m - 1] for m = 1..M: the same, non-decreasing in m. */
void exact_fill_table(const double *v, const double *X, int S, int M, double W, double *lb);
/* The least over the shares of M microbatches between D rows (each at
 * least one) of the slowest row's bound, row r's table at lb + r stride;
 * share[D] is scratch. INFINITY when M < D. */
double exact_fill_share(const double *lb, int D, int stride, int M, int *share);
/* Scratch of the fill bound for S x D grids: a table per row, the rows'
 * share, speeds and transfers of a row. */
typedef struct exact_fill_buf {
    int M;                  /* the most microbatches of any size */
    double *rows, *v, *X;
    int *share;
} exact_fill_buf;
int exact_fill_alloc(const exact_space *sp, int S, int D, exact_fill_buf *b);
void exact_fill_free(exact_fill_buf *b);
/* The fill bound of an S x D grid (row-major GPU ids) at microbatch size bi. */
double exact_fill_grid(const exact_space *sp, int S, int D, const int *gpus, int bi,
                       exact_fill_buf *b);
/* Start recording the walks of a search whose keys are obj's (exact_walks.c). */
int exact_walks_reset(exact_space *sp, const objective *obj);
/* Record the walk of selection s up to key `top`: its placements list[0..n)
 * with their keys, and the least key it cut (no-op unless recording). */
int exact_walks_record(exact_space *sp, int s, const int *list, long n, const double *keys,
                       double top, double next);
/* The window [lo, top) of selection s from the record, appended to *out
 * (grown), and in *next the least key above it not taken: 0; 1 when the
 * record does not cover it (walk), -1 out of memory. */
int exact_walks_take(exact_space *sp, const objective *obj, int s, double lo, double top,
                     int **out, long *n, long *cap, double *next);
void exact_walks_free(exact_walks *w);
/* Decode both schedules of the units list[0..n) not opened yet, then append
 * their feasible points in list order. */
int exact_open_units(exact_space *sp, const long *list, int n);

#endif
