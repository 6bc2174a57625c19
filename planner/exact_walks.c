/* exact_walks.c — the exact referee's record of its walks (exact_space.h):
 * the search on the estimate (exact_search) and the simulated one after it
 * (exact_sim_search) stream the same selections by the same keys, the
 * second one up to a higher value (the best replay is at least the best
 * estimate). The first records, per selection, the placements its walks
 * generated with their keys, how far up they covered (every placement of
 * the selection whose key lies below was generated: a walk generates every
 * placement whose key lies in its window, and the windows of a selection
 * follow each other from -inf) and the least key they cut; the second takes
 * each window below that cover from the record instead of walking the tree
 * again. */
#include <math.h>
#include <stdlib.h>

#include "exact_space.h"

void exact_walks_free(exact_walks *w)
{
    free(w->cover);
    free(w->head);
    free(w->place);
    free(w->key);
    free(w->link);
    *w = (exact_walks){0};
}

int exact_walks_reset(exact_space *sp, const objective *obj)
{
    exact_walks *w = &sp->walks_rec;
    exact_walks_free(w);
    int n = sp->nsel;
    w->cover = malloc(sizeof *w->cover * (size_t)(2 * n + 1));
    w->head = malloc(sizeof *w->head * (size_t)(2 * n + 1));
    if (!w->cover || !w->head) {
        exact_walks_free(w);
        return -1;
    }
    w->next = w->cover + n;
    w->tail = w->head + n;
    for (int s = 0; s < n; s++) {
        w->cover[s] = -INFINITY;
        w->next[s] = -INFINITY;
        w->head[s] = w->tail[s] = -1;
    }
    w->obj = obj;
    w->recording = true;
    return 0;
}

int exact_walks_record(exact_space *sp, int s, const int *list, long n, const double *keys,
                       double top, double next)
{
    exact_walks *w = &sp->walks_rec;
    if (!w->recording)
        return 0;
    long cap = w->cap;
    if (exact_grow((void **)&w->place, &w->cap, w->n + n, sizeof *w->place))
        return -1;
    if (w->cap != cap) { /* key and link follow place's capacity */
        double *k = realloc(w->key, sizeof *k * (size_t)w->cap);
        if (k)
            w->key = k;
        int *l = realloc(w->link, sizeof *l * (size_t)w->cap);
        if (l)
            w->link = l;
        if (!k || !l)
            return -1;
    }
    for (long i = 0; i < n; i++) {
        long x = w->n++;
        w->place[x] = list[i];
        w->key[x] = keys[i];
        w->link[x] = -1;
        if (w->tail[s] < 0)
            w->head[s] = (int)x;
        else
            w->link[w->tail[s]] = (int)x;
        w->tail[s] = (int)x;
    }
    w->cover[s] = top;
    w->next[s] = next;
    return 0;
}

int exact_walks_take(exact_space *sp, const objective *obj, int s, double lo, double top,
                     int **out, long *n, long *cap, double *next)
{
    const exact_walks *w = &sp->walks_rec;
    if (w->recording || !w->cover || w->obj != obj || !(top <= w->cover[s]))
        return 1;
    double least = INFINITY;
    for (int x = w->head[s]; x >= 0; x = w->link[x]) {
        if (w->key[x] >= top) {
            least = fmin(least, w->key[x]);
            continue;
        }
        if (w->key[x] < lo)
            continue; /* taken by an earlier window */
        if (exact_grow((void **)out, cap, *n + 1, sizeof **out))
            return -1;
        (*out)[(*n)++] = w->place[x];
    }
    /* every placement not recorded lies under a branch the walk cut */
    *next = fmin(least, w->next[s]);
    return 0;
}
