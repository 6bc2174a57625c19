/* exact_unit.c — the exact referee's bound of a unit (exact_space.h): a
 * placement's GPUs at one microbatch size, bounded before any decoding by
 * their round trips, last stages, bottleneck (layer granularity and
 * memory, exact_rows.c), pipeline fill (exact_fill.c), the batch's FLOPs
 * and the data-parallel sync (exact_sync.c); and the per-type least time
 * per layer and most FLOP/s those bounds read. */
#include <math.h>
#include <stdlib.h>

#include "exact_space.h"
#include "sim/models/cost.h"

/* Per microbatch size and GPU type, the least seconds per layer of any
 * stage (fwd + bwd of one microbatch over every layer range, per layer):
 * a stage of l layers takes at least l times that, whatever the cost model
 * (FLOPs, profiles) makes of ranges; and per type the most FLOPs per second
 * of any range, the speed every other bound uses. */
int exact_layer_times(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    sp->layer_s = malloc(sizeof *sp->layer_s * (size_t)(pr->nb * pr->ntypes));
    sp->type_speed = calloc((size_t)pr->ntypes, sizeof *sp->type_speed);
    sp->mb_flops = malloc(sizeof *sp->mb_flops * (size_t)pr->nb);
    if (!sp->layer_s || !sp->type_speed || !sp->mb_flops)
        return -1;
    for (int bi = 0; bi < pr->nb; bi++)
        sp->mb_flops[bi] = cost_stage_fwd_flops(pr->j, pr->bval[bi], 0, pr->L - 1) +
                           cost_stage_bwd_flops(pr->j, pr->bval[bi], 0, pr->L - 1);
    for (int bi = 0; bi < pr->nb; bi++)
        for (int ty = 0; ty < pr->ntypes; ty++) {
            const gpu_type *g = &pr->t->types[ty];
            double c = INFINITY;
            for (int a = 0; a < pr->L; a++)
                for (int e = a; e < pr->L; e++) {
                    int64_t ns = t_add(cost_stage_fwd_ns(pr->j, g, 1, pr->bval[bi], a, e, 1.0),
                                       cost_stage_bwd_ns(pr->j, g, 1, pr->bval[bi], a, e, 1.0));
                    c = fmin(c, 1e-9 * (double)ns / (e - a + 1));
                    double fl = cost_stage_fwd_flops(pr->j, pr->bval[bi], a, e) +
                                cost_stage_bwd_flops(pr->j, pr->bval[bi], a, e);
                    if (ns > 0)
                        sp->type_speed[ty] = fmax(sp->type_speed[ty], fl / (1e-9 * (double)ns));
                    else
                        sp->type_speed[ty] = INFINITY; /* no time at all: no bound */
                }
            sp->layer_s[bi * pr->ntypes + ty] = c;
        }
    return 0;
}

/* The unit bound of an S x D grid of GPUs (row-major) at microbatch size
 * bi: the rows' round trips, last stages and bottleneck stages (layer
 * granularity and memory) sharing the microbatches (exact_rows.c), the
 * batch's FLOPs over the summed speed, and the data-parallel sync after
 * stage 0's last backward, which ends after all of those (exact_sync.c). */
/* The unit bound of an S x D grid of GPUs (row-major) at microbatch size
 * bi: the rows' round trips, last stages and bottleneck stages (layer
 * granularity and memory) sharing the microbatches (exact_rows.c), their
 * fill (exact_fill.c), the batch's FLOPs over the summed speed, and the
 * data-parallel sync after stage 0's last backward, which ends after all of
 * those (exact_sync.c). With `cut`: once the round trips and the FLOPs
 * alone are cut by it, that weaker bound (still cut), sparing the rest. */
static obj_metrics grid_bound(const exact_space *sp, int S, int D, const int *gpus, int bi,
                              const xprune *cut)
{
    const enc_problem *pr = sp->pr;
    if (D > pr->mtot[bi] || !enc_shape_ok(pr, S, D, bi))
        return (obj_metrics){INFINITY, INFINITY, INFINITY, INFINITY};
    double *cl = malloc(sizeof *cl * (size_t)(S + 3 * D));
    int *caps = malloc(sizeof *caps * (size_t)S);
    if (!cl || !caps) {
        free(cl);
        free(caps);
        return (obj_metrics){0, 0, 0, 0}; /* out of memory: zero still holds */
    }
    double *rt = cl + S, *last = rt + D, *bn = last + D, trip = 0;
    exact_terms t = {0, 0, 0, INFINITY, INFINITY, INFINITY, 0};
    double f = pr->bval[bi] * sp->seq_f;
    for (int r = 0; r < D; r++) {
        double vmax = 0, x = 0;
        for (int k = 0; k < S; k++) {
            int g = gpus[r * S + k];
            exact_add_gpus(sp, g, 1, &t);
            vmax = fmax(vmax, exact_gspeed(sp, g));
            if (k > 0)
                x += 1e-9 * (double)(exact_xfer_ns(sp, bi, gpus[r * S + k - 1], g) +
                                     exact_xfer_ns(sp, bi, g, gpus[r * S + k - 1]));
        }
        /* one microbatch through the row: on its fastest GPU, by layer
         * granularity (exact_grain.c), or by the decoder's cuts of its GPUs
         * (exact_cut.c) */
        rt[r] = exact_max(exact_max(f / vmax, exact_grain_row(sp, S, &gpus[r * S], bi)),
                          exact_cut_trip(sp, S, D, &gpus[r * S], bi)) + x;
        trip = fmax(trip, rt[r]);
    }
    obj_metrics lb0 = exact_bound_from(sp, &t, S, trip);
    if (cut && exact_pruned(cut, &lb0)) {
        free(cl);
        free(caps);
        return lb0;
    }
    bool fits = true; /* every row can hold the model (exact_rows.c) */
    for (int r = 0; r < D; r++) {
        for (int k = 0; k < S; k++) {
            int ty = pr->t->gpus[gpus[r * S + k]].type;
            cl[k] = sp->layer_s[bi * pr->ntypes + ty];
            caps[k] = sp->layer_cap[bi * pr->ntypes + ty];
        }
        last[r] = cl[S - 1]; /* the last stage holds a layer at least */
        bn[r] = exact_least_bottleneck(cl, caps, S, pr->L); /* every microbatch passes it */
        fits &= !isinf(bn[r]);
    }
    double T = fits ? exact_rows_fill(rt, last, bn, D, pr->mtot[bi]) : INFINITY;
    free(cl);
    free(caps);
    if (!fits) /* no split of some row fits in memory: no plan */
        return (obj_metrics){INFINITY, INFINITY, INFINITY, INFINITY};
    exact_fill_buf fb;
    if (exact_fill_alloc(sp, S, D, &fb) == 0) { /* out of memory: the rest still holds */
        T = fmax(T, exact_fill_grid(sp, S, D, gpus, bi, &fb));
        exact_fill_free(&fb);
    }
    T = fmax(T, sp->seq_f * pr->j->batch / t.speed);
    T = fmax(T, exact_sync_bound(sp, S, D, gpus, T));
    T = fmax(T, exact_nic_grid(sp, S, D, gpus)); /* the traffic floor's NICs (exact_nic.c) */
    return exact_bound_from(sp, &t, S, T);
}

obj_metrics exact_grid_bound(const exact_space *sp, int S, int D, const int *gpus, int bi)
{
    return grid_bound(sp, S, D, gpus, bi, NULL);
}

obj_metrics exact_grid_bound_cut(const exact_space *sp, int S, int D, const int *gpus, int bi,
                                 const xprune *cut)
{
    return grid_bound(sp, S, D, gpus, bi, cut);
}

obj_metrics exact_unit_bound_cut(const exact_space *sp, int p, int bi, const xprune *cut)
{
    const enc_problem *pr = sp->pr;
    int S = sp->pS[p], D = sp->pD[p];
    int *buf = malloc(sizeof *buf * (size_t)(S * D + pr->nclass));
    if (!buf)
        return sp->plb[p]; /* out of memory: the weaker bound still holds */
    exact_cells_gpus(sp, &sp->cls[sp->poff[p]], S * D, buf + S * D, buf);
    obj_metrics lb = grid_bound(sp, S, D, buf, bi, cut);
    free(buf);
    return lb;
}

obj_metrics exact_unit_bound(const exact_space *sp, int p, int bi)
{
    return exact_unit_bound_cut(sp, p, bi, NULL);
}
