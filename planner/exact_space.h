/* exact_space.h — what the exact referee's files share (private to
 * planner/exact*.c): the enumerated placements with their bounds and the
 * points (placement x microbatch size x schedule) opened so far, and the
 * helpers that grow and decode them. exact_space.c owns the enumeration,
 * the bounds and the opening; exact_search.c the best-first searches;
 * exact.c the planner. */
#ifndef GT_EXACT_SPACE_H
#define GT_EXACT_SPACE_H

#include "exact.h"

#define EXACT_BATCH 16      /* points estimated per parallel batch (fixed: determinism) */
#define EXACT_OPEN 64       /* placements opened per batch */
#define EXACT_ARCHIVE 4096  /* pareto: large enough never to thin on small instances */
#define EXACT_OPEN_SHARE 0.05 /* share of placements expected to be opened (estimate) */

typedef struct xpoint {
    int place;
    signed char bi, sched;
    int res[ENC_NSYNC];     /* index into the results, -1 = not estimated yet */
    obj_metrics lb;
} xpoint;

struct exact_space {
    const enc_problem *pr;
    int threads;
    bool par;               /* parallel work: only worth it on the larger instances */
    int nplace, capplace;
    int *pS, *pD;
    long *poff;             /* placement -> offset of its classes in cls */
    int *cls;
    long ncls, capcls;
    obj_metrics *plb;       /* placement bounds */
    long *pfirst;           /* first point of an opened placement, -1 = not opened */
    signed char *pnpts;     /* its number of points */
    long opened;
    xpoint *pts;
    long npts, cappts;
    obj_metrics *res;
    signed char *res_ok;
    long nres, capres;
};

/* Grow *p (capacity *cap elements of elem bytes) to hold need; -1 when out
 * of memory. */
int exact_grow(void **p, long *cap, long need, size_t elem);
/* The genome of a placement: classes -> GPUs in index order per class. */
void exact_placement_genome(const exact_space *sp, int place, int bi, int sched, int sync,
                            genome *g, int *used);
/* Decode every (microbatch size, schedule) of the placements list[0..n) not
 * opened yet, then append their feasible points in list order. */
int exact_open_placements(exact_space *sp, const int *list, int n);

#endif
