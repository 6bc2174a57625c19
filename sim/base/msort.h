/* msort.h — a stable merge sort into a caller's scratch buffer: qsort's
 * order for a comparator that is a total order, without the allocation
 * glibc's qsort makes for arrays over a kilobyte (the estimator sorts on
 * every evaluation and must not allocate). */
#ifndef GT_MSORT_H
#define GT_MSORT_H

#include <stddef.h>
#include <string.h>

/* Sorts base[0..n) of elements of size bytes by cmp; tmp holds n elements. */
void gt_msort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
              void *tmp);

/* The same for a few elements at a time (the estimator sorts many short
 * runs): an insertion sort inline, where the compiler can inline cmp and
 * the element moves, for n <= GT_SORT_SMALL; gt_msort above. Both are
 * stable, so the order is gt_msort's. */
#define GT_SORT_SMALL 16
static inline void gt_sort_small(void *base, size_t n, size_t size,
                                 int (*cmp)(const void *, const void *), void *tmp)
{
    if (n > GT_SORT_SMALL) {
        gt_msort(base, n, size, cmp, tmp);
        return;
    }
    char *a = base, *hold = tmp;
    for (size_t i = 1; i < n; i++) {
        if (cmp(a + (i - 1) * size, a + i * size) <= 0)
            continue;
        memcpy(hold, a + i * size, size);
        size_t k = i;
        for (; k > 0 && cmp(a + (k - 1) * size, hold) > 0; k--)
            memcpy(a + k * size, a + (k - 1) * size, size);
        memcpy(a + k * size, hold, size);
    }
}

#endif
