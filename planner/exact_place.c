/* exact_place.c — the exact referee's store of generated placements
 * (exact_space.h): each placement (shape and node class per cell) once,
 * found again by an open-addressing hash of its cells, with its bound and
 * its units not opened yet. */
#include <stdlib.h>
#include <string.h>

#include "exact_space.h"
#include "sim/base/word_hash.h"

static unsigned long hash_cells(int S, int D, const int *c)
{
    uint64_t h = WORD_HASH_FNV_BASIS ^ (uint64_t)(S * 1000 + D);
    for (int i = 0; i < S * D; i++)
        h = word_hash_fnv(h, (uint64_t)c[i]);
    return (unsigned long)h;
}

static bool same_place(const exact_space *sp, int p, int S, int D, const int *c)
{
    return sp->pS[p] == S && sp->pD[p] == D &&
           !memcmp(&sp->cls[sp->poff[p]], c, sizeof(int) * (size_t)(S * D));
}

static int rehash(exact_space *sp, long cap)
{
    int *h = calloc((size_t)cap, sizeof *h);
    if (!h)
        return -1;
    for (int p = 0; p < sp->nplace; p++) {
        unsigned long k = hash_cells(sp->pS[p], sp->pD[p], &sp->cls[sp->poff[p]]) % (unsigned long)cap;
        while (h[k])
            k = (k + 1) % (unsigned long)cap;
        h[k] = p + 1;
    }
    free(sp->hash);
    sp->hash = h;
    sp->caphash = cap;
    return 0;
}

int exact_place_add(exact_space *sp, int S, int D, const int *c, obj_metrics lb)
{
    if (2 * (long)(sp->nplace + 1) > sp->caphash &&
        rehash(sp, sp->caphash ? 2 * sp->caphash : 4096))
        return -1;
    unsigned long k = hash_cells(S, D, c) % (unsigned long)sp->caphash;
    while (sp->hash[k]) {
        if (same_place(sp, sp->hash[k] - 1, S, D, c))
            return sp->hash[k] - 1;
        k = (k + 1) % (unsigned long)sp->caphash;
    }
    long cells = (long)S * D;
    if (sp->ncls + cells > EXACT_MAX_CELLS)
        sp->cells_full = true;
    if (sp->nplace >= EXACT_MAX_PLACEMENTS || sp->cells_full)
        return -2;
    if (sp->nplace == sp->capplace) {
        long cap = sp->capplace, c1 = cap, c2 = cap, c3 = cap, c4 = cap, c5 = cap, c6 = cap;
        if (exact_grow((void **)&sp->pS, &c1, cap + 1, sizeof(int)) ||
            exact_grow((void **)&sp->pD, &c2, cap + 1, sizeof(int)) ||
            exact_grow((void **)&sp->poff, &c3, cap + 1, sizeof(long)) ||
            exact_grow((void **)&sp->plb, &c4, cap + 1, sizeof *sp->plb) ||
            exact_grow((void **)&sp->pfirst, &c5, cap + 1, sizeof(long) * ENC_MAX_B) ||
            exact_grow((void **)&sp->pnpts, &c6, cap + 1, ENC_MAX_B))
            return -1;
        sp->capplace = (int)c1;
    }
    if (exact_grow((void **)&sp->cls, &sp->capcls, sp->ncls + cells, sizeof(int)))
        return -1;
    int p = sp->nplace++;
    sp->pS[p] = S;
    sp->pD[p] = D;
    sp->poff[p] = sp->ncls;
    sp->plb[p] = lb;
    for (int bi = 0; bi < ENC_MAX_B; bi++) {
        sp->pfirst[(long)p * ENC_MAX_B + bi] = -1;
        sp->pnpts[(long)p * ENC_MAX_B + bi] = 0;
    }
    memcpy(&sp->cls[sp->ncls], c, sizeof(int) * (size_t)cells);
    sp->ncls += cells;
    sp->hash[k] = p + 1;
    return p;
}
