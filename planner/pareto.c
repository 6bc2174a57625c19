/* pareto.c — time x energy archive (pareto.h). */
#include "pareto.h"

#include <stdlib.h>
#include <string.h>

bool pareto_dominates(double t1, double e1, double t2, double e2)
{
    return t1 <= t2 && e1 <= e2 && (t1 < t2 || e1 < e2);
}

int pareto_init(pareto_archive *a, int cap, int N)
{
    memset(a, 0, sizeof *a);
    a->g = calloc((size_t)(cap + 1), sizeof *a->g);
    if (!a->g)
        return -1;
    for (int i = 0; i <= cap; i++)
        if (genome_alloc(&a->g[i], N)) {
            a->cap = i;
            pareto_free(a);
            return -1;
        }
    a->cap = cap;
    a->N = N;
    return 0;
}

void pareto_free(pareto_archive *a)
{
    if (a->g)
        for (int i = 0; i <= a->cap; i++)
            genome_free(&a->g[i]);
    free(a->g);
    memset(a, 0, sizeof *a);
}

bool pareto_covered(const pareto_archive *a, double t, double e)
{
    for (int i = 0; i < a->n; i++) {
        const obj_metrics *m = &a->g[i].est;
        if (m->time_s <= t && m->energy_j <= e)
            return true;
    }
    return false;
}

/* Drop the interior member with the smallest normalised neighbour gap. */
static void thin(pareto_archive *a)
{
    double t0 = a->g[0].est.time_s, t1 = a->g[a->n - 1].est.time_s;
    double e0 = a->g[a->n - 1].est.energy_j, e1 = a->g[0].est.energy_j;
    double dt = t1 > t0 ? t1 - t0 : 1, de = e1 > e0 ? e1 - e0 : 1, best = -1;
    int drop = a->n - 2;
    for (int i = 1; i + 1 < a->n; i++) {
        double gap = (a->g[i + 1].est.time_s - a->g[i - 1].est.time_s) / dt +
                     (a->g[i - 1].est.energy_j - a->g[i + 1].est.energy_j) / de;
        if (best < 0 || gap < best) {
            best = gap;
            drop = i;
        }
    }
    genome keep = a->g[drop];
    memmove(&a->g[drop], &a->g[drop + 1], sizeof *a->g * (size_t)(a->n - drop - 1));
    a->g[--a->n] = keep;
}

int pareto_insert(pareto_archive *a, const genome *g)
{
    double t = g->est.time_s, e = g->est.energy_j;
    if (g->status != 1 || pareto_covered(a, t, e))
        return 0;
    /* remove dominated members (their storage moves to the end) */
    int w = 0;
    for (int i = 0; i < a->n; i++) {
        if (pareto_dominates(t, e, a->g[i].est.time_s, a->g[i].est.energy_j))
            continue;
        if (w != i) {
            genome tmp = a->g[w];
            a->g[w] = a->g[i];
            a->g[i] = tmp;
        }
        w++;
    }
    a->n = w;
    int pos = a->n;
    while (pos > 0 && a->g[pos - 1].est.time_s > t)
        pos--;
    genome slot = a->g[a->n];
    memmove(&a->g[pos + 1], &a->g[pos], sizeof *a->g * (size_t)(a->n - pos));
    a->g[pos] = slot;
    genome_copy(&a->g[pos], g, a->N);
    a->n++;
    if (a->n > a->cap)
        thin(a);
    return 1;
}

void pareto_front_free(pareto_front *f)
{
    for (int i = 0; i < f->n; i++)
        plan_free(&f->plans[i]);
    free(f->plans);
    free(f->est);
    free(f->sim);
    memset(f, 0, sizeof *f);
}

int pareto_front_build(const enc_problem *pr, const pareto_archive *a, const char *name,
                       pareto_front *out, gt_err *e)
{
    memset(out, 0, sizeof *out);
    int n = a->n;
    out->plans = calloc((size_t)(n + 1), sizeof *out->plans);
    out->est = calloc((size_t)(n + 1), sizeof *out->est);
    out->sim = calloc((size_t)(n + 1), sizeof *out->sim);
    plan *p = calloc((size_t)(n + 1), sizeof *p);
    obj_metrics *sim = calloc((size_t)(n + 1), sizeof *sim);
    char *ok = calloc((size_t)(n + 1), 1);
    if (!out->plans || !out->est || !out->sim || !p || !sim || !ok) {
        free(p);
        free(sim);
        free(ok);
        return gt_fail(e, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        if (enc_to_plan(pr, &a->g[i], name, "pareto", &p[i], e))
            continue;
        if (enc_replay_work(&p[i]) > ENC_REPLAY_MAX_WORK) { /* too large: the estimate stands */
            sim[i] = a->g[i].est;
            ok[i] = 1;
            continue;
        }
        plan_free(&p[i]);
        ok[i] = enc_simulate(pr, &a->g[i], name, "pareto", &p[i], &sim[i], e) == 0;
    }
    /* keep the members the simulation leaves non-dominated (first of equals) */
    for (int i = 0; i < n; i++) {
        bool dom = !ok[i];
        for (int k = 0; k < n && !dom; k++)
            dom = ok[k] && k != i &&
                  (pareto_dominates(sim[k].time_s, sim[k].energy_j, sim[i].time_s,
                                    sim[i].energy_j) ||
                   (k < i && sim[k].time_s == sim[i].time_s && sim[k].energy_j == sim[i].energy_j));
        if (dom) {
            if (ok[i])
                plan_free(&p[i]);
            continue;
        }
        int pos = out->n;
        while (pos > 0 && out->sim[pos - 1].time_s > sim[i].time_s)
            pos--;
        size_t mv = (size_t)(out->n - pos);
        memmove(&out->plans[pos + 1], &out->plans[pos], sizeof *out->plans * mv);
        memmove(&out->est[pos + 1], &out->est[pos], sizeof *out->est * mv);
        memmove(&out->sim[pos + 1], &out->sim[pos], sizeof *out->sim * mv);
        out->plans[pos] = p[i];
        out->est[pos] = a->g[i].est;
        out->sim[pos] = sim[i];
        out->n++;
    }
    free(p);
    free(sim);
    free(ok);
    return out->n ? 0 : gt_fail(e, "no feasible plan found");
}

