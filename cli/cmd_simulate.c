/* cmd_simulate.c — `geotrain simulate`: replay a plan and report (docs/cli.md, Outputs). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/atomic_file.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/version.h"
#include "sim/base/jsonio.h"
#include "sim/engine/prefill.h"
#include "sim/outputs/report.h"
#include "sim/engine/simulate.h"
#include "sim/outputs/timeline.h"
#include "sim/models/plan_check.h"
#include "cli/plan_opts.h"

static const char HELP[] =
    "usage: geotrain simulate -t TOPO -m MODEL [JOB] -p PLAN [options]\n\n"
    "Replay one training iteration of PLAN microbatch by microbatch over TOPO:\n"
    "forward/backward ops, activation and gradient transfers as flows sharing\n"
    "links max-min fairly, gradient sync, optimizer. Prints iteration time,\n"
    "joules, utilisation and the estimator's figure with the gap.\n\n"
    "Outputs:\n"
    "  --json FILE|-          report as JSON (stable keys: docs/cli.md, Outputs);\n"
    "                         '-' = stdout\n"
    "  --csv FILE|-           one row per GPU\n"
    "  --timeline FILE       Chrome trace events (open in ui.perfetto.dev); gzip when\n"
    "                         FILE ends in .gz, plain JSON otherwise\n"
    "Network:\n"
    "  --wan-policy fair|temporal  WAN sharing (default: per link, fair)\n"
    "  --tcp-connections K    TCP connections per WAN transfer (default: topology)\n"
    "BubbleTea (prefill in bubbles):\n"
    "  --prefill MODEL        inference model, e.g. llama3-8b\n"
    "  --prefill-mix FILE     prompt-length mix (default traces/prefill/azure_conv_2023.csv)\n"
    "  --prefill-guard-ms MS  guard band around training ops (default 1)\n"
    "  --prefill-chunk N      largest prefill chunk in tokens (default 512)\n"
    "Variation:\n"
    "  --iterations N         iterations to simulate (mean is reported; default 1)\n"
    "  --seed S               random seed (default 1)\n"
    "  --jitter CV            compute-time jitter, lognormal coefficient of variation\n"
    "  --stragglers P:F       each GPU straggles with probability P by factor F\n"
    "  --avail FILE           preemption events (traces/README.md)\n"
    "  --charge-unselected    charge idle power for GPUs the plan leaves unused\n"
    PLAN_OPTS_HELP "\n"
    "%s\n"
    "example:\n"
    "  geotrain simulate -t topologies/yuan2022/case5.json -m gpt3-xl --batch 1024 \\\n"
    "      -p topologies/plans/case5-rank-order.plan.json --timeline t.json.gz\n";

typedef struct sim_args {
    cli_common c;
    const char *plan, *json, *csv, *timeline, *prefill, *mix;
    double guard_ms;
    long chunk;
    sim_options o;
    plan_opts po;
} sim_args;

static int parse_stragglers(sim_args *a, const char *v)
{
    char *colon = strchr(v, ':');
    if (!colon)
        return cli_usage_error("simulate", "--stragglers expects P:F, e.g. 0.05:1.5");
    *colon = '\0';
    int rc = cli_double("simulate", "--stragglers P", v, 0, 1, &a->o.straggler_prob) ||
             cli_double("simulate", "--stragglers F", colon + 1, 1, 1000, &a->o.straggler_factor);
    *colon = ':';
    return rc ? EXIT_USAGE : 0;
}

static int parse_option(sim_args *a, int argc, char **argv, int *i)
{
    const char *arg = argv[*i], *v;
    long n;
    double x;
#define VALUE() if (cli_value("simulate", argc, argv, i, &v)) return EXIT_USAGE
    if (!strcmp(arg, "-p") || !strcmp(arg, "--plan")) { VALUE(); a->plan = v; }
    else if (!strcmp(arg, "--json")) { VALUE(); a->json = v; }
    else if (!strcmp(arg, "--csv")) { VALUE(); a->csv = v; }
    else if (!strcmp(arg, "--timeline")) { VALUE(); a->timeline = v; }
    else if (!strcmp(arg, "--prefill")) { VALUE(); a->prefill = v; }
    else if (!strcmp(arg, "--prefill-mix")) { VALUE(); a->mix = v; }
    else if (!strcmp(arg, "--avail")) { VALUE(); a->o.avail_trace = v; }
    else if (!strcmp(arg, "--charge-unselected")) a->o.charge_unselected = true;
    else if (!strcmp(arg, "--prefill-guard-ms")) {
        VALUE();
        if (cli_double("simulate", arg, v, 0, 1e6, &a->guard_ms)) return EXIT_USAGE;
    } else if (!strcmp(arg, "--prefill-chunk")) {
        VALUE();
        if (cli_long("simulate", arg, v, 1, 1000000, &a->chunk)) return EXIT_USAGE;
    } else if (!strcmp(arg, "--tcp-connections")) {
        VALUE();
        if (cli_long("simulate", arg, v, 1, 4096, &n)) return EXIT_USAGE;
        a->o.tcp_connections = (int)n;
    } else if (!strcmp(arg, "--seed")) {
        VALUE();
        if (cli_long("simulate", arg, v, 0, 0x7fffffffL, &n)) return EXIT_USAGE;
        a->o.seed = (uint64_t)n;
    } else if (!strcmp(arg, "--jitter")) {
        VALUE();
        if (cli_double("simulate", arg, v, 0, 10, &x)) return EXIT_USAGE;
        a->o.jitter_cv = x;
    } else if (!strcmp(arg, "--stragglers")) {
        VALUE();
        return parse_stragglers(a, v);
    } else if (!strcmp(arg, "--wan-policy")) {
        VALUE();
        wan_policy pol;
        if (wan_policy_parse(v, &pol)) {
            char names[128];
            wan_policy_list(names, sizeof names, "");
            return cli_usage_error("simulate", "--wan-policy expects %s, got '%s'", names, v);
        }
        a->o.wan_policy = (int)pol;
    } else if ((n = plan_opts_take(&a->po, "simulate", argc, argv, i)) != 0) {
        return n < 0 ? EXIT_USAGE : 0;
    } else {
        return cli_unknown("simulate", arg, HELP);
    }
#undef VALUE
    return 0;
}

enum { SIM_INPUTS = 7 };

/* The files this run reads (catalog ids and unset options are NULL or not files). */
static int sim_inputs(const sim_args *a, const char *ins[SIM_INPUTS])
{
    const char *v[SIM_INPUTS] = {a->c.topo_path, a->c.model_arg, a->plan, a->c.profile_path,
                                 a->o.avail_trace, a->mix, a->prefill};
    memcpy(ins, v, sizeof v);
    return SIM_INPUTS;
}

static int parse_args(sim_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    cli_init(&a->c, "simulate");
    sim_options_default(&a->o);
    plan_opts_init(&a->po);
    a->guard_ms = 1;
    a->chunk = 512;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(HELP, CLI_JOB_HELP);
            return -1;
        }
        int r = cli_take_common(&a->c, argc, argv, &i);
        if (r < 0)
            return EXIT_USAGE;
        if (r == 0 && (r = parse_option(a, argc, argv, &i)))
            return r;
    }
    if (!a->c.topo_path || !a->c.model_arg || !a->plan)
        return cli_usage_error("simulate", "need -t TOPO, -m MODEL and -p PLAN");
    if ((a->mix || a->guard_ms != 1 || a->chunk != 512) && !a->prefill)
        return cli_usage_error("simulate", "--prefill-mix/--prefill-guard-ms/--prefill-chunk "
                                           "need --prefill MODEL");
    if (a->c.iterations > 0)
        a->o.iterations = (int)a->c.iterations;
    const char *outs[3] = {a->json, a->csv, a->timeline}, *ins[SIM_INPUTS];
    if (cli_check_outputs("simulate", outs, 3, ins, sim_inputs(a, ins)))
        return EXIT_USAGE;
    return 0;
}

static json_t *prefill_json(const prefill_result *pf, const char *model)
{
    json_t *o = json_object();
    json_object_set_new(o, "model", json_string(model));
    json_object_set_new(o, "tokens_per_s", json_real(pf->tokens_per_s));
    json_object_set_new(o, "requests_per_s", json_real(pf->requests_per_s));
    json_object_set_new(o, "tokens_per_iteration", json_real(pf->tokens));
    json_object_set_new(o, "filled_gpu_s", json_real(pf->filled_s));
    json_object_set_new(o, "eligible_gpus", json_integer(pf->eligible_gpus));
    json_object_set_new(o, "utilization_before", json_real(pf->util_before));
    json_object_set_new(o, "utilization_after", json_real(pf->util_after));
    json_object_set_new(o, "mix_source", json_string(pf->mix_source));
    return o;
}

static int csv_writer(FILE *fp, void *ctx)
{
    void **c = ctx;
    return report_csv_write(fp, c[0], c[1], c[2]);
}

static int write_outputs(const sim_args *a, const topology *t, const job *j, const plan *p,
                         const sim_detail *d, const prefill_result *pf, gt_err *e)
{
    json_t *root = report_json(t, j, p, d);
    if (pf) {
        json_object_set_new(root, "prefill", prefill_json(pf, a->prefill));
        json_object_set_new(root, "utilization_with_prefill", json_real(pf->util_after));
    }
    const char *ins[SIM_INPUTS];
    cli_add_provenance(root, ins, sim_inputs(a, ins));
    int rc = 0;
    if (a->json)
        rc = json_write_atomic(root, a->json, e);
    json_decref(root);
    if (!rc && a->csv) {
        const void *ctx[3] = {t, p, d};
        rc = atomic_write(a->csv, csv_writer, (void *)ctx, e);
    }
    if (!rc && a->timeline)
        rc = timeline_write(a->timeline, t, d, pf, e);
    bool to_stdout = (a->json && !strcmp(a->json, "-")) || (a->csv && !strcmp(a->csv, "-")) ||
                     (a->timeline && !strcmp(a->timeline, "-"));
    if (!rc && !to_stdout) {    /* '-' gives stdout to that one output */
        report_human(stdout, t, j, p, d);
        if (pf)
            printf("\nBubbleTea prefill (%s): %.0f tokens/s, %.2f requests/s on %d of %d GPUs; "
                   "utilisation %.1f %% -> %.1f %%; training iteration unchanged\n",
                   a->prefill, pf->tokens_per_s, pf->requests_per_s, pf->eligible_gpus,
                   pf->gpus, 100 * pf->util_before, 100 * pf->util_after);
    }
    return rc;
}

static int run(const sim_args *a, const topology *t, const job *j, const plan *p, gt_err *e)
{
    sim_detail d;
    if (sim_detail_run(t, j, p, &a->o, &d, e))
        return -1;
    prefill_result pf;
    int have_pf = 0, rc = 0;
    if (a->prefill) {
        prefill_opts po = {.guard_s = a->guard_ms / 1e3, .chunk_tokens = (int)a->chunk,
                           .mix_path = a->mix, .seed = a->o.seed};
        rc = cli_model_resolve(a->prefill, &po.model, e) || prefill_fill(t, j, p, &d, &po, &pf, e);
        have_pf = !rc;
    }
    if (!rc)
        rc = write_outputs(a, t, j, p, &d, have_pf ? &pf : NULL, e);
    if (have_pf)
        prefill_free(&pf);
    sim_detail_free(&d);
    return rc;
}

int cmd_simulate(int argc, char **argv)
{
    sim_args a;
    int r = parse_args(&a, argc, argv);
    if (r)
        return r < 0 ? EXIT_OK : r;
    topology t;
    job j;
    plan p;
    gt_err e = {{0}};
    if (cli_load_job(&a.c, &j, &e) || cli_load_topology(&a.c, &t, &e))
        return cli_input_error(&e);
    /* --tcp-connections is a property of the network: the estimator (which
     * reads the topology's TCP cap) and the replay both see it */
    if (a.o.tcp_connections > 0)
        t.tcp_connections = a.o.tcp_connections;
    if (plan_load(&p, a.plan, &t, &e)) {
        topo_free(&t);
        return cli_input_error(&e);
    }
    plan_opts_apply(&a.po, &p);
    int rc;
    if (a.c.microbatch > 0 && a.c.microbatch != p.microbatch_size) {
        /* the plan fixes the microbatch size: never ignore the option silently */
        rc = cli_usage_error("simulate", "--microbatch %ld contradicts the plan's "
                             "microbatch_size %d (%s); a replay uses the plan's, drop "
                             "--microbatch or change the plan", a.c.microbatch,
                             p.microbatch_size, a.plan);
        plan_free(&p);
        topo_free(&t);
        cli_free(&a.c);
        return rc;
    }
    if (plan_check(&p, &t, &j, &e)) {
        fprintf(stderr, "error: %s: %s\n", a.plan, e.msg);
        rc = EXIT_INPUT;
    } else {
        rc = run(&a, &t, &j, &p, &e) ? cli_input_error(&e) : EXIT_OK;
    }
    plan_free(&p);
    topo_free(&t);
    cli_free(&a.c);
    return rc;
}
