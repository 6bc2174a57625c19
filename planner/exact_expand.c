/* exact_expand.c — the exact referee's placements of a selection (exact.h,
 * exact_space.h), generated on demand modulo symmetry: cell by cell, rows
 * sorted by their groups, nodes of a group numbered by first use, each
 * branch cut as soon as the bound of its rows (one cell ahead, the last
 * row's entries, layer granularity of the rows so far and to come, the
 * rows' sync) reaches the search's threshold; the keys
 * of that pruning, and the work cap of the walk. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exact_space.h"

double exact_key(const xprune *x, const obj_metrics *m)
{
    return x->obj ? objective_value(x->obj, m) : m->time_s;
}

bool exact_pruned(const xprune *x, const obj_metrics *m)
{
    return !(exact_key(x, m) < x->thr) ||
           (x->skip && pareto_covered(x->skip, m->time_s, m->energy_j));
}

typedef struct dfs {
    exact_space *sp;
    const xprune *x;
    exact_terms t;
    int S, D;
    int *grp, *cell, *gpus, *grid, *left, *fresh, *room, *used; /* per cell; group; node class */
    int *lab;              /* per cell: its node's number within its group (first use) */
    double *rx, *rv;       /* per cell: its row's transfers and fastest GPU so far */
    double *rc, *rcm;      /* per cell: its row's summed and least grain_c so far */
    double *gc;            /* per group: its type's grain_c (exact_grain.c) */
    double left_c;         /* the summed grain_c of the GPUs left */
    double csel;           /* the least grain_c of the selection's types */
    double *vsite;         /* per site: the fastest GPU left there, then the least
                            * enter_n (partial_row) */
    int *ksite;            /* per site: nodes the last row still enters */
    double *clat, *crate;  /* per full row r and level: the pairs of rows 0..r (exact_cross_row) */
    double trows;
    double next;           /* least key cut by the threshold (not covered) */
    double tsync;          /* the sync bound of the rows so far (exact_sync.c, exact_nic.c) */
    const int *cnt;        /* the selection's counts per group */
    bool one_site;         /* its GPUs lie in one site (exact_nic.c) */
    int *touch;            /* per node class: scratch of exact_nic_rows */
    uint64_t *lw;          /* scratch of exact_nic_layers: 2 L words, nclass doubles */
    double *lload;
    int **out;
    long *n, *cap;
} dfs;

static bool over_budget(exact_space *sp)
{
    if (sp->max_visits && sp->visited > sp->max_visits)
        return true;
    return sp->deadline > 0 && (sp->visited & 1023) == 0 && exact_now_s() > sp->deadline;
}

/* Cell `at` takes node class c's next free GPU (GPUs go to cells in index
 * order per class, before room[c] is taken): its GPU, and its row's
 * transfers and fastest GPU so far, kept per cell so that a visit costs
 * O(1) (the same sums, in the same order, as over the whole row). */
static void cell_take(dfs *d, int at, int c)
{
    const exact_space *sp = d->sp;
    const enc_problem *pr = sp->pr;
    int g = pr->class_first[c] + pr->class_size[c] - d->room[c], k = at % d->S;
    d->grid[at] = g;
    d->gpus[k] = g;
    double cg = d->gc[sp->group_of[c]];
    if (k == 0) {
        d->rx[at] = 0;
        d->rv[at] = exact_gspeed(sp, g);
        d->rc[at] = cg;
        d->rcm[at] = cg;
        return;
    }
    d->rc[at] = d->rc[at - 1] + cg;
    d->rcm[at] = exact_min(d->rcm[at - 1], cg);
    int p = d->grid[at - 1];
    d->rx[at] = d->rx[at - 1] + 1e-9 * (double)(exact_xfer_ns(sp, 0, p, g) +
                                                 exact_xfer_ns(sp, 0, g, p));
    d->rv[at] = exact_max(d->rv[at - 1], exact_gspeed(sp, g));
}

/* The bound of the row holding cell `last`, from its cells so far: its
 * transfers so far, and one microbatch's compute on its fastest GPU, which
 * is at most `vcap` once the row is full. */
static double row_time(const dfs *d, int last, double vcap)
{
    return d->sp->pr->bval[0] * d->sp->seq_f / exact_max(vcap, d->rv[last]) + d->rx[last];
}

/* The last row of a placement takes every GPU left, so (with cells to
 * come) it still enters every node that must give it some: per group with
 * GPUs left, at least ceil(left / the most room of its nodes) nodes, one of
 * which may be last's own. Each node entered has an edge into it from
 * outside (distinct edges: distinct heads), at least its enter_n; in each
 * other site holding some, one of them comes from another site, at least
 * its enter_s. The sum of those edges (a lower bound of the row's
 * transfers still to come). */
static double last_row_entries(const dfs *d, int last)
{
    const exact_space *sp = d->sp;
    const enc_problem *pr = sp->pr;
    const topology *t = pr->t;
    int ns = t->nsites, own = -1;
    double *least = d->vsite + ns, sum = 0; /* per site: the least enter_n of its nodes */
    int *k = d->ksite;
    for (int x = 0; x < ns; x++) {
        least[x] = INFINITY;
        k[x] = 0;
    }
    for (int c = 0; c < pr->nclass; c++)
        if (pr->class_first[c] <= last && last < pr->class_first[c] + pr->class_size[c])
            own = c;
    for (int g = 0; g < sp->ngroup; g++) {
        if (!d->left[g])
            continue;
        int most = 0, site = t->gpus[exact_group_gpu(sp, g)].site;
        bool mine = false;
        for (int i = 0; i < sp->gcount[g]; i++) {
            int c = sp->gnode[sp->gfirst[g] + i];
            most = d->room[c] > most ? d->room[c] : most;
            mine |= c == own && d->room[c] > 0;
            least[site] = exact_min(least[site], sp->enter_n[c]);
        }
        if (most == 0)
            return INFINITY; /* GPUs left and no room: no completion */
        k[site] += (d->left[g] + most - 1) / most - (mine ? 1 : 0);
    }
    int cur = t->gpus[last].site;
    for (int x = 0; x < ns; x++) {
        if (k[x] <= 0)
            continue;
        if (x == cur)
            sum += k[x] * least[x];
        else
            sum += sp->enter_s[x] + (k[x] - 1) * least[x];
    }
    return sum;
}

/* The layer-granularity bounds (exact_grain.c) once cell `at` is taken:
 * of its row (with the transfers so far; its cells to come at the least
 * grain_c of a type left), in *own; and of the rows still to fill, which
 * hold the current row's cells (or, once it is full, only the GPUs left)
 * and every GPU left, so that one of them holds at least the average of
 * their grain_c sums, returned (0 when no row is left). */
static double grain_rows(const dfs *d, int at, bool full, double *own)
{
    const exact_space *sp = d->sp;
    int S = d->S, L = sp->pr->L, k = at % S + 1, r = at / S;
    if (full) {
        *own = exact_grain_split(d->rc[at], d->rcm[at], S, L) + d->rx[at];
        int rest = d->D - r - 1;
        return rest > 0 ? exact_grain_split(d->left_c / rest, d->csel, S, L) : 0;
    }
    double cav = INFINITY; /* the least grain_c of a type with GPUs left */
    for (int g = 0; g < sp->ngroup; g++)
        if (d->left[g])
            cav = exact_min(cav, d->gc[g]);
    *own = isfinite(cav) ? d->rc[at] + (S - k) * cav + (L - S) * exact_min(d->rcm[at], cav) +
                               d->rx[at]
                         : 0; /* nothing left: the other bounds see there is no completion */
    return exact_grain_split((d->rc[at] + d->left_c) / (d->D - r), d->csel, S, L);
}

/* The bound of a partial row ending at cell `at` on GPU `last`, one cell
 * ahead: the next cell exists and takes a node with room whose group has
 * GPUs left, and of that node its next free GPU b (GPUs go to cells in
 * index order per node), so the row pays the round trip (smallest
 * microbatch) from last to b and, when b is its last cell, computes on the
 * fastest of its GPUs and b. With more cells to come, its fastest GPU is
 * also at most the fastest left in b's site, or one left in another site;
 * in that case a later edge leaves b's site and takes at least the least
 * round trip out of it (leave_s). The least over the next cells (INFINITY
 * when none can follow: no completion). */
static double partial_row(const dfs *d, int at, int last)
{
    const exact_space *sp = d->sp;
    const enc_problem *pr = sp->pr;
    const topology *t = pr->t;
    bool more = (at + 2) % d->S != 0; /* cells to come after the next one */
    double vall = 0, W = pr->bval[0] * sp->seq_f, best = INFINITY;
    if (more || at / d->S == d->D - 1) {
        for (int x = 0; x < t->nsites; x++)
            d->vsite[x] = 0;
        for (int g = 0; g < sp->ngroup; g++)
            if (d->left[g]) {
                int x = exact_group_gpu(sp, g);
                double v = exact_gspeed(sp, x);
                d->vsite[t->gpus[x].site] = exact_max(d->vsite[t->gpus[x].site], v);
                vall = exact_max(vall, v);
            }
    }
    for (int c = 0; c < pr->nclass; c++) {
        if (!d->room[c] || !d->left[sp->group_of[c]])
            continue;
        int b = pr->class_first[c] + pr->class_size[c] - d->room[c];
        double hop = 1e-9 * (double)(exact_xfer_ns(sp, 0, last, b) + exact_xfer_ns(sp, 0, b, last));
        double v = exact_max(d->rv[at], exact_gspeed(sp, b)), tt = W / v;
        if (more) {
            double vs = exact_max(v, d->vsite[t->gpus[b].site]);
            tt = W / vs;
            if (vall > vs)
                tt = exact_min(tt, W / vall + sp->leave_s[t->gpus[b].site]);
        }
        best = exact_min(best, hop + tt);
    }
    if (at / d->S == d->D - 1) /* the last row: its GPUs are known */
        best = exact_max(best, W / exact_max(d->rv[at], vall) + last_row_entries(d, last));
    return d->rx[at] + best;
}

/* Whether the pruning cuts a branch of bound lb; a cut by the threshold
 * keeps its key in d->next (the selection's next window starts there). */
static bool dfs_cut(dfs *d, const obj_metrics *lb)
{
    if (!exact_pruned(d->x, lb))
        return false;
    double k = exact_key(d->x, lb);
    if (!(k < d->x->thr) && !(d->x->skip && pareto_covered(d->x->skip, lb->time_s, lb->energy_j)))
        d->next = fmin(d->next, k);
    return true;
}

/* GPU ids of cells [0, n) (classes -> GPUs in index order per class). */
void exact_cells_gpus(const exact_space *sp, const int *cell, int n, int *used, int *gpus)
{
    memset(used, 0, sizeof(int) * (size_t)sp->pr->nclass);
    for (int x = 0; x < n; x++)
        gpus[x] = sp->pr->class_first[cell[x]] + used[cell[x]]++;
}

/* Stage 0's last backward ends after the rows' round trips and the batch's
 * FLOPs over the summed speed (exact_sync.c). */
static double dfs_ready(const dfs *d)
{
    const job *j = d->sp->pr->j;
    return exact_max(d->trows, d->sp->seq_f * j->batch / d->t.speed);
}

/* The least over microbatch sizes of the grid's unit bound (exact_unit.c),
 * each cut by the threshold: every plan of the placement is one of its
 * units, so its time is at least that. A size whose bound is cut gives a
 * value still at or above the threshold (exact_unit_bound_cut), so the
 * least is the exact one whenever it lies below the threshold (a stored
 * placement's key does not depend on the window), and at or above it
 * otherwise (a cut, whose key stays a bound of the placement's). */
static double leaf_units(const dfs *d)
{
    double least = INFINITY;
    for (int bi = 0; bi < d->sp->pr->nb; bi++)
        least = exact_min(least, exact_grid_bound_cut(d->sp, d->S, d->D, d->grid, bi, d->x).time_s);
    return least;
}

/* A full placement: its bound with the rows and the data-parallel sync
 * (exact_sync.c), stored unless that bound reaches the threshold. */
static int dfs_store(dfs *d)
{
    double *l3 = d->clat + 3 * (d->D - 1), *r3 = d->crate + 3 * (d->D - 1);
    double T = fmax(d->trows, exact_sync_bound_x(d->sp, d->S, d->D, d->grid, dfs_ready(d), l3, r3));
    T = fmax(T, d->tsync);
    T = fmax(T, exact_nic_rows(d->sp, d->S, d->D, d->D, d->grid, NULL, NULL, d->one_site, d->touch));
    T = fmax(T, exact_nic_layers(d->sp, d->S, d->D, d->D, d->grid, d->one_site, d->lw, d->lload));
    obj_metrics lb = exact_bound_from(d->sp, &d->t, d->S, T);
    if (dfs_cut(d, &lb))
        return 0;
    T = fmax(T, leaf_units(d));
    lb = exact_bound_from(d->sp, &d->t, d->S, T);
    if (dfs_cut(d, &lb))
        return 0;
    if (exact_key(d->x, &lb) < d->x->lo)
        return 0; /* generated by an earlier window */
    int p = exact_place_add(d->sp, d->S, d->D, d->cell, lb);
    if (p < 0)
        return p;
    if (exact_grow((void **)d->out, d->cap, *d->n + 1, sizeof(int)))
        return -1;
    (*d->out)[(*d->n)++] = p;
    return 0;
}

/* The sync bound of every completion once `rows` rows are full. */
static double partial_sync(dfs *d, int rows)
{
    /* the pairs between the rows so far: row rows - 1's with the others
     * added to those of the rows before it */
    double *l3 = d->clat + 3 * (rows - 1), *r3 = d->crate + 3 * (rows - 1);
    for (int l = 0; l < 3; l++) {
        l3[l] = rows > 1 ? l3[l - 3] : INFINITY;
        r3[l] = rows > 1 ? r3[l - 3] : 0;
    }
    exact_cross_row(d->sp, d->S, rows - 1, d->grid, l3, r3);
    if (rows >= d->D)
        return 0; /* the full placement's own bound (dfs_store) */
    double T = exact_partial_sync_bound_x(d->sp, d->S, d->D, rows, d->grid, d->cnt, d->left,
                                          d->room, dfs_ready(d), l3, r3);
    T = exact_max(T, exact_nic_rows(d->sp, d->S, d->D, rows, d->grid, d->left, d->room,
                                    d->one_site, d->touch));
    return exact_max(T, exact_nic_layers(d->sp, d->S, d->D, rows, d->grid, d->one_site, d->lw,
                                         d->lload));
}

/* Cell by cell, row-major. Rows are sorted by their cells' (group, node
 * number) sequences (each row's >= the previous one's), and within a group
 * the nodes are numbered by first use (a new node is always the group's
 * next unused one): every placement up to permutations of rows and of
 * identical nodes is generated at least once, since the least of its
 * images (over row orders and renumberings, its cells' pairs read
 * row-major) has both properties (renumbering by first use, or swapping
 * two rows out of order, would give a lesser one). A row whose bound reaches the threshold cuts the
 * branch: the bound only grows with more rows. */
static int dfs_cell(dfs *d, int at, bool tight)
{
    exact_space *sp = d->sp;
    int S = d->S;
    sp->visited++;
    if (over_budget(sp))
        return -2;
    if (at == S * d->D)
        return dfs_store(d);
    if (at % S == 0)
        tight = at > 0;
    int lo = tight ? d->grp[at - S] : 0;
    for (int g = lo; g < sp->ngroup; g++) {
        if (!d->left[g])
            continue;
        bool tg = tight && g == d->grp[at - S];
        int nfresh = d->fresh[g];
        /* rows in order of their cells' (group, node number) too: see dfs_cell */
        for (int i = tg ? d->lab[at - S] : 0; i <= nfresh && i < sp->gcount[g]; i++) {
            int c = sp->gnode[sp->gfirst[g] + i];
            bool t2 = tg && i == d->lab[at - S];
            if (!d->room[c])
                continue;
            d->lab[at] = i;
            cell_take(d, at, c);
            d->left[g]--;
            d->left_c -= d->gc[g];
            d->room[c]--;
            d->grp[at] = g;
            d->cell[at] = c;
            if (i == nfresh)
                d->fresh[g]++;
            double saved = d->trows, saved_sync = d->tsync;
            int rc = 0;
            /* a full row's bound holds for the placement, a partial one's
             * for its completions */
            bool full = (at + 1) % S == 0;
            double tr = full ? row_time(d, at, 0) : partial_row(d, at, d->gpus[at % S]);
            if (full) /* the decoder's cuts of the row (exact_cut.c) */
                tr = exact_max(tr, exact_cut_trip(sp, S, d->D, d->gpus, -1) + d->rx[at]);
            double own, rest = grain_rows(d, at, full, &own);
            tr = exact_max(tr, own);
            if (full)
                d->trows = exact_max(d->trows, tr);
            double floor = exact_max(d->tsync, rest);
            obj_metrics lb = exact_bound_from(sp, &d->t, S, exact_max(exact_max(d->trows, tr), floor));
            /* the sync bound only raises lb: needed unless lb is cut already
             * and its key cannot lower the least key cut (dfs_cut) */
            if (full && !(exact_pruned(d->x, &lb) && !(exact_key(d->x, &lb) < d->next))) {
                d->tsync = exact_max(d->tsync, partial_sync(d, (at + 1) / S));
                lb = exact_bound_from(sp, &d->t, S, exact_max(d->trows, exact_max(d->tsync, rest)));
            }
            rc = dfs_cut(d, &lb);
            if (!rc)
                rc = dfs_cell(d, at + 1, t2);
            else
                rc = 0;
            d->trows = saved;
            d->tsync = saved_sync;
            if (i == nfresh)
                d->fresh[g]--;
            d->room[c]++;
            d->left[g]++;
            d->left_c += d->gc[g];
            if (rc)
                return rc;
        }
    }
    return 0;
}

int exact_expand(exact_space *sp, int s, const xprune *x, int **out, long *n, long *cap,
                 double *next)
{
    const enc_problem *pr = sp->pr;
    const xsel *q = &sp->sel[s];
    dfs d = {.sp = sp, .x = x, .S = q->S, .D = q->D, .out = out, .n = n, .cap = cap};
    int N = pr->N, G = sp->ngroup, C = pr->nclass;
    int *buf = malloc(sizeof(int) * (size_t)(5 * N + 2 * G + 3 * C));
    double *rbuf = malloc(sizeof(double) * (size_t)(4 * N + 2 * pr->t->nsites + 6 * q->D + G));
    int *kbuf = malloc(sizeof(int) * (size_t)pr->t->nsites);
    uint64_t *lw = malloc(sizeof *lw * (size_t)(2 * pr->L));
    double *lload = malloc(sizeof *lload * (size_t)C);
    if (!buf || !rbuf || !kbuf || !lw || !lload) {
        free(buf);
        free(rbuf);
        free(kbuf);
        free(lw);
        free(lload);
        return -1;
    }
    d.lw = lw;
    d.lload = lload;
    d.ksite = kbuf;
    d.rx = rbuf;
    d.rv = rbuf + N;
    d.vsite = rbuf + 2 * N;
    d.clat = d.vsite + 2 * pr->t->nsites;
    d.crate = d.clat + 3 * q->D;
    d.rc = d.crate + 3 * q->D;
    d.rcm = d.rc + N;
    d.gc = d.rcm + N;
    d.grp = buf;
    d.cell = buf + N;
    d.gpus = buf + 2 * N;
    d.grid = buf + 3 * N;
    d.left = buf + 4 * N;
    d.fresh = d.left + G;
    d.room = d.fresh + G;
    d.used = d.room + C;
    d.touch = d.used + C;
    d.lab = d.touch + C;
    memcpy(d.left, &sp->sel_cnt[q->off], sizeof(int) * (size_t)G);
    memset(d.fresh, 0, sizeof(int) * (size_t)G);
    memcpy(d.room, pr->class_size, sizeof(int) * (size_t)C);
    exact_sel_terms(sp, d.left, &d.t);
    d.left_c = 0;
    d.csel = INFINITY;
    for (int g = 0; g < G; g++) {
        d.gc[g] = exact_grain_of(sp, exact_group_gpu(sp, g), -1);
        d.left_c += d.left[g] * d.gc[g];
        if (d.left[g])
            d.csel = exact_min(d.csel, d.gc[g]);
    }
    /* the selection's own bound holds for each of its placements: a floor
     * (its rows' part also for the sync bounds' ready) */
    d.trows = q->ready;
    d.tsync = q->T;
    d.cnt = &sp->sel_cnt[q->off];
    d.one_site = exact_nic_one_site(sp, d.cnt);
    d.next = INFINITY;
    int rc = dfs_cell(&d, 0, false);
    *next = d.next;
    free(lw);
    free(lload);
    free(rbuf);
    free(kbuf);
    free(buf);
    return rc;
}
