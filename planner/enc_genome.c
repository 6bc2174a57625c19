/* enc_genome.c — the genome (encoding.h): allocating, copying and comparing
 * one, setting its grid of GPUs from a shape, reading one from a plan
 * (enc_from_plan) and reshaping it to another stage and pipeline count. The
 * problem it encodes, its canonical form and decoding are in encoding.c. */
#include "encoding.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp_view.h"

/* --- genome ----------------------------------------------------------------- */

int genome_alloc(genome *g, int N)
{
    memset(g, 0, sizeof *g);
    g->perm = malloc(sizeof(int) * (size_t)N);
    g->first = malloc(sizeof(int) * (size_t)N);
    g->mb = malloc(sizeof(int) * (size_t)N);
    if (!g->perm || !g->first || !g->mb) {
        genome_free(g);
        return -1;
    }
    g->fit = INFINITY;
    return 0;
}

void genome_free(genome *g)
{
    free(g->perm);
    free(g->first);
    free(g->mb);
    memset(g, 0, sizeof *g);
}

void genome_copy(genome *dst, const genome *src, int N)
{
    int *perm = dst->perm, *first = dst->first, *mb = dst->mb;
    *dst = *src;
    dst->perm = perm;
    dst->first = first;
    dst->mb = mb;
    memcpy(perm, src->perm, sizeof(int) * (size_t)N);
    memcpy(first, src->first, sizeof(int) * (size_t)N);
    memcpy(mb, src->mb, sizeof(int) * (size_t)N);
}

bool genome_same(const genome *a, const genome *b)
{
    if (a->hash != b->hash || a->hash2 != b->hash2 || a->S != b->S || a->D != b->D || a->bi != b->bi ||
        a->sched != b->sched || a->sync != b->sync)
        return false;
    return !memcmp(a->perm, b->perm, sizeof(int) * (size_t)(a->S * a->D));
}

int enc_set_grid(const enc_problem *pr, genome *g, const int *grid, int S, int D)
{
    char *mark = calloc((size_t)pr->N, 1);
    if (!mark)
        return -1;
    int cells = S * D;
    if (grid != g->perm)
        memmove(g->perm, grid, sizeof(int) * (size_t)cells);
    for (int x = 0; x < cells; x++)
        mark[g->perm[x]] = 1;
    for (int x = 0, o = cells; x < pr->N; x++)
        if (!mark[x])
            g->perm[o++] = x;
    g->S = S;
    g->D = D;
    g->status = 0;
    free(mark);
    return 0;
}

/* The search-space index of a plan stage's GPUs: the GPU itself, or under a
 * tp_view the unit whose tp GPUs these are, in order; -1 if neither. */
static int stage_cell(const enc_problem *pr, const plan_stage *st)
{
    const tp_view *v = pr->cfg.tp;
    if (!v)
        return st->ngpus == 1 ? st->gpus[0] : -1;
    if (st->ngpus != v->tp)
        return -1;
    for (int u = 0; u < pr->N; u++)
        if (v->unit_gpu[u] == st->gpus[0]) {
            for (int x = 1; x < v->tp; x++)
                if (st->gpus[x] != st->gpus[0] + x)
                    return -1;
            return u;
        }
    return -1;
}

int enc_from_plan(const enc_problem *pr, const plan *p, genome *g)
{
    int D = p->npipes, S = D > 0 ? p->pipes[0].nstages : 0, bi = -1;
    for (int i = 0; i < pr->nb; i++)
        if (pr->bval[i] == p->microbatch_size)
            bi = i;
    if (D < 1 || S < 1 || bi < 0 || p->schedule == SCHED_INTERLEAVED ||
        !enc_shape_ok(pr, S, D, bi))
        return -1;
    int *grid = malloc(sizeof(int) * (size_t)(S * D));
    char *seen = calloc((size_t)pr->N, 1);
    int rc = grid && seen ? 0 : -1;
    for (int d = 0; d < D && !rc; d++) {
        if (p->pipes[d].nstages != S) {
            rc = -1;
            break;
        }
        for (int k = 0; k < S && !rc; k++) {
            int c = stage_cell(pr, &p->pipes[d].stages[k]);
            rc = c < 0 || seen[c] ? -1 : 0;
            if (!rc) {
                seen[c] = 1;
                grid[d * S + k] = c;
            }
        }
    }
    if (!rc) {
        g->bi = bi;
        g->sched = p->schedule;
        g->sync = p->sync;
        rc = enc_set_grid(pr, g, grid, S, D);
    }
    free(grid);
    free(seen);
    return rc;
}

int enc_reshape(const enc_problem *pr, genome *g, int S2, int D2, bool by_stage)
{
    int S = g->S, D = g->D, n = S2 * D2;
    if (n > S * D)
        return -1;
    int *grid = malloc(sizeof(int) * (size_t)(S * D + n));
    if (!grid)
        return -1;
    int *out = grid + S * D;
    for (int x = 0; x < S * D; x++) /* the old grid in reading order */
        grid[x] = by_stage ? g->perm[(x % D) * S + x / D] : g->perm[x];
    for (int x = 0; x < n; x++)
        out[by_stage ? (x % D2) * S2 + x / D2 : x] = grid[x];
    int rc = enc_set_grid(pr, g, out, S2, D2);
    free(grid);
    return rc;
}
