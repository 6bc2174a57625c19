/* testutil.h — small helpers shared by the cmocka tests (header only).
 * Tests run from the repository root (tests/run.sh); tu_chdir_root() makes
 * that so when a test binary is started from elsewhere.
 *
 * Including this header includes <cmocka.h> (and what it needs before it).
 *
 *   FIXTURES                  "tests/fixtures" (the suite's own inputs)
 *   rel_diff(a, b)            |a-b| / max(|a|,|b|,tiny)
 *   write_temp(text, out, cap)  text into a new /tmp/gt-test-XXXXXX file (path in out)
 *   tu_chdir_root()           chdir to the repository root (the folder holding
 *                             sim/ and Makefile); 0 or -1. Call first in main().
 *   tu_geotrain(&r, "topo", "check", path, NULL)
 *                             run ./geotrain (or $GEOTRAIN_BIN) with the given
 *                             arguments (NULL-terminated, no shell involved);
 *                             r.status = exit code (128+N when killed by signal
 *                             N, -1 when it could not run), r.out and r.err =
 *                             captured stdout / stderr (NUL-terminated, never
 *                             NULL after a successful call). tu_geotrainv()
 *                             takes a NULL-terminated array instead.
 *   tu_run_free(&r)
 *   tu_mkdtemp(buf)           new empty folder /tmp/gt-test-XXXXXX (buf >= 64)
 *   tu_rmtree(dir)            remove a flat folder made by tu_mkdtemp and its files
 *   tu_write_file(path, text) / tu_write_buf(path, buf, len)   0 or -1
 *   tu_read_file(path, &len)  malloc'd contents, NUL-terminated, or NULL
 *   tu_exists(path)           1 if the path exists
 *   tu_count_entries(dir)     entries of a folder (without . and ..), -1 if none
 *   tu_read_gz(path, &len)    contents of a gzip (or plain) file through zlib,
 *                             malloc'd and NUL-terminated, or NULL
 *   tu_stride()               1, or $GEOTRAIN_TEST_STRIDE: the suites that repeat
 *                             one search over many instances take every k-th one
 *
 * For tests only: helpers may abort() on out-of-memory. */
#ifndef GT_TESTUTIL_H
#define GT_TESTUTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <zlib.h>

#define FIXTURES "tests/fixtures"
#define TU_MAX_ARGS 64

/* Relative difference |a-b| / max(|a|,|b|,tiny). */
static inline double rel_diff(double a, double b)
{
    double m = a < 0 ? -a : a, n = b < 0 ? -b : b;
    double d = a - b;
    if (d < 0)
        d = -d;
    return d / ((m > n ? m : n) + 1e-300);
}

/* Write `text` to a fresh temporary file; its path goes to out[cap]. */
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

typedef struct tu_run {
    int status;     /* exit code; 128+signal when killed; -1 when not run */
    char *out;      /* captured standard output */
    char *err;      /* captured standard error */
} tu_run;

/* The sanitizer and valgrind runs (make test-asan, make memcheck) check
 * memory safety, not search quality, and run 10-50x slower: there the suites
 * that repeat a whole planner search over many generated instances (memetic
 * against exact, memetic against every baseline) take every k-th instance,
 * k = $GEOTRAIN_TEST_STRIDE. The plain run (make test-unit) takes them all. */
static inline int tu_stride(void)
{
    const char *s = getenv("GEOTRAIN_TEST_STRIDE");
    int k = s ? atoi(s) : 1;
    return k > 0 ? k : 1;
}

static inline int tu_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static inline int tu_chdir_root(void)
{
    for (int up = 0; up < 8; up++) {
        if (tu_exists("sim/inputs/topology.h") && tu_exists("Makefile"))
            return 0;
        if (chdir("..") != 0)
            return -1;
    }
    return -1;
}

static inline char *tu_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    if (!buf)
        abort();
    while ((got = fread(buf + n, 1, cap - n - 1, fp)) > 0) {
        n += got;
        if (n + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
    }
    fclose(fp);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static inline int tu_write_buf(const char *path, const void *buf, size_t len)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    size_t put = len ? fwrite(buf, 1, len, fp) : 0;
    return (fclose(fp) == 0 && put == len) ? 0 : -1;
}

static inline int tu_write_file(const char *path, const char *text)
{
    return tu_write_buf(path, text, strlen(text));
}

static inline char *tu_mkdtemp(char *buf)
{
    strcpy(buf, "/tmp/gt-test-XXXXXX");
    return mkdtemp(buf);
}

static inline int tu_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static inline void tu_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    char path[4096];
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static inline void tu_run_free(tu_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

static inline int tu_geotrainv(tu_run *r, const char *const *args)
{
    r->status = -1;
    r->out = r->err = NULL;
    const char *bin = getenv("GEOTRAIN_BIN");
    if (!bin || !*bin)
        bin = "./geotrain";
    const char *argv[TU_MAX_ARGS + 2];
    int n = 0;
    argv[n++] = bin;
    for (; args[n - 1] && n <= TU_MAX_ARGS; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    char dir[64], outp[128], errp[128];
    if (!tu_mkdtemp(dir))
        return -1;
    snprintf(outp, sizeof outp, "%s/out", dir);
    snprintf(errp, sizeof errp, "%s/err", dir);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        tu_rmtree(dir);
        return -1;
    }
    if (pid == 0) {
        int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fi = open("/dev/null", O_RDONLY);
        if (fo < 0 || fe < 0 || fi < 0)
            _exit(127);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) {
            tu_rmtree(dir);
            return -1;
        }
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : -1;
    r->out = tu_read_file(outp, NULL);
    r->err = tu_read_file(errp, NULL);
    if (!r->out)
        r->out = strdup("");
    if (!r->err)
        r->err = strdup("");
    tu_rmtree(dir);
    return 0;
}

/* tu_geotrain(&r, "topo", "check", "x.json", NULL) */
__attribute__((sentinel)) static inline int tu_geotrain(tu_run *r, ...)
{
    const char *args[TU_MAX_ARGS + 1];
    int n = 0;
    va_list ap;
    va_start(ap, r);
    const char *a;
    while ((a = va_arg(ap, const char *)) && n < TU_MAX_ARGS)
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    return tu_geotrainv(r, args);
}

static inline char *tu_read_gz(const char *path, size_t *len)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    int got;
    while (buf && (got = gzread(gz, buf + n, (unsigned)(cap - n - 1))) > 0) {
        n += (size_t)got;
        if (cap - n < 2)
            buf = realloc(buf, cap *= 2);
    }
    gzclose(gz);
    if (!buf)
        abort();
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

#endif
