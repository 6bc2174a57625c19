/* coll_shape.h — what a sync group's collective depends on beyond its
 * sizes, with the GPUs themselves left out (the collective cache's second
 * key, coll_cache.c).
 *
 * collective_emit orders the members by (site, GPU) and lays out flows
 * between those places; pricing a flow reads nothing but its path's
 * latency, lone rate and resources (key and capacity), and the WAN sums
 * read whether its ends' sites differ. So two groups (same sync kind,
 * sharding, bytes, weights and passes) whose members, in that order, have
 * the same site pattern and, for every ordered pair of places, the same
 * path figures over resources that coincide in the same way, have the same
 * collective up to the names of the resources: the same estimate, the same
 * WAN bytes, the same loads in the same order with the keys renamed.
 *
 * The shape is that pattern written out as words: per place its site's
 * rank among the group's sites; per ordered pair its path's latency and
 * rate bits, resource count, and per resource a local id (first seen,
 * pairs in order) and its capacity's bits. Alongside, each local id's key
 * for this group, so a stored collective's loads can be renamed. */
#ifndef GT_COLL_SHAPE_H
#define GT_COLL_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/models/path_memo.h"
#include "sim/models/workload.h"

/* Groups of more members are not given a shape (their pairs grow as n^2). */
#define COLL_SHAPE_MAX_MEMBERS 16

typedef struct coll_shape {
    uint64_t *w;           /* the shape's words */
    int nw;
    uint64_t hash;         /* of the words */
    size_t cap_w;
    long *keys;            /* local id -> this group's resource key */
    int nkeys;
    size_t cap_keys;
    int *id, *stamp;       /* per resource key (below ndense): its local id while stamp holds */
    size_t cap_id[2];
    long ndense;
    int now;
} coll_shape;

/* The shape of group sg (members' GPUs through w) into s, with paths from
 * pm; 0, 1 when there is none (no memo, too many members, a resource key
 * not below ndense), -1 when out of memory. */
int coll_shape_of(coll_shape *s, const topology *t, path_memo *pm, long ndense,
                  const workload *w, const sync_group *sg);
/* The local id of resource key in the last shape made (-1: not on it). */
int coll_shape_id(const coll_shape *s, long key);
void coll_shape_free(coll_shape *s);

#endif
