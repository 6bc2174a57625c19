/* memetic_search.h — what the memetic planner's files share (private to
 * planner/memetic*.c): the search state (population, children, estimate
 * cache, elite, seeds; the caches themselves: memetic_cache.h), its parameters, and the steps memetic.c (phases,
 * finalists, the planner) and memetic_islands.c (the island model) call;
 * memetic_search.c owns them (evaluation, elite, survival, children, the
 * loop, the population, budgets). */
#ifndef GT_MEMETIC_SEARCH_H
#define GT_MEMETIC_SEARCH_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>
#include "encoding.h"
#include "memetic.h"
#include "memetic_cache.h"
#include "objective.h"
#include "pareto.h"

#define MA_PC 0.7          /* crossover probability */
#define MA_PLAIN_SHARE 0.25 /* of the crossovers: plain order crossover (OX) */
#define MA_PLS 0.1         /* LS on a child that is not better than the median */
#define MA_LS_MOVES 12     /* LS3/LS4 candidates per call (x3 for the genes sweep) */
#define MA_STALL 40        /* generations without improvement before stopping */
#define MA_BIG_GPUS 256    /* above: a smaller population and lighter local search */
#define MA_RESTARTS 3      /* budget mode: restarts without improvement before stopping */
#define MA_SEARCH_SHARE 0.85 /* budget mode: the search's share; replays get the rest */
#define MA_DEFAULT_GENS 300
#define MA_PAR_MIN_GPUS 24 /* fewer GPUs: children are evaluated sequentially */
#define MA_REPLAY_WORK 2e6 /* ops + flows the finalists' replays may simulate in all */
#define MA_ELITE 48        /* best distinct genomes kept for the finalists */
#define MA_VARIANTS 16     /* best of them whose other splits and widest grids are finalists */
#define MA_ARCHIVE 64
#define MA_NICHE_KEEP 4     /* best distinct genomes kept per shape (S, D) */
#define MA_NICHE_MAX 256    /* shapes kept at most (the first met) */
#define MA_NICHES 2         /* pipeline counts given a niche search after the main one */
#define MA_NICHE_SHARE 0.2  /* a niche search's generations, of the main search's limit */
#define MA_NICHE_REPLAYS 2  /* of each shape's best, finalists */
#define MA_NICHE_FINAL 32   /* shape finalists at most */
#define MA_MAIN_SHARE 0.4  /* budget mode, objectives time, energy, carbon, cost: the full
                              search's share; the four ablation searches share the rest */

struct search;

/* One shape's niche: the best distinct genomes of shape S x D evaluated so
 * far, whatever the population kept (memetic_niches.c). */
typedef struct niche {
    int S, D, n;
    genome best[MA_NICHE_KEEP];   /* sorted by fit */
} niche;

/* One child's evaluation context: its new estimates wait here for the merge,
 * and so do the best genomes it evaluated (local search tries many
 * neighbours and keeps one: the others can still be the finalist that
 * replays best, so they are offered to the elite too). */
#define MA_KID_BEST 4
typedef struct kid_ctx {
    struct search *s;
    cache_entry *fresh;             /* off: into fpool */
    int nfresh, capfresh;
    split_pool fpool;               /* the fresh estimates' splits */
    genome best[MA_KID_BEST];       /* sorted by fit, distinct; allocated with the search */
    int nbest;
    enc_split_memo *smemo;          /* the last placements' candidate splits (encoding.h) */
} kid_ctx;

typedef struct search {
    const enc_problem *pr;
    const planner_opts *o;
    const memetic_cfg *cfg;
    objective obj;             /* estimate basis */
    int P, lambda, nth;
    bool par;                       /* parallel children (worth it on big instances) */
    int ls_moves;                   /* LS3/LS4 candidates per call */
    bool ls_light;                  /* big instances: LS only for new bests (and rarely) */
    genome *pop, *kids, *scratch;   /* P, lambda, 2 * lambda */
    gsl_rng **rng;                  /* lambda */
    kid_ctx *kc;                    /* lambda */
    eval_cache cache;               /* what this search estimated (its evaluations) */
    ma_store *store;                /* cfg->shared, or own_store */
    eval_cache *slot;               /* store's entries for this problem (NULL: none) */
    ma_store own_store;
    genome *elite;                  /* MA_ELITE best distinct by estimate, sorted */
    int nelite;
    genome *seeds;                  /* the deterministic seeds, as evaluated (finalists too) */
    int nseeds;
    niche *niches;                  /* per shape, in the order first met */
    int nniches, capniches;
    int keep_d;                     /* > 0: a niche search, every genome has keep_d pipelines */
    pareto_archive *arch;           /* pareto only */
    long evals;                     /* estimator calls */
    int gen;                        /* generations so far, all phases */
    double t0, deadline;            /* deadline 0 = none */
    double last_print;
    const char *stopped;            /* why the last phase ended */
} search;

/* Progress of the stagnation rule, kept across calls by the island model
 * (which evolves an island a few generations at a time). */
typedef struct stall_state {
    double best;
    int stall, restarts;
} stall_state;

typedef struct budget {
    int gens;            /* 0 = unlimited (time-bound) */
    double secs;         /* 0 = none */
} budget;

double ma_now_s(void);
unsigned long ma_stream_seed(uint64_t seed, int gen, int idx);
void ma_keep_best(genome *best, int *n, int cap, const genome *g, int N);
/* Stable insertion sorts by fit: of the structs (their arrays move with
 * them), of pointers. */
void ma_sort_by_fit(genome *g, int n);
void ma_sort_ptrs_by_fit(const genome **g, int n);
/* Shape niches (memetic_niches.c): g offered to its shape's niche; the
 * niche searches (default stopping rule, full planner only); the niches'
 * best genomes as finalists (pointers into s, sorted by fit, at most max);
 * re-scoring them. */
void ma_niche_offer(search *s, const genome *g);
int ma_niche_searches(search *s);
int ma_niche_finalists(const search *s, const genome **out, int max);
void ma_niches_rescore(search *s); /* the objective changed (phases) */
void ma_niches_free(search *s);
void ma_eval_genome(void *vctx, genome *g);
int ma_merge_fresh(search *s, int n);
void ma_rescore(search *s, genome *g, int n);
void ma_elite_rescore(search *s);
int ma_survive(search *s, int nkids);
bool ma_should_stop(const search *s);
void ma_progress(search *s, int gen_limit, bool force);
void ma_archive_kids(search *s, genome *g, int n);
int ma_evolve_from(search *s, int gens, double phase_deadline, stall_state *ss);
int ma_evolve(search *s, int gens, double phase_deadline);
int ma_seed_population(search *s, const genome *ref);
void ma_search_free(search *s);
int ma_search_init(search *s, const enc_problem *pr, const planner_opts *o,
    const memetic_cfg *cfg, const objective *obj);
int ma_pick_final(const search *s, const objective *sobj, enc_final *best, gt_err *e);
budget ma_share(const planner_opts *o, double frac);
void ma_fill_stats(const search *s, const enc_final *f, planner_stats *st);
int ma_prepare(const topology *t, const job *j, const memetic_cfg *cfg, const char *objtext,
    enc_problem *pr, objective *obj, genome *ref, gt_err *e);
int ma_run_phase(search *s, budget b);
/* Whether planner cfg runs the ablations' searches as finalists (the full
 * planner, objectives time, energy, carbon, cost), and running them: each
 * ablation's search (CONFIGS of memetic.c, c's seed plans, o's options; with
 * a time budget its share), whose plan replaces *out when it replays
 * better. -1 only when out of memory. */
bool ma_runs_ablations(const memetic_cfg *cfg, const planner_opts *o);
int ma_finalists(const topology *t, const job *j, const planner_opts *o, const memetic_cfg *c,
                 plan *out, planner_stats *st);
int ma_ablation_finalists(const topology *t, const job *j, const planner_opts *o,
                          const memetic_cfg *c, plan *out, planner_stats *st);

#endif
