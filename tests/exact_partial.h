/* exact_partial.h — for the exact referee's tests (tests/test_exact*.c):
 * what a placement whose first rows are placed still has to place. */
#ifndef GT_TESTS_EXACT_PARTIAL_H
#define GT_TESTS_EXACT_PARTIAL_H

#include <string.h>

#include "planner/exact_space.h"

/* With rows [0, rows) of the S-wide grid perm placed: room[c] the free GPUs
 * of each node class, left[g] the GPUs of each group still to place. */
static inline void exact_partial_left(const exact_space *sp, const int *perm, int S, int D,
                                      int rows, int *left, int *room)
{
    const enc_problem *pr = sp->pr;
    memcpy(room, pr->class_size, sizeof(int) * (size_t)pr->nclass);
    memset(left, 0, sizeof(int) * (size_t)sp->ngroup);
    for (int x = 0; x < S * D; x++) {
        int c = pr->cls[perm[x]];
        if (x < rows * S)
            room[c]--;
        else
            left[sp->group_of[c]]++;
    }
}

#endif
