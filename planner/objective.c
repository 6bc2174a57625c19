/* objective.c — objective parsing and evaluation (objective.h). */
#include "objective.h"

#include "sim/base/grammar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char FORMS[] =
    "time, energy, weighted:W (0<=W<=1), energy-within:X (X>=0), carbon, cost or pareto";

/* The number after "prefix:" in s, within [lo, hi]. */
static int parse_param(const char *s, const char *prefix, double lo, double hi, double *out,
                       gt_err *e)
{
    const char *v = s + strlen(prefix);
    double x;
    /* the one number grammar (sim/base/grammar.h): weighted:inf or weighted:0x1 is refused */
    if (gram_number(v, &x) || x < lo || x > hi)
        return gt_fail(e, "objective \"%s\": %s needs a finite decimal number in [%g, %g] "
                          "after ':'", s, prefix, lo, hi);
    *out = x;
    return 0;
}

int objective_parse(const char *s, objective *o, gt_err *e)
{
    memset(o, 0, sizeof *o);
    o->t_ref = o->e_ref = 1;
    if (!s || !*s)
        return gt_fail(e, "empty objective (expected %s)", FORMS);
    if (strlen(s) >= sizeof o->text)
        return gt_fail(e, "objective \"%.40s...\" too long (expected %s)", s, FORMS);
    snprintf(o->text, sizeof o->text, "%s", s);
    if (!strcmp(s, "time"))
        o->kind = OBJ_TIME;
    else if (!strcmp(s, "energy"))
        o->kind = OBJ_ENERGY;
    else if (!strcmp(s, "carbon"))
        o->kind = OBJ_CARBON;
    else if (!strcmp(s, "cost"))
        o->kind = OBJ_COST;
    else if (!strcmp(s, "pareto"))
        o->kind = OBJ_PARETO;
    else if (!strncmp(s, "weighted:", 9)) {
        o->kind = OBJ_WEIGHTED;
        return parse_param(s, "weighted:", 0, 1, &o->param, e);
    } else if (!strncmp(s, "energy-within:", 14)) {
        o->kind = OBJ_ENERGY_WITHIN;
        return parse_param(s, "energy-within:", 0, 1e6, &o->param, e);
    } else
        return gt_fail(e, "unknown objective \"%s\" (expected %s)", s, FORMS);
    return 0;
}

bool objective_needs_refs(const objective *o)
{
    return o->kind == OBJ_WEIGHTED;
}

bool objective_needs_fastest(const objective *o)
{
    return o->kind == OBJ_ENERGY_WITHIN;
}

void objective_set_refs(objective *o, const obj_metrics *ref)
{
    /* a zero reference would make the weighted sum meaningless; keep 1 then */
    o->t_ref = ref->time_s > 0 ? ref->time_s : 1;
    o->e_ref = ref->energy_j > 0 ? ref->energy_j : 1;
}

void objective_set_fastest(objective *o, double t_fast_s)
{
    o->t_limit = (1 + o->param) * t_fast_s;
}

bool objective_feasible(const objective *o, const obj_metrics *m)
{
    return o->kind != OBJ_ENERGY_WITHIN || o->t_limit <= 0 || m->time_s <= o->t_limit;
}

double objective_value(const objective *o, const obj_metrics *m)
{
    switch (o->kind) {
    case OBJ_TIME:
    case OBJ_PARETO:
        return m->time_s;
    case OBJ_ENERGY:
        return m->energy_j;
    case OBJ_WEIGHTED:
        return o->param * m->time_s / o->t_ref + (1 - o->param) * m->energy_j / o->e_ref;
    case OBJ_ENERGY_WITHIN:
        /* infeasible plans rank above every feasible one, faster ones first */
        return objective_feasible(o, m) ? m->energy_j
                                        : OBJ_INFEASIBLE * (m->time_s / o->t_limit);
    case OBJ_CARBON:
        return m->carbon_g;
    case OBJ_COST:
        return m->usd;
    }
    return m->time_s;
}

const char *objective_unit(const objective *o)
{
    switch (o->kind) {
    case OBJ_TIME:
    case OBJ_PARETO:
        return "s";
    case OBJ_ENERGY:
    case OBJ_ENERGY_WITHIN:
        return "J";
    case OBJ_CARBON:
        return "gCO2e";
    case OBJ_COST:
        return "USD";
    case OBJ_WEIGHTED:
        return "";
    }
    return "";
}

obj_metrics obj_from_estimate(const est_summary *s)
{
    return (obj_metrics){s->iteration_s, s->energy_j, s->carbon_g, s->usd};
}

obj_metrics obj_from_sim(const sim_result *r)
{
    return (obj_metrics){r->iteration_s, r->energy_j, r->carbon_g, r->usd};
}
