/* memetic_cache.h — the memetic planner's estimates already made (private to
 * planner/memetic*.c): a search's own cache (which genomes it has estimated:
 * its evaluation count) and the store that one memetic run's searches share
 * (the full search and the ablations' searches run inside it, memetic.c),
 * which also keeps each genome's decoded split, so that a genome met again,
 * by the same search or a later one, is neither estimated nor decoded again.
 *
 * A store entry is valid for every search whose problem decodes a genome
 * the same way: the same tensor-parallel view and the same cut rule (the
 * all-GPUs ablation only admits fewer shapes, so it shares the full
 * search's entries). Estimates are a function of the decoded genome and the
 * problem alone, so what a search finds in the store is what it would have
 * computed: its plans, evaluation counts and notes do not change. A search
 * with another cut rule (memetic-nols, memetic-uniform) still decodes a
 * genome it meets, but takes the estimate of an entry whose saved split is
 * the one it decoded: the same plan. Every
 * table is written only between generations, in child order (determinism). */
#ifndef GT_MEMETIC_CACHE_H
#define GT_MEMETIC_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "encoding.h"
#include "objective.h"

typedef struct cache_entry {
    uint64_t k1, k2;          /* the canonical genome's hashes; k2 is never 0 (empty slot) */
    obj_metrics m;
    signed char st;           /* 1 feasible, -1 the estimator refused it */
    signed char split;        /* the cut rule its decoding kept (genome.split) */
    signed char reused;       /* fresh: 1 from the store (same genome, or the same plan
                                 from another cut rule's search), 0 estimated */
    int32_t off;              /* its split (first[S*D], then mb[D]) in the owner's pool;
                                 -1: not kept */
} cache_entry;

typedef struct eval_cache {
    cache_entry *tab;
    size_t cap, n;            /* cap: a power of two */
} eval_cache;

/* The entry of (k1, k2), or NULL. */
const cache_entry *ma_cache_find(const eval_cache *c, uint64_t k1, uint64_t k2);
/* Insert x unless its key is there. -1 when out of memory. */
int ma_cache_put(eval_cache *c, const cache_entry *x);
/* The cache key of a canonical genome. */
uint64_t ma_cache_key2(const genome *g);

/* Splits kept: ints appended to a pool, up to a fixed count (a count, not a
 * time: the same entries keep their split on every machine). */
typedef struct split_pool {
    int *v;
    size_t n, cap, limit;
} split_pool;

/* Append g's split (2 + S*D + D ints); its offset, or -1 when the pool is full. */
int32_t ma_split_save(split_pool *p, const genome *g);
/* g (canonical, undecoded) as enc_decode_rule(x->split) decodes it, from the
 * split saved at x->off of p. false when x has none (decode it instead). */
bool ma_split_restore(const split_pool *p, const cache_entry *x, genome *g);

#define MA_STORE_SLOTS 16      /* (view, cut rule) pairs of one run: 4 degrees x 3 rules */
#define MA_STORE_INTS (1u << 24) /* split ints kept per store (64 MiB) */

typedef struct ma_store_slot {
    int tp;                   /* tensor-parallel degree of the view (1: the GPUs) */
    enc_cut_rule cuts;
    eval_cache c;
} ma_store_slot;

typedef struct ma_store {
    ma_store_slot slot[MA_STORE_SLOTS];
    int nslots;
    split_pool pool;
    long reused;              /* estimates its searches took from it instead of making */
} ma_store;

void ma_store_init(ma_store *st);
void ma_store_free(ma_store *st);
/* The slot of problem pr's view and cut rule (made on first use); NULL when
 * all slots are taken (the search then shares nothing). */
eval_cache *ma_store_slot_of(ma_store *st, const enc_problem *pr);
/* Keep x with the split in `from` at x->off (copied into the store's pool),
 * unless its key is already in the slot. -1 when out of memory. */
int ma_store_put(ma_store *st, eval_cache *slot, const cache_entry *x, const split_pool *from);
/* An entry another cut rule's search made (same view) for the same
 * canonical genome decoded to the same split as g: the same plan, so the
 * same estimate. NULL when there is none. */
const cache_entry *ma_store_same_plan(const ma_store *st, const enc_problem *pr, const genome *g);

#endif
