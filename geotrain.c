/* geotrain.c — the `geotrain` command: git-style dispatch to subcommands.
 * Each folder owns its subcommands' code (sim/, planner/, topologies/). */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "experiments/study.h"
#include "planner/commands.h"
#include "sim/cli.h"
#include "sim/commands.h"
#include "topologies/gen.h"

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
    {"plan check", cmd_plan_check, "check a plan against a topology and job"},
    {"plan", cmd_plan, "choose GPUs, shape, placement and layer cuts for a job"},
    {"simulate", cmd_simulate, "replay a plan: iteration time, joules, utilisation, timeline"},
    {"compare", cmd_compare, "run planners on one topology and job, replay and tabulate"},
    {"validate", cmd_validate, "replay published measured runs: simulated vs measured error"},
    {"study", cmd_study, "generated topologies x planners x seeds, replayed: one CSV row each"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: geotrain COMMAND [options]   (geotrain COMMAND --help for more)\n\n"
                 "GeoTrain plans and simulates training of foundation models on\n"
                 "heterogeneous, geo-distributed GPUs.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof *COMMANDS; i++)
        fprintf(out, "  %-14s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
}

int main(int argc, char **argv)
{
    /* Planners evaluate many candidate plans whose op arrays are a few MB:
     * keep freed memory in the heap instead of mmap/munmap round trips
     * (measured: ~40 % of estimator time went to page faults). */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    /* two-word commands first ("topo show"), then one-word ones ("simulate") */
    for (size_t i = 0; i < sizeof COMMANDS / sizeof *COMMANDS; i++) {
        const command *c = &COMMANDS[i];
        const char *sp = strchr(c->name, ' ');
        if (sp) {
            size_t n = (size_t)(sp - c->name);
            if (argc >= 3 && strlen(argv[1]) == n && !strncmp(argv[1], c->name, n) &&
                !strcmp(argv[2], sp + 1))
                return c->run(argc - 2, argv + 2) ;
        }
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof *COMMANDS; i++)
        if (!strcmp(argv[1], COMMANDS[i].name))
            return COMMANDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "geotrain: unknown command '%s%s%s'\n", argv[1], argc > 2 ? " " : "",
            argc > 2 ? argv[2] : "");
    usage(stderr);
    return EXIT_USAGE;
}
