/* cmd_model.c — `geotrain model show MODEL [JOB] [--json]`: parameters, FLOPs
 * per iteration, memory and transfer sizes from the cost model. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/version.h"
#include "sim/models/cost.h"
#include "sim/base/jsonio.h"
#include "sim/models/dp_sync.h"
#include "sim/models/memory.h"

#define GIB 1073741824.0

static const char HELP[] =
    "usage: geotrain model show MODEL [JOB] [--json]\n\n"
    "Print what the cost model (docs/models.md, Cost) says about a model and job:\n"
    "parameters (per layer, embedding, head, total vs published), FLOPs per\n"
    "iteration, training state and activation memory, activation and gradient\n"
    "transfer sizes.\n\n"
    "  --json        machine-readable output (keys params, flops_per_iteration, ...)\n\n"
    "%s\n"
    "example: geotrain model show gpt3-xl --batch 1024 --seq 2048 --recompute full\n";

static json_t *model_json(const job *j)
{
    const model_spec *m = &j->model;
    int L = m->layers, b = j->microbatch;
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(m->id));
    json_object_set_new(o, "params", json_real(cost_model_params(m)));
    json_object_set_new(o, "params_published", json_real(m->params_published));
    json_object_set_new(o, "params_per_layer", json_real(cost_layer_params(m)));
    json_object_set_new(o, "embedding_params", json_real(cost_embedding_params(m)));
    json_object_set_new(o, "flops_per_iteration", json_real(cost_iteration_flops(j)));
    json_object_set_new(o, "batch", json_integer(j->batch));
    json_object_set_new(o, "microbatch", json_integer(b));
    json_object_set_new(o, "seq", json_integer(j->seq));
    json_object_set_new(o, "recompute",
                        json_string(j->recompute == RECOMPUTE_FULL ? "full" : "none"));
    json_object_set_new(o, "activation_transfer_bytes", json_real(cost_activation_bytes(j, b)));
    json_object_set_new(o, "gradient_bytes", json_real(dp_grad_bytes(j, 0, L - 1, 1)));
    json_object_set_new(o, "training_state_bytes",
                        json_real(memory_state_bytes_per_param(j) * cost_stage_params(m, 0, L - 1)));
    json_object_set_new(o, "activation_bytes_per_microbatch",
                        json_real(cost_stage_activation_bytes(j, b, 0, L - 1)));
    return o;
}

static void print_human(const job *j)
{
    const model_spec *m = &j->model;
    int L = m->layers, b = j->microbatch;
    double p = cost_model_params(m);
    printf("model %s: %d layers, hidden %d, %d heads (%d kv), ffn %d%s, vocab %d\n", m->id, L,
           m->hidden, m->heads, m->kv_heads, m->ffn, m->gated_mlp ? " (gated)" : "", m->vocab);
    printf("parameters        %.4g (%.4g per layer, embedding %.4g)", p, cost_layer_params(m),
           cost_embedding_params(m));
    if (m->params_published > 0)
        printf("; published %.4g (%+.2f %%)", m->params_published,
               100 * (p / m->params_published - 1));
    printf("\njob               batch %d x seq %d, microbatch %d, recompute %s\n", j->batch,
           j->seq, b, j->recompute == RECOMPUTE_FULL ? "full" : "none");
    printf("FLOPs/iteration   %.4e\n", cost_iteration_flops(j));
    printf("training state    %.2f GiB (%.0f bytes/param)\n",
           memory_state_bytes_per_param(j) * cost_stage_params(m, 0, L - 1) / GIB,
           memory_state_bytes_per_param(j));
    printf("activations       %.3f GiB per microbatch on one GPU holding all layers\n",
           cost_stage_activation_bytes(j, b, 0, L - 1) / GIB);
    printf("transfer sizes    activation %.2f MiB per microbatch; gradients %.2f GiB\n",
           cost_activation_bytes(j, b) / 1048576.0, dp_grad_bytes(j, 0, L - 1, 1) / GIB);
}

int cmd_model_show(int argc, char **argv)
{
    cli_common c;
    cli_init(&c, "model show");
    int as_json = 0;
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
        if (!strcmp(argv[i], "--json"))
            as_json = 1;
        else if (argv[i][0] == '-')
            return cli_unknown(c.cmd, argv[i], HELP);
        else if (!c.model_arg)
            c.model_arg = argv[i];
        else
            return cli_usage_error(c.cmd, "unexpected argument '%s'", argv[i]);
    }
    if (!c.model_arg)
        return cli_usage_error(c.cmd, "expected a MODEL");
    job j;
    gt_err e;
    if (cli_load_job(&c, &j, &e))
        return cli_input_error(&e);
    if (as_json) {
        json_t *o = model_json(&j);
        const char *ins[2] = {c.model_arg, c.profile_path};
        cli_add_provenance(o, ins, 2);
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        fputc('\n', stdout);
        json_decref(o);
    } else {
        print_human(&j);
    }
    return EXIT_OK;
}
