/* testutil.h — small helpers shared by the cmocka tests (header-only).
 * Tests run from the repository root (tests/run.sh). */
#ifndef GT_TESTUTIL_H
#define GT_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define FIXTURES "../shared/acceptance/fixtures"

/* Relative difference |a-b| / max(|a|,|b|,tiny). */
static inline double rel_diff(double a, double b)
{
    double m = a < 0 ? -a : a, n = b < 0 ? -b : b;
    double d = a - b;
    if (d < 0)
        d = -d;
    return d / ((m > n ? m : n) + 1e-300);
}

/* Write `text` to a fresh temporary file; returns its path (static buffer
 * per call site is not needed: caller passes out[cap]). */
static inline void write_temp(const char *text, char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/gt-test-XXXXXX");
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

#endif
