/* topogen_options.h — the topology generator's options (--sites, --gpus,
 * --mix, ...) as command-line arguments, shared by `topo gen` and `study`. */
#ifndef GT_CLI_TOPOGEN_OPTIONS_H
#define GT_CLI_TOPOGEN_OPTIONS_H

#include <stdbool.h>

#include "topologies/gen.h"

/* Command-line front end, shared by `topo gen` and `study` (both print).
 *
 * topogen_take_option: argv[*i] is one of the generator's options (--sites,
 * --gpus, --gpus-dist, --mix, --mix-per, --node-size, --nic-gbps, --regions,
 * --bw-scale, --bw-jitter, --tcp-connections, --tcp-window-mb, --pue,
 * --seed, and --name when with_name): its value goes into o and *i moves
 * past it. Returns 1 taken, 0 not one of them, -1 bad value (a usage error
 * naming cmd is printed). */
int topogen_take_option(topogen_opts *o, const char *cmd, bool with_name, int argc,
                        char **argv, int *i);
/* topogen_check() as a usage error of cmd: EXIT_OK, or EXIT_USAGE (printed). */
int topogen_check_usage(const char *cmd, const topogen_opts *o, const topogen_data *d);

#endif
