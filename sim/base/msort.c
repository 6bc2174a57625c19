/* msort.c — stable merge sort with caller scratch (msort.h). */
#include "sim/base/msort.h"

#include <string.h>

/* Short runs by insertion (few compares on nearly sorted input: the
 * estimator's loads arrive mostly in order), then merged pairwise. */
#define RUN 8

static void insertion(char *a, size_t n, size_t size, int (*cmp)(const void *, const void *),
                      char *hold)
{
    for (size_t i = 1; i < n; i++) {
        if (cmp(a + (i - 1) * size, a + i * size) <= 0)
            continue;
        memcpy(hold, a + i * size, size);
        size_t k = i;
        while (k > 0 && cmp(a + (k - 1) * size, hold) > 0) {
            memcpy(a + k * size, a + (k - 1) * size, size);
            k--;
        }
        memcpy(a + k * size, hold, size);
    }
}

void gt_msort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
              void *tmp)
{
    if (n < 2)
        return;
    char *a = base, *b = tmp;
    /* the first element of tmp holds the insertion's element in motion */
    for (size_t i = 0; i < n; i += RUN)
        insertion(a + i * size, n - i < RUN ? n - i : RUN, size, cmp, b);
    char *src = a, *dst = b;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, k = mid, o = lo;
            if (mid == hi || cmp(src + (mid - 1) * size, src + mid * size) <= 0) {
                memcpy(dst + lo * size, src + lo * size, (hi - lo) * size);
                continue;
            }
            while (i < mid && k < hi)
                if (cmp(src + k * size, src + i * size) < 0)
                    memcpy(dst + o++ * size, src + k++ * size, size);
                else
                    memcpy(dst + o++ * size, src + i++ * size, size);
            memcpy(dst + o * size, src + i * size, (mid - i) * size);
            o += mid - i;
            memcpy(dst + o * size, src + k * size, (hi - k) * size);
        }
        char *x = src;
        src = dst;
        dst = x;
    }
    if (src != a)
        memcpy(a, src, n * size);
}
