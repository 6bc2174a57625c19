/* cmd_topo.c — `geotrain topo show FILE` and `geotrain topo check FILE...`. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "sim/inputs/topology.h"

static const char SHOW_HELP[] =
    "usage: geotrain topo show FILE\n\n"
    "Summarise a topology: sites with their region, nodes, GPUs, peak PFLOPS,\n"
    "memory and grid carbon; GPUs by type; the WAN matrix in Gbps / one-way ms.\n\n"
    "example: geotrain topo show topologies/yuan2022/case5.json\n";

static const char CHECK_HELP[] =
    "usage: geotrain topo check FILE...\n\n"
    "Validate topology files (format: docs/formats.md, Topology). Prints 'ok' per\n"
    "valid file; on the first problem in a file prints file:line:col: field:\n"
    "reason. Exit 0 when all are valid, 1 otherwise.\n";

static int want_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    return 0;
}

int cmd_topo_show(int argc, char **argv)
{
    if (want_help(argc, argv)) {
        fputs(SHOW_HELP, stdout);
        return EXIT_OK;
    }
    if (argc != 2)
        return cli_usage_error("topo show", "expected exactly one FILE");
    topology t;
    gt_err e;
    if (topo_load(&t, argv[1], NULL, &e))
        return cli_input_error(&e);
    topo_print_summary(&t, stdout);
    topo_free(&t);
    return EXIT_OK;
}

int cmd_topo_check(int argc, char **argv)
{
    if (want_help(argc, argv)) {
        fputs(CHECK_HELP, stdout);
        return EXIT_OK;
    }
    if (argc < 2)
        return cli_usage_error("topo check", "expected at least one FILE");
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        topology t;
        gt_err e;
        if (topo_load(&t, argv[i], NULL, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            bad = 1;
            continue;
        }
        printf("%s: ok (%d sites, %d GPUs)\n", argv[i], t.nsites, t.ngpus);
        topo_free(&t);
    }
    return bad ? EXIT_INPUT : EXIT_OK;
}
