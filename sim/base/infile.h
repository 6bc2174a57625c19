/* infile.h — opening an input file safely, the one way every reader does it
 * (docs/robustness.md, "Inputs").
 *
 * infile_open() refuses what is not a regular file before reading a byte
 * ("is a directory", "not a regular file (character device)": /dev/zero,
 * a FIFO, a socket), refuses a file over the size cap, and skips a UTF-8 byte
 * order mark. infile_getline() reads one line with a length cap, and
 * infile_read_all() a whole file with the size cap, counting bytes as they
 * come (a file that grows while read is still stopped at the cap). Each error
 * names the file and the cap that was hit. */
#ifndef GT_INFILE_H
#define GT_INFILE_H

#include <stddef.h>
#include <stdio.h>
#include "sim/base/error.h"

#define INFILE_MAX_BYTES ((size_t)256 << 20)   /* any input file: 256 MiB */
#define INFILE_MAX_LINE ((size_t)1 << 20)      /* one line of a CSV/trace file: 1 MiB */

/* Open `path` for reading (binary); NULL with the reason in e. */
FILE *infile_open(const char *path, size_t max_bytes, gt_err *e);

/* Read the whole file (NUL-terminated copy in *buf, length in *len).
 * Returns 0, -1 on error, or 1 when missing_ok and the file does not exist. */
int infile_read_all(const char *path, size_t max_bytes, int missing_ok, char **buf,
                    size_t *len, gt_err *e);

/* One line without its '\n' (and '\r') into *buf (grown, NUL-terminated).
 * Returns 1 = a line, 0 = end of file, -1 = error (line over max_line bytes,
 * more than INFILE_MAX_BYTES read in all, read error, out of memory) with the
 * message naming path and `lineno`. *total counts the bytes read so far;
 * *nul is set when the line held a NUL byte. */
int infile_getline(FILE *fp, const char *path, int lineno, char **buf, size_t *cap,
                   size_t max_line, size_t *total, int *nul, gt_err *e);

#endif
