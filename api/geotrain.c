/* geotrain.c — the public C API (api/geotrain.h) over the internal library:
 * it loads the job as the command line does (cli/cli.c), replays with the
 * simulator (sim/engine/simulate.h) and plans with the registry (planner/). Results
 * carry their JSON text (printed as `geotrain simulate --json` prints it) so
 * that bindings (python/geotrain.py) need one call. */
#include "geotrain.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/objective.h"
#include "planner/planner.h"
#include "planner/planner_run.h"
#include "cli/cli.h"
#include "cli/version.h"
#include "sim/outputs/report.h"
#include "sim/engine/simulate.h"
#include "sim/models/plan_check.h"

struct geotrain_result {
    int status;
    char error[1024];
    char *json;
    double iteration_s, energy_j;
};

const char *geotrain_version(void)
{
    return cli_version();   /* the VERSION file, as `geotrain --version` prints it */
}

const char *geotrain_strerror(int status)
{
    switch (status) {
    case GEOTRAIN_OK: return "success";
    case GEOTRAIN_EINPUT: return "invalid input";
    case GEOTRAIN_EINFEASIBLE: return "infeasible job or plan";
    case GEOTRAIN_EARG: return "invalid argument";
    case GEOTRAIN_ENOMEM: return "out of memory";
    default: return "unknown status";
    }
}

static geotrain_result *new_result(void)
{
    geotrain_result *r = calloc(1, sizeof *r);
    if (r)
        r->iteration_s = r->energy_j = NAN;
    return r;
}

static int finish(geotrain_result *r, int status, const char *msg)
{
    r->status = status;
    snprintf(r->error, sizeof r->error, "%s", status == GEOTRAIN_OK ? "" : msg);
    return status;
}

/* The job and topology as `-t TOPO -m MODEL [JOB]` would load them. */
static int load_world(const geotrain_job *gj, cli_common *c, job *j, topology *t, gt_err *e)
{
    cli_init(c, "library");
    c->topo_path = gj->topology;
    c->model_arg = gj->model;
    c->batch = gj->batch > 0 ? gj->batch : -1;
    c->microbatch = gj->microbatch > 0 ? gj->microbatch : -1;
    c->seq = gj->seq > 0 ? gj->seq : -1;
    c->iterations = gj->iterations > 0 ? gj->iterations : -1;
    c->recompute = gj->recompute ? (int)RECOMPUTE_FULL : -1;
    c->profile_path = gj->profile;
    if (cli_load_job(c, j, e)) {
        cli_free(c);
        return -1;
    }
    if (cli_load_topology(c, t, e)) {
        cli_free(c);
        return -1;
    }
    return 0;
}

static int take_json(geotrain_result *r, json_t *root)
{
    size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12);
    r->json = root ? json_dumps(root, flags) : NULL;
    json_decref(root);
    return r->json ? finish(r, GEOTRAIN_OK, "") : finish(r, GEOTRAIN_ENOMEM, "out of memory");
}

static int run_simulate(geotrain_result *r, const geotrain_job *gj, const char *plan_path)
{
    cli_common c;
    job j;
    topology t;
    plan p;
    gt_err e = {{0}};
    if (load_world(gj, &c, &j, &t, &e))
        return finish(r, GEOTRAIN_EINPUT, e.msg);
    int rc = GEOTRAIN_OK;
    if (plan_load(&p, plan_path, &t, &e)) {
        rc = finish(r, GEOTRAIN_EINPUT, e.msg);
    } else {
        sim_options o;
        sim_options_default(&o);
        o.iterations = j.iterations;
        o.seed = gj->seed ? gj->seed : 1;
        sim_detail d;
        if (plan_check(&p, &t, &j, &e) || sim_detail_run(&t, &j, &p, &o, &d, &e)) {
            rc = finish(r, GEOTRAIN_EINFEASIBLE, e.msg);
        } else {
            r->iteration_s = d.res.iteration_s;
            r->energy_j = d.res.energy_j;
            rc = take_json(r, report_json(&t, &j, &p, &d));
            sim_detail_free(&d);
        }
        plan_free(&p);
    }
    topo_free(&t);
    cli_free(&c);
    return rc;
}

int geotrain_simulate(const geotrain_job *job, const char *plan_path, geotrain_result **out)
{
    if (!out)
        return GEOTRAIN_EARG;
    if (!(*out = new_result()))
        return GEOTRAIN_ENOMEM;
    if (!job || !job->topology || !job->model || !plan_path)
        return finish(*out, GEOTRAIN_EARG, "geotrain_simulate: job, topology, model and plan "
                                           "path are required");
    return run_simulate(*out, job, plan_path);
}

/* The plan and its replay as one document. */
static json_t *plan_result_json(const topology *t, const plan *p, const planner_run *pr,
                                const char *planner, const char *objective)
{
    json_t *o = json_object();
    json_object_set_new(o, "planner", json_string(planner));
    json_object_set_new(o, "objective", json_string(objective));
    json_object_set_new(o, "note", json_string(pr->st.note));
    json_object_set_new(o, "objective_value", json_real(pr->st.objective_value));
    json_object_set_new(o, "gpus", json_integer(pr->gpus));
    json_object_set_new(o, "pipelines", json_integer(pr->pipes));
    json_object_set_new(o, "iteration_s", json_real(pr->sim.iteration_s));
    json_object_set_new(o, "energy_j", json_real(pr->sim.energy_j));
    json_object_set_new(o, "tokens_per_s", json_real(pr->sim.tokens_per_s));
    json_object_set_new(o, "utilization", json_real(pr->sim.utilization));
    json_object_set_new(o, "plan", plan_to_json(p, t));
    return o;
}

static int run_plan(geotrain_result *r, const geotrain_job *gj, const planner_def *pd,
                    const char *objective, double budget_s, const char *plan_out)
{
    cli_common c;
    job j;
    topology t;
    gt_err e = {{0}};
    if (load_world(gj, &c, &j, &t, &e))
        return finish(r, GEOTRAIN_EINPUT, e.msg);
    planner_opts o;
    memset(&o, 0, sizeof o);
    o.objective = objective;
    o.seed = gj->seed ? gj->seed : 1;
    o.budget_s = budget_s;
    planner_run pr;
    plan p;
    planner_run_replay(pd, &t, &j, &o, -1, &pr, &p);
    int rc;
    if (pr.status != PLANNER_RUN_OK) {
        rc = finish(r, GEOTRAIN_EINFEASIBLE, pr.err);
    } else if (plan_out && plan_write(&p, &t, plan_out, &e)) {
        rc = finish(r, GEOTRAIN_EINPUT, e.msg);
    } else {
        r->iteration_s = pr.sim.iteration_s;
        r->energy_j = pr.sim.energy_j;
        rc = take_json(r, plan_result_json(&t, &p, &pr, pd->name, objective));
    }
    plan_free(&p);
    topo_free(&t);
    cli_free(&c);
    return rc;
}

int geotrain_plan(const geotrain_job *job, const char *planner, const char *objective_s,
                  double budget_s, const char *plan_out, geotrain_result **out)
{
    if (!out)
        return GEOTRAIN_EARG;
    if (!(*out = new_result()))
        return GEOTRAIN_ENOMEM;
    if (!job || !job->topology || !job->model)
        return finish(*out, GEOTRAIN_EARG, "geotrain_plan: job, topology and model are "
                                           "required");
    const planner_def *pd = planner_find(planner ? planner : "memetic");
    if (!pd) {
        char msg[256];
        snprintf(msg, sizeof msg, "unknown planner '%s'", planner);
        return finish(*out, GEOTRAIN_EARG, msg);
    }
    objective obj;
    gt_err e = {{0}};
    if (!objective_s)
        objective_s = "time";
    if (objective_parse(objective_s, &obj, &e))
        return finish(*out, GEOTRAIN_EARG, e.msg);
    if (budget_s < 0 || !isfinite(budget_s))
        return finish(*out, GEOTRAIN_EARG, "budget_s must be finite and >= 0");
    return run_plan(*out, job, pd, objective_s, budget_s, plan_out);
}

int geotrain_result_status(const geotrain_result *r)
{
    return r ? r->status : GEOTRAIN_EARG;
}

const char *geotrain_result_error(const geotrain_result *r)
{
    return r ? r->error : "no result";
}

const char *geotrain_result_json(const geotrain_result *r)
{
    return r && r->status == GEOTRAIN_OK ? r->json : NULL;
}

double geotrain_result_iteration_s(const geotrain_result *r)
{
    return r ? r->iteration_s : NAN;
}

double geotrain_result_energy_j(const geotrain_result *r)
{
    return r ? r->energy_j : NAN;
}

void geotrain_result_free(geotrain_result *r)
{
    if (!r)
        return;
    free(r->json);
    free(r);
}
