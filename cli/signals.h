/* signals.h — the one SIGINT/SIGTERM behaviour of every long command (plan,
 * compare, study):
 *
 *   first signal   the flag becomes the signal number; library code that was
 *                  handed the flag (planner_opts.stop, study_spec.stop, ...)
 *                  stops at its next check and the command finishes what it
 *                  can (compare: the rows done; plan: the best plan so far;
 *                  study: the rows already in the file, resumable);
 *   second signal  the temporary file of an atomic write in progress is
 *                  removed and the process ends the default way at once.
 *
 * The exit code of an interrupted command is 128 + the signal number (130 for
 * SIGINT, 143 for SIGTERM). The flag is an int because the library's stop
 * pointers are `volatile int *`; glibc's sig_atomic_t is int. */
#ifndef GT_CLI_SIGNALS_H
#define GT_CLI_SIGNALS_H

#include <signal.h>

typedef struct cli_signals {
    struct sigaction old[2];   /* SIGINT, SIGTERM as they were */
} cli_signals;

/* Clear the flag, install the handler; returns the flag to hand to the library. */
volatile int *cli_signals_catch(cli_signals *s);
/* Put the previous handlers back. */
void cli_signals_restore(const cli_signals *s);
/* 0, or the number of the first signal caught since cli_signals_catch. */
int cli_signals_caught(void);
/* The exit code after a signal: 128 + signal number (130 when none was caught). */
int cli_signals_exit_code(void);

#endif
