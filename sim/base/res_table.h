/* res_table.h — an open-addressing map from a resource key (a long, e.g.
 * path_resources' keys) to a small dense index, so loads can be summed
 * per shared resource in one pass instead of sorting them. The estimator
 * does this for every sync step of every plan it prices, which is why a
 * sort there dominated its profile. */
#ifndef GT_RES_TABLE_H
#define GT_RES_TABLE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct res_table {
    long *keys;
    int *index;         /* -1: empty slot */
    int *used;          /* the slots in use, for a cheap clear */
    int nused, cap;     /* cap: a power of two, at least twice the keys */
} res_table;

/* Room for up to n distinct keys. Returns 0, or -1 when out of memory. */
int res_table_init(res_table *h, int n);
void res_table_free(res_table *h);
/* The index stored for key; when the key is new, stores next (and sets
 * *added) — callers pass their count of distinct keys so far. */
int res_table_index(res_table *h, long key, int next, bool *added);
/* Forget every key (keeps the memory). */
void res_table_clear(res_table *h);
/* The index of key among the n found so far (*added when new): a key
 * below ndense through the array dense (-1 for a key not seen, as the
 * caller leaves it between uses; a topology's dense resource keys, or all
 * of a small one's), any other through h. */
static inline int res_index(int *dense, long ndense, res_table *h, long key, int n, bool *added)
{
    if (key >= ndense)
        return res_table_index(h, key, n, added);
    int *d = &dense[key];
    *added = *d < 0;
    if (*added)
        *d = n;
    return *d;
}
/* *dense with room for n keys, the new ones -1 (*cap: the keys it has room
 * for, grown, never shrunk). 0, or -1 when out of memory. */
int res_dense_grow(int **dense, size_t *cap, long n);
/* h empty with room for n keys, for a caller that fills it again and again
 * (*room: the keys it has room for, 0 for a zeroed h): cleared when large
 * enough, else made anew. 0, or -1 when out of memory. */
int res_table_reserve(res_table *h, int *room, int n);

#endif
