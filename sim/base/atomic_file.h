/* atomic_file.h — every output file is written whole or not at all.
 *
 * atomic_write(path, fn, ctx, e) hands `fn` a stream and applies these rules
 * (docs/robustness.md, "Outputs"):
 *
 *   "-"                 standard output, written directly (no atomicity).
 *   a regular file      written to a temporary file made by mkstemp (O_EXCL,
 *   or a new name       mode 0600) in the target's own directory, given the
 *                       target's mode (a new file: 0666 minus the umask),
 *                       then renamed over the target. On any failure, or a
 *                       signal handled with atomic_cleanup_on_signal(), the
 *                       previous file stays intact and no temporary is left.
 *   a symlink           written THROUGH: the rules apply to the file it
 *                       points to (the link itself stays a link); a dangling
 *                       link is refused.
 *   a device, FIFO or   written directly, without a temporary or rename
 *   socket              (/dev/null, /dev/stdout, a pipe, /dev/full -> ENOSPC).
 *   a directory         refused: "is a directory".
 *   a read-only file    refused, even for root (the mode bits are checked,
 *                       not only access(2)): "read-only file".
 *
 * A failed write names the path and the system's reason (strerror), e.g.
 * "out.json: write failed: No space left on device". */
#ifndef GT_ATOMIC_FILE_H
#define GT_ATOMIC_FILE_H

#include <stdio.h>
#include "sim/base/error.h"

typedef int (*atomic_writer)(FILE *fp, void *ctx);

int atomic_write(const char *path, atomic_writer fn, void *ctx, gt_err *e);

/* Remove a temporary file left by an interrupted atomic_write (called from
 * signal handlers: async-signal-safe). */
void atomic_cleanup_on_signal(void);

#endif
