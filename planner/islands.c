/* islands.c — the MPI process group and the island model (islands.h).
 * Every MPI call of GeoTrain is in the first part of this file, behind
 * GT_MPI; without it the group is one process and the collectives are
 * no-ops. */
#include "islands.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GT_MPI
#include <mpi.h>
#endif

/* --- the process group ------------------------------------------------------- */

/* The launcher's idea of the job size (0 = not started by an MPI launcher). */
static int launcher_size(int *rank)
{
    static const char *const SIZE[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    static const char *const RANK[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    int size = 0;
    *rank = 0;
    for (size_t k = 0; k < sizeof SIZE / sizeof *SIZE; k++) {
        const char *s = getenv(SIZE[k]), *r = getenv(RANK[k]);
        if (s && atoi(s) > size)
            size = atoi(s);
        if (r && atoi(r) > *rank)
            *rank = atoi(r);
        if (r && !size)
            size = 1; /* PMIx without a size variable: a launcher is there */
    }
    return size;
}

bool gt_par_built_with_mpi(void)
{
#ifdef GT_MPI
    return true;
#else
    return false;
#endif
}

int gt_par_begin(gt_par *p, gt_err *e)
{
    memset(p, 0, sizeof *p);
    p->size = 1;
    int rank, size = launcher_size(&rank);
#ifdef GT_MPI
    if (size > 0) {
        int init = 0, provided;
        MPI_Initialized(&init);
        if (!init && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return gt_fail(e, "MPI_Init failed");
        p->mpi = !init;
        MPI_Comm_rank(MPI_COMM_WORLD, &p->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &p->size);
    }
#else
    (void)e;
    if (size > 1) {
        p->foreign_size = size;
        p->rank = rank;
    }
#endif
    return 0;
}

void gt_par_end(gt_par *p)
{
#ifdef GT_MPI
    if (p->mpi)
        MPI_Finalize();
#endif
    p->mpi = false;
}

#ifdef GT_MPI
#define CHUNK (1 << 30)
static bool multi(const gt_par *p)
{
    return p && p->size > 1;
}
#endif

void gt_par_bcast(const gt_par *p, void *buf, size_t len, int root)
{
#ifdef GT_MPI
    if (!multi(p))
        return;
    for (size_t at = 0; at < len; at += CHUNK) {
        size_t n = len - at < CHUNK ? len - at : CHUNK;
        MPI_Bcast((char *)buf + at, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
    }
#else
    (void)p, (void)buf, (void)len, (void)root;
#endif
}

int gt_par_bcast_var(const gt_par *p, unsigned char **buf, size_t *len, int root)
{
    if (!p || p->size <= 1)
        return 0;
    unsigned long long n = *len;
    gt_par_bcast(p, &n, sizeof n, root);
    if (p->rank != root) {
        *len = (size_t)n;
        *buf = malloc(n ? (size_t)n : 1);
    }
    int bad = *buf == NULL;
    gt_par_max_int(p, &bad, 1);
    if (bad) {
        if (p->rank != root)
            free(*buf), *buf = NULL;
        return -1;
    }
    gt_par_bcast(p, *buf, (size_t)n, root);
    return 0;
}

void gt_par_max_int(const gt_par *p, int *v, int n)
{
#ifdef GT_MPI
    if (multi(p))
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#else
    (void)p, (void)v, (void)n;
#endif
}

void gt_par_min_int(const gt_par *p, int *v, int n)
{
#ifdef GT_MPI
    if (multi(p))
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#else
    (void)p, (void)v, (void)n;
#endif
}

void gt_par_sum_long(const gt_par *p, long *v, int n)
{
#ifdef GT_MPI
    if (multi(p))
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
#else
    (void)p, (void)v, (void)n;
#endif
}

static void par_min_double(const gt_par *p, double *v, int n)
{
#ifdef GT_MPI
    if (multi(p))
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
#else
    (void)p, (void)v, (void)n;
#endif
}

void gt_par_send(const gt_par *p, int dest, int tag, const void *buf, size_t len)
{
#ifdef GT_MPI
    if (multi(p))
        MPI_Send(buf, (int)len, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
#else
    (void)p, (void)dest, (void)tag, (void)buf, (void)len;
#endif
}

int gt_par_recv(const gt_par *p, bool block, int *src, int *tag, char **buf, size_t *len)
{
#ifdef GT_MPI
    if (!multi(p))
        return 0;
    MPI_Status s;
    int flag = 1, n;
    if (block)
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
    else
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &s);
    if (!flag)
        return 0;
    MPI_Get_count(&s, MPI_BYTE, &n);
    *buf = malloc((size_t)n + 1);
    if (!*buf)
        return -1;
    MPI_Recv(*buf, n, MPI_BYTE, s.MPI_SOURCE, s.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    (*buf)[n] = '\0';
    *src = s.MPI_SOURCE;
    *tag = s.MPI_TAG;
    *len = (size_t)n;
    return 1;
#else
    (void)p, (void)block, (void)src, (void)tag, (void)buf, (void)len;
    return 0;
#endif
}

/* --- the island model --------------------------------------------------------- */

typedef struct isl_run {
    const gt_par *par;
    const island_ops *ops;
    island_cfg cfg;
    int K;
    void **st;                 /* [K]: this rank's islands, NULL elsewhere */
    unsigned char **pkt;       /* [K] packets of the current exchange */
    size_t *len;               /* [K] */
    double t0;
} isl_run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool owned(const isl_run *r, int i)
{
    return i % r->par->size == r->par->rank;
}

/* Every rank learns whether some rank failed; the lowest failing rank's
 * message goes to all. Returns 0 or -1 on every rank alike. */
static int agree(const isl_run *r, int rc, gt_err *e)
{
    int who = rc ? r->par->rank : INT_MAX;
    gt_par_min_int(r->par, &who, 1);
    if (who == INT_MAX)
        return 0;
    gt_par_bcast(r->par, e->msg, sizeof e->msg, who);
    return -1;
}

static void run_free(isl_run *r)
{
    for (int i = 0; i < r->K; i++) {
        if (r->st && r->st[i])
            r->ops->destroy(r->st[i]);
        if (r->pkt)
            free(r->pkt[i]);
    }
    free(r->st);
    free(r->pkt);
    free(r->len);
}

static int run_init(isl_run *r, const gt_par *par, const island_ops *ops, const island_cfg *cfg,
                    gt_err *e)
{
    memset(r, 0, sizeof *r);
    r->par = par;
    r->ops = ops;
    r->cfg = *cfg;
    r->K = cfg->islands > 0 ? cfg->islands : par->size;
    if (r->cfg.epoch_gens <= 0)
        r->cfg.epoch_gens = ISLANDS_DEFAULT_EPOCH;
    if (r->cfg.migrants <= 0)
        r->cfg.migrants = ISLANDS_DEFAULT_MIGRANTS;
    if (r->cfg.final_k <= 0)
        r->cfg.final_k = ISLANDS_DEFAULT_FINAL;
    r->t0 = now_s();
    r->st = calloc((size_t)r->K, sizeof *r->st);
    r->pkt = calloc((size_t)r->K, sizeof *r->pkt);
    r->len = calloc((size_t)r->K, sizeof *r->len);
    int rc = (!r->st || !r->pkt || !r->len) ? gt_fail(e, "out of memory") : 0;
    for (int i = 0; i < r->K && !rc; i++)
        if (owned(r, i))
            rc = ops->create(ops->ctx, i, r->K, &r->st[i], e);
    return agree(r, rc, e);
}

/* Each island packs k members; the packets go to every rank. */
static int exchange(isl_run *r, int k, gt_err *e)
{
    int rc = 0;
    for (int i = 0; i < r->K; i++) {
        free(r->pkt[i]); /* all ours: packed here or received by gt_par_bcast_var */
        r->pkt[i] = NULL;
        r->len[i] = 0;
    }
    for (int i = 0; i < r->K && !rc; i++) {
        if (!owned(r, i))
            continue;
        r->pkt[i] = malloc(r->ops->packet_cap ? r->ops->packet_cap : 1);
        long n = r->pkt[i] ? r->ops->emigrate(r->st[i], k, r->pkt[i], r->ops->packet_cap) : -2;
        if (n < 0)
            rc = gt_fail(e, n == -2 ? "out of memory" : "island %d: migrants exceed %zu bytes",
                         i, r->ops->packet_cap);
        r->len[i] = n > 0 ? (size_t)n : 0;
    }
    if (agree(r, rc, e))
        return -1;
    for (int i = 0; i < r->K && !rc; i++)
        rc = gt_par_bcast_var(r->par, &r->pkt[i], &r->len[i], i % r->par->size)
                 ? gt_fail(e, "out of memory")
                 : 0;
    return agree(r, rc, e);
}

/* Ring migration: island i takes island i-1's packet. */
static int migrate(isl_run *r, gt_err *e)
{
    if (r->K < 2)
        return 0;
    if (exchange(r, r->cfg.migrants, e))
        return -1;
    int rc = 0;
    for (int i = 0; i < r->K && !rc; i++) {
        int from = (i + r->K - 1) % r->K;
        if (owned(r, i) && r->len[from])
            rc = r->ops->immigrate(r->st[i], r->pkt[from], r->len[from], e);
    }
    return agree(r, rc, e);
}

enum { F_NOT_DONE, F_TIME, F_STOP, F_N };

/* One epoch on this rank's islands; flags agreed over the group. */
static int epoch(isl_run *r, int gens, int flags[F_N], gt_err *e)
{
    int rc = 0;
    flags[F_NOT_DONE] = flags[F_TIME] = flags[F_STOP] = 0;
    for (int i = 0; i < r->K && !rc; i++) {
        if (!owned(r, i))
            continue;
        int done = 0;
        rc = r->ops->evolve(r->st[i], gens, &done, e);
        flags[F_NOT_DONE] |= !done;
    }
    if (agree(r, rc, e))
        return -1;
    flags[F_TIME] = r->cfg.budget_s > 0 && now_s() - r->t0 >= r->cfg.budget_s;
    flags[F_STOP] = r->cfg.stop && *r->cfg.stop;
    gt_par_max_int(r->par, flags, F_N);
    return 0;
}

static int evolve_all(isl_run *r, island_report *rep, gt_err *e)
{
    for (;;) {
        int gens = r->cfg.epoch_gens, flags[F_N];
        if (r->cfg.max_gens > 0 && r->cfg.max_gens - rep->generations < gens)
            gens = r->cfg.max_gens - rep->generations;
        if (epoch(r, gens, flags, e))
            return -1;
        rep->epochs++;
        rep->generations += gens;
        rep->stopped = flags[F_STOP]                                         ? "interrupted"
                       : flags[F_TIME]                                       ? "time budget"
                       : !flags[F_NOT_DONE]                                  ? "done"
                       : r->cfg.max_gens && rep->generations >= r->cfg.max_gens ? "generations"
                                                                               : NULL;
        if (rep->stopped)
            return 0;
        if (migrate(r, e))
            return -1;
    }
}

/* Best island and total evaluations, over the group. */
static int census(isl_run *r, island_report *rep)
{
    double *best = malloc(sizeof *best * (size_t)r->K);
    if (!best)
        return -1;
    long ev = 0;
    for (int i = 0; i < r->K; i++) {
        best[i] = owned(r, i) ? r->ops->best(r->st[i]) : INFINITY;
        if (owned(r, i) && r->ops->evaluations)
            ev += r->ops->evaluations(r->st[i]);
    }
    par_min_double(r->par, best, r->K);
    gt_par_sum_long(r->par, &ev, 1);
    rep->best_island = 0;
    for (int i = 1; i < r->K; i++)
        if (best[i] < best[rep->best_island])
            rep->best_island = i;
    rep->evaluations = ev;
    free(best);
    return 0;
}

/* Every island's final_k best go to island 0, which picks the plan. */
static int finish(isl_run *r, plan *out, planner_stats *st, island_report *rep, gt_err *e)
{
    int rc = census(r, rep) ? gt_fail(e, "out of memory") : 0;
    if (agree(r, rc, e) || (r->K > 1 && exchange(r, r->cfg.final_k, e)))
        return -1;
    rep->have_plan = owned(r, 0);
    if (rep->have_plan) {
        long ev0 = r->ops->evaluations ? r->ops->evaluations(r->st[0]) : 0;
        for (int i = 1; i < r->K && !rc; i++)
            if (r->len[i])
                rc = r->ops->immigrate(r->st[0], r->pkt[i], r->len[i], e);
        memset(st, 0, sizeof *st);
        if (!rc)
            rc = r->ops->finish(r->st[0], out, st, e);
        if (!rc) {
            if (r->ops->evaluations)
                st->evaluations += rep->evaluations - ev0;
            st->plan_time_s = now_s() - r->t0;
            char note[sizeof st->note];
            snprintf(note, sizeof note, "%d island%s on %d rank%s, %d epochs of %d generations, "
                     "stopped by %s; %s", r->K, r->K > 1 ? "s" : "", r->par->size,
                     r->par->size > 1 ? "s" : "",
                     rep->epochs, r->cfg.epoch_gens, rep->stopped, st->note);
            memcpy(st->note, note, sizeof note);
        }
    }
    rc = agree(r, rc, e);
    if (rc && rep->have_plan)
        rep->have_plan = false;
    return rc;
}

int islands_run(const gt_par *par, const island_ops *ops, const island_cfg *cfg, plan *out,
                planner_stats *st, island_report *rep, gt_err *e)
{
    gt_par solo = {.rank = 0, .size = 1};
    if (!par || par->size < 1)
        par = &solo;
    memset(rep, 0, sizeof *rep);
    rep->ranks = par->size;
    isl_run r;
    int rc = run_init(&r, par, ops, cfg, e);
    rep->islands = r.K;
    if (!rc)
        rc = evolve_all(&r, rep, e);
    if (!rc)
        rc = finish(&r, out, st, rep, e);
    run_free(&r);
    return rc;
}

/* --- migrants: memetic genomes as packets --------------------------------------- */

enum { G_S, G_D, G_BI, G_SCHED, G_SYNC, G_HEAD };

size_t islands_packet_bytes(int n, int N)
{
    return sizeof(int32_t) * (2 + (size_t)n * (G_HEAD + (size_t)N));
}

static void put32(unsigned char *buf, size_t *at, int32_t v)
{
    memcpy(buf + *at, &v, sizeof v);
    *at += sizeof v;
}

static int32_t get32(const unsigned char *buf, size_t *at)
{
    int32_t v;
    memcpy(&v, buf + *at, sizeof v);
    *at += sizeof v;
    return v;
}

long islands_pack_genomes(const genome *const *g, int n, int N, unsigned char *buf, size_t cap)
{
    size_t need = islands_packet_bytes(n, N), at = 0;
    if (need > cap || need > LONG_MAX)
        return -1;
    put32(buf, &at, n);
    put32(buf, &at, N);
    for (int k = 0; k < n; k++) {
        put32(buf, &at, g[k]->S);
        put32(buf, &at, g[k]->D);
        put32(buf, &at, g[k]->bi);
        put32(buf, &at, (int32_t)g[k]->sched);
        put32(buf, &at, (int32_t)g[k]->sync);
        for (int i = 0; i < N; i++)
            put32(buf, &at, g[k]->perm[i]);
    }
    return (long)need;
}

static int check_genes(const int32_t *h, const int *perm, int N, unsigned char *seen,
                       gt_err *e)
{
    if (h[G_S] < 1 || h[G_D] < 1 || (long)h[G_S] * h[G_D] > N)
        return gt_fail(e, "migrant packet: shape %d x %d over %d GPUs", h[G_S], h[G_D], N);
    if (h[G_BI] < 0 || h[G_BI] >= ENC_MAX_B || h[G_SCHED] < 0 || h[G_SCHED] > SCHED_INTERLEAVED ||
        h[G_SYNC] < 0 || h[G_SYNC] >= SYNC_COUNT)
        return gt_fail(e, "migrant packet: microbatch, schedule or sync out of range");
    memset(seen, 0, (size_t)N);
    for (int i = 0; i < N; i++) {
        if (perm[i] < 0 || perm[i] >= N || seen[perm[i]])
            return gt_fail(e, "migrant packet: not a permutation of the %d GPUs", N);
        seen[perm[i]] = 1;
    }
    return 0;
}

/* One genome at buf[*at]: into g if its genes are valid. */
static int unpack_one(const unsigned char *buf, size_t *at, int N, unsigned char *seen,
                      genome *g, gt_err *e)
{
    int32_t h[G_HEAD];
    for (int k = 0; k < G_HEAD; k++)
        h[k] = get32(buf, at);
    for (int i = 0; i < N; i++)
        g->perm[i] = get32(buf, at);
    if (check_genes(h, g->perm, N, seen, e))
        return -1;
    g->S = h[G_S];
    g->D = h[G_D];
    g->bi = h[G_BI];
    g->sched = (sched_kind)h[G_SCHED];
    g->sync = (sync_kind)h[G_SYNC];
    g->status = 0;
    g->fit = INFINITY;
    g->hash = 0;
    return 0;
}

int islands_unpack_genomes(const unsigned char *buf, size_t len, int N, genome *out, int max,
                           int *n, gt_err *e)
{
    *n = 0;
    size_t at = 0;
    if (len < 2 * sizeof(int32_t))
        return gt_fail(e, "migrant packet: %zu bytes, too short", len);
    int32_t cnt = get32(buf, &at), gpus = get32(buf, &at);
    if (gpus != N || cnt < 0 || islands_packet_bytes(cnt, N) != len)
        return gt_fail(e, "migrant packet: %d genomes over %d GPUs in %zu bytes (expected %d "
                          "GPUs)", cnt, gpus, len, N);
    unsigned char *seen = malloc((size_t)N);
    if (!seen)
        return gt_fail(e, "out of memory");
    int rc = 0, take = cnt < max ? cnt : max;
    for (int k = 0; k < take && !rc; k++)
        if (!(rc = unpack_one(buf, &at, N, seen, &out[k], e)))
            *n = k + 1;
    free(seen);
    return rc;
}
