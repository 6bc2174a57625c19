/* atomic_file.h — every output file is written whole or not at all.
 *
 * atomic_write() writes through a callback into "<path>.tmp.<pid>" in the same
 * folder, flushes, and renames over `path`; on any failure (or a signal that
 * ends the process before the rename) the previous file stays intact and the
 * temporary file is removed. "-" means standard output (no atomicity). */
#ifndef GT_ATOMIC_FILE_H
#define GT_ATOMIC_FILE_H

#include <stdio.h>
#include "error.h"

typedef int (*atomic_writer)(FILE *fp, void *ctx);

int atomic_write(const char *path, atomic_writer fn, void *ctx, gt_err *e);

/* Remove a temporary file left by an interrupted atomic_write (called from
 * signal handlers: async-signal-safe). */
void atomic_cleanup_on_signal(void);

#endif
