/* topogen_options.c — the topology generator's options as argv (see
 * topogen_options.h): one table shared by `topo gen` and `study`, so the two
 * commands accept the same names and ranges. */
#include "cli/topogen_options.h"

#include <stddef.h>
#include <string.h>

#include "cli/cli.h"

/* The options that set a topogen_opts field, for `topo gen` and `study`
 * alike (one table, so the two commands accept the same names and ranges).
 * Integers and numbers are checked against [lo, hi]; text must be non-empty
 * and fit its field. */
typedef enum { GO_INT, GO_LONG, GO_ULONG, GO_DOUBLE, GO_TEXT } gen_opt_kind;

typedef struct gen_opt {
    const char *name;
    gen_opt_kind kind;
    double lo, hi;           /* GO_INT .. GO_DOUBLE */
    size_t off, size;        /* the field in topogen_opts */
} gen_opt;

#define GEN_FIELD(f) offsetof(topogen_opts, f), sizeof(((topogen_opts *)0)->f)

static const gen_opt GEN_OPTS[] = {
    {"--sites", GO_INT, 1, TOPO_MAX_SITES, GEN_FIELD(sites)},
    {"--gpus", GO_LONG, 1, TOPO_MAX_GPUS, GEN_FIELD(gpus)},
    {"--node-size", GO_INT, 1, 1024, GEN_FIELD(node_size)},
    {"--tcp-connections", GO_INT, 1, 4096, GEN_FIELD(tcp_connections)},
    {"--seed", GO_ULONG, 0, 4294967295.0, GEN_FIELD(seed)},
    {"--nic-gbps", GO_DOUBLE, 1e-9, 1e7, GEN_FIELD(nic_gbps)},
    {"--bw-scale", GO_DOUBLE, 1e-9, 1e6, GEN_FIELD(bw_scale)},
    {"--bw-jitter", GO_DOUBLE, 0, 0.999999, GEN_FIELD(bw_jitter)},
    {"--pue", GO_DOUBLE, 1, 10, GEN_FIELD(pue)},
    {"--tcp-window-mb", GO_DOUBLE, 1e-6, 1e6, GEN_FIELD(tcp_window_mb)},
    {"--gpus-dist", GO_TEXT, 0, 0, GEN_FIELD(gpus_dist)},
    {"--mix", GO_TEXT, 0, 0, GEN_FIELD(mix)},
    {"--mix-per", GO_TEXT, 0, 0, GEN_FIELD(mix_per)},
    {"--regions", GO_TEXT, 0, 0, GEN_FIELD(regions)},
    {"--name", GO_TEXT, 0, 0, GEN_FIELD(name)},
};

static int set_text(const char *cmd, const gen_opt *g, const char *v, char *dst)
{
    if (strlen(v) >= g->size || !*v) {
        if (*v)
            cli_usage_error(cmd, "%s: value longer than %zu characters", g->name, g->size - 1);
        else
            cli_usage_error(cmd, "%s: empty value", g->name);
        return -1;
    }
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

/* Parse v into the field of g in o; -1 (printed) when it is out of range. */
static int set_option(topogen_opts *o, const char *cmd, const gen_opt *g, const char *v)
{
    char *field = (char *)o + g->off;
    long x;
    switch (g->kind) {
    case GO_TEXT:
        if (!strcmp(g->name, "--regions") && cli_check_list(cmd, g->name, v))
            return -1;
        return set_text(cmd, g, v, field);
    case GO_DOUBLE:
        return cli_double(cmd, g->name, v, g->lo, g->hi, (double *)(void *)field);
    default:
        if (cli_long(cmd, g->name, v, (long)g->lo, (long)g->hi, &x))
            return -1;
        if (g->kind == GO_INT)
            *(int *)(void *)field = (int)x;
        else if (g->kind == GO_LONG)
            *(long *)(void *)field = x;
        else
            *(unsigned long *)(void *)field = (unsigned long)x;
        return 0;
    }
}

int topogen_take_option(topogen_opts *o, const char *cmd, bool with_name, int argc,
                        char **argv, int *i)
{
    for (size_t k = 0; k < sizeof GEN_OPTS / sizeof *GEN_OPTS; k++) {
        const gen_opt *g = &GEN_OPTS[k];
        if (strcmp(argv[*i], g->name) || (!with_name && !strcmp(g->name, "--name")))
            continue;
        const char *v;
        if (cli_value(cmd, argc, argv, i, &v) || set_option(o, cmd, g, v))
            return -1;
        return 1;
    }
    return 0;
}

int topogen_check_usage(const char *cmd, const topogen_opts *o, const topogen_data *d)
{
    gt_err e;
    topogen_opts c = *o;
    c.data = d;
    if (topogen_check(&c, d, &e))
        return cli_usage_error(cmd, "%s", e.msg);
    return EXIT_OK;
}
