/* jsonio.c — Jansson loading plus a locator for error positions (see jsonio.h). */
#include "sim/base/jsonio.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/atomic_file.h"
#include "sim/base/infile.h"

#define JDOC_MAX_BYTES INFILE_MAX_BYTES   /* refuse inputs over 256 MiB */

int jdoc_parse(jdoc *d, const char *name, const char *buf, size_t len, gt_err *e)
{
    memset(d, 0, sizeof *d);
    d->path = name;
    d->text = malloc(len + 1);
    if (!d->text)
        return gt_fail(e, "%s: out of memory", name);
    memcpy(d->text, buf, len);
    d->text[len] = '\0';
    d->len = len;
    if (len == 0) {
        jdoc_free(d);
        return gt_fail(e, "%s:1:1: empty file, expected a JSON object", name);
    }
    /* Jansson reads a NUL byte as the end of the text ("... expected near end
     * of file"); JSON text never holds one, so say what the input is. */
    const char *nul = memchr(d->text, '\0', len);
    if (nul) {
        int line = 1, col = 1;
        for (const char *c = d->text; c < nul; c++, col++)
            if (*c == '\n') {
                line++;
                col = 0;
            }
        gt_fail(e, "%s:%d:%d: binary data (NUL byte), expected JSON text", name, line, col);
        jdoc_free(d);
        return -1;
    }
    json_error_t je;
    d->root = json_loadb(d->text, len, JSON_REJECT_DUPLICATES, &je);
    if (!d->root) {
        /* positions are 1-based; Jansson gives column 0 for a bad first byte */
        gt_fail(e, "%s:%d:%d: invalid JSON: %s", name, je.line > 0 ? je.line : 1,
                je.column > 0 ? je.column : 1, je.text);
        jdoc_free(d);
        return -1;
    }
    if (!json_is_object(d->root)) {
        jdoc_free(d);
        return gt_fail(e, "%s:1:1: expected a JSON object at the top level", name);
    }
    return 0;
}

int jdoc_load(jdoc *d, const char *path, gt_err *e)
{
    memset(d, 0, sizeof *d);
    char *buf;
    size_t len;
    if (infile_read_all(path, JDOC_MAX_BYTES, 0, &buf, &len, e))
        return -1;
    int rc = jdoc_parse(d, path, buf, len, e);
    free(buf);
    return rc;
}

void jdoc_free(jdoc *d)
{
    if (d->root)
        json_decref(d->root);
    free(d->text);
    memset(d, 0, sizeof *d);
}

/* --- locator ------------------------------------------------------------ */

static size_t skip_ws(const char *t, size_t n, size_t i)
{
    while (i < n && isspace((unsigned char)t[i]))
        i++;
    return i;
}

static size_t skip_string(const char *t, size_t n, size_t i)
{
    /* t[i] == '"' */
    for (i++; i < n && t[i] != '"'; i++)
        if (t[i] == '\\')
            i++;
    return i < n ? i + 1 : n;
}

static size_t skip_value(const char *t, size_t n, size_t i)
{
    i = skip_ws(t, n, i);
    if (i >= n)
        return n;
    if (t[i] == '"')
        return skip_string(t, n, i);
    if (t[i] == '{' || t[i] == '[') {
        int depth = 0;
        while (i < n) {
            char c = t[i];
            if (c == '"') {
                i = skip_string(t, n, i);
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return n;
    }
    while (i < n && !strchr(",}] \t\r\n", t[i]))
        i++;
    return i;
}

/* Position of member `key` of the object starting at t[i] (or n). */
static size_t find_key(const char *t, size_t n, size_t i, const char *key, size_t klen)
{
    i = skip_ws(t, n, i);
    if (i >= n || t[i] != '{')
        return n;
    i++;
    for (;;) {
        i = skip_ws(t, n, i);
        if (i >= n || t[i] != '"')
            return n;
        size_t ks = i + 1, ke = skip_string(t, n, i) - 1;
        i = skip_ws(t, n, ke + 1);
        if (i >= n || t[i] != ':')
            return n;
        i = skip_ws(t, n, i + 1);
        if (ke - ks == klen && memcmp(t + ks, key, klen) == 0)
            return i;
        i = skip_ws(t, n, skip_value(t, n, i));
        if (i >= n || t[i] != ',')
            return n;
        i++;
    }
}

static size_t find_index(const char *t, size_t n, size_t i, long idx)
{
    i = skip_ws(t, n, i);
    if (i >= n || t[i] != '[')
        return n;
    i = skip_ws(t, n, i + 1);
    for (long k = 0; k < idx; k++) {
        i = skip_ws(t, n, skip_value(t, n, i));
        if (i >= n || t[i] != ',')
            return n;
        i = skip_ws(t, n, i + 1);
    }
    return i;
}

void jdoc_locate(const jdoc *d, const char *jpath, int *line, int *col)
{
    *line = *col = 0;
    if (!d->text)
        return;
    const char *t = d->text;
    size_t n = d->len, i = skip_ws(t, n, 0);
    const char *p = jpath ? jpath : "";
    while (*p && i < n) {
        if (*p == '.') {
            p++;
            continue;
        }
        if (*p == '[') {
            long idx = strtol(p + 1, (char **)&p, 10);
            if (*p == ']')
                p++;
            i = find_index(t, n, i, idx);
        } else {
            size_t klen = strcspn(p, ".[");
            i = find_key(t, n, i, p, klen);
            p += klen;
        }
    }
    if (i >= n)
        return;
    int l = 1, c = 1;
    for (size_t k = 0; k < i; k++) {
        if (t[k] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

int jdoc_fail(const jdoc *d, gt_err *e, const char *jpath, const char *fmt, ...)
{
    if (!e)
        return -1;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line, col;
    jdoc_locate(d, jpath, &line, &col);
    if (line == 0) {
        /* the value is missing: point at its parent */
        char parent[256];
        snprintf(parent, sizeof parent, "%s", jpath ? jpath : "");
        char *cut = strrchr(parent, '.');
        if (cut)
            *cut = '\0';
        else
            parent[0] = '\0';
        jdoc_locate(d, parent, &line, &col);
        if (line == 0)
            line = col = 1;
    }
    snprintf(e->msg, sizeof e->msg, "%s:%d:%d: %s: %s", d->path, line, col,
             jpath && *jpath ? jpath : "(top)", msg);
    return -1;
}

static void join_path(char *out, size_t cap, const char *objpath, const char *key)
{
    if (objpath && *objpath)
        snprintf(out, cap, "%s.%s", objpath, key);
    else
        snprintf(out, cap, "%s", key);
}

int jdoc_keys(const jdoc *d, json_t *obj, const char *objpath,
              const char *const *allowed, gt_err *e)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, key) == 0)
                ok = 1;
        if (!ok) {
            char jp[256], list[512] = "";
            join_path(jp, sizeof jp, objpath, key);
            for (const char *const *a = allowed; *a; a++) {
                strncat(list, *a, sizeof list - strlen(list) - 3);
                if (a[1])
                    strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            return jdoc_fail(d, e, jp, "unknown field \"%s\" (expected one of: %s)",
                             key, list);
        }
    }
    return 0;
}

int jdoc_num(const jdoc *d, json_t *obj, const char *objpath, const char *key,
             int required, double lo, double hi, double dflt, double *out, gt_err *e)
{
    char jp[256];
    join_path(jp, sizeof jp, objpath, key);
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return jdoc_fail(d, e, jp, "missing, expected a number");
        *out = dflt;
        return 0;
    }
    if (!json_is_number(v))
        return jdoc_fail(d, e, jp, "expected a number");
    double x = json_number_value(v);
    if (!isfinite(x))
        return jdoc_fail(d, e, jp, "expected a finite number");
    if (x < lo || x > hi) {
        if (lo > 0 && x <= 0)
            return jdoc_fail(d, e, jp, "must be > 0 (got %g)", x);
        return jdoc_fail(d, e, jp, "must be in [%g, %g] (got %g)", lo, hi, x);
    }
    *out = x;
    return 0;
}

int jdoc_int(const jdoc *d, json_t *obj, const char *objpath, const char *key,
             int required, long lo, long hi, long dflt, long *out, gt_err *e)
{
    char jp[256];
    join_path(jp, sizeof jp, objpath, key);
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return jdoc_fail(d, e, jp, "missing, expected an integer");
        *out = dflt;
        return 0;
    }
    if (!json_is_integer(v))
        return jdoc_fail(d, e, jp, "expected an integer");
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return jdoc_fail(d, e, jp, "must be in [%ld, %ld] (got %lld)", lo, hi,
                         (long long)x);
    *out = (long)x;
    return 0;
}

int jdoc_str(const jdoc *d, json_t *obj, const char *objpath, const char *key,
             int required, const char *dflt, char *out, size_t cap, gt_err *e)
{
    char jp[256];
    join_path(jp, sizeof jp, objpath, key);
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return jdoc_fail(d, e, jp, "missing, expected a string");
        snprintf(out, cap, "%s", dflt ? dflt : "");
        return 0;
    }
    if (!json_is_string(v))
        return jdoc_fail(d, e, jp, "expected a string");
    const char *s = json_string_value(v);
    size_t len = strlen(s);
    if (len == 0)
        return jdoc_fail(d, e, jp, "must not be empty");
    if (len >= cap)
        return jdoc_fail(d, e, jp, "longer than %zu characters", cap - 1);
    memcpy(out, s, len + 1);
    return 0;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
    return fwrite(buf, 1, size, (FILE *)data) == size ? 0 : -1;
}

static int write_json_to(FILE *fp, void *ctx)
{
    json_t *root = ctx;
    if (json_dump_callback(root, dump_cb, fp,
                           JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)))
        return -1;
    return fputc('\n', fp) == EOF ? -1 : 0;
}

int json_write_atomic(json_t *root, const char *path, gt_err *e)
{
    return atomic_write(path, write_json_to, root, e);
}
