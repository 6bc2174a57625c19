/* plan_opts.c — command-line overrides of a plan's training options
 * (plan_opts.h). */
#include "cli/plan_opts.h"

#include <string.h>

#include "cli/cli.h"

void plan_opts_init(plan_opts *o)
{
    o->dp_shard = o->grad_sync = -1;
    o->bucket_mb = 0;
}

int plan_opts_take(plan_opts *o, const char *cmd, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    if (!strcmp(a, "--dp-shard")) {
        shard_kind s;
        if (cli_value(cmd, argc, argv, i, &v))
            return -1;
        if (shard_parse(v, &s)) {
            cli_usage_error(cmd, "--dp-shard expects none, zero1, zero2, zero3 or fsdp, got "
                                 "'%s'", v);
            return -1;
        }
        o->dp_shard = (int)s;
        return 1;
    }
    if (!strcmp(a, "--grad-sync")) {
        if (cli_value(cmd, argc, argv, i, &v))
            return -1;
        if (strcmp(v, "after_backward") && strcmp(v, "overlap")) {
            cli_usage_error(cmd, "--grad-sync expects after_backward or overlap, got '%s'", v);
            return -1;
        }
        o->grad_sync = strcmp(v, "overlap") ? GSYNC_AFTER_BACKWARD : GSYNC_OVERLAP;
        return 1;
    }
    if (!strcmp(a, "--grad-bucket-mb"))
        return cli_value(cmd, argc, argv, i, &v) ||
                       cli_double(cmd, a, v, 1e-3, 1e9, &o->bucket_mb) ? -1 : 1;
    return 0;
}

void plan_opts_apply(const plan_opts *o, plan *p)
{
    if (o->dp_shard >= 0)
        p->dp_shard = (shard_kind)o->dp_shard;
    if (o->grad_sync >= 0)
        p->grad_sync = (gsync_kind)o->grad_sync;
    if (o->bucket_mb > 0)
        p->bucket_mb = o->bucket_mb;
}
