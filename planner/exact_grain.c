/* exact_grain.c — the exact referee's bound of a row's compute by layer
 * granularity (exact_space.h): one microbatch's forward and backward
 * through a row of S stages takes at least the sum over its stages of
 * their least per-layer time, plus L - S more layers on its fastest type.
 *
 * Why it holds. Stage k holds l_k >= 1 whole layers (the decoder never
 * leaves a stage empty) and sum_k l_k = L; its time for one microbatch is
 * at least l_k c_k, c_k its type's least seconds per layer over every layer
 * range at that microbatch size (exact_layer_times: the cost model's own
 * stage times, so it holds for profiles too). So the row's compute is at
 * least min over such l of sum_k l_k c_k = sum_k c_k + (L - S) min_k c_k
 * (each stage one layer, the rest on the cheapest). It holds for every
 * layer split, not only the decoder's; it sees what "one microbatch on the
 * row's fastest GPU" does not: a slow GPU in a row costs at least a layer
 * at its own speed (on the 64-GPU goal pool, a V100 in a row of A100s
 * raises the row's trip by a sixth of a layer time at least per stage it
 * holds, which cuts rows the fastest-GPU bound let through).
 *
 * For a placement still being generated (exact_expand.c) the walk takes c
 * per type as its least over every microbatch size (grain_c), so that the
 * bound holds whatever size the plan runs, and bounds
 *   - a partial row of k cells: sum of its cells' c, the S - k cells to
 *     come at the least c of a type with GPUs left, and L - S layers at the
 *     least of those;
 *   - the rows still to fill (the current one and the D - r - 1 after it):
 *     they hold the current row's cells and every GPU left, so one of them
 *     holds at least the average of those c sums, plus L - S layers at the
 *     selection's least c (exact_sel.c takes the same at the count vector's
 *     level with every row: some row holds at least 1/D of the selection's
 *     summed c). */
#include <math.h>
#include <stdlib.h>

#include "exact_space.h"

int exact_grain_init(exact_space *sp)
{
    const enc_problem *pr = sp->pr;
    sp->grain_c = malloc(sizeof *sp->grain_c * (size_t)pr->ntypes);
    if (!sp->grain_c)
        return -1;
    for (int ty = 0; ty < pr->ntypes; ty++) {
        double c = INFINITY;
        for (int bi = 0; bi < pr->nb; bi++)
            c = exact_min(c, sp->layer_s[bi * pr->ntypes + ty]);
        sp->grain_c[ty] = isfinite(c) ? c : 0;
    }
    return 0;
}

double exact_grain_of(const exact_space *sp, int gpu, int bi)
{
    int ty = sp->pr->t->gpus[gpu].type;
    return bi < 0 ? sp->grain_c[ty] : sp->layer_s[bi * sp->pr->ntypes + ty];
}

double exact_grain_row(const exact_space *sp, int S, const int *gpus, int bi)
{
    double sum = 0, least = INFINITY;
    for (int k = 0; k < S; k++) {
        double c = exact_grain_of(sp, gpus[k], bi);
        sum += c;
        least = exact_min(least, c);
    }
    return S > 0 ? sum + (sp->pr->L - S) * least : 0;
}

double exact_grain_split(double sum, double least, int S, int L)
{
    return S > 0 && isfinite(least) ? sum + (L - S) * least : 0;
}
