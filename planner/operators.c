/* operators.c — crossover, repair and mutations of the memetic planner
 * (memetic.h). Every operator leaves a valid permutation with a valid
 * shape; decoding canonicalises it afterwards. */
#include <stdlib.h>
#include <string.h>

#include "memetic.h"

static int rnd(gsl_rng *rng, int n)
{
    return n <= 1 ? 0 : (int)gsl_rng_uniform_int(rng, (unsigned long)n);
}

/* An unmarked GPU like `want`: of its class, else of its type in its site,
 * else the fastest in its site (pipelines stay local), else of its type,
 * else the fastest anywhere; -1 if every GPU is marked. */
static int substitute(const enc_problem *pr, const char *mark, int want)
{
    int best[4] = {-1, -1, -1, -1}; /* type+site, site, type, any */
    if (want >= 0) {
        int c = pr->cls[want];
        for (int x = 0; x < pr->class_size[c]; x++)
            if (!mark[pr->class_first[c] + x])
                return pr->class_first[c] + x;
    }
    for (int g = 0; g < pr->N; g++) {
        if (mark[g])
            continue;
        bool site = want >= 0 && pr->t->gpus[g].site == pr->t->gpus[want].site;
        bool type = want >= 0 && pr->t->gpus[g].type == pr->t->gpus[want].type;
        int tier = site && type ? 0 : site ? 1 : type ? 2 : 3;
        if (best[tier] < 0 || pr->speed[g] > pr->speed[best[tier]])
            best[tier] = g;
    }
    for (int k = 0; k < 4; k++)
        if (best[k] >= 0)
            return best[k];
    return -1;
}

/* grid[0..cells) holds wanted GPUs (duplicates allowed): keep first uses,
 * substitute the rest, then write perm = grid + unused GPUs ascending. */
static void repair_into(const enc_problem *pr, genome *g, int *grid, int cells)
{
    char *mark = calloc((size_t)pr->N, 1);
    char *hole = calloc((size_t)(cells > 0 ? cells : 1), 1);
    if (!mark || !hole) {
        free(mark);
        free(hole);
        return; /* out of memory: leave the genome as it was */
    }
    for (int x = 0; x < cells; x++) {
        if (grid[x] >= 0 && !mark[grid[x]])
            mark[grid[x]] = 1;
        else
            hole[x] = 1;
    }
    for (int x = 0; x < cells; x++)
        if (hole[x]) {
            grid[x] = substitute(pr, mark, grid[x]);
            mark[grid[x]] = 1;
        }
    memcpy(g->perm, grid, sizeof(int) * (size_t)cells);
    for (int x = 0, o = cells; x < pr->N; x++)
        if (!mark[x])
            g->perm[o++] = x;
    free(mark);
    free(hole);
}

/* --- crossover ------------------------------------------------------------------ */

static void genes_from(const enc_problem *pr, const genome *a, const genome *b, gsl_rng *rng,
                       genome *c)
{
    const genome *shape = rnd(rng, 2) ? b : a;
    c->S = shape->S;
    c->D = shape->D;
    c->sched = (rnd(rng, 2) ? b : a)->sched;
    c->sync = (rnd(rng, 2) ? b : a)->sync;
    c->bi = (rnd(rng, 2) ? b : a)->bi;
    if (!enc_shape_ok(pr, c->S, c->D, c->bi))
        c->bi = shape->bi;
    c->status = 0;
}

static void group_crossover(const enc_problem *pr, const genome *a, const genome *b,
                            gsl_rng *rng, genome *c, int *grid)
{
    int S = c->S, D = c->D;
    if (rnd(rng, 2)) { /* whole pipelines */
        for (int p = 0; p < D; p++) {
            const genome *src = rnd(rng, 2) ? b : a;
            int r = p % src->D;
            for (int k = 0; k < S; k++)
                grid[p * S + k] = src->perm[r * src->S + k % src->S];
        }
    } else { /* whole stage groups (the replicas of one stage) */
        for (int k = 0; k < S; k++) {
            const genome *src = rnd(rng, 2) ? b : a;
            int col = k % src->S;
            for (int p = 0; p < D; p++)
                grid[p * S + k] = src->perm[(p % src->D) * src->S + col];
        }
    }
    repair_into(pr, c, grid, S * D);
}

/* OX: a slice of a's permutation, the rest in b's order. */
static void order_crossover(const enc_problem *pr, const genome *a, const genome *b,
                            gsl_rng *rng, genome *c, int *grid)
{
    int N = pr->N, i = rnd(rng, N), k = rnd(rng, N);
    if (i > k) {
        int t = i;
        i = k;
        k = t;
    }
    char *in = calloc((size_t)N, 1);
    if (!in)
        return;
    for (int x = i; x <= k; x++) {
        grid[x] = a->perm[x];
        in[a->perm[x]] = 1;
    }
    for (int x = 0, o = 0; x < N; x++) {
        while (o >= i && o <= k)
            o++;
        if (!in[b->perm[x]] && o < N)
            grid[o++] = b->perm[x];
    }
    memcpy(c->perm, grid, sizeof(int) * (size_t)N);
    free(in);
}

void op_crossover(const enc_problem *pr, const genome *a, const genome *b, bool plain,
                  gsl_rng *rng, genome *child)
{
    int *grid = malloc(sizeof(int) * (size_t)pr->N);
    if (!grid) {
        genome_copy(child, a, pr->N);
        return;
    }
    genes_from(pr, a, b, rng, child);
    if (plain)
        order_crossover(pr, a, b, rng, child, grid);
    else
        group_crossover(pr, a, b, rng, child, grid);
    free(grid);
}

/* --- mutations ------------------------------------------------------------------ */

static void swap_placed(const enc_problem *pr, genome *g, gsl_rng *rng)
{
    int cells = g->S * g->D;
    for (int tries = 0; tries < 8 && cells > 1; tries++) {
        int x = rnd(rng, cells), y = rnd(rng, cells);
        if (pr->cls[g->perm[x]] == pr->cls[g->perm[y]])
            continue;
        int t = g->perm[x];
        g->perm[x] = g->perm[y];
        g->perm[y] = t;
        return;
    }
}

static void swap_unselected(const enc_problem *pr, genome *g, gsl_rng *rng)
{
    int cells = g->S * g->D, free_n = pr->N - cells;
    if (free_n <= 0) {
        swap_placed(pr, g, rng);
        return;
    }
    for (int tries = 0; tries < 8; tries++) {
        int x = rnd(rng, cells), y = cells + rnd(rng, free_n);
        if (pr->cls[g->perm[x]] == pr->cls[g->perm[y]] && tries < 7)
            continue;
        int t = g->perm[x];
        g->perm[x] = g->perm[y];
        g->perm[y] = t;
        return;
    }
}

/* New grid of S2 x D2 from the old one: cell (p, k) <- old (rp[p], ck[k]),
 * where -1 entries mean "a copy of row/column from[.] to be repaired". */
static void reshape(const enc_problem *pr, genome *g, int S2, int D2, const int *rp,
                    const int *ck, int *grid)
{
    int S = g->S;
    for (int p = 0; p < D2; p++)
        for (int k = 0; k < S2; k++)
            grid[p * S2 + k] = g->perm[rp[p] * S + ck[k]];
    g->S = S2;
    g->D = D2;
    repair_into(pr, g, grid, S2 * D2);
}

/* The same GPUs (or one fewer) in another shape: 6x1 -> 3x2, 3x1 -> 1x3. */
static bool reslice(const enc_problem *pr, genome *g, gsl_rng *rng)
{
    int cells = g->S * g->D;
    for (int tries = 0; tries < 16; tries++) {
        int n = cells - rnd(rng, 2), S2 = 1 + rnd(rng, pr->smax), D2 = n / S2;
        if ((S2 == g->S && D2 == g->D) || D2 < 1 || !enc_shape_ok(pr, S2, D2, g->bi))
            continue;
        return enc_reshape(pr, g, S2, D2, rnd(rng, 2)) == 0;
    }
    return false;
}

/* keep_d > 0: a stage more or less only (a pipeline-count niche, memetic_niches.c). */
static bool change_shape(const enc_problem *pr, genome *g, gsl_rng *rng, int *grid, int keep_d)
{
    if (!keep_d && rnd(rng, 5) == 0)
        return reslice(pr, g, rng);
    int S = g->S, D = g->D, kind = rnd(rng, keep_d ? 2 : 4);
    int S2 = S + (kind == 0) - (kind == 1), D2 = D + (kind == 2) - (kind == 3);
    if (!enc_shape_ok(pr, S2, D2, g->bi))
        return false;
    int *rp = malloc(sizeof(int) * (size_t)(D2 + S2));
    if (!rp)
        return false;
    int *ck = rp + D2, at = 0;
    if (kind == 0 || kind == 1)
        at = rnd(rng, kind == 0 ? S + 1 : S);
    else
        at = rnd(rng, kind == 2 ? D : D);
    for (int p = 0; p < D2; p++) /* a new pipeline copies row `at` (then repaired) */
        rp[p] = kind == 3 ? (p < at ? p : p + 1) : (p < D ? p : at);
    for (int k = 0; k < S2; k++) { /* a new stage copies its neighbour's column */
        if (kind == 0)
            ck[k] = k < at ? k : (k == at ? (at < S ? at : S - 1) : k - 1);
        else if (kind == 1)
            ck[k] = k < at ? k : k + 1;
        else
            ck[k] = k;
    }
    reshape(pr, g, S2, D2, rp, ck, grid);
    free(rp);
    return true;
}

/* all-GPUs ablation: another factorisation of the fixed cell count. */
static void refactor(const enc_problem *pr, genome *g, gsl_rng *rng)
{
    for (int tries = 0; tries < 16; tries++) {
        int S = 1 + rnd(rng, pr->smax);
        if (pr->cells % S == 0 && enc_shape_ok(pr, S, pr->cells / S, g->bi)) {
            g->S = S;
            g->D = pr->cells / S;
            return;
        }
    }
}

static void change_gene(const enc_problem *pr, genome *g, gsl_rng *rng)
{
    int what = rnd(rng, 3);
    if (what == 0)
        g->sched = g->sched == SCHED_1F1B ? SCHED_GPIPE : SCHED_1F1B;
    else if (what == 1)
        g->sync = (sync_kind)(((int)g->sync + 1 + rnd(rng, ENC_NSYNC - 1)) % ENC_NSYNC);
    else {
        int bi = g->bi + (rnd(rng, 2) ? 1 : -1);
        if (enc_shape_ok(pr, g->S, g->D, bi))
            g->bi = bi;
    }
}

void op_mutate(const enc_problem *pr, genome *g, gsl_rng *rng, int keep_d)
{
    double r = gsl_rng_uniform(rng);
    g->status = 0;
    if (r < 0.30) {
        swap_placed(pr, g, rng);
    } else if (r < 0.55) {
        swap_unselected(pr, g, rng);
    } else if (r < 0.80) {
        if (pr->cells) {
            refactor(pr, g, rng);
            return;
        }
        int *grid = malloc(sizeof(int) * (size_t)pr->N);
        bool done = grid && change_shape(pr, g, rng, grid, keep_d);
        free(grid);
        if (!done)
            swap_unselected(pr, g, rng);
    } else {
        change_gene(pr, g, rng);
    }
}
