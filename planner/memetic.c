/* memetic.c — the memetic planner (memetic.h): finalists, phases, the
 * planner over tensor-parallel degrees, pareto, and the configurations of
 * the registry's rows (the planner and its ablations) with their one entry;
 * the search itself is in memetic_search.c, the island model in
 * memetic_islands.c, operators in operators.c, local search in
 * local_search.c, the genome in encoding.c. */
#include "memetic.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "islands.h"
#include "local_search.h"
#include "memetic_search.h"
#include "seed_plans.h"
#include "tp_view.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/simulator.h"

/* --- finalists ------------------------------------------------------------------------ */

/* What replaying a genome costs the simulator (enc_replay_work). */
static double replay_work(const enc_problem *pr, const genome *g)
{
    plan p;
    gt_err e;
    if (enc_to_plan(pr, g, "", "", &p, &e))
        return INFINITY;
    double w = enc_replay_work(&p);
    plan_free(&p);
    return w;
}

/* Same placement and genes (genome_same) and the same split. */
static bool same_split(const genome *a, const genome *b)
{
    return genome_same(a, b) &&
           !memcmp(a->first, b->first, sizeof(int) * (size_t)(a->S * a->D)) &&
           !memcmp(a->mb, b->mb, sizeof(int) * (size_t)a->D);
}

/* Genomes of pool[0..n) not in the elite whose estimate could still beat
 * *best (estimates are lower bounds of the replay), replayed in estimate
 * order; one that wins replaces *best (index: base + its rank). */
static int replay_more(const search *s, const genome *pool, int np, int base,
                       const objective *sobj, const enc_replay_limits *lim, enc_final *best)
{
    const genome *cand[np > 0 ? np : 1];
    int n = 0;
    for (int i = 0; i < np; i++) {
        const genome *g = &pool[i];
        bool in_elite = false;
        for (int k = 0; k < s->nelite && !in_elite; k++)
            in_elite = same_split(g, &s->elite[k]);
        for (int k = 0; k < n && !in_elite; k++)
            in_elite = same_split(g, cand[k]);
        if (!in_elite && g->status == 1 && objective_feasible(&s->obj, &g->est) &&
            g->fit < best->value)
            cand[n++] = g;
    }
    ma_sort_ptrs_by_fit(cand, n); /* by estimate, stable */
    /* extra finalists: none once the budget's deadline has passed (only the
     * elite's first replay is always made, ma_pick_final) */
    if (n == 0 || (lim->stop && *lim->stop) || (lim->deadline > 0 && ma_now_s() > lim->deadline))
        return 0;
    enc_replay_limits sl = {n, lim->deadline, lim->stop};
    enc_final f;
    gt_err e;
    if (enc_pick_final(s->pr, cand, n, sobj, s->cfg->name, s->obj.text, &sl, &f, &e))
        return 0; /* none replays: *best stands */
    if (f.value < best->value) {
        int replayed = best->replayed + f.replayed;
        plan_free(&best->p);
        *best = f;
        best->index += base;
        best->replayed = replayed;
    } else {
        best->replayed += f.replayed;
        plan_free(&f.p);
    }
    return 0;
}

/* Every pipeline of g in the opposite stage order (g undecoded). The
 * estimate sees each transfer alone, so a pipeline and its reverse often
 * tie there while the replay, where the directions of a link differ, does
 * not. */
static int reverse_stages(genome *g)
{
    for (int p = 0; p < g->D; p++)
        for (int a = p * g->S, b = a + g->S - 1; a < b; a++, b--) {
            int t = g->perm[a];
            g->perm[a] = g->perm[b];
            g->perm[b] = t;
        }
    g->status = 0;
    return 0;
}

/* Estimate a decoded variant (status, fit, est). */
static void score(const search *s, genome *g)
{
    g->status = enc_estimate(s->pr, g, &g->est);
    g->fit = g->status == 1 ? objective_value(&s->obj, &g->est) : INFINITY;
}

/* The ablations' kinds of plan from the placements the full search ended
 * on, as finalists: for the MA_VARIANTS best elite genomes, each grown to as
 * many pipelines as the unselected GPUs allow (ls_widest, memetic-all-gpus'
 * plans) and its stages in the opposite order (re-split). Both lie in the
 * search space (the uniform and speed splits of memetic-uniform and
 * memetic-nols are already candidates of every decoding, enc_split.c). */
static int replay_variants(const search *s, const objective *sobj,
                           const enc_replay_limits *lim, enc_final *best)
{
    const int per = 2;
    int ne = s->nelite < MA_VARIANTS ? s->nelite : MA_VARIANTS;
    genome *w = calloc((size_t)(ne * per > 0 ? ne * per : 1), sizeof *w);
    if (!w)
        return -1;
    int n = 0, rc = 0;
    for (int i = 0; i < ne && !rc; i++)
        for (int v = 0; v < per && !rc; v++) {
            if (genome_alloc(&w[n], s->pr->N)) {
                rc = -1;
                break;
            }
            genome *g = &w[n++];
            if (v == 0) {
                if (s->cfg->enc.all_gpus || ls_widest(s->pr, &s->elite[i], g) ||
                    enc_decode(s->pr, g, NULL))
                    continue;
            } else {
                genome_copy(g, &s->elite[i], s->pr->N);
                if (g->S < 2 || reverse_stages(g) || enc_decode(s->pr, g, NULL))
                    continue;
            }
            score(s, g);
        }
    if (!rc)
        rc = replay_more(s, w, n, s->nelite + s->nseeds, sobj, lim, best);
    for (int i = 0; i < n; i++)
        genome_free(&w[i]);
    free(w);
    return rc;
}

/* Each shape's best genomes (memetic_niches.c) as finalists, within the
 * replay work of the elite's: where the estimate ranks one shape's plans
 * below another's that replay faster, the whole elite can be of the one
 * shape. */
static int replay_niches(const search *s, const objective *sobj, const enc_replay_limits *lim,
                         enc_final *best)
{
    int cap = s->nniches * MA_NICHE_REPLAYS;
    const genome **c = malloc(sizeof *c * (size_t)(cap > 0 ? cap : 1));
    genome *pool = malloc(sizeof *pool * (size_t)(cap > 0 ? cap : 1));
    if (!c || !pool) {
        free(c);
        free(pool);
        return -1;
    }
    int n = ma_niche_finalists(s, c, MA_NICHE_FINAL), np = 0;
    double work = 0;
    for (int i = 0; i < n; i++) {
        if (!(c[i]->fit < best->value))
            break; /* sorted by estimate: no later one can win */
        work += replay_work(s->pr, c[i]);
        if (work > MA_REPLAY_WORK)
            break; /* not even the first: one too large would win unreplayed */
        pool[np++] = *c[i]; /* read only: the struct, not its arrays */
    }
    int rc = replay_more(s, pool, np, s->nelite + s->nseeds + 2 * MA_VARIANTS, sobj, lim, best);
    free(c);
    free(pool);
    return rc;
}

/* The best estimate, unreplayed: with a time budget, a search whose plan
 * cannot beat cfg->beat (its estimate, a lower bound of the replay, does
 * not) spends no replay on it (one of a plan on every GPU of a large pool
 * can take longer than the whole budget). */
static int unreplayed(const search *s, const genome *g, enc_final *best, gt_err *e)
{
    memset(best, 0, sizeof *best);
    if (enc_to_plan(s->pr, g, s->cfg->name, s->obj.text, &best->p, e))
        return -1;
    best->est = best->sim = g->est;
    best->value = g->fit;
    return 0;
}

/* The best by the simulated objective `sobj` among the elite (sorted by
 * estimate), replayed until the estimates cannot win (enc_pick_final). */
int ma_pick_final(const search *s, const objective *sobj, enc_final *best, gt_err *e)
{
    const genome *cand[MA_ELITE];
    int n = 0;
    for (int i = 0; i < s->nelite; i++)
        if (objective_feasible(&s->obj, &s->elite[i].est))
            cand[n++] = &s->elite[i];
    if (n == 0)
        return gt_fail(e, "no feasible plan found");
    if (s->o->budget_s > 0 && s->cfg->beat > 0 && !(cand[0]->fit < s->cfg->beat))
        return unreplayed(s, cand[0], best, e);
    /* replays cost about their ops and flows: bound the sum (the first always) */
    int most = 1;
    for (double work = replay_work(s->pr, cand[0]); most < n; most++) {
        work += replay_work(s->pr, cand[most]);
        if (work > MA_REPLAY_WORK)
            break;
    }
    enc_replay_limits lim = {most, s->o->budget_s > 0 ? s->t0 + s->o->budget_s : 0, s->o->stop};
    if (enc_pick_final(s->pr, cand, n, sobj, s->cfg->name, s->obj.text, &lim, best, e))
        return -1;
    if (replay_more(s, s->seeds, s->nseeds, s->nelite, sobj, &lim, best))
        return -1;
    if (s->cfg->local_search && replay_variants(s, sobj, &lim, best))
        return -1;
    return s->cfg->full ? replay_niches(s, sobj, &lim, best) : 0;
}

/* --- the planner ------------------------------------------------------------------------ */

void ma_fill_stats(const search *s, const enc_final *f, planner_stats *st)
{
    memset(st, 0, sizeof *st);
    st->objective_value = f->value;
    st->evaluations = s->evals;
    st->plan_time_s = ma_now_s() - s->t0;
    /* no timings in the note: it is written into the plan, which must be the
     * same file on any machine unless a time budget made the search depend
     * on the machine's speed, which the note then says first */
    snprintf(st->note, sizeof st->note,
             "%s%d generations, %ld evaluations, stopped by %s; %d finalist%s replayed",
             s->o->budget_s > 0 ? "time budget: the plan may depend on machine speed; " : "",
             s->gen, s->evals, s->stopped ? s->stopped : "generations", f->replayed,
             f->replayed == 1 ? "" : "s");
}

/* Set up the problem, objective refs and the reference genome. */
int ma_prepare(const topology *t, const job *j, const memetic_cfg *cfg, const char *objtext,
                   enc_problem *pr, objective *obj, genome *ref, gt_err *e)
{
    if (objective_parse(objtext ? objtext : "time", obj, e))
        return -1;
    if (enc_problem_init(pr, t, j, &cfg->enc, e))
        return -1;
    if (genome_alloc(ref, pr->N)) {
        enc_problem_free(pr);
        return gt_fail(e, "out of memory");
    }
    if (enc_reference(pr, ref, e)) {
        genome_free(ref);
        enc_problem_free(pr);
        return -1;
    }
    ref->status = enc_estimate(pr, ref, &ref->est);
    if (ref->status != 1) {
        genome_free(ref);
        enc_problem_free(pr);
        return gt_fail(e, "the reference plan (fastest GPUs first) could not be estimated");
    }
    objective_set_refs(obj, &ref->est);
    ref->fit = objective_value(obj, &ref->est);
    return 0;
}

/* Time phase of energy-within: the fastest estimate and its simulated time. */
static int fastest_phase(search *s, objective *target, objective *sobj, gt_err *e)
{
    objective tobj;
    objective_parse("time", &tobj, e);
    s->obj = tobj;
    ma_rescore(s, s->pop, s->P);
    ma_elite_rescore(s);
    if (ma_survive(s, 0) || ma_run_phase(s, ma_share(s->o, 1.0 / 3)))
        return gt_fail(e, "out of memory");
    enc_final f;
    if (ma_pick_final(s, &tobj, &f, e))
        return -1;
    objective_set_fastest(target, s->elite[0].est.time_s);
    objective_set_fastest(sobj, f.sim.time_s);
    plan_free(&f.p);
    s->obj = *target;
    ma_rescore(s, s->pop, s->P);
    ma_elite_rescore(s);
    return ma_survive(s, 0);
}

/* One search on topology t (the GPUs, or the units of cfg->enc.tp). */
static int run_view(const topology *t, const job *j, const planner_opts *o,
                    const memetic_cfg *cfg, plan *out, planner_stats *st, gt_err *e)
{
    enc_problem pr;
    objective obj;
    genome ref;
    e->msg[0] = '\0';
    if (ma_prepare(t, j, cfg, o->objective, &pr, &obj, &ref, e))
        return -1;
    if (obj.kind == OBJ_PARETO) { /* single-plan interface: the fastest of the front */
        genome_free(&ref);
        enc_problem_free(&pr);
        pareto_front f;
        if (memetic_front(t, j, o, &f, st, e))
            return -1;
        *out = f.plans[0];
        f.plans[0] = (plan){0};
        pareto_front_free(&f);
        return 0;
    }
    search s;
    objective sobj = obj;
    int rc = ma_search_init(&s, &pr, o, cfg, &obj) || ma_seed_population(&s, &ref)
                 ? gt_fail(e, "out of memory")
                 : 0;
    if (!rc && objective_needs_fastest(&obj))
        rc = fastest_phase(&s, &obj, &sobj, e);
    if (!rc)
        rc = ma_run_phase(&s, ma_share(o, objective_needs_fastest(&obj) ? 2.0 / 3 : 1.0)) ||
                     ma_niche_searches(&s)
                 ? gt_fail(e, "out of memory")
                 : 0;
    ma_progress(&s, 0, true);
    if (o->progress && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    enc_final f;
    if (!rc && (rc = ma_pick_final(&s, &sobj, &f, e)) == 0) {
        *out = f.p;
        ma_fill_stats(&s, &f, st);
    }
    ma_search_free(&s);
    genome_free(&ref);
    enc_problem_free(&pr);
    return rc;
}

/* --- tensor-parallel degrees (tp_view.h) ---------------------------------------------- */

typedef struct plain_ctx {
    const job *j;
    const memetic_cfg *cfg;
} plain_ctx;

static int plain_degree(void *vctx, const topology *t, const tp_view *v, const planner_opts *o,
                        plan *out, planner_stats *st, gt_err *e)
{
    const plain_ctx *x = vctx;
    memetic_cfg c = *x->cfg;
    c.enc.tp = v;
    return run_view(t, x->j, o, &c, out, st, e);
}

/* --- the ablations' searches, as finalists ------------------------------------------- */

/* The full planner and its ablations (the registry's rows name them). */
const memetic_cfg MEMETIC_CFG = {"memetic", {ENC_CUT_DP, false, NULL}, true, false, true,
                                 NULL, 0, 0, NULL};
const memetic_cfg MEMETIC_NOLS_CFG = {"memetic-nols", {ENC_CUT_SPEED, false, NULL}, false, false,
                                      false, NULL, 0, 0, NULL};
const memetic_cfg MEMETIC_ALL_GPUS_CFG = {"memetic-all-gpus", {ENC_CUT_DP, true, NULL}, true,
                                          false, false, NULL, 0, 0, NULL};
const memetic_cfg MEMETIC_UNIFORM_CFG = {"memetic-uniform", {ENC_CUT_UNIFORM, false, NULL}, true,
                                         false, false, NULL, 0, 0, NULL};
const memetic_cfg MEMETIC_PLAINX_CFG = {"memetic-plainx", {ENC_CUT_DP, false, NULL}, true, true,
                                        false, NULL, 0, 0, NULL};
static const memetic_cfg *const ABLATIONS[] = {&MEMETIC_NOLS_CFG, &MEMETIC_ALL_GPUS_CFG,
                                                &MEMETIC_UNIFORM_CFG, &MEMETIC_PLAINX_CFG};
#define NABLATIONS 4

/* Objectives whose values compare across searches (not relative to a
 * search's own references or fastest plan). */
static bool absolute_objective(const planner_opts *o)
{
    objective obj;
    gt_err e;
    return !objective_parse(o->objective ? o->objective : "time", &obj, &e) &&
           !objective_needs_refs(&obj) && !objective_needs_fastest(&obj) &&
           obj.kind != OBJ_PARETO;
}

bool ma_runs_ablations(const memetic_cfg *cfg, const planner_opts *o)
{
    return cfg->full && absolute_objective(o);
}

/* The search of configuration c (its seed plans filled) over every
 * tensor-parallel degree. */
static int search_degrees(const topology *t, const job *j, const planner_opts *o,
                          const memetic_cfg *c, plan *out, planner_stats *st, gt_err *e)
{
    plain_ctx ctx = {j, c};
    return tp_search(t, j, o, false, plain_degree, &ctx, out, st, e);
}

/* Each ablation's own search (the same options, seed and generations as
 * `geotrain plan --planner <ablation>` would run, the same seed plans), and
 * its plan, already replayed, replaces *out when its simulated objective is
 * better: so in the deterministic mode `memetic` is never worse than an
 * ablation by construction. With a time budget each gets its share of it,
 * if that share is still left. */
int ma_ablation_finalists(const topology *t, const job *j, const planner_opts *o,
                          const memetic_cfg *c, plan *out, planner_stats *st)
{
    for (int k = 1; k <= NABLATIONS && !(o->stop && *o->stop); k++) {
        memetic_cfg a = *ABLATIONS[k - 1];
        a.shared = c->shared; /* the estimates the searches before it made */
        a.beat = o->budget_s > 0 ? st->objective_value : 0;
        if (!a.enc.all_gpus) { /* the all-GPUs ablation's row has no seed planners */
            a.seed_plans = c->seed_plans;
            a.nseed_plans = c->nseed_plans;
        }
        planner_opts oa = *o;
        if (o->budget_s > 0) {
            oa.budget_s = o->budget_s * (1 - MA_MAIN_SHARE) / NABLATIONS;
            /* replays can overrun a search's share (the first is always
             * made): an ablation whose share is no longer left is skipped */
            if (st->plan_time_s + oa.budget_s > o->budget_s)
                continue;
        }
        if (o->progress)
            fprintf(stderr, "%smemetic: the %s search (%d of %d)\n",
                    isatty(STDERR_FILENO) ? "\n" : "", a.name, k, NABLATIONS);
        plan p = {0};
        planner_stats sa;
        gt_err e;
        memset(&sa, 0, sizeof sa);
        int rc = search_degrees(t, j, &oa, &a, &p, &sa, &e);
        long evals = st->evaluations + sa.evaluations; /* every search counts */
        double secs = st->plan_time_s + sa.plan_time_s;
        if (!rc && p.npipes > 0 && sa.objective_value < st->objective_value * (1 - 1e-12)) {
            snprintf(p.planner, sizeof p.planner, "%s", c->name);
            plan_free(out);
            *out = p;
            char note[sizeof st->note]; /* first: the note is cut at 255 characters */
            snprintf(note, sizeof note, "the %s search's plan replayed best; %s", a.name,
                     sa.note);
            *st = sa;
            memcpy(st->note, note, sizeof note);
        } else {
            plan_free(&p); /* a zeroed plan when the search failed */
        }
        st->evaluations = evals;
        st->plan_time_s = secs;
    }
    return 0;
}

/* The full planner's finishing step, shared by memetic_run and the island
 * model: each ablation's own search (absolute objectives) and then the
 * seeded planners' plans as they made them stand as finalists against *out.
 * o: the options the search ran with. 0, or -1 when out of memory. */
int ma_finalists(const topology *t, const job *j, const planner_opts *o, const memetic_cfg *c,
                 plan *out, planner_stats *st)
{
    if (out->npipes == 0 || !c->full)
        return 0;
    if (ma_runs_ablations(c, o) && ma_ablation_finalists(t, j, o, c, out, st))
        return -1;
    return seed_plans_final(t, j, o, c, out, st) ? -1 : 0;
}

int memetic_run(const topology *t, const job *j, const planner_opts *o, const memetic_cfg *cfg,
                plan *out, planner_stats *st, gt_err *e)
{
    memset(out, 0, sizeof *out);
    if (cfg->enc.tp) /* already a unit view: search it as it is */
        return run_view(t, j, o, cfg, out, st, e);
    memetic_cfg c = *cfg;
    c.seed_plans = o->seeds;
    c.nseed_plans = o->nseeds;
    planner_opts om = *o;
    if (ma_runs_ablations(cfg, o) && o->budget_s > 0)
        om.budget_s = o->budget_s * MA_MAIN_SHARE;
    ma_store store; /* one for the run: the ablations' searches meet the full one's genomes */
    ma_store_init(&store);
    if (!c.shared) /* a caller's store (tests) outlives the run */
        c.shared = &store;
    int rc = search_degrees(t, j, &om, &c, out, st, e);
    if (!rc && ma_finalists(t, j, o, &c, out, st))
        rc = gt_fail(e, "out of memory");
    ma_store_free(&store);
    if (rc)
        return -1;
    return out->npipes > 0 ? 0 : gt_fail(e, "no feasible plan found");
}

/* --- pareto -------------------------------------------------------------------------------- */

int memetic_front(const topology *t, const job *j, const planner_opts *o, pareto_front *out,
                  planner_stats *st, gt_err *e)
{
    static const double W[] = {1.0, 0.8, 0.6, 0.4, 0.2, 0.0};
    const int nw = (int)(sizeof W / sizeof *W);
    const memetic_cfg *cfg = &MEMETIC_CFG;
    enc_problem pr;
    objective obj;
    genome ref;
    pareto_archive arch;
    e->msg[0] = '\0';
    memset(out, 0, sizeof *out);
    if (ma_prepare(t, j, cfg, "weighted:1", &pr, &obj, &ref, e))
        return -1;
    search s;
    memset(&s, 0, sizeof s);
    int rc = pareto_init(&arch, MA_ARCHIVE, pr.N) || ma_search_init(&s, &pr, o, cfg, &obj)
                 ? gt_fail(e, "out of memory")
                 : 0;
    s.arch = &arch;
    if (!rc)
        rc = ma_seed_population(&s, &ref) ? gt_fail(e, "out of memory") : 0;
    for (int w = 0; w < nw && !rc && !ma_should_stop(&s); w++) {
        s.obj.param = W[w];
        snprintf(s.obj.text, sizeof s.obj.text, "pareto");
        ma_rescore(&s, s.pop, s.P);
        ma_elite_rescore(&s);
        rc = ma_survive(&s, 0) || ma_run_phase(&s, ma_share(o, 1.0 / nw)) ? gt_fail(e, "out of memory")
                                                                   : 0;
    }
    if (o->progress && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    if (!rc)
        rc = pareto_front_build(&pr, &arch, "memetic", out, e);
    if (!rc) {
        enc_final f = {.value = out->sim[0].time_s, .replayed = arch.n};
        ma_fill_stats(&s, &f, st);
        snprintf(st->note + strlen(st->note), sizeof st->note - strlen(st->note),
                 "; %d plans on the front", out->n);
    }
    ma_search_free(&s);
    pareto_free(&arch);
    genome_free(&ref);
    enc_problem_free(&pr);
    return rc;
}

/* --- registry entries ------------------------------------------------------------------------ */

const memetic_cfg *memetic_config(const planner_def *d)
{
    return d && d->run == planner_memetic ? d->cfg : NULL;
}

int planner_memetic(const void *cfg, const topology *t, const job *j, const planner_opts *o,
                    plan *out, planner_stats *st, gt_err *e)
{
    return memetic_run(t, j, o, cfg, out, st, e);
}
