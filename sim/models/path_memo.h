/* path_memo.h — the paths between GPU pairs of one topology, each worked out
 * once (path.h) and then read from a table: the estimator's collective
 * pricing and transfer bound ask for the same few pairs on every
 * evaluation. An entry holds exactly what path_lone, path_latency and
 * path_resources give for its pair, so a reader gets the same bits.
 *
 * The memo does not watch the topology: its owner resets it whenever the
 * topology's content may have changed (the estimator does so when its
 * collective cache is dropped, est_plan.c). Topologies of more than
 * PATH_MEMO_MAX_GPUS GPUs get no table; path_memo_get then returns NULL and
 * the caller asks path.h itself. */
#ifndef GT_PATH_MEMO_H
#define GT_PATH_MEMO_H

#include "sim/models/path.h"

#define PATH_MEMO_MAX_GPUS 256

typedef struct path_entry {
    unsigned gen;         /* the memo's generation it was filled in (0: never) */
    int nres;
    double lat, rate;     /* path_lone's */
    path_res res[PATH_MAX_RES];
} path_entry;

typedef struct path_memo {
    path_entry *e;        /* ngpus x ngpus, by (source, destination) */
    size_t cap;
    int ngpus;            /* 0: no table */
    unsigned gen;
} path_memo;

/* Forgets every entry and sizes the table for t; 0, or -1 when out of
 * memory (the memo is then empty: path_memo_get returns NULL). */
int path_memo_reset(path_memo *m, const topology *t);
/* The path from GPU a to GPU b of the topology m was reset for (filled on
 * first use); NULL when m is NULL or has no table. */
static inline const path_entry *path_memo_get(path_memo *m, const topology *t, int a, int b)
{
    if (!m || !m->ngpus)
        return NULL;
    path_entry *x = &m->e[(size_t)a * (size_t)m->ngpus + (size_t)b];
    if (x->gen != m->gen) {
        path_lone(t, a, b, &x->lat, &x->rate);
        x->nres = path_resources(t, a, b, x->res);
        x->gen = m->gen;
    }
    return x;
}
void path_memo_free(path_memo *m);

#endif
