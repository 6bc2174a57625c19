/* progress.c — progress lines on stderr (see progress.h). */
#include "cli/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double cli_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, bool on)
{
    p->on = on;
    p->tty = isatty(STDERR_FILENO) != 0;
    p->t0 = p->last = cli_now_s();
    p->printed = false;
}

void cli_progress_show(cli_progress *p, const char *cmd, const char *what, long done,
                       long total)
{
    if (!p->on)
        return;
    double t = cli_now_s(), el = t - p->t0;
    if (!p->tty && p->printed && t - p->last < CLI_PROGRESS_EVERY_S)
        return;
    p->last = t;
    p->printed = true;
    char eta[32] = "ETA ?";
    if (done > 0 && total >= done)
        snprintf(eta, sizeof eta, "ETA %.0f s", el / (double)done * (double)(total - done));
    fprintf(stderr, "%s%s: [%ld/%ld] %-28s elapsed %.0f s, %s%s", p->tty ? "\r" : "", cmd,
            done + 1 > total ? total : done + 1, total, what, el, eta, p->tty ? "   " : "\n");
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (p->on && p->tty && p->printed)
        fprintf(stderr, "\r%78s\r", "");
}
