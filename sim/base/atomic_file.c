/* atomic_file.c — the output-writing rules of atomic_file.h: mkstemp in the
 * target's directory + rename for regular files, direct writes for devices and
 * FIFOs, refusals for directories and read-only files. */
#include "sim/base/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file being written, so a signal handler can remove it. */
static char pending_tmp[PATH_MAX + 32];
static volatile sig_atomic_t pending_active;

void atomic_cleanup_on_signal(void)
{
    if (pending_active)
        unlink(pending_tmp);
}

/* Run the writer on fp and close it; 0 or the errno of the first failure
 * (EIO when the writer failed without a system error). */
static int run_writer(FILE *fp, atomic_writer fn, void *ctx)
{
    errno = 0;
    int bad = fn(fp, ctx) != 0;
    int err = bad ? errno : 0;
    if (fflush(fp) != 0 && !err)
        err = errno;
    bad |= ferror(fp) != 0;
    if (fclose(fp) != 0) {
        bad = 1;
        if (!err)
            err = errno;
    }
    return bad ? (err ? err : EIO) : 0;
}

static int write_failed(const char *path, int err, gt_err *e)
{
    return gt_fail(e, "%s: write failed: %s", path, strerror(err));
}

/* A device, FIFO or socket: no temporary, no rename (renaming over /dev/full
 * would turn the device into a regular file). */
static int write_direct(const char *path, atomic_writer fn, void *ctx, gt_err *e)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return gt_fail(e, "%s: cannot write: %s", path, strerror(errno));
    FILE *fp = fdopen(fd, "wb");
    if (!fp) {
        int err = errno;
        close(fd);
        return gt_fail(e, "%s: cannot write: %s", path, strerror(err));
    }
    int err = run_writer(fp, fn, ctx);
    return err ? write_failed(path, err, e) : 0;
}

/* The user could write this file in place: some write bit is set (root
 * ignores the bits in access(2), so they are checked too) and access agrees. */
static int check_writable(const char *path, const char *target, const struct stat *st,
                          gt_err *e)
{
    if (!(st->st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) || access(target, W_OK) != 0)
        return gt_fail(e, "%s: read-only file (mode %04o): refusing to replace it", path,
                       (unsigned)(st->st_mode & 07777));
    return 0;
}

static mode_t new_file_mode(void)
{
    mode_t um = umask(077); /* read the umask (there is no getter) and restore it */
    umask(um);
    return 0666 & ~um;
}

/* Temporary "DIR/.BASE.XXXXXX" next to `target`. */
static int make_temp(const char *target, char *tmp, size_t cap, gt_err *e)
{
    const char *slash = strrchr(target, '/');
    int dirlen = slash ? (int)(slash - target) + 1 : 0;
    const char *base = slash ? slash + 1 : target;
    if ((size_t)snprintf(tmp, cap, "%.*s.%s.XXXXXX", dirlen, target, base) >= cap)
        return gt_fail(e, "%s: path too long", target);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return gt_fail(e, "%s: cannot write: %s", target, strerror(errno));
    return fd;
}

static int write_replace(const char *path, const char *target, mode_t mode,
                         atomic_writer fn, void *ctx, gt_err *e)
{
    char tmp[sizeof pending_tmp];
    int fd = make_temp(target, tmp, sizeof tmp, e);
    if (fd < 0)
        return -1;
    memcpy(pending_tmp, tmp, sizeof tmp);
    pending_active = 1;
    int err = fchmod(fd, mode) ? errno : 0;
    FILE *fp = err ? NULL : fdopen(fd, "wb");
    if (!fp) {
        err = err ? err : errno;
        close(fd);
    } else {
        err = run_writer(fp, fn, ctx);
    }
    if (!err && rename(tmp, target) != 0) {
        int rerr = errno;
        unlink(tmp);
        pending_active = 0;
        return gt_fail(e, "%s: cannot rename into place: %s", path, strerror(rerr));
    }
    if (err)
        unlink(tmp);
    pending_active = 0;
    return err ? write_failed(path, err, e) : 0;
}

int atomic_write(const char *path, atomic_writer fn, void *ctx, gt_err *e)
{
    if (strcmp(path, "-") == 0) {
        int err = 0;
        errno = 0;
        if (fn(stdout, ctx) || fflush(stdout) || ferror(stdout))
            err = errno ? errno : EIO;
        return err ? gt_fail(e, "standard output: write failed: %s", strerror(err)) : 0;
    }
    char real[PATH_MAX];
    const char *target = path;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        if (!realpath(path, real))
            return gt_fail(e, "%s: symbolic link to a missing or unreachable file (%s): "
                              "refusing to replace the link", path, strerror(errno));
        target = real;
    }
    if (stat(target, &st) != 0) {
        if (errno != ENOENT)
            return gt_fail(e, "%s: cannot write: %s", path, strerror(errno));
        return write_replace(path, target, new_file_mode(), fn, ctx, e);
    }
    if (S_ISDIR(st.st_mode))
        return gt_fail(e, "%s: is a directory, expected a file name", path);
    if (!S_ISREG(st.st_mode))
        return write_direct(path, fn, ctx, e);
    if (check_writable(path, target, &st, e))
        return -1;
    return write_replace(path, target, st.st_mode & 07777, fn, ctx, e);
}
