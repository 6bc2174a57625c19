/* timing.c — storage for op/lane/group times and the end-of-iteration
 * bookkeeping shared by estimator and simulator (timing.h). */
#include "sim/models/timing.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"

/* Zeroed arrays for w's lanes and groups, and its ops when `ops`. */
static int alloc_arrays(timing *tm, const workload *w, bool ops, gt_err *e)
{
    memset(tm, 0, sizeof *tm);
    tm->ops = ops ? calloc((size_t)(w->nops > 0 ? w->nops : 1), sizeof *tm->ops) : NULL;
    tm->lanes = calloc((size_t)(w->nlanes > 0 ? w->nlanes : 1), sizeof *tm->lanes);
    tm->group_start = calloc((size_t)(w->ngroups > 0 ? w->ngroups : 1), sizeof(int64_t));
    tm->group_end = calloc((size_t)(w->ngroups > 0 ? w->ngroups : 1), sizeof(int64_t));
    if ((ops && !tm->ops) || !tm->lanes || !tm->group_start || !tm->group_end) {
        timing_free(tm);
        return gt_fail(e, "out of memory for the timeline of %d ops", w->nops);
    }
    return 0;
}

int timing_alloc(timing *tm, const workload *w, gt_err *e)
{
    return alloc_arrays(tm, w, true, e);
}

int timing_copy(timing *dst, const timing *src, const workload *w, bool ops, gt_err *e)
{
    if (alloc_arrays(dst, w, ops, e))
        return -1;
    if (ops)
        memcpy(dst->ops, src->ops, sizeof *src->ops * (size_t)w->nops);
    memcpy(dst->lanes, src->lanes, sizeof *src->lanes * (size_t)w->nlanes);
    memcpy(dst->group_start, src->group_start, sizeof(int64_t) * (size_t)w->ngroups);
    memcpy(dst->group_end, src->group_end, sizeof(int64_t) * (size_t)w->ngroups);
    dst->iteration_ns = src->iteration_ns;
    dst->unbounded_ns = src->unbounded_ns;
    dst->xfer_all_ns = src->xfer_all_ns;
    dst->xfer_subset_ns = src->xfer_subset_ns;
    dst->wan_bytes = src->wan_bytes;
    return 0;
}

/* Grows one array to n entries (at least one), zeroing the n in use. */
static int reuse(void **v, int *cap, int n, size_t size)
{
    n = n > 0 ? n : 1;
    if (n > *cap) {
        void *x = realloc(*v, size * (size_t)n);
        if (!x)
            return -1;
        *v = x;
        *cap = n;
    }
    memset(*v, 0, size * (size_t)n);
    return 0;
}

int timing_reuse(timing *tm, int cap[3], const workload *w, gt_err *e)
{
    op_time *ops = tm->ops;
    lane_time *lanes = tm->lanes;
    int64_t *gs = tm->group_start, *ge = tm->group_end;
    int gcap = cap[2];
    int64_t *scratch = tm->scratch;
    size_t cap_scratch = tm->cap_scratch;
    memset(tm, 0, sizeof *tm);
    int rc = reuse((void **)&ops, &cap[0], w->nops, sizeof *ops) |
             reuse((void **)&lanes, &cap[1], w->nlanes, sizeof *lanes) |
             reuse((void **)&gs, &gcap, w->ngroups, sizeof *gs) |
             reuse((void **)&ge, &cap[2], w->ngroups, sizeof *ge);
    *tm = (timing){.ops = ops, .lanes = lanes, .group_start = gs, .group_end = ge,
                   .scratch = scratch, .cap_scratch = cap_scratch};
    if (rc)
        return gt_fail(e, "out of memory for the timeline of %d ops", w->nops);
    return 0;
}

void timing_free(timing *tm)
{
    free(tm->ops);
    free(tm->lanes);
    free(tm->group_start);
    free(tm->group_end);
    free(tm->scratch);
    memset(tm, 0, sizeof *tm);
}

/* Length of the union of intervals [s[i], e[i]) (n is small: the groups one
 * lane belongs to). Sorted by insertion. */
static int64_t union_length(int64_t *s, int64_t *e, int n)
{
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && s[k] < s[k - 1]; k--) {
            int64_t ts = s[k], te = e[k];
            s[k] = s[k - 1];
            e[k] = e[k - 1];
            s[k - 1] = ts;
            e[k - 1] = te;
        }
    int64_t total = 0, cs = 0, ce = -1;
    for (int i = 0; i < n; i++) {
        if (i == 0 || s[i] > ce) {
            if (i > 0)
                total += ce - cs;
            cs = s[i];
            ce = e[i];
        } else if (e[i] > ce) {
            ce = e[i];
        }
    }
    if (n > 0)
        total += ce - cs;
    return total;
}

int timing_finish_lanes(timing *tm, const workload *w)
{
    /* tm->scratch: each lane's first interval (nl + 1 offsets), then every
     * lane's sync intervals, lane by lane in group order (one pass over
     * the groups instead of one per lane) */
    size_t nl = (size_t)(w->nlanes > 0 ? w->nlanes : 1), total = 0;
    for (int g = 0; g < w->ngroups; g++)
        total += (size_t)w->groups[g].nmembers;
    if (gt_grow(&tm->scratch, &tm->cap_scratch, nl + 1 + 2 * total, sizeof *tm->scratch))
        return -1;
    int64_t *first = tm->scratch, *s = first + nl + 1, *e = s + total;
    memset(first, 0, sizeof *first * (nl + 1));
    for (int g = 0; g < w->ngroups; g++)
        for (int m = 0; m < w->groups[g].nmembers; m++)
            first[w->groups[g].members[m] + 1]++;
    for (size_t l = 0; l < nl; l++)
        first[l + 1] += first[l];
    for (int g = 0; g < w->ngroups; g++) /* first[l]: lane l's next free entry */
        for (int m = 0; m < w->groups[g].nmembers; m++) {
            int64_t k = first[w->groups[g].members[m]]++;
            s[k] = tm->group_start[g];
            e[k] = tm->group_end[g];
        }
    tm->iteration_ns = 0;
    for (int l = 0, k0 = 0; l < w->nlanes; l++) {
        lane_time *lt = &tm->lanes[l];
        int n = (int)(first[l] - k0); /* first[l] is now the end of lane l's entries */
        lt->sync_end = lt->bwd_end;
        for (int k = k0; k < k0 + n; k++)
            if (e[k] > lt->sync_end)
                lt->sync_end = e[k];
        lt->sync_comm_ns = union_length(s + k0, e + k0, n);
        k0 += n;
        lt->opt_start = lt->sync_end;
        lt->opt_end = lt->opt_start + w->lanes[l].opt_ns;
        if (lt->opt_end > tm->iteration_ns)
            tm->iteration_ns = lt->opt_end;
    }
    return 0;
}
