/* cli.c — shared command-line handling (see cli.h). */
#include "cli/cli.h"
#include "sim/inputs/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/suggest.h"
#include "sim/base/grammar.h"

const char CLI_JOB_HELP[] =
    "Job (docs/models.md, Job):\n"
    "  -m, --model MODEL      catalog id (gpt3-xl, llama2-7b, ...) or a model JSON file\n"
    "                         (GeoTrain's, or a Hugging Face config.json)\n"
    "  --batch B              global batch in sequences (default 1024)\n"
    "  --microbatch b         microbatch size for planners (default 1)\n"
    "  --seq S                sequence length (default: the model's)\n"
    "  --recompute none|full|selective  activation recomputation (default none;\n"
    "                         selective redoes the attention core in backward)\n"
    "  --precision P          bf16 (default), fp16, fp8, tf32 or fp32: the GEMMs' peak\n"
    "  --attention auto|fused|flash2|triton|unfused  auto (default): per GPU type,\n"
    "                         the architecture's fused kernel where FlashAttention-2\n"
    "                         runs (Ampere+), else unfused softmax; or force the fused\n"
    "                         kernel, FlashAttention-2, the Triton FlashAttention\n"
    "                         kernel (refused on Volta) or unfused softmax\n"
    "  --sequence-parallel    Megatron sequence parallelism inside a TP group\n"
    "  --opt-bytes N          bytes per parameter of training state, >= 4 (2 weights +\n"
    "                         2 gradients + optimizer state; default 16)\n"
    "  --accumulation-steps K pipeline flushes per optimizer step (default: the\n"
    "                         plan's accumulation_steps, else 1)\n"
    "  --grad-dtype bf16|fp16|fp32  gradient element type, held and synced (default bf16)\n"
    "  --profile FILE         measured per-layer times overriding the FLOP formula\n"
    "                         (format in traces/README.md)\n";

static int cli_parse_kernel_opt(cli_common *c, int argc, char **argv, int *i);
#define CLI_RECOMPUTE_SELECTIVE 100

void cli_init(cli_common *c, const char *cmd)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->batch = c->microbatch = c->seq = c->iterations = c->accumulation = -1;
    c->recompute = -1;
    c->precision = c->attention = -1;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "geotrain %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'geotrain %s --help'.\n", cmd);
    return EXIT_USAGE;
}

int cli_input_error(const gt_err *e)
{
    fprintf(stderr, "error: %s\n", e->msg);
    return EXIT_INPUT;
}

int cli_value(const char *cmd, int argc, char **argv, int *i, const char **out)
{
    if (*i + 1 >= argc) {
        cli_usage_error(cmd, "option %s needs a value", argv[*i]);
        return -1;
    }
    *out = argv[++*i];
    return 0;
}

/* Numbers on the command line follow the input files' grammar
 * (sim/base/grammar.h): no hex, sign '+', spaces, inf/nan or overflow, so that
 * `--batch 0x10` or `--batch ' 5'` is refused, not read as 16 or 5. */
int cli_long(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out)
{
    long long v;
    if (gram_long(s, &v)) {
        cli_usage_error(cmd, "%s expects a decimal integer in [%ld, %ld] (digits only, no "
                             "sign, space or leading zero), got '%s'", opt, lo, hi,
                        gram_printable(s, (char[96]){0}, 96));
        return -1;
    }
    if (v < lo || v > hi) {
        cli_usage_error(cmd, "%s expects an integer in [%ld, %ld], got '%s'", opt, lo, hi, s);
        return -1;
    }
    *out = (long)v;
    return 0;
}

int cli_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
               double *out)
{
    double v;
    if (gram_number(s, &v)) {
        cli_usage_error(cmd, "%s expects a finite decimal number in [%g, %g] (e.g. 12.5 or "
                             "1e-3; no hex, inf, nan or spaces), got '%s'", opt, lo, hi,
                        gram_printable(s, (char[96]){0}, 96));
        return -1;
    }
    if (v < lo || v > hi) {
        cli_usage_error(cmd, "%s expects a number in [%g, %g], got '%s'", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_take_common(cli_common *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    if (!strcmp(a, "-t") || !strcmp(a, "--topology"))
        return cli_value(c->cmd, argc, argv, i, &c->topo_path) ? -1 : 1;
    if (!strcmp(a, "-m") || !strcmp(a, "--model"))
        return cli_value(c->cmd, argc, argv, i, &c->model_arg) ? -1 : 1;
    if (!strcmp(a, "--batch"))
        return cli_value(c->cmd, argc, argv, i, &v) ||
                       cli_long(c->cmd, a, v, 1, 100000000, &c->batch) ? -1 : 1;
    if (!strcmp(a, "--microbatch"))
        return cli_value(c->cmd, argc, argv, i, &v) ||
                       cli_long(c->cmd, a, v, 1, 100000000, &c->microbatch) ? -1 : 1;
    if (!strcmp(a, "--seq"))
        return cli_value(c->cmd, argc, argv, i, &v) ||
                       cli_long(c->cmd, a, v, 1, 10000000, &c->seq) ? -1 : 1;
    if (!strcmp(a, "--iterations"))
        return cli_value(c->cmd, argc, argv, i, &v) ||
                       cli_long(c->cmd, a, v, 1, 100000, &c->iterations) ? -1 : 1;
    if (!strcmp(a, "--accumulation-steps"))
        return cli_value(c->cmd, argc, argv, i, &v) ||
                       cli_long(c->cmd, a, v, 1, 1000000, &c->accumulation) ? -1 : 1;
    if (!strcmp(a, "--grad-dtype")) {
        if (cli_value(c->cmd, argc, argv, i, &v))
            return -1;
        if (!strcmp(v, "bf16") || !strcmp(v, "fp16"))
            c->grad_bytes = 2;
        else if (!strcmp(v, "fp32"))
            c->grad_bytes = 4;
        else {
            cli_usage_error(c->cmd, "--grad-dtype expects bf16, fp16 or fp32, got '%s'", v);
            return -1;
        }
        return 1;
    }
    if (!strcmp(a, "--opt-bytes"))
        return cli_value(c->cmd, argc, argv, i, &v) ||
                       cli_double(c->cmd, a, v, 4, 1024, &c->opt_bytes) ? -1 : 1;
    if (!strcmp(a, "--profile"))
        return cli_value(c->cmd, argc, argv, i, &c->profile_path) ? -1 : 1;
    if (!strcmp(a, "--recompute")) {
        if (cli_value(c->cmd, argc, argv, i, &v))
            return -1;
        if (!strcmp(v, "none"))
            c->recompute = RECOMPUTE_NONE;
        else if (!strcmp(v, "full"))
            c->recompute = RECOMPUTE_FULL;
        else if (!strcmp(v, "selective"))
            c->recompute = CLI_RECOMPUTE_SELECTIVE;
        else {
            cli_usage_error(c->cmd, "--recompute expects none, full or selective, got '%s'", v);
            return -1;
        }
        return 1;
    }
    return cli_parse_kernel_opt(c, argc, argv, i);
}

/* The kernel model's job options (sim/models/kernels.h). */
static int cli_parse_kernel_opt(cli_common *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    if (!strcmp(a, "--sequence-parallel")) {
        c->sequence_parallel = 1;
        return 1;
    }
    if (!strcmp(a, "--precision")) {
        precision_kind p;
        if (cli_value(c->cmd, argc, argv, i, &v))
            return -1;
        if (precision_parse(v, &p)) {
            cli_usage_error(c->cmd, "--precision expects bf16, fp16, fp8, tf32 or fp32, got '%s'",
                            v);
            return -1;
        }
        c->precision = (int)p;
        return 1;
    }
    if (!strcmp(a, "--attention")) {
        if (cli_value(c->cmd, argc, argv, i, &v))
            return -1;
        static const char *const kinds[] = {"unfused", "fused", "flash2", "triton", "auto"};
        c->attention = -1;
        for (int k = 0; k < 5; k++)
            if (!strcmp(v, kinds[k]))
                c->attention = k;
        if (c->attention < 0) {
            cli_usage_error(c->cmd, "--attention expects auto, fused, flash2, triton or unfused, "
                                    "got '%s'", v);
            return -1;
        }
        return 1;
    }
    return 0;
}

int cli_load_topology(const cli_common *c, topology *t, gt_err *e)
{
    if (!c->topo_path)
        return gt_fail(e, "no topology given (-t FILE)");
    return topo_load(t, c->topo_path, NULL, e);
}

void cli_free(cli_common *c)
{
    profile_free(&c->prof);
}

int cli_job_plannable(const job *j, gt_err *e)
{
    if (j->accumulation > 1)
        return gt_fail(e, "--accumulation-steps %d: the planners plan one pipeline flush per "
                          "optimizer step; accumulation is for simulate and plan check "
                          "(set accumulation_steps in the plan)", j->accumulation);
    return 0;
}

int cli_model_resolve(const char *arg, model_spec *m, gt_err *e)
{
    int rc = model_resolve(arg, m, e);
    if (rc != MODEL_UNKNOWN)
        return rc;
    char(*names)[64];
    int n;
    gt_err ne;
    if (model_typable_names(&names, &n, &ne))
        return -1; /* keep the first error */
    const char **ptr = malloc(sizeof *ptr * (size_t)(n ? n : 1));
    const char *near = NULL;
    if (ptr) {
        for (int i = 0; i < n; i++)
            ptr[i] = names[i];
        near = cli_nearest(arg, ptr, (size_t)n);
    }
    if (near) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        gt_fail(e, "%s; did you mean '%s'?", msg, near);
    }
    free(ptr);
    free(names);
    return -1;
}

int cli_load_world_plan(cli_common *c, const char *plan_path, job *j, topology *t, plan *p,
                        gt_err *e)
{
    if (cli_load_job(c, j, e))
        return -1;
    if (cli_load_topology(c, t, e)) {
        cli_free(c);
        return -1;
    }
    if (plan_load(p, plan_path, t, e)) {
        topo_free(t);
        cli_free(c);
        return -1;
    }
    return 0;
}

int cli_load_job(cli_common *c, job *j, gt_err *e)
{
    if (!c->model_arg)
        return gt_fail(e, "no model given (-m MODEL)");
    model_spec m;
    if (cli_model_resolve(c->model_arg, &m, e))
        return -1;
    job_defaults(j, &m);
    if (c->batch > 0)
        j->batch = (int)c->batch;
    if (c->microbatch > 0)
        j->microbatch = (int)c->microbatch;
    if (c->seq > 0)
        j->seq = (int)c->seq;
    if (c->iterations > 0)
        j->iterations = (int)c->iterations;
    if (c->recompute == CLI_RECOMPUTE_SELECTIVE)
        j->recompute_attention = true;
    else if (c->recompute >= 0)
        j->recompute = (recompute_kind)c->recompute;
    if (c->precision >= 0) {
        j->precision = (precision_kind)c->precision;
        j->precision_bytes = precision_act_bytes(j->precision);
    }
    if (c->attention >= 0 && c->attention <= 3) { /* 4 = auto, the default */
        j->attention = c->attention >= 1 ? ATTN_FUSED : ATTN_UNFUSED;
        j->attn_impl = c->attention >= 2 ? (attn_impl_kind)(c->attention - 1) : ATTN_DEFAULT;
    }
    j->sequence_parallel = c->sequence_parallel == 1;
    if (c->opt_bytes > 0)
        j->opt_bytes_per_param = c->opt_bytes;
    if (c->accumulation > 0)
        j->accumulation = (int)c->accumulation;
    if (c->grad_bytes > 0)
        j->grad_bytes = c->grad_bytes;
    if (c->profile_path) {
        gpu_catalog cat;
        if (gpu_catalog_load_default(&cat, e))
            return -1;
        int rc = profile_load(c->profile_path, &cat, &c->prof, e);
        if (!rc && (rc = profile_check_model(&c->prof, c->profile_path, m.id, e)))
            profile_free(&c->prof);
        gpu_catalog_free(&cat);
        if (rc)
            return -1;
        j->profile = &c->prof;
    }
    if (j->batch % j->microbatch)
        return gt_fail(e, "batch %d is not a multiple of microbatch %d", j->batch,
                       j->microbatch);
    return 0;
}

int cli_unknown(const char *cmd, const char *arg, const char *help)
{
    char near[64];
    const char *texts[] = {help, CLI_JOB_HELP, NULL};
    if (arg[0] == '-' && cli_nearest_option(arg, texts, near, sizeof near))
        return cli_usage_error(cmd, "unknown option '%s' (did you mean %s?)", arg, near);
    return cli_usage_error(cmd, arg[0] == '-' ? "unknown option '%s'"
                                              : "unexpected argument '%s'", arg);
}

int cli_check_list(const char *cmd, const char *opt, const char *spec)
{
    if (!*spec)
        return cli_usage_error(cmd, "%s: empty list", opt), -1;
    for (const char *p = spec;; p++) {
        const char *q = strchr(p, ',');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (!n) {
            cli_usage_error(cmd, "%s '%s': empty item at character %zu (items are separated "
                                 "by one comma, no comma at either end)", opt, spec,
                            (size_t)(p - spec) + 1);
            return -1;
        }
        if (!q)
            return 0;
        p = q;
    }
}

/* Same file: same name, or both exist with the same device and inode. */
static bool same_file(const char *a, const char *b)
{
    if (!strcmp(a, b))
        return true;
    struct stat sa, sb;
    return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_check_outputs(const char *cmd, const char *const *outs, int nout,
                      const char *const *ins, int nin)
{
    int stdout_n = 0;
    for (int i = 0; i < nout; i++) {
        if (!outs[i])
            continue;
        if (!strcmp(outs[i], "-")) {
            if (++stdout_n > 1)
                return cli_usage_error(cmd, "'-' (standard output) given for more than one "
                                            "output; '-' means stdout for exactly one"), -1;
            continue;
        }
        for (int k = 0; k < i; k++)
            if (outs[k] && strcmp(outs[k], "-") && same_file(outs[i], outs[k]))
                return cli_usage_error(cmd, "'%s' is given for two outputs", outs[i]), -1;
        for (int k = 0; k < nin; k++)
            if (ins[k] && strcmp(ins[k], "-") && same_file(outs[i], ins[k]))
                return cli_usage_error(cmd, "output '%s' is an input of this run; refusing to "
                                            "overwrite it", outs[i]), -1;
    }
    return 0;
}

char **cli_split_equals(int argc, char **argv, int *nargc)
{
    char **out = calloc((size_t)argc * 2 + 1, sizeof *out);
    if (!out)
        return NULL;
    int n = 0;
    bool plain = false;     /* after "--" */
    for (int i = 0; i < argc; i++) {
        char *a = argv[i], *eq = strchr(a, '=');
        if (!strcmp(a, "--"))
            plain = true;
        if (plain || i == 0 || strncmp(a, "--", 2) || !eq || eq == a + 2) {
            out[n++] = a;
            continue;
        }
        /* argv strings may be written to (C17 5.1.2.2.1): cut at the '=' */
        *eq = '\0';
        out[n++] = a;
        out[n++] = eq + 1;
    }
    out[n] = NULL;
    *nargc = n;
    return out;
}
