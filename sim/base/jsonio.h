/* jsonio.h — reading JSON input files with errors that point at file:line:col.
 *
 * Parsing is Jansson's (which reports line and column of syntax errors). Jansson
 * does not remember where a value sat in the text, so semantic errors ("bw must
 * be > 0") are located by jdoc_locate(), which walks the original text along a
 * path such as "links[0].gbps" (it only skips over values, it builds nothing).
 *
 * Getters validate type and range and reject unknown keys, so every reader in
 * sim/ reports bad input the same way:
 *   topologies/x.json:14:9: links[0].gbps: must be > 0 (got -1) */
#ifndef GT_JSONIO_H
#define GT_JSONIO_H

#include <jansson.h>
#include <stddef.h>
#include "sim/base/error.h"

typedef struct jdoc {
    json_t *root;
    char *text;
    size_t len;
    const char *path;   /* file name as given (not owned) */
} jdoc;

/* Read and parse a file; the root must be an object. */
int jdoc_load(jdoc *d, const char *path, gt_err *e);
/* Parse a buffer (for tests and fuzzers); `name` stands in for the path. */
int jdoc_parse(jdoc *d, const char *name, const char *buf, size_t len, gt_err *e);
void jdoc_free(jdoc *d);

/* Line and column (1-based) of the value at `jpath` ("a.b[3].c"); 0 if unknown. */
void jdoc_locate(const jdoc *d, const char *jpath, int *line, int *col);

/* "file:line:col: jpath: message" and return -1. */
int jdoc_fail(const jdoc *d, gt_err *e, const char *jpath, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Reject keys of `obj` not in the NULL-terminated list `allowed`. */
int jdoc_keys(const jdoc *d, json_t *obj, const char *objpath,
              const char *const *allowed, gt_err *e);

/* Typed getters. `required` = 0 lets a missing key give `dflt`.
 * Numbers must be finite and within [lo, hi]. */
int jdoc_num(const jdoc *d, json_t *obj, const char *objpath, const char *key,
             int required, double lo, double hi, double dflt, double *out, gt_err *e);
int jdoc_int(const jdoc *d, json_t *obj, const char *objpath, const char *key,
             int required, long lo, long hi, long dflt, long *out, gt_err *e);
/* Copies the string into out[cap]; too long or empty is an error. */
int jdoc_str(const jdoc *d, json_t *obj, const char *objpath, const char *key,
             int required, const char *dflt, char *out, size_t cap, gt_err *e);

/* Write `root` to `path` atomically (temp file + rename), pretty-printed with
 * sorted-as-inserted keys. */
int json_write_atomic(json_t *root, const char *path, gt_err *e);

#endif
