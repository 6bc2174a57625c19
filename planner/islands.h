/* islands.h — scale-out (docs/architecture.md): the MPI process group and the island
 * model of the memetic planner (`geotrain plan --islands`).
 *
 * This file and islands.c hold GeoTrain's only MPI code. Everything else
 * talks to the process group through gt_par, which is one process (rank 0 of
 * 1) when GeoTrain is built without MPI (no GT_MPI) or was not started by an
 * MPI launcher. `geotrain study` uses the same group to spread its runs.
 *
 * Island model. K islands evolve independent populations; every `epoch_gens`
 * generations each island sends its `migrants` best members to the next
 * island of a ring (i -> i+1 mod K). Island i lives on rank i mod R (R ranks),
 * so one process runs K islands one after the other, and the result does not
 * depend on R: `mpirun -n 4 ... --islands 4` and a single process with 4
 * islands compute the same plan. At the end the `final_k` best members of
 * every island go to island 0 (on rank 0), which picks the plan (for the
 * memetic planner: the finalists replayed by the simulator).
 *
 * islands_run() knows nothing of the memetic planner: it drives an island
 * through island_ops callbacks and moves migrants as opaque byte packets. The
 * genome packing helpers below turn memetic genomes into such packets.
 *
 * Stopping: after every epoch the ranks agree (one all-reduce) to stop when
 * every island reports done (stagnation or its own generation limit), when
 * cfg.max_gens generations have run, when any rank's clock passed
 * cfg.budget_s, or when *cfg.stop is set. With a generation budget the result
 * is deterministic; with a time budget it depends on speed, as for one
 * island.
 *
 * Library code: no printing, no exit; errors fill a gt_err. If one island
 * fails, every rank returns -1 (the message of the lowest failing rank is
 * sent to all). */
#ifndef GT_ISLANDS_H
#define GT_ISLANDS_H

#include <stdbool.h>
#include <stddef.h>
#include "encoding.h"
#include "planner.h"
#include "sim/base/error.h"
#include "sim/inputs/plan.h"

/* --- the process group ------------------------------------------------------- */

typedef struct gt_par {
    int rank, size;
    bool mpi;            /* MPI_Init was called by gt_par_begin */
    int foreign_size;    /* > 1: started by mpirun but built without MPI */
} gt_par;

/* Join the MPI job when built with MPI (GT_MPI) and started by an MPI launcher
 * (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE in the environment); otherwise one
 * process. Returns 0, or -1 when MPI_Init failed. */
int gt_par_begin(gt_par *p, gt_err *e);
void gt_par_end(gt_par *p);
/* Whether this build can use MPI. */
bool gt_par_built_with_mpi(void);

/* Collectives (no-ops on one process). The buffers must be the same size on
 * every rank unless said otherwise. */
void gt_par_bcast(const gt_par *p, void *buf, size_t len, int root);
/* Variable length from root: *buf (malloc'd) and *len on every rank; on the
 * root they are inputs (the buffer stays the caller's). Returns -1 on OOM. */
int gt_par_bcast_var(const gt_par *p, unsigned char **buf, size_t *len, int root);
void gt_par_max_int(const gt_par *p, int *v, int n);
void gt_par_min_int(const gt_par *p, int *v, int n);
void gt_par_sum_long(const gt_par *p, long *v, int n);
/* Point to point, for gathering text rows at rank 0: send `len` bytes with a
 * tag (>= 0); receive the next message from any rank (block = wait for one).
 * gt_par_recv returns 1 with *buf (malloc'd, NUL-terminated), 0 when
 * nothing is pending (block = false), -1 on OOM. */
void gt_par_send(const gt_par *p, int dest, int tag, const void *buf, size_t len);
int gt_par_recv(const gt_par *p, bool block, int *src, int *tag, char **buf, size_t *len);

/* --- the island model --------------------------------------------------------- */

typedef struct island_ops {
    void *ctx;   /* passed to create */
    /* Make island `island` of `nislands` (its own seed stream; island 0 of 1
     * should equal the plain planner). */
    int (*create)(void *ctx, int island, int nislands, void **state, gt_err *e);
    /* Run up to `gens` generations from the current population. *done = 1
     * when the island will not improve (stagnation counted across calls, its
     * own generation limit, or its stop flag). */
    int (*evolve)(void *state, int gens, int *done, gt_err *e);
    /* Pack up to k best distinct members into buf[cap]; returns the bytes
     * written (0 = none to send), or -1 if cap is too small. */
    long (*emigrate)(void *state, int k, unsigned char *buf, size_t cap);
    /* Take members packed by some island's emigrate (they replace the worst;
     * duplicates are dropped). */
    int (*immigrate)(void *state, const unsigned char *buf, size_t len, gt_err *e);
    /* Best objective value of the island so far (lower is better). */
    double (*best)(const void *state);
    /* Evaluations so far (may be NULL). */
    long (*evaluations)(const void *state);
    /* The island's result: the plan and stats (called on island 0 only). */
    int (*finish)(void *state, plan *out, planner_stats *st, gt_err *e);
    void (*destroy)(void *state);
    size_t packet_cap;   /* bytes enough for emigrate(max(migrants, final_k)) */
} island_ops;

typedef struct island_cfg {
    int islands;         /* K; 0 = one per rank */
    int epoch_gens;      /* generations between migrations (0 = 10) */
    int migrants;        /* members sent to the next island per epoch (0 = 2) */
    int final_k;         /* members of every island offered to island 0 at the end (0 = 3) */
    int max_gens;        /* generations per island, 0 = until every island is done */
    double budget_s;     /* wall clock, 0 = none */
    volatile int *stop;  /* set (e.g. by SIGINT): stop after the current epoch */
} island_cfg;

#define ISLANDS_DEFAULT_EPOCH 10
#define ISLANDS_DEFAULT_MIGRANTS 2
#define ISLANDS_DEFAULT_FINAL 3

typedef struct island_report {
    int islands, ranks;
    int epochs;          /* migrations happened after all but the last */
    int generations;     /* per island */
    long evaluations;    /* all islands */
    int best_island;     /* lowest ops->best before the final gathering (ties: lowest index) */
    bool have_plan;      /* this process holds *out (rank 0) */
    const char *stopped; /* "done", "generations", "time budget", "interrupted" */
} island_report;

/* Run the island model over the process group (NULL = one process). On the
 * rank holding island 0, *out and *st are the result (rep->have_plan). */
int islands_run(const gt_par *par, const island_ops *ops, const island_cfg *cfg, plan *out,
                planner_stats *st, island_report *rep, gt_err *e);

/* --- migrants: memetic genomes as packets --------------------------------------- */

/* Bytes of a packet of n genomes over N GPUs. */
size_t islands_packet_bytes(int n, int N);
/* Pack the genes of g[0..n-1] (shape S x D, microbatch index, schedule, sync,
 * the permutation; the decoded fields are not sent: the receiver decodes).
 * Returns the bytes written, or -1 if cap is too small. */
long islands_pack_genomes(const genome *const *g, int n, int N, unsigned char *buf, size_t cap);
/* Unpack up to `max` genomes into out[] (allocated by the caller with
 * genome_alloc(N)); *n = how many. Checks the packet: sizes, a permutation of
 * 0..N-1, enum ranges. Run enc_decode and evaluate before use. */
int islands_unpack_genomes(const unsigned char *buf, size_t len, int N, genome *out, int max,
                           int *n, gt_err *e);

#endif
