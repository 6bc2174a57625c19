/* hugepage.h — large arrays on transparent huge pages (2 MiB) where the
 * system offers them on request (Linux, THP "madvise" or "always").
 *
 * A replay fills arrays of tens of MB once (the workload's ops, the
 * network's flow records, the replay's op times); with 4 KiB pages their
 * first touch is one page fault per 4 KiB — about 12,500 faults and a
 * quarter of the CPU of a 1,024-GPU run (docs/network-model.md). Asking
 * for huge pages makes it a few dozen. Only the 2 MiB-aligned interior of
 * an array of at least GT_HUGE_MIN bytes is advised, so no page beyond the
 * array is ever backed; the advice changes no value, and where it is not
 * available (or refused) the array is used as it is. */
#ifndef GT_HUGEPAGE_H
#define GT_HUGEPAGE_H

#include <stddef.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define GT_HUGE_PAGE ((size_t)2 << 20)
#define GT_HUGE_MIN ((size_t)4 << 20)

static inline void gt_advise_huge(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (!p || bytes < GT_HUGE_MIN)
        return;
    uintptr_t lo = ((uintptr_t)p + GT_HUGE_PAGE - 1) & ~(uintptr_t)(GT_HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(GT_HUGE_PAGE - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

#endif
