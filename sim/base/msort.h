/* msort.h — a stable merge sort into a caller's scratch buffer: qsort's
 * order for a comparator that is a total order, without the allocation
 * glibc's qsort makes for arrays over a kilobyte (the estimator sorts on
 * every evaluation and must not allocate). */
#ifndef GT_MSORT_H
#define GT_MSORT_H

#include <stddef.h>

/* Sorts base[0..n) of elements of size bytes by cmp; tmp holds n elements. */
void gt_msort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
              void *tmp);

#endif
