/* progress.h — progress of a long command on stderr: on a terminal one line
 * that redraws itself; otherwise (a log file, a pipe) a plain line at most
 * every CLI_PROGRESS_EVERY_S seconds, with the elapsed time and an ETA from
 * the share of the work done. --quiet turns it off. */
#ifndef GT_CLI_PROGRESS_H
#define GT_CLI_PROGRESS_H

#include <stdbool.h>

#define CLI_PROGRESS_EVERY_S 5.0

typedef struct cli_progress {
    bool on, tty;
    double t0, last;    /* monotonic seconds */
    bool printed;
} cli_progress;

/* on = !quiet; tty from stderr. */
void cli_progress_init(cli_progress *p, bool on);
/* "cmd: what [done/total] elapsed X s, ETA Y s" (done of total work units). */
void cli_progress_show(cli_progress *p, const char *cmd, const char *what, long done,
                       long total);
/* Clear the terminal line (nothing in plain mode). */
void cli_progress_end(cli_progress *p);
/* Monotonic seconds. */
double cli_now_s(void);

#endif
