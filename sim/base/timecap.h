/* timecap.h — the one bound on simulated time, and arithmetic that keeps
 * every int64 nanosecond value under it (docs/robustness.md, "Arithmetic").
 *
 * GT_TIME_CAP_NS = 1e18 ns (31.7 years). A duration that would be longer
 * (a link at 1e-9 Gbps, a 1 KB TCP window over a 1000 s RTT) is represented
 * as exactly GT_TIME_CAP_NS by cost_ns(), and sums and products of durations
 * saturate at the cap with t_add()/t_mul(). Because both operands of any sum
 * are <= 1e18, a sum never exceeds 2e18 < INT64_MAX (9.2e18) even before it
 * is clamped, so nothing overflows. A value that reaches the cap is not a
 * result: the simulator refuses a run whose clock reaches it and the
 * planners rank such a plan last (its estimate is the cap), and a plan whose
 * estimate is at the cap is refused. Energy is double J = W x time, so it is
 * bounded once time is (no J value comes from an overflowed time). */
#ifndef GT_TIMECAP_H
#define GT_TIMECAP_H

#include <math.h>
#include <stdint.h>
#include "sim/base/error.h"

#define GT_TIME_CAP_NS INT64_C(1000000000000000000)
#define GT_TIME_CAP_YEARS 31.7

/* Seconds -> integer nanoseconds, the DES clock (rounded to nearest); a
 * duration of GT_TIME_CAP_NS or more (or NaN) gives GT_TIME_CAP_NS. Here, not
 * in the cost model, because readers (plan clocks, traces) convert too. */
static inline int64_t cost_ns(double seconds)
{
    double ns = seconds * 1e9;
    if (!(ns < (double)GT_TIME_CAP_NS)) /* also NaN: longer than the cap */
        return GT_TIME_CAP_NS;
    if (!(ns > -(double)GT_TIME_CAP_NS))
        return -GT_TIME_CAP_NS;
    /* llround's result (half away from zero), inline: the estimator rounds
     * thousands of terms per evaluation and the libm call was a tenth of
     * it. Under the cap (< 2^60) the truncation is exact in an int64, and
     * ns - i is exact (i is ns's integer part), so the fraction decides. */
    int64_t i = (int64_t)ns;
    double frac = ns - (double)i;
    return i + (frac >= 0.5) - (frac <= -0.5);
}

static inline int64_t t_add(int64_t a, int64_t b)
{
    int64_t s = a + b; /* a, b in [0, cap]: at most 2e18, no overflow */
    return s < GT_TIME_CAP_NS ? s : GT_TIME_CAP_NS;
}

/* n copies of a duration x (n >= 0, x in [0, cap]). */
static inline int64_t t_mul(int64_t n, int64_t x)
{
    if (n <= 0 || x <= 0)
        return 0;
    return x > GT_TIME_CAP_NS / n ? GT_TIME_CAP_NS : n * x;
}

static inline int t_over(int64_t t)
{
    return t >= GT_TIME_CAP_NS;
}

/* The one error for a time at the cap, naming the topology file; `who` =
 * "the simulated clock", ... */
static inline int t_cap_fail(gt_err *e, const char *topo_path, const char *who)
{
    return gt_fail(e, "%s: %s reached %.1f years (the time cap): the inputs are outside "
                      "the accepted ranges (a link or TCP window too slow for the data; "
                      "docs/robustness.md)", topo_path, who, GT_TIME_CAP_YEARS);
}

#endif
