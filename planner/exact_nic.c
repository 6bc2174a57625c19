/* exact_nic.c — the exact referee's NIC-load bound (exact_space.h): a lower
 * bound of the planners' traffic floor (enc_traffic_floor, enc_fitness.c),
 * which enc_estimate takes as the least iteration time, from the
 * data-parallel sync's bytes through the NICs, for placements whose rows
 * do not all meet in one node. It holds for every layer split, sync kind
 * and schedule of the placement, so it bounds selections, partial and full
 * placements and units alike, and tensor-parallel views too (the floor is
 * priced on the view's units and nodes, as here).
 *
 * Why it holds. The floor charges every flow's bytes to the resources of
 * its path (sim/models/path.h): a flow between GPUs of two nodes loads the
 * sender's NIC out, of capacity that node's nic_bw, and the floor is at
 * least the busiest resource's bytes over its capacity. The plans sync
 * unsharded: per layer l a group of D members (the GPU of each row whose
 * stage holds l), B_l = dp_grad_bytes(l) each, one all-reduce
 * (collective_emit). Let a node n hold h of a group's members, 0 < h < D:
 *   - ring (a cycle over the members): some edge leaves n, and each edge
 *     carries 2 (D - 1) steps of B_l / D: n sends >= 2 (D - 1) / D B_l;
 *   - parameter server: each of the h sends B_l / D to each of the D - h
 *     others in two rounds: 2 h (D - h) / D B_l >= 2 (D - 1) / D B_l, as
 *     (h - 1)(D - h - 1) >= 0;
 *   - hierarchical: a ring inside each site over its len members, then a
 *     ring of the site leaders, then each leader sends B_l to its site's
 *     members. If n's site holds members outside n, the site's ring leaves
 *     n: 2 (len - 1) / len B_l >= B_l (len >= 2); otherwise n holds its
 *     site's leader and, the group spanning another site, that leader sends
 *     the next one 2 (s - 1) / s B_l >= B_l (s >= 2 sites). With a single
 *     site it is the ring.
 * So n sends at least f B_l, f = 2 (D - 1) / D when the placement lies in
 * one site, else f = 1 (the least over the kinds). A row p holds every
 * layer on one of its nodes; if each of its nodes n is avoided by some
 * row (no GPU on n), no group has all its members on n, so node n sends
 * at least f times the bytes of the layers row p holds on n, and over the
 * nodes of p those add up to f G (G: the model's gradient bytes). The
 * busiest of them then takes at least f G / (the sum of their nic_bw): the
 * floor's NIC term (the loads x_n >= 0 summing to f G have max x_n / c_n
 * >= f G / sum c_n). The bound is the largest over such rows.
 *
 * A node is avoided once some placed row has no GPU on it, or when the
 * rows still to place cannot all take one of its GPUs (fewer free GPUs
 * left to it than rows to come). A selection none of whose nodes can give
 * D of its GPUs has every node avoided in every placement, and a row
 * crosses at most S nodes: f G over the S largest NIC rates of nodes that
 * can hold a selected GPU. The partial bound only grows with more rows
 * (an avoided node stays avoided, and rows are added to the max), and the
 * selection's lies below each of its placements'. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "exact_space.h"

/* f G over `bw`, a hair below (the floor sums its flows in another order). */
static double nic_time(const exact_space *sp, int D, bool one_site, double bw)
{
    if (!(bw > 0) || !isfinite(bw) || !(sp->grad_total > 0))
        return 0;
    double f = one_site ? 2.0 * (D - 1) / D : 1.0;
    return f * sp->grad_total / bw * (1 - 1e-9);
}

static double class_nic(const exact_space *sp, int c)
{
    const topology *t = sp->pr->t;
    return t->nodes[t->gpus[sp->pr->class_first[c]].node].nic_bw;
}

double exact_nic_rows(const exact_space *sp, int S, int D, int rows, const int *gpus,
                      const int *left, const int *room, bool one_site, int *touch)
{
    const enc_problem *pr = sp->pr;
    if (D < 2 || rows < 1)
        return 0;
    for (int c = 0; c < pr->nclass; c++)
        touch[c] = 0;
    /* per node (class), how many placed rows have a GPU on it */
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < S; k++) {
            int c = pr->cls[gpus[r * S + k]];
            bool seen = false;
            for (int q = 0; q < k && !seen; q++)
                seen = pr->cls[gpus[r * S + q]] == c;
            touch[c] += !seen;
        }
    double least = INFINITY; /* the least NIC sum over the rows whose nodes are all avoided */
    for (int r = 0; r < rows; r++) {
        double sum = 0;
        bool all = true;
        for (int k = 0; k < S && all; k++) {
            int c = pr->cls[gpus[r * S + k]];
            bool seen = false;
            for (int q = 0; q < k && !seen; q++)
                seen = pr->cls[gpus[r * S + q]] == c;
            if (seen)
                continue;
            int avail = 0;
            if (left) {
                int g = sp->group_of[c];
                avail = room[c] < left[g] ? room[c] : left[g];
            }
            all = touch[c] < rows || avail < D - rows;
            sum += class_nic(sp, c);
        }
        if (all)
            least = exact_min(least, sum);
    }
    return isfinite(least) ? nic_time(sp, D, one_site, least) : 0;
}

double exact_nic_grid(const exact_space *sp, int S, int D, const int *gpus)
{
    const topology *t = sp->pr->t;
    int *touch = malloc(sizeof *touch * (size_t)sp->pr->nclass);
    if (!touch)
        return 0; /* out of memory: zero still holds */
    bool one_site = true;
    for (int x = 1; x < S * D; x++)
        one_site &= t->gpus[gpus[x]].site == t->gpus[gpus[0]].site;
    double T = exact_nic_rows(sp, S, D, D, gpus, NULL, NULL, one_site, touch);
    uint64_t *lw = malloc(sizeof *lw * (size_t)(2 * sp->pr->L));
    double *load = malloc(sizeof *load * (size_t)sp->pr->nclass);
    if (lw && load)
        T = exact_max(T, exact_nic_layers(sp, S, D, D, gpus, one_site, lw, load));
    free(lw);
    free(load);
    free(touch);
    return T;
}

bool exact_nic_one_site(const exact_space *sp, const int *cnt)
{
    const topology *t = sp->pr->t;
    int site = -1;
    for (int g = 0; g < sp->ngroup; g++) {
        if (!cnt[g])
            continue;
        int x = t->gpus[exact_group_gpu(sp, g)].site;
        if (site >= 0 && x != site)
            return false;
        site = x;
    }
    return true;
}

double exact_nic_sel(const exact_space *sp, int S, int D, const int *cnt)
{
    const enc_problem *pr = sp->pr;
    int G = sp->ngroup;
    if (D < 2)
        return 0;
    for (int g = 0; g < G; g++) {
        int size = pr->class_size[sp->gnode[sp->gfirst[g]]];
        if ((cnt[g] < size ? cnt[g] : size) >= D)
            return 0; /* a node may meet every row */
    }
    /* the S largest NIC rates of the nodes that can hold a selected GPU */
    double sum = 0;
    int k = 0;
    bool *done = calloc((size_t)G, sizeof *done);
    if (!done)
        return 0;
    while (k < S) {
        int best = -1;
        for (int g = 0; g < G; g++)
            if (cnt[g] && !done[g] &&
                (best < 0 || class_nic(sp, sp->gnode[sp->gfirst[g]]) >
                                 class_nic(sp, sp->gnode[sp->gfirst[best]])))
                best = g;
        if (best < 0)
            break;
        done[best] = true;
        int nodes = sp->gcount[best] < cnt[best] ? sp->gcount[best] : cnt[best];
        nodes = nodes < S - k ? nodes : S - k;
        sum += nodes * class_nic(sp, sp->gnode[sp->gfirst[best]]);
        k += nodes;
    }
    free(done);
    return nic_time(sp, D, exact_nic_one_site(sp, cnt), sum);
}

/* --- by layer, with the decoder's cuts ------------------------------------------------ *
 *
 * The rows' layer splits are the decoder's (exact_cut.c): row p holds layer
 * l on one of the stages mask_p[l] names, so on one of the nodes N_p(l) of
 * those stages' GPUs. If no node lies in every placed row's N_p(l), no node
 * holds the whole group of l (more rows only shrink the intersection), so
 * by the argument above every node holding one of its members sends at
 * least f B_l; a node is sure to hold one when some row's N_p(l) is that
 * node alone. The floor is at least the busiest such node's sure bytes over
 * its nic_bw. */
double exact_nic_layers(const exact_space *sp, int S, int D, int rows, const int *gpus,
                        bool one_site, uint64_t *wscratch, double *load)
{
    const enc_problem *pr = sp->pr;
    int L = pr->L, C = pr->nclass;
    if (D < 2 || rows < 2 || C > 64 || S > 64)
        return 0;
    uint64_t *inter = wscratch, *sure = wscratch + L;
    for (int l = 0; l < L; l++) {
        inter[l] = ~0ULL;
        sure[l] = 0;
    }
    for (int r = 0; r < rows; r++) {
        const uint64_t *mask = exact_cut_masks(sp, S, D, &gpus[r * S]);
        if (!mask)
            return 0;
        for (int l = 0; l < L; l++) {
            uint64_t nodes = 0;
            for (int k = 0; k < S; k++)
                if (mask[l] >> k & 1)
                    nodes |= 1ULL << pr->cls[gpus[r * S + k]];
            inter[l] &= nodes;
            if (nodes && !(nodes & (nodes - 1)))
                sure[l] |= nodes;
        }
    }
    for (int c = 0; c < C; c++)
        load[c] = 0;
    for (int l = 0; l < L; l++)
        if (!inter[l])
            for (int c = 0; c < C; c++)
                if (sure[l] >> c & 1)
                    load[c] += sp->layer_grad[l];
    double worst = 0, f = one_site ? 2.0 * (D - 1) / D : 1.0;
    for (int c = 0; c < C; c++)
        if (load[c] > 0 && class_nic(sp, c) > 0)
            worst = exact_max(worst, f * load[c] / class_nic(sp, c));
    return worst * (1 - 1e-9);
}
