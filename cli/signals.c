/* signals.c — SIGINT/SIGTERM for the long commands (see signals.h). The flag
 * is the command line's one piece of global mutable state: a signal handler
 * can reach nothing else. */
#include "cli/signals.h"

#include <string.h>

#include "sim/base/atomic_file.h"

static volatile int g_stop;

/* signal() and raise() are async-signal-safe; so is the unlink() inside
 * atomic_cleanup_on_signal(). */
static void on_signal(int sig)
{
    if (g_stop) {
        atomic_cleanup_on_signal();
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g_stop = sig;
}

volatile int *cli_signals_catch(cli_signals *s)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_stop = 0;
    sigaction(SIGINT, &sa, &s->old[0]);
    sigaction(SIGTERM, &sa, &s->old[1]);
    return &g_stop;
}

void cli_signals_restore(const cli_signals *s)
{
    sigaction(SIGINT, &s->old[0], NULL);
    sigaction(SIGTERM, &s->old[1], NULL);
}

int cli_signals_caught(void)
{
    return g_stop;
}

int cli_signals_exit_code(void)
{
    return 128 + (g_stop ? g_stop : SIGINT);
}
