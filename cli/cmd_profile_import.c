/* cmd_profile_import.c — `geotrain profile import TRACE.json -o prof.csv`:
 * a PyTorch profiler (Kineto) trace of one training step becomes the
 * per-layer CSV that `--profile` reads (format in traces/README.md). */
#include <stdio.h>
#include <string.h>

#include "traces/kineto.h"
#include "sim/base/atomic_file.h"
#include "cli/cli.h"

static const char HELP[] =
    "usage: geotrain profile import TRACE.json -o PROFILE.csv --gpu ID --model ID\n"
    "                               --microbatch b --seq S\n\n"
    "Convert a PyTorch profiler / Kineto trace (Chrome-trace JSON, e.g. from\n"
    "torch.profiler's export_chrome_trace) of one training step into the per-layer\n"
    "profile CSV read by --profile (format: traces/README.md). Layers are found by\n"
    "name (nn.Module: ...layers.N, ...h.N, *Layer_N, embed*, lm_head); backward is\n"
    "a name with \"backward\" or the autograd thread; with GPU kernels in the trace,\n"
    "a layer's time is the kernels it launched (docs/library.md).\n\n"
    "  -o FILE          output CSV (written atomically; - for stdout)\n"
    "  --gpu ID         GPU type of the run (a topologies/gpus.csv id)\n"
    "  --model ID       model id the rows are for (as -m resolves it)\n"
    "  --microbatch b   sequences per microbatch in the profiled step\n"
    "  --seq S          sequence length of the profiled step\n\n"
    "example: geotrain profile import tests/fixtures/kineto-small.json -o prof.csv \\\n"
    "           --gpu a100_sxm_80gb --model llama2_7b --microbatch 1 --seq 4096\n";

typedef struct import_args {
    const char *trace, *out, *gpu, *model;
    long b, seq;
    kineto_times t;
} import_args;

static int write_rows(FILE *fp, void *ctx)
{
    const import_args *a = ctx;
    fprintf(fp, "# source: converted by geotrain profile import from %s (%s time; %d "
                "blocks, %d microbatch(es) per step)\n",
            a->trace, a->t.from_kernels ? "GPU kernel" : "CPU event", a->t.blocks,
            a->t.microbatches);
    fprintf(fp, "gpu,model,layer_kind,b,seq,fwd_ms,bwd_ms\n");
    for (int k = 0; k < 3; k++)
        if (a->t.fwd_us[k] > 0)
            fprintf(fp, "%s,%s,%s,%ld,%ld,%.6f,%.6f\n", a->gpu, a->model,
                    layer_kind_name((layer_kind)k), a->b, a->seq, a->t.fwd_us[k] / 1e3,
                    a->t.bwd_us[k] / 1e3);
    return ferror(fp) ? -1 : 0;
}

/* 0: run; -1: help printed; EXIT_USAGE: usage error printed. */
static int parse_args(int argc, char **argv, import_args *a)
{
    const char *cmd = "profile import";
    for (int i = 1; i < argc; i++) {
        const char *v = NULL, *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            fputs(HELP, stdout);
            return -1;
        }
        if (o[0] != '-') {
            if (a->trace)
                return cli_usage_error(cmd, "one trace file only (got '%s' and '%s')",
                                       a->trace, o);
            a->trace = o;
            continue;
        }
        if (cli_value(cmd, argc, argv, &i, &v))
            return EXIT_USAGE;
        if (!strcmp(o, "-o"))
            a->out = v;
        else if (!strcmp(o, "--gpu"))
            a->gpu = v;
        else if (!strcmp(o, "--model"))
            a->model = v;
        else if (!strcmp(o, "--microbatch")) {
            if (cli_long(cmd, o, v, 1, 1000000, &a->b))
                return EXIT_USAGE;
        } else if (!strcmp(o, "--seq")) {
            if (cli_long(cmd, o, v, 1, 100000000, &a->seq))
                return EXIT_USAGE;
        } else
            return cli_usage_error(cmd, "unknown option '%s'", o);
    }
    if (!a->trace || !a->out || !a->gpu || !a->model || a->b <= 0 || a->seq <= 0)
        return cli_usage_error(cmd, "needs TRACE.json, -o, --gpu, --model, --microbatch "
                                     "and --seq");
    if (strchr(a->gpu, ',') || strchr(a->model, ','))
        return cli_usage_error(cmd, "--gpu and --model ids cannot contain ','");
    if (!strcmp(a->trace, a->out))
        return cli_usage_error(cmd, "-o would overwrite the input trace");
    return 0;
}

int cmd_profile_import(int argc, char **argv)
{
    import_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? EXIT_OK : rc;
    gt_err e = {{0}};
    if (kineto_load(a.trace, &a.t, &e))
        return cli_input_error(&e);
    static const char *const KIND[] = {"embedding", "layer", "head"};
    for (int k = 0; k < 3; k++)
        if ((a.t.fwd_us[k] > 0) != (a.t.bwd_us[k] > 0) || (k == 1 && a.t.fwd_us[k] <= 0)) {
            gt_fail(&e, "%s: %s: %s time missing (the profile needs forward and backward; "
                        "annotate backward with a name holding \"backward\" or keep it on "
                        "autograd's thread)", a.trace, KIND[k],
                    a.t.fwd_us[k] > 0 ? "backward" : "forward");
            return cli_input_error(&e);
        }
    if (atomic_write(a.out, write_rows, &a, &e))
        return cli_input_error(&e);
    if (strcmp(a.out, "-"))
        fprintf(stderr, "profile import: %s -> %s (layer fwd %.6f ms, bwd %.6f ms; %s)\n",
                a.trace, a.out, a.t.fwd_us[1] / 1e3, a.t.bwd_us[1] / 1e3,
                a.t.from_kernels ? "GPU kernel time" : "CPU event time");
    return EXIT_OK;
}
