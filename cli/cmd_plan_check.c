/* cmd_plan_check.c — `geotrain plan check -t TOPO -m MODEL [JOB] PLAN`. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "sim/inputs/plan.h"
#include "sim/models/plan_check.h"

#define GIB 1073741824.0

static const char HELP[] =
    "usage: geotrain plan check -t TOPO -m MODEL [JOB] PLAN\n\n"
    "Check that a plan (docs/formats.md, Plan) runs on a topology and job: every\n"
    "GPU exists and is used at most once, every pipeline covers every layer exactly\n"
    "once, tensor-parallel GPUs share a node, microbatches x microbatch_size =\n"
    "batch, and every GPU's memory fits. Exit 0 and a summary, or 1 with the\n"
    "reason.\n\n%s";

int cmd_plan_check(int argc, char **argv)
{
    cli_common c;
    cli_init(&c, "plan check");
    const char *plan_path = NULL;
    for (int i = 1; i < argc; i++) {
        int r = cli_take_common(&c, argc, argv, &i);
        if (r < 0)
            return EXIT_USAGE;
        if (r)
            continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(HELP, CLI_JOB_HELP);
            return EXIT_OK;
        }
        if (argv[i][0] == '-')
            return cli_unknown(c.cmd, argv[i], HELP);
        if (plan_path)
            return cli_usage_error(c.cmd, "unexpected argument '%s'", argv[i]);
        plan_path = argv[i];
    }
    if (!plan_path || !c.topo_path || !c.model_arg)
        return cli_usage_error(c.cmd, "need -t TOPO, -m MODEL and a PLAN file");
    topology t;
    job j;
    plan p;
    gt_err e;
    if (cli_load_world_plan(&c, plan_path, &j, &t, &p, &e))
        return cli_input_error(&e);
    int rc = EXIT_OK;
    if (plan_check(&p, &t, &j, &e)) {
        fprintf(stderr, "error: %s: %s\n", plan_path, e.msg);
        rc = EXIT_INPUT;
    } else {
        double peak = 0;
        for (int g = 0; g < t.ngpus; g++) {
            double m = plan_gpu_memory(&p, &t, &j, g);
            peak = m > peak ? m : peak;
        }
        printf("%s: ok (%d pipelines, %d GPUs of %d, schedule %s, sync %s, microbatch "
               "size %d, peak memory %.2f GiB)\n", plan_path, p.npipes, plan_gpus_used(&p),
               t.ngpus, sched_name(p.schedule), sync_name(p.sync), p.microbatch_size,
               peak / GIB);
    }
    plan_free(&p);
    topo_free(&t);
    cli_free(&c);
    return rc;
}
