/* geotrain.h — the supported C API of libgeotrain (soname libgeotrain.so.0).
 *
 * Everything else under sim/, planner/, ... is internal and may change; this
 * header is the one `make install` installs and the one kept stable within a
 * major version. It needs nothing but the C standard library.
 *
 *   geotrain_job j = GEOTRAIN_JOB_INIT;
 *   j.topology = "topologies/yuan2022/case5.json";
 *   j.model = "gpt3-xl";
 *   geotrain_result *r;
 *   if (geotrain_simulate(&j, "topologies/plans/case5-rank-order.plan.json", &r) == GEOTRAIN_OK)
 *       printf("%.3f s\n", geotrain_result_iteration_s(r));
 *   else
 *       fprintf(stderr, "%s\n", geotrain_result_error(r));
 *   geotrain_result_free(r);
 *
 * Catalogs (gpus.csv, models.csv) are found through $GEOTRAIN_DATA, then
 * beside the running program, then ./topologies (docs/library.md). Calls are independent and keep no global
 * state; a result is owned by the caller until geotrain_result_free(). */
#ifndef GEOTRAIN_H
#define GEOTRAIN_H

#ifdef __cplusplus
extern "C" {
#endif

#define GEOTRAIN_VERSION_MAJOR 0
#define GEOTRAIN_VERSION_MINOR 1
#define GEOTRAIN_VERSION_PATCH 0

/* The training job: what `-t TOPO -m MODEL [JOB]` gives the command line. */
typedef struct geotrain_job {
    const char *topology;    /* topology JSON file (required) */
    const char *model;       /* catalog id ("gpt3-xl"), model JSON or Hugging Face config.json */
    long batch;              /* global batch in sequences; 0 = 1024 */
    long microbatch;         /* 0 = 1 (a plan file's own value wins in simulate) */
    long seq;                /* sequence length; 0 = the model's */
    int recompute;           /* 0 = none, 1 = full activation recomputation */
    long iterations;         /* iterations to simulate; 0 = 1 */
    unsigned long long seed; /* random seed; 0 = 1 */
    const char *profile;     /* per-layer profile CSV, or NULL */
} geotrain_job;

#define GEOTRAIN_JOB_INIT {0, 0, 0, 0, 0, 0, 0, 0, 0}

typedef enum geotrain_status {
    GEOTRAIN_OK = 0,
    GEOTRAIN_EINPUT = 1,      /* a file or value is invalid (the message says where) */
    GEOTRAIN_EINFEASIBLE = 2, /* no plan fits / the plan does not replay */
    GEOTRAIN_EARG = 3,        /* a NULL or unknown argument (planner name, objective) */
    GEOTRAIN_ENOMEM = 4
} geotrain_status;

typedef struct geotrain_result geotrain_result;

/* the VERSION file, e.g. "0.1.0" */
const char *geotrain_version(void);
/* A fixed description of a status ("invalid input", ...). */
const char *geotrain_strerror(int status);

/* Replay the plan file on the job: the figures of `geotrain simulate --json`.
 * *out is set (also on failure, to carry the message) unless memory ran out. */
int geotrain_simulate(const geotrain_job *job, const char *plan_path, geotrain_result **out);

/* Plan the job with `planner` (NULL = "memetic") for `objective` (NULL =
 * "time"; as `geotrain plan --objective`), within budget_s seconds (0 = the
 * planner's default), and replay the plan. With plan_out non-NULL the plan is
 * also written there (atomically) for geotrain_simulate / `geotrain simulate`. */
int geotrain_plan(const geotrain_job *job, const char *planner, const char *objective,
                  double budget_s, const char *plan_out, geotrain_result **out);

int geotrain_result_status(const geotrain_result *r);
/* One line naming file, line:column and field; "" when the status is OK. */
const char *geotrain_result_error(const geotrain_result *r);
/* The result as a JSON document (NULL unless OK); owned by the result. */
const char *geotrain_result_json(const geotrain_result *r);
/* Simulated seconds and joules per iteration (NaN unless OK). */
double geotrain_result_iteration_s(const geotrain_result *r);
double geotrain_result_energy_j(const geotrain_result *r);
void geotrain_result_free(geotrain_result *r);

#ifdef __cplusplus
}
#endif

#endif
