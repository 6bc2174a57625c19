/* atomic_file.c — temp file + rename (see atomic_file.h). */
#include "atomic_file.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The temporary file being written, so a signal handler can remove it. */
static char pending_tmp[4096];
static volatile sig_atomic_t pending_active;

void atomic_cleanup_on_signal(void)
{
    if (pending_active)
        unlink(pending_tmp);
}

int atomic_write(const char *path, atomic_writer fn, void *ctx, gt_err *e)
{
    if (strcmp(path, "-") == 0) {
        if (fn(stdout, ctx) || fflush(stdout))
            return gt_fail(e, "standard output: write error");
        return 0;
    }
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
        return gt_fail(e, "%s: path too long", path);
    FILE *fp = fopen(tmp, "wb");
    if (!fp)
        return gt_fail(e, "%s: cannot write: %s", path, strerror(errno));
    memcpy(pending_tmp, tmp, sizeof tmp);
    pending_active = 1;
    int bad = fn(fp, ctx);
    bad |= fflush(fp) != 0;
    bad |= ferror(fp) != 0;
    bad |= fclose(fp) != 0;
    if (bad) {
        unlink(tmp);
        pending_active = 0;
        return gt_fail(e, "%s: write failed", path);
    }
    if (rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        pending_active = 0;
        return gt_fail(e, "%s: cannot rename into place: %s", path, strerror(err));
    }
    pending_active = 0;
    return 0;
}
