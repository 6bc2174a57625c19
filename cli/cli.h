/* cli.h — what every subcommand shares: the -t/-m/JOB options, number
 * parsing that refuses junk, loading the world, and the exit-code contract
 * (0 success, 1 invalid input or infeasible job, 2 usage error). */
#ifndef GT_CLI_H
#define GT_CLI_H

#include <stdbool.h>
#include "sim/base/error.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/topology.h"
#include "sim/inputs/trace.h"

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };

typedef struct cli_common {
    const char *cmd;        /* "simulate", "plan", ... for messages */
    const char *topo_path;
    const char *model_arg;
    long batch, microbatch, seq, iterations;   /* -1 = not given */
    long accumulation;                         /* -1 = not given */
    int grad_bytes;                            /* 0 = not given */
    int recompute;                             /* -1 = not given */
    double opt_bytes;                          /* <= 0 = not given */
    const char *profile_path;                  /* --profile FILE */
    int precision;                             /* precision_kind, -1 = not given */
    int attention;                             /* 1 fused, 0 unfused, -1 = not given */
    int sequence_parallel;                     /* --sequence-parallel */
    profile prof;                              /* loaded by cli_load_job */
} cli_common;

void cli_init(cli_common *c, const char *cmd);
/* Consume argv[*i] (and its value) if it is -t, -m or a JOB option.
 * Returns 1 consumed, 0 not ours, -1 usage error (already printed). */
int cli_take_common(cli_common *c, int argc, char **argv, int *i);

/* Print "geotrain CMD: message" + "Try 'geotrain CMD --help'." and return 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print an input error and return 1. */
int cli_input_error(const gt_err *e);

/* Option value helpers: print a usage error and return -1 on junk. */
int cli_value(const char *cmd, int argc, char **argv, int *i, const char **out);
int cli_long(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out);
int cli_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
               double *out);

/* model_resolve, and for a catalog name that is not there the nearest one
 * users type ("gpt3-xll": "...; did you mean 'gpt3-xl'?"). */
int cli_model_resolve(const char *arg, model_spec *m, gt_err *e);
/* Load the topology (if -t was given) and the job (if -m was given). */
int cli_load_topology(const cli_common *c, topology *t, gt_err *e);
int cli_load_job(cli_common *c, job *j, gt_err *e);
/* The job, the topology and PLAN, for the commands that check or replay a
 * plan file. On failure nothing is left loaded; on success the caller frees
 * the plan, the topology and (cli_free) the job's profile. */
int cli_load_world_plan(cli_common *c, const char *plan_path, job *j, topology *t,
                        plan *p, gt_err *e);
/* The planners plan one pipeline flush per optimizer step: fails (with the
 * reason) when the job asks for gradient accumulation. */
int cli_job_plannable(const job *j, gt_err *e);
/* Release what cli_load_job loaded (the profile). */
void cli_free(cli_common *c);

/* An unknown option (or unexpected argument) of cmd: a usage error with
 * "did you mean --x?" when an option of the help text (or of the JOB block)
 * is one typo away. Returns EXIT_USAGE. */
int cli_unknown(const char *cmd, const char *arg, const char *help);
/* A comma-separated list value of opt: refuse an empty list or an empty
 * item ("greedy,", "memetic,,greedy", ",x"). 0 or -1 (usage error printed). */
int cli_check_list(const char *cmd, const char *opt, const char *spec);
/* Outputs of one run: at most one is "-" (standard output), no two name the
 * same file, and none is one of the run's inputs (same file, by device and
 * inode, or by name). NULL entries are skipped. 0 or -1 (printed). */
int cli_check_outputs(const char *cmd, const char *const *outs, int nout,
                      const char *const *ins, int nin);

/* "--opt=value" as "--opt" "value": a new argv (argv[argc] = NULL) the caller
 * frees with free(), or NULL when out of memory. Arguments after "--" and
 * those not starting with "--" are kept whole. */
char **cli_split_equals(int argc, char **argv, int *nargc);

/* The JOB options block for --help texts. */
extern const char CLI_JOB_HELP[];

#endif
