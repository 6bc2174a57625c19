/* grow.h — buffers kept between uses: grown when too small, never shrunk,
 * so a caller that fills them over and over stops allocating once they
 * reach their largest size (the estimator's evaluations, for one). */
#ifndef GT_GROW_H
#define GT_GROW_H

#include <stdlib.h>

/* Makes *buf hold at least n (>= 1) elements of size bytes, *cap counting
 * the elements it holds; 0, or -1 when out of memory (*buf kept then). */
static inline int gt_grow(void *buf, size_t *cap, size_t n, size_t size)
{
    void **b = (void **)buf;
    n = n > 0 ? n : 1;
    if (n <= *cap)
        return 0;
    void *x = realloc(*b, size * n);
    if (!x)
        return -1;
    *b = x;
    *cap = n;
    return 0;
}

#endif
