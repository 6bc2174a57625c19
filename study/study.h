/* study.h — random topology studies (`geotrain study`, docs/architecture.md, 11): N
 * generated topologies x jobs x planners x seeds, every plan replayed by the
 * simulator, one CSV row per run.
 *
 * Runs. Topology i (0-based) is topo_generate() of the given options with
 * seed = opts.seed + i, made in memory. The run index of (topology i, job j,
 * planner p, seed s) is ((i * njobs + j) * nplanners + p) * nseeds + s, which
 * is the order of the rows in a finished file. Planner seeds are first_seed ..
 * first_seed + nseeds - 1; the replay uses the planner seed too.
 *
 * The CSV (columns in study.c's HEADER, documented in `geotrain study
 * --help`). Inputs first (topology, topo_seed, topo_name, sites, gpus,
 * gpu_mix, job, model, batch, microbatch, seq, planner, seed, objective),
 * then outputs (status ok|infeasible|replay-failed, iteration_time_s,
 * energy_j, j_per_token, tokens_per_s, gpus_used, stages, pipelines,
 * objective_value, carbon_g, usd, evaluations, error) and last plan_time_s,
 * the planner's wall-clock time: the one column that differs between two
 * runs of the same study. Everything before it is a function of the
 * arguments (planners stopping on generations or stagnation, not on
 * --budget-s).
 *
 * Resuming. Rows are appended one at a time with a single write() and an
 * fsync, so a crash leaves whole rows and at most one partial last line. A
 * rerun on the same file drops that partial line, checks every row (same
 * header; its key (topology, job, planner, seed) is part of this study and
 * its input columns are what this study would write; no key twice) and runs
 * only the missing keys. When every run is in the file and the rows are not
 * in run order (after a resume, or from MPI ranks), the file is rewritten in
 * run order (temp file + rename), so a finished study is the same file
 * however it was run (plan_time_s aside).
 *
 * MPI (gt_par with size R > 1): run k goes to rank k mod R; rank 0 reads the
 * file, broadcasts which runs are done, writes its own rows and the rows the
 * other ranks send as they finish, and orders the file at the end.
 *
 * Library code: no printing; progress goes through the callback (rank 0). */
#ifndef GT_STUDY_H
#define GT_STUDY_H

#include <stdbool.h>
#include <stdint.h>
#include "planner/islands.h"
#include "planner/planner.h"
#include "sim/base/error.h"
#include "sim/inputs/job.h"
#include "topologies/gen.h"

typedef struct study_progress {
    long total;          /* runs in the study */
    long skipped;        /* already in the file when this session started */
    long done;           /* rows written in this session */
    double elapsed_s;    /* since this session started */
    const char *current; /* "topology 3 memetic seed 1" being run on rank 0, or "" */
    bool finished;       /* the last call */
} study_progress;

typedef void (*study_progress_fn)(void *ctx, const study_progress *p);

typedef struct study_spec {
    topogen_opts topo;          /* base options; topology i has seed topo.seed + i */
    int ntopos;
    const planner_def *const *planners;
    int nplanners;
    const job *jobs;            /* each with its model (j.model.id is written) */
    int njobs;
    int nseeds;
    uint64_t first_seed;
    const char *objective;      /* passed to planners; "time" when NULL */
    double budget_s;            /* per planner run, 0 = planner default */
    int generations;            /* 0 = planner default */
    int threads;                /* 0 = OpenMP default */
    const char *out;            /* the CSV file */
    const char *topo_dir;       /* also write topology-<i>.json here (NULL = no) */
    volatile int *stop;         /* set: stop after the current run (its row is dropped) */
    study_progress_fn progress;
    void *progress_ctx;
    const gt_par *par;          /* NULL = one process */
} study_spec;

typedef struct study_summary {
    long total, skipped, ran, ok;   /* ran / ok: this session, all ranks */
    bool complete;                  /* every run is in the file */
    bool dropped_partial;           /* a partial last line was removed */
    bool reordered;                 /* the file was rewritten in run order */
    bool interrupted;
} study_summary;

/* Run the study (every rank of spec->par calls it). 0 = success (check
 * sum->complete: false after a stop), -1 = error in e (bad file, cannot
 * generate a topology, I/O). */
int study_run(const study_spec *spec, study_summary *sum, gt_err *e);

/* The CSV header line (without the newline). */
const char *study_header(void);
/* Index of a column in the header, -1 if none. */
int study_column(const char *name);

#endif
