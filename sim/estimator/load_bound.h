/* load_bound.h — lower bounds from the load on shared resources, which the
 * contention-free recurrence misses (DESIGN 5).
 *
 * The estimator gives every transfer a link of its own. Where several
 * transfers share a NIC or a WAN link, the simulator's max-min sharing makes
 * them slower; these bounds say how much slower they must at least be, from
 * nothing but bytes over capacity, so the estimate remains a lower bound of
 * the replay and stays exact where nothing is shared:
 *   sync groups     the groups starting at or after time s cannot all finish
 *                   before s + their bytes on a resource / its capacity
 *   transfers       the activation/gradient transfers over a resource cannot
 *                   all finish before the earliest of them starts + their
 *                   bytes / capacity; after the last of them, its consumer
 *                   still runs every op left on its GPU, and then its lane's
 *                   drain: the optimizer, or the chain of lone transfers and
 *                   last ops its last op feeds (GPipe's and 1F1B's last
 *                   backward runs on through every earlier stage), if longer;
 *                   or, if longer still, the chain through the stages after
 *                   it (its op's output goes on to the next stage, whose lane
 *                   may have more left to run)
 * Each term is rounded so that no replay can be below it (load_floor_ns,
 * collective.h): the least latency as the replay rounds it, the bytes
 * rounded up after half a ns per flow (the replay's rounding of each
 * flow's end). */
#ifndef GT_LOAD_BOUND_H
#define GT_LOAD_BOUND_H

#include "sim/base/res_table.h"
#include "sim/models/collective.h"
#include "sim/models/timing.h"
#include "sim/inputs/topology.h"
#include "sim/models/workload.h"

/* Each sync group's bytes per resource, gathered while the groups are built. */
typedef struct sync_loads {
    struct group_ref *g;   /* each group's loads (not copied), its index and start */
    int ng, n;             /* groups, loads in all */
    size_t cap_g;
    coll_load **owned;     /* the loads sync_loads_add made, freed at the next reset */
    size_t nowned, cap_owned;
    long *key;             /* each distinct resource's key */
    size_t cap_key;
    struct group_load *tmp; /* the shared loads, and the sort's scratch */
    size_t cap_tmp, cap_cnt;
    int *cnt;              /* loads on each distinct resource (h's index) */
    struct res_key *rk;    /* the shared resources, in key order */
    size_t cap_rk;
    int *dense;            /* dense resource key -> index, -1 between uses */
    size_t cap_dense;
    res_table h;
    int cap_h;
    /* Loads that stay at one address while the caller's epoch holds (a
     * collective cache's entries; 0: none): the loads on each resource are
     * then counted across evaluations, only the groups whose loads differ
     * from the last evaluation's are counted again (sync_loads_bound). */
    unsigned long epoch;
    unsigned long kept_epoch;  /* the epoch rc and last are for (0: none) */
    unsigned long off_epoch;   /* an epoch with keys past the array: not counted */
    long rc_keys;              /* the keys rc, seen and at have room for */
    int *rc;                   /* per key: loads on it among the last groups */
    int *seen, *at;            /* per key: the bound that listed it; its place */
    size_t cap_rc[3];
    int stamp;
    struct group_ref *last;    /* the last evaluation's groups, by address of their loads */
    struct group_ref *cur;     /* this evaluation's, the same way (then swapped with last) */
    int nlast;
    size_t cap_last, cap_cur;
} sync_loads;

/* Before an evaluation's groups: no loads (the buffers kept). */
void sync_loads_reset(sync_loads *s);
int sync_loads_add(sync_loads *s, const coll_plan *c, const topology *t, const workload *w,
                   int group, int64_t start);
/* The same from loads already gathered (collective_loads' of the group),
 * which must stay in place until sync_loads_bound: they are read there,
 * not copied (a collective cache's entry, say). */
int sync_loads_push(sync_loads *s, const coll_load *l, int m, int group, int64_t start);
/* Raises tm->group_end of the last group on each shared resource (ndense:
 * lb_array_keys of the topology); 0, or -1 when out of memory. */
int sync_loads_bound(sync_loads *s, long ndense, timing *tm);
/* Resource keys below this index are gathered through an array of that
 * size, the rest through a hash table: every key of the topology (path.h:
 * per-pair ones too) when they number at most LB_ARRAY_KEYS_MAX, else the
 * dense ones (path_dense_count). */
#define LB_ARRAY_KEYS_MAX (1L << 18)
long lb_array_keys(const topology *t);
void sync_loads_free(sync_loads *s);

/* The transfer bound's work arrays, kept between evaluations (zeroed at
 * first; grown, never shrunk), and the sync groups' loads. */
typedef struct lb_work {
    sync_loads sl;
    struct stream_load *v, *res, *per;
    size_t cap_v, cap_res, cap_per;
    int *ri;               /* per entry's resource, then the resources' offsets */
    size_t cap_ri;
    int *dense;            /* dense resource key -> index, -1 between uses */
    size_t cap_dense;
    int64_t *tail;
    size_t cap_tail;
    int *slot;
    size_t cap_slot;
    int every_subset;      /* try every shared resource's subsets (the skip's oracle) */
    long array_keys;       /* 0: keys below lb_array_keys go through arrays; else below
                            * this (a test's choice: the hash table's oracle) */
    int64_t *drain;        /* per lane: least time from its last op's end to the iteration end */
    size_t cap_drain;
    int *last;             /* per lane: its last op */
    size_t cap_last;
    int *feed;             /* ops whose input is a lane's last op; then the chains' marks
                            * and walk */
    size_t cap_feed;
    res_table h;
    int cap_h;
    path_memo *pm;         /* the caller's paths of this topology, or NULL: path.h asked */
    unsigned long paths_epoch; /* pm's content while this holds (0: none): the per-stage
                                * transfer bound keeps its resources' results meanwhile */
    struct xfer_kept *kept; /* those results (xfer_kept.c), made on first use */
} lb_work;
void lb_work_free(lb_work *lw);
/* The bounds' array keys with lw's choice (lw->array_keys when set, else
 * lb_array_keys). */
long lb_work_array_keys(const lb_work *lw, const topology *t);

/* Raises tm->iteration_ns to the transfer bound (after timing_finish_lanes);
 * returns 0, or -1 when out of memory. */
int transfer_load_bound(const topology *t, const workload *w, timing *tm, lb_work *lw);

/* The transfers from one lane into another over the iteration (what
 * transfer_load_bound gathers from the ops; the per-stage path has them in
 * closed form). */
typedef struct xfer_stream {
    int src_lane, dst_lane;
    double bytes;          /* all of them */
    long count;            /* how many */
    int64_t first_start;   /* earliest transfer start */
    int64_t min_tail;      /* least time left once such a transfer's op may start: the work
                            * left on dst's lane (its op and the ops after it) plus the
                            * lane's drain (lane_drain_ns), or for forwards the chain
                            * through the later stages when longer */
} xfer_stream;

/* One candidate for a lane's drain (the least time from its last op's end to
 * the iteration end): its last op's output reaches a consumer after a lone
 * transfer of xfer_ns (the replay's can only be slower), the consumer's lane
 * still has next_work to run from that op on (inclusive), then its own
 * drain next_drain. A lane's drain is the largest of its optimizer step and
 * these candidates. The per-stage path chains them stage by stage (a
 * stage's last backward feeds the previous stage's last backward); the op
 * path finds the same from the ops. */
int64_t lane_drain_ns(int64_t xfer_ns, int64_t next_work, int64_t next_drain);

/* transfer_load_bound from streams given directly (one per lane pair):
 * through xfer_kept_bound when it applies, else the full pass. */
int transfer_streams_bound(const topology *t, const workload *w, const xfer_stream *s, int n,
                           timing *tm, lb_work *lw);

/* The same bound with each resource's result kept in lw across evaluations
 * while lw->paths_epoch holds (xfer_kept.c): only the resources a changed
 * stream crosses are worked out again. The figures are the full pass's to
 * the ns. 0; 1 when it does not apply (no path memo or epoch, the
 * every-subset oracle, keys past the array: the full pass must run, tm
 * untouched); -1 when out of memory. */
typedef struct xfer_kept xfer_kept;
int xfer_kept_bound(const topology *t, const workload *w, const xfer_stream *s, int n,
                    timing *tm, lb_work *lw);
/* Resources whose bounds the last xfer_kept_bound took as they were kept
 * (0 when none or k is NULL): for tests. */
int xfer_kept_taken(const xfer_kept *k);
void xfer_kept_free(xfer_kept *k);

#endif
