/* stage_costs.c — stage times kept across evaluations (stage_costs.h). */
#include "sim/estimator/stage_costs.h"

#include "sim/base/grow.h"

#include <stdlib.h>
#include <string.h>

#include "sim/inputs/trace.h"
#include "sim/models/dp_overlap.h"
#include "sim/models/workload.h"

#define STAGE_COSTS_MAX 8192 /* distinct stages before the cache starts over */

static size_t job_bytes(const job *j, unsigned char *buf, int cmp)
{
    size_t n = sizeof *j, rows = j->profile ? sizeof *j->profile->rows * (size_t)j->profile->n : 0;
    if (buf && cmp)
        return memcmp(buf, j, n) || (rows && memcmp(buf + n, j->profile->rows, rows)) ? 0
                                                                                       : n + rows;
    if (buf) {
        memcpy(buf, j, n);
        if (rows)
            memcpy(buf + n, j->profile->rows, rows);
    }
    return n + rows;
}

void stage_costs_clear(stage_costs *c)
{
    c->n = 0;
    if (c->h.keys)
        res_table_clear(&c->h);
}

int stage_costs_begin(stage_costs *c, const job *j)
{
    size_t n = job_bytes(j, NULL, 0);
    if (!c->h.keys) {
        c->ns = malloc(sizeof *c->ns * STAGE_COSTS_MAX);
        if (!c->ns || res_table_init(&c->h, STAGE_COSTS_MAX))
            return -1;
        c->cap = STAGE_COSTS_MAX;
    }
    if (c->job && n == c->job_len && job_bytes(j, c->job, 1) == n)
        return 1;
    stage_costs_clear(c);
    c->job_len = 0;
    if (gt_grow(&c->job, &c->job_cap, n, 1)) /* kept: jobs alternate in some callers */
        return -1;
    c->job_len = n;
    job_bytes(j, c->job, 0);
    return 0;
}

/* One key for (GPU type, TP degree, microbatch size, first, last layer), or
 * -1 when a field does not fit its bits (then the stage is not cached). */
static long stage_key(const topology *t, const plan *p, const plan_stage *st)
{
    long type = (long)(topo_gpu_type(t, st->gpus[0]) - t->types);
    if (type < 0 || type >= 1024 || st->ngpus < 1 || st->ngpus > 255 ||
        p->microbatch_size < 1 || p->microbatch_size > 4095 || st->first < 0 ||
        st->last >= 16384 || st->first > st->last) /* 10 + 8 + 12 + 14 + 14 bits */
        return -1;
    return (((type << 8 | st->ngpus) << 12 | p->microbatch_size) << 14 | st->first) << 14 |
           st->last;
}

int stage_costs_get(stage_costs *c, const topology *t, const job *j, const plan *p, int pi,
                    int k, int64_t *fwd_ns, int64_t *bwd_ns)
{
    /* per-pass sharding: the times depend on every replica's place */
    long key = c->h.keys && !dp_overlap_applies(p) ? stage_key(t, p, &p->pipes[pi].stages[k]) : -1;
    if (key < 0)
        return workload_stage_base_ns(t, j, p, pi, k, fwd_ns, bwd_ns);
    if (c->n >= c->cap)
        stage_costs_clear(c);
    bool added;
    int i = res_table_index(&c->h, key, c->n, &added);
    if (added) {
        if (workload_stage_base_ns(t, j, p, pi, k, &c->ns[i][0], &c->ns[i][1]))
            return -1;
        c->n++;
    }
    *fwd_ns = c->ns[i][0];
    *bwd_ns = c->ns[i][1];
    return 0;
}

void stage_costs_free(stage_costs *c)
{
    free(c->job);
    free(c->ns);
    if (c->h.keys)
        res_table_free(&c->h);
    memset(c, 0, sizeof *c);
}
