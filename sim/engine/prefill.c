/* prefill.c — BubbleTea's prefill placement into bubbles (prefill.h). */
#include "sim/engine/prefill.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/models/cost.h"
#include "sim/base/datadir.h"
#include "sim/inputs/trace.h"
#include "sim/models/plan_check.h"

#define DEFAULT_MIX "prefill/azure_conv_2023.csv"

double prefill_chunk_s(const model_spec *m, const gpu_type *g, int done, int tokens)
{
    double n = tokens, d = done;
    double matmul = m->layers * cost_layer_matmul_params(m) + (double)m->vocab * m->hidden;
    /* token i (0-based in the chunk) attends to done + i + 1 keys: 4*h flops per key */
    double attn = 4.0 * m->hidden * m->layers * (n * d + n * (n + 1) / 2);
    return (2.0 * n * matmul + attn) / (g->peak_flops * g->efficiency);
}

static double kv_bytes_per_token(const model_spec *m)
{
    return 2.0 * m->layers * ((double)m->kv_heads * m->hidden / m->heads) * 2.0;
}

static int add_piece(prefill_result *r, prefill_piece p)
{
    if (r->nplaced == r->cap) {
        int ncap = r->cap ? r->cap * 2 : 256;
        prefill_piece *np = realloc(r->placed, sizeof *np * (size_t)ncap);
        if (!np)
            return -1;
        r->placed = np;
        r->cap = ncap;
    }
    r->placed[r->nplaced++] = p;
    return 0;
}

typedef struct filler {
    const model_spec *m;
    const gpu_type *g;
    const prefill_opts *o;
    gsl_rng *rng;
    gsl_ran_discrete_t *dist;
    const prefill_mix *mix;
    int req_tokens, req_done, req_id;
    prefill_result *r;
    int lane;
} filler;

static void next_request(filler *f)
{
    f->req_tokens = f->mix->tokens[gsl_ran_discrete(f->rng, f->dist)];
    f->req_done = 0;
    f->req_id++;
}

/* Largest chunk (<= want) that fits in `avail` seconds, or 0. */
static int fitting_tokens(const filler *f, int want, double avail)
{
    if (prefill_chunk_s(f->m, f->g, f->req_done, want) <= avail)
        return want;
    int lo = 0, hi = want;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (prefill_chunk_s(f->m, f->g, f->req_done, mid) <= avail)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int fill_gap(filler *f, int64_t s, int64_t e)
{
    int64_t guard = cost_ns(f->o->guard_s);
    int64_t at = s + guard, end = e - guard;
    while (end - at > 0) {
        int want = f->req_tokens - f->req_done;
        if (want > f->o->chunk_tokens)
            want = f->o->chunk_tokens;
        int n = fitting_tokens(f, want, (end - at) * 1e-9);
        if (n <= 0)
            return 0;
        int64_t dur = cost_ns(prefill_chunk_s(f->m, f->g, f->req_done, n));
        if (dur <= 0 || at + dur > end)
            return 0;
        if (add_piece(f->r, (prefill_piece){f->lane, at, at + dur, n, f->req_id}))
            return -1;
        at += dur;
        f->r->tokens += n;
        f->r->filled_s += dur * 1e-9;
        f->req_done += n;
        if (f->req_done >= f->req_tokens) {
            f->r->requests += 1;
            next_request(f);
        }
    }
    return 0;
}

/* Every stretch of the lane's timeline with no compute op. */
static int fill_lane(filler *f, const sim_detail *d, int l)
{
    const workload *w = &d->w;
    const timing *tm = &d->tm;
    int64_t cursor = 0;
    for (int id = w->lanes[l].first_op; id >= 0; id = w->ops[id].next_on_lane) {
        if (tm->ops[id].start > cursor && fill_gap(f, cursor, tm->ops[id].start))
            return -1;
        cursor = tm->ops[id].end;
    }
    const lane_time *lt = &tm->lanes[l];
    if (fill_gap(f, cursor, lt->opt_start) || fill_gap(f, lt->opt_end, tm->iteration_ns))
        return -1;
    return 0;
}

static int eligible(const topology *t, const job *j, const plan *p, const prefill_opts *o,
                    const prefill_mix *mix, int gpu)
{
    const model_spec *m = &o->model;
    double weights = 2.0 * cost_model_params(m);
    double kv = kv_bytes_per_token(m) * mix->tokens[mix->n - 1];
    double free_b = topo_gpu_type(t, gpu)->mem_bytes - plan_gpu_memory(p, t, j, gpu);
    return free_b >= weights + kv;
}

static int load_mix(const prefill_opts *o, prefill_mix *mix, gt_err *e)
{
    char path[4096];
    if (o->mix_path)
        return prefill_mix_load(o->mix_path, mix, e);
    if (datadir_find_sub("traces", DEFAULT_MIX, path, sizeof path))
        return gt_fail(e, "default prefill mix traces/%s not found (give --prefill-mix FILE)",
                       DEFAULT_MIX);
    return prefill_mix_load(path, mix, e);
}

int prefill_fill(const topology *t, const job *j, const plan *p, const sim_detail *d,
                 const prefill_opts *o, prefill_result *out, gt_err *e)
{
    memset(out, 0, sizeof *out);
    prefill_mix mix = {0};
    if (load_mix(o, &mix, e))
        return -1;
    snprintf(out->mix_source, sizeof out->mix_source, "%s", mix.source);
    filler f = {.m = &o->model, .o = o, .mix = &mix, .r = out};
    f.rng = gsl_rng_alloc(gsl_rng_mt19937);
    f.dist = gsl_ran_discrete_preproc((size_t)mix.n, mix.prob);
    int rc = f.rng && f.dist ? 0 : gt_fail(e, "out of memory");
    if (!rc)
        gsl_rng_set(f.rng, (unsigned long)o->seed);
    double busy = 0, gpus = 0;
    for (int l = 0; l < d->w.nlanes && !rc; l++) {
        int tp = d->w.lanes[l].tp;
        busy += tp * (double)d->acc[l].compute_ns * 1e-9;
        gpus += tp;
        if (!eligible(t, j, p, o, &mix, d->w.lanes[l].gpu))
            continue;
        out->eligible_gpus += tp;
        f.g = topo_gpu_type(t, d->w.lanes[l].gpu);
        f.lane = l;
        next_request(&f);
        double before = out->filled_s;
        if (fill_lane(&f, d, l))
            rc = gt_fail(e, "out of memory placing prefill work");
        out->filled_s += (out->filled_s - before) * (tp - 1); /* TP peers fill alike */
    }
    double T = d->tm.iteration_ns * 1e-9;
    out->gpus = (int)gpus;
    out->tokens_per_s = T > 0 ? out->tokens / T : 0;
    out->requests_per_s = T > 0 ? out->requests / T : 0;
    out->util_before = gpus > 0 && T > 0 ? busy / (gpus * T) : 0;
    out->util_after = gpus > 0 && T > 0 ? (busy + out->filled_s) / (gpus * T) : 0;
    if (f.dist)
        gsl_ran_discrete_free(f.dist);
    if (f.rng)
        gsl_rng_free(f.rng);
    prefill_mix_free(&mix);
    if (rc)
        prefill_free(out);
    return rc;
}

void prefill_free(prefill_result *r)
{
    free(r->placed);
    memset(r, 0, sizeof *r);
}
