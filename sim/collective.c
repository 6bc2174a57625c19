/* collective.c — ring, hierarchical and parameter-server sync (collective.h). */
#include "collective.h"

#include <stdlib.h>
#include <string.h>

#include "cost.h"

static int add_flow(coll_plan *c, int src, int dst, double bytes)
{
    if (c->nflows == c->cap) {
        int ncap = c->cap ? c->cap * 2 : 64;
        coll_flow *nf = realloc(c->flows, sizeof *nf * (size_t)ncap);
        if (!nf)
            return -1;
        c->flows = nf;
        c->cap = ncap;
    }
    c->flows[c->nflows++] = (coll_flow){src, dst, bytes};
    return 0;
}

/* Close the open step (if it has flows): step_first[nsteps] is where the
 * open step begins. */
static int end_step(coll_plan *c)
{
    if (c->step_first[c->nsteps] == c->nflows)
        return 0;
    if (c->nsteps + 2 > c->step_cap) {
        int ncap = c->step_cap * 2;
        int *ns = realloc(c->step_first, sizeof *ns * (size_t)ncap);
        if (!ns)
            return -1;
        c->step_first = ns;
        c->step_cap = ncap;
    }
    c->step_first[++c->nsteps] = c->nflows;
    return 0;
}

typedef struct member {
    int lane, site, gpu;
} member;

static int member_cmp(const void *a, const void *b)
{
    const member *x = a, *y = b;
    if (x->site != y->site)
        return x->site - y->site;
    return x->gpu - y->gpu;
}

/* Ring over mem[0..n-1]: 2(n-1) steps, each member sends bytes/n onward. */
static int ring_steps(coll_plan *c, const member *mem, int n, double bytes)
{
    for (int s = 0; s < 2 * (n - 1); s++) {
        for (int i = 0; i < n; i++)
            if (add_flow(c, mem[i].lane, mem[(i + 1) % n].lane, bytes / n))
                return -1;
        if (end_step(c))
            return -1;
    }
    return 0;
}

static int build_hierarchical(coll_plan *c, member *mem, int n, double bytes)
{
    /* sites are contiguous after sorting; phase 1 runs all site rings in step */
    int site_start[n + 1], nsites = 0, maxlen = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || mem[i].site != mem[i - 1].site)
            site_start[nsites++] = i;
    site_start[nsites] = n;
    for (int s = 0; s < nsites; s++) {
        int len = site_start[s + 1] - site_start[s];
        maxlen = len > maxlen ? len : maxlen;
    }
    for (int r = 0; r < 2 * (maxlen - 1); r++) {
        for (int s = 0; s < nsites; s++) {
            int a = site_start[s], len = site_start[s + 1] - a;
            if (r >= 2 * (len - 1))
                continue;
            for (int i = 0; i < len; i++)
                if (add_flow(c, mem[a + i].lane, mem[a + (i + 1) % len].lane, bytes / len))
                    return -1;
        }
        if (end_step(c))
            return -1;
    }
    if (nsites > 1) {
        member leaders[nsites];
        for (int s = 0; s < nsites; s++)
            leaders[s] = mem[site_start[s]];
        if (ring_steps(c, leaders, nsites, bytes))
            return -1;
        for (int s = 0; s < nsites; s++)
            for (int i = site_start[s] + 1; i < site_start[s + 1]; i++)
                if (add_flow(c, mem[site_start[s]].lane, mem[i].lane, bytes))
                    return -1;
        if (end_step(c))
            return -1;
    }
    return 0;
}

static int build_ps(coll_plan *c, const member *mem, int n, double bytes)
{
    for (int round = 0; round < 2; round++) {
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (a != b && add_flow(c, mem[a].lane, mem[b].lane, bytes / n))
                    return -1;
        if (end_step(c))
            return -1;
    }
    return 0;
}

int collective_build(coll_plan *c, const topology *t, const workload *w,
                     const sync_group *g, sync_kind kind, gt_err *e)
{
    memset(c, 0, sizeof *c);
    c->step_first = malloc(sizeof *c->step_first * 16);
    if (!c->step_first)
        return gt_fail(e, "out of memory");
    c->step_cap = 16;
    c->step_first[0] = 0;
    int n = g->nmembers;
    member *mem = malloc(sizeof *mem * (size_t)n);
    if (!mem) {
        collective_free(c);
        return gt_fail(e, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        mem[i].lane = g->members[i];
        mem[i].gpu = w->lanes[g->members[i]].gpu;
        mem[i].site = t->gpus[mem[i].gpu].site;
    }
    qsort(mem, (size_t)n, sizeof *mem, member_cmp);
    int rc = 0;
    if (n > 1) {
        if (kind == SYNC_RING)
            rc = ring_steps(c, mem, n, g->bytes);
        else if (kind == SYNC_HIERARCHICAL)
            rc = build_hierarchical(c, mem, n, g->bytes);
        else
            rc = build_ps(c, mem, n, g->bytes);
    }
    free(mem);
    if (rc) {
        collective_free(c);
        return gt_fail(e, "out of memory building a collective of %d members", n);
    }
    return 0;
}

void collective_free(coll_plan *c)
{
    free(c->flows);
    free(c->step_first);
    memset(c, 0, sizeof *c);
}

int64_t collective_estimate_ns(const coll_plan *c, const topology *t, const workload *w)
{
    int64_t total = 0;
    for (int s = 0; s < c->nsteps; s++) {
        int64_t worst = 0;
        for (int f = c->step_first[s]; f < c->step_first[s + 1]; f++) {
            const coll_flow *fl = &c->flows[f];
            double lat, rate;
            topo_path(t, w->lanes[fl->src_lane].gpu, w->lanes[fl->dst_lane].gpu, &lat, &rate);
            int64_t d = cost_transfer_ns(fl->bytes, lat, rate);
            worst = d > worst ? d : worst;
        }
        total += worst;
    }
    return total;
}
