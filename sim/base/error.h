/* error.h — the one error type of GeoTrain's library code.
 *
 * Library functions never print or exit: they fill a gt_err with one line that
 * names the file, line/column, field, value and what was expected, and return
 * a negative code. The command layer prints it and picks the exit code. */
#ifndef GT_ERROR_H
#define GT_ERROR_H

#include <stdarg.h>

typedef struct gt_err {
    char msg[1024];
} gt_err;

/* Format a message into e (if e is not NULL) and return -1, so that callers
 * can write `return gt_fail(e, "...")`. */
int gt_fail(gt_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix an existing message with "what: " (used to add context). */
int gt_prefix(gt_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
