/* geotrain.c — the `geotrain` command: git-style dispatch to the
 * subcommands, whose code lives in cli/ (entry points in cli/commands.h). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "cli/version.h"

typedef struct command {
    const char *name;     /* "topo show" */
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command COMMANDS[] = {
    {"topo show", cmd_topo_show, "summary: sites, GPUs by type, TFLOPS, memory, WAN matrix"},
    {"topo check", cmd_topo_check, "validate topology files (file:line:col errors)"},
    {"topo gen", cmd_topo_gen, "generate a topology on real regions (seeded; measured WAN + fit)"},
    {"model show", cmd_model_show, "parameters, FLOPs per iteration, memory, transfer sizes"},
    {"profile import", cmd_profile_import, "PyTorch profiler (Kineto) trace -> --profile CSV"},
    {"plan check", cmd_plan_check, "check a plan against a topology and job"},
    {"plan", cmd_plan, "choose GPUs, shape, placement and layer cuts for a job"},
    {"freq", cmd_freq, "per-stage SM clocks for a plan: least energy on the critical path; --front"},
    {"simulate", cmd_simulate, "replay a plan: iteration time, joules, utilisation, timeline"},
    {"compare", cmd_compare, "run planners on one topology and job, replay and tabulate"},
    {"validate", cmd_validate, "replay published measured runs: simulated vs measured error"},
    {"study", cmd_study, "generated topologies x planners x seeds, replayed: one CSV row each"},
    {"version", cmd_version, "version, git commit and build flags (also --version)"},
};
#define NCOMMANDS (sizeof COMMANDS / sizeof *COMMANDS)

static void usage(FILE *out)
{
    fprintf(out, "usage: geotrain COMMAND [options]   (geotrain COMMAND --help for more)\n\n"
                 "GeoTrain plans and simulates training of foundation models on\n"
                 "heterogeneous, geo-distributed GPUs.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-14s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(out, "\nConventions (options, outputs, progress, signals, exit codes): docs/cli.md\n");
}

/* The command argv names, or NULL. */
static const command *find_command(int argc, char **argv, int *words)
{
    /* two-word commands first ("topo show"), then one-word ones ("simulate") */
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const command *c = &COMMANDS[i];
        const char *sp = strchr(c->name, ' ');
        if (sp) {
            size_t n = (size_t)(sp - c->name);
            if (argc >= 3 && strlen(argv[1]) == n && !strncmp(argv[1], c->name, n) &&
                !strcmp(argv[2], sp + 1)) {
                *words = 2;
                return c;
            }
        }
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], COMMANDS[i].name)) {
            *words = 1;
            return &COMMANDS[i];
        }
    return NULL;
}

/* "unknown command", with the nearest command name when one is a typo away. */
static int unknown_command(int argc, char **argv)
{
    char two[128];
    snprintf(two, sizeof two, "%s %s", argv[1], argc > 2 ? argv[2] : "");
    const char *names[NCOMMANDS];
    for (size_t i = 0; i < NCOMMANDS; i++)
        names[i] = COMMANDS[i].name;
    const char *near = argc > 2 ? cli_nearest(two, names, NCOMMANDS) : NULL;
    if (!near)
        near = cli_nearest(argv[1], names, NCOMMANDS);
    fprintf(stderr, "geotrain: unknown command '%s%s%s'", argv[1], argc > 2 ? " " : "",
            argc > 2 ? argv[2] : "");
    if (near)
        fprintf(stderr, " (did you mean '%s'?)", near);
    fputc('\n', stderr);
    usage(stderr);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    /* Planners evaluate many candidate plans whose op arrays are a few MB:
     * keep freed memory in the heap instead of mmap/munmap round trips
     * (measured: ~40 % of estimator time went to page faults). */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    cli_set_command_line(argc, argv);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (!strcmp(argv[1], "--version"))
        return cmd_version(1, argv + 1);
    int n;
    char **args = cli_split_equals(argc, argv, &n);   /* --opt=value -> --opt value */
    if (!args) {
        fprintf(stderr, "geotrain: out of memory\n");
        return EXIT_INPUT;
    }
    int words = 0, rc;
    const command *c = find_command(n, args, &words);
    rc = c ? c->run(n - words, args + words) : unknown_command(n, args);
    free(args);
    return rc;
}
