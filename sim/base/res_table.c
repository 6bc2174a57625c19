/* res_table.c — key -> dense index map for per-resource sums (res_table.h). */
#include "sim/base/res_table.h"

#include <stdint.h>
#include <stdlib.h>

#include "sim/base/grow.h"

int res_table_init(res_table *h, int n)
{
    int cap = 8;
    while (cap < 2 * n)
        cap *= 2;
    h->keys = malloc(sizeof *h->keys * (size_t)cap);
    h->index = malloc(sizeof *h->index * (size_t)cap);
    h->used = malloc(sizeof *h->used * (size_t)cap);
    h->cap = cap;
    h->nused = 0;
    if (!h->keys || !h->index || !h->used) {
        res_table_free(h);
        return -1;
    }
    for (int i = 0; i < cap; i++)
        h->index[i] = -1;
    return 0;
}

void res_table_free(res_table *h)
{
    free(h->keys);
    free(h->index);
    free(h->used);
    h->keys = NULL;
    h->index = h->used = NULL;
    h->cap = h->nused = 0;
}

int res_table_index(res_table *h, long key, int next, bool *added)
{
    /* Fibonacci hashing spreads the structured keys (2g, 2g+1, ...) */
    uint64_t x = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    int mask = h->cap - 1, i = (int)(x >> 32) & mask;
    while (h->index[i] >= 0) {
        if (h->keys[i] == key) {
            *added = false;
            return h->index[i];
        }
        i = (i + 1) & mask;
    }
    h->keys[i] = key;
    h->index[i] = next;
    h->used[h->nused++] = i;
    *added = true;
    return next;
}

void res_table_clear(res_table *h)
{
    for (int k = 0; k < h->nused; k++)
        h->index[h->used[k]] = -1;
    h->nused = 0;
}

int res_table_reserve(res_table *h, int *room, int n)
{
    if (n <= *room) {
        res_table_clear(h);
        return 0;
    }
    res_table_free(h);
    *room = 0;
    if (res_table_init(h, n))
        return -1;
    *room = n;
    return 0;
}

int res_dense_grow(int **dense, size_t *cap, long n)
{
    size_t old = *cap;
    if (gt_grow(dense, cap, (size_t)(n > 0 ? n : 1), sizeof **dense))
        return -1;
    for (size_t i = old; i < *cap; i++)
        (*dense)[i] = -1;
    return 0;
}
