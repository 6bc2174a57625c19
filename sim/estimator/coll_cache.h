/* coll_cache.h — what the estimator needs of one sync group's collective,
 * kept across evaluations (docs/estimator.md).
 *
 * A group's collective (collective.h) depends only on the topology, the
 * sync kind, the sharding, the group's bytes and weights and the set of its
 * members' GPUs (their order is the collective's own); a planner evaluates many plans whose groups repeat (mutations touch
 * a few stages). The cache stores, per such key, the contention-free
 * estimate, the loads per shared resource (for the cross-group bound) and
 * the bytes of each WAN flow in flow order (so the WAN byte sum is added up
 * in the op path's order). Entries are computed by the same functions as
 * without the cache, so the results are the same to the bit. A group whose
 * GPUs are new but whose shape (coll_shape.h: the site pattern and the
 * paths between its places, GPUs' names left out) was priced before takes
 * that entry with its loads moved to its own resources, which is what
 * pricing it would give. The topology
 * is recognised by content, not address (one may be freed and another
 * loaded at the same place). */
#ifndef GT_COLL_CACHE_H
#define GT_COLL_CACHE_H

#include <stdint.h>
#include "sim/models/collective.h"
#include "sim/estimator/coll_shape.h"
#include "sim/estimator/topo_digest.h"
#include "sim/base/arena.h"

typedef struct coll_entry {
    uint64_t hash;        /* first: the cache's table is rehashed by it */
    int sync, shard, n, passes;
    double bytes, weights;
    int *gpus;            /* members' GPUs, ascending (the collective depends
                             on their set only: coll_cache.c) */
    int64_t est_ns;
    coll_load *loads;
    int nloads;
    double *wan;          /* bytes of each flow that crosses sites, in flow order */
    int nwan;
} coll_entry;

typedef struct coll_cache {
    /* entries are for the topology of this digest (its sites, nodes, GPUs,
     * WAN links, GPU types, TCP settings: topo_digest.h); any other clears them */
    topo_digest topo;
    arena mem;            /* the entries' and shape records' arrays: emptied when it clears */
    coll_entry *v;
    int n, cap;
    int *slot;            /* open addressing over v: index + 1, 0 empty */
    int nslot;
    size_t bytes;         /* held by the entries */
    unsigned long gen;    /* counts the clears: while it holds, no entry moves or goes */
    coll_price_work pw;   /* collective_price_ws' arrays, for the next miss */
    int *key;             /* the group being looked up: its GPUs, ascending */
    int key_cap;
    /* The second key (coll_shape.h): an entry priced for one group serves
     * every group of the same shape, its loads renamed. */
    coll_shape sh;        /* the shape of the group being looked up */
    struct shape_rec *sr; /* one per shape priced: its words, entry, loads' local ids */
    int nsr, cap_sr;
    int *sslot;           /* open addressing over sr: index + 1, 0 empty */
    int nsslot;
    long renamed;         /* entries made by renaming a shape's (since the cache was made) */
} coll_cache;

/* Before an evaluation on t: keeps the entries when t has the content
 * they were computed for (returns 1), else drops them (0); -1 when out of
 * memory. */
int coll_cache_begin(coll_cache *cc, const topology *t);
/* The entry of group sg of w (computed and stored on a miss); NULL with e
 * set when out of memory or the collective cannot be built. */
const coll_entry *coll_cache_get(coll_cache *cc, const topology *t, const workload *w,
                                 const sync_group *sg, sync_kind sync, gt_err *e);
void coll_cache_free(coll_cache *cc);

#endif
