/* infile.c — safe opening and bounded reading of input files (infile.h). */
#include "sim/base/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *kind_of(mode_t m)
{
    if (S_ISCHR(m))
        return "character device";
    if (S_ISBLK(m))
        return "block device";
    if (S_ISFIFO(m))
        return "FIFO";
    if (S_ISSOCK(m))
        return "socket";
    return "special file";
}

static double mib(size_t n)
{
    return (double)n / (1 << 20);
}

/* Skip "\xEF\xBB\xBF" at the start (a UTF-8 byte order mark). */
static void skip_bom(FILE *fp)
{
    int c0 = fgetc(fp);
    if (c0 == 0xEF) {
        int c1 = fgetc(fp), c2 = c1 == 0xBB ? fgetc(fp) : EOF;
        if (c1 == 0xBB && c2 == 0xBF)
            return;
    }
    rewind(fp);
}

FILE *infile_open(const char *path, size_t max_bytes, gt_err *e)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before fstat */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    FILE *fp = NULL;
    if (fd < 0 || fcntl(fd, F_SETFL, 0) != 0 || !(fp = fdopen(fd, "rb"))) {
        gt_fail(e, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    struct stat st;
    const char *why = NULL;
    char big[128];
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "is a directory, expected a file";
    else if (!S_ISREG(st.st_mode))
        snprintf(big, sizeof big, "not a regular file (%s)", kind_of(st.st_mode)), why = big;
    else if ((size_t)st.st_size > max_bytes)
        snprintf(big, sizeof big, "%.1f MiB is over the file-size cap of %.0f MiB",
                 mib((size_t)st.st_size), mib(max_bytes)), why = big;
    if (why) {
        gt_fail(e, "%s: %s", path, why);
        fclose(fp);
        return NULL;
    }
    skip_bom(fp);
    return fp;
}

static int too_big(const char *path, size_t max_bytes, gt_err *e)
{
    return gt_fail(e, "%s: over the file-size cap of %.0f MiB", path, mib(max_bytes));
}

int infile_read_all(const char *path, size_t max_bytes, int missing_ok, char **buf,
                    size_t *len, gt_err *e)
{
    *buf = NULL;
    *len = 0;
    errno = 0;
    FILE *fp = infile_open(path, max_bytes, e);
    if (!fp)
        return missing_ok && errno == ENOENT ? 1 : -1;
    size_t n = 0, cap = 65536;
    char *b = malloc(cap + 1);
    int rc = b ? 0 : gt_fail(e, "%s: out of memory", path);
    while (!rc) {
        size_t got = fread(b + n, 1, cap - n, fp);
        n += got;
        if (n > max_bytes)
            rc = too_big(path, max_bytes, e);
        else if (got == 0)
            break;
        else if (n == cap) {
            char *nb = realloc(b, (cap *= 2) + 1);
            if (!nb)
                rc = gt_fail(e, "%s: out of memory", path);
            else
                b = nb;
        }
    }
    if (!rc && ferror(fp))
        rc = gt_fail(e, "%s: read error: %s", path, strerror(errno));
    fclose(fp);
    if (rc) {
        free(b);
        return -1;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

int infile_getline(FILE *fp, const char *path, int lineno, char **buf, size_t *cap,
                   size_t max_line, size_t *total, int *nul, gt_err *e)
{
    size_t len = 0;
    int c;
    *nul = 0;
    while ((c = fgetc(fp)) != EOF && c != '\n') {
        if (len >= max_line)
            return gt_fail(e, "%s:%d: line longer than the cap of %zu bytes", path, lineno,
                           max_line);
        if (++*total > INFILE_MAX_BYTES)
            return too_big(path, INFILE_MAX_BYTES, e);
        if (len + 2 > *cap) {
            size_t ncap = *cap ? *cap * 2 : 256;
            char *nb = realloc(*buf, ncap);
            if (!nb)
                return gt_fail(e, "%s: out of memory", path);
            *buf = nb;
            *cap = ncap;
        }
        *nul |= c == '\0';
        (*buf)[len++] = (char)c;
    }
    if (c == '\n')
        ++*total;
    if (c == EOF && ferror(fp))
        return gt_fail(e, "%s:%d: read error: %s", path, lineno, strerror(errno));
    if (c == EOF && len == 0)
        return 0;
    if (len && (*buf)[len - 1] == '\r')
        len--;
    if (!*buf && !(*buf = malloc(1)))
        return gt_fail(e, "%s: out of memory", path);
    (*buf)[len] = '\0';
    return 1;
}
