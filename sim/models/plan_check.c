/* plan_check.c — what makes a plan runnable: GPU uniqueness, layer coverage,
 * tensor parallelism inside a node, batch arithmetic (microbatches x
 * microbatch_size x accumulation_steps = batch), the training options and
 * memory (plan.h, memory.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/grow.h"
#include "sim/models/attn_choice.h"
#include "sim/models/cost.h"
#include "sim/models/memory.h"
#include "sim/models/plan_check.h"
#include "sim/inputs/plan_freq.h"

#define GIB 1073741824.0

/* The attention kernel stage s runs (attn_choice.h): fused only when every
 * one of its GPUs can (a tensor-parallel group runs one kernel). t == NULL
 * or a forced kernel: j's own. by_type, when given, holds per GPU type of t
 * whether it runs the fused kernel (-1: not asked yet; under auto that
 * depends on the type alone), so each type is asked once per check. */
static attn_choice stage_attention(const topology *t, const job *j, const plan_stage *s,
                                   signed char *by_type)
{
    if (!t || j->attention != ATTN_AUTO)
        return j->attention;
    int fused = 1;
    for (int x = 0; x < s->ngpus; x++)
        if (s->gpus[x] >= 0 && s->gpus[x] < t->ngpus) {
            signed char *f = by_type ? &by_type[t->gpus[s->gpus[x]].type] : NULL;
            int on = f && *f >= 0 ? *f : attn_fused_on(j, topo_gpu_type(t, s->gpus[x]));
            if (f)
                *f = (signed char)on;
            fused &= on;
        }
    return fused ? ATTN_FUSED : ATTN_UNFUSED;
}

/* j with its attention resolved for stage s (stage_attention). */
static const job *stage_job(const topology *t, const job *j, const plan_stage *s, job *buf)
{
    if (!t || j->attention != ATTN_AUTO)
        return j;
    *buf = *j;
    buf->attention = stage_attention(t, j, s, NULL);
    return buf;
}

/* A stage's bytes on each of its GPUs, less the once-per-GPU overhead. */
static double stage_bytes(const plan *p, const topology *t, const job *j, int pi, int k,
                          int in_flight)
{
    const plan_stage *s = &p->pipes[pi].stages[k];
    job jb;
    j = stage_job(t, j, s, &jb);
    mem_terms mt;
    memory_stage_terms(j, p->microbatch_size, s->first, s->last, s->ngpus, in_flight,
                       p->dp_shard, p->npipes, &mt);
    return memory_terms_total(&mt) - mt.overhead;
}

double plan_gpu_memory(const plan *p, const topology *t, const job *j, int g)
{
    job jb;
    j = plan_job(p, j, &jb);
    double mem = 0;
    int used = 0;
    for (int pi = 0; pi < p->npipes; pi++) {
        const plan_pipeline *pp = &p->pipes[pi];
        for (int k = 0; k < pp->nstages; k++) {
            const plan_stage *s = &pp->stages[k];
            for (int x = 0; x < s->ngpus; x++)
                if (s->gpus[x] == g) {
                    mem += stage_bytes(p, t, j, pi, k, plan_in_flight(p, pi, k));
                    used = 1;
                }
        }
    }
    return used ? mem + COST_RUNTIME_OVERHEAD_BYTES : 0;
}

int plan_memory_all(const plan *p, const topology *t, const job *j, int ngpus, double **out)
{
    plan_view v;
    gt_err e;
    if (plan_view_build(&v, p, ngpus, &e))
        return -1;
    int rc = plan_view_memory(&v, p, t, j, out);
    plan_view_free(&v);
    return rc;
}

/* Stage bytes memo, for one memory pass: a stage's bytes depend, within
 * one plan and job, only on its attention kernel, layer range, tensor
 * width and in-flight count (stage_bytes), and a plan's pipelines mostly
 * repeat the same stages, so each distinct shape is priced once and the
 * same double reused (the sums, taken in the same order, stay bit-exact).
 * Open addressing over a power-of-two table at least twice the stages. */
typedef struct stage_mem_slot {
    int used, attention, first, last, ngpus, in_flight;
    double bytes;
} stage_mem_slot;

static size_t memo_size(size_t stages)
{
    size_t n = 16;
    while (n < 2 * stages)
        n *= 2;
    return n;
}

static double memo_stage_bytes(stage_mem_slot *memo, size_t mask, const plan *p,
                               const topology *t, const job *j, int pi, int k, int in_flight,
                               signed char *by_type)
{
    const plan_stage *s = &p->pipes[pi].stages[k];
    int att = (int)stage_attention(t, j, s, by_type);
    uint64_t h = (uint64_t)(unsigned)s->first * 0x9e3779b97f4a7c15u ^
                 (uint64_t)(unsigned)s->last * 0xc2b2ae3d27d4eb4fu ^
                 (uint64_t)(unsigned)s->ngpus * 0x165667b19e3779f9u ^
                 (uint64_t)(unsigned)in_flight * 0x27d4eb2f165667c5u ^ (uint64_t)(unsigned)att;
    for (size_t i = (size_t)(h ^ h >> 29) & mask;; i = (i + 1) & mask) {
        stage_mem_slot *x = &memo[i];
        if (!x->used) {
            *x = (stage_mem_slot){1, att, s->first, s->last, s->ngpus, in_flight,
                                  stage_bytes(p, t, j, pi, k, in_flight)};
            return x->bytes;
        }
        if (x->attention == att && x->first == s->first && x->last == s->last &&
            x->ngpus == s->ngpus && x->in_flight == in_flight)
            return x->bytes;
    }
}

/* Every GPU's memory into mem (used: scratch), ngpus = v->ngpus each;
 * memo: memo_size(the plan's stages) zeroed slots; by_type: NULL, or room
 * for t's GPU types (stage_attention). */
static void view_memory_into(const plan_view *v, const plan *p, const topology *t,
                             const job *j, double *mem, char *used, stage_mem_slot *memo,
                             signed char *by_type)
{
    if (by_type)
        memset(by_type, -1, (size_t)t->ntypes);
    job jb;
    j = plan_job(p, j, &jb);
    int ngpus = v->ngpus;
    size_t mask = memo_size((size_t)v->stage0[v->npipes]) - 1;
    memset(mem, 0, sizeof *mem * (size_t)ngpus);
    memset(used, 0, (size_t)ngpus);
    for (int pi = 0; pi < p->npipes; pi++) {
        const plan_pipeline *pp = &p->pipes[pi];
        for (int k = 0; k < pp->nstages; k++) {
            const plan_stage *s = &pp->stages[k];
            double m = memo_stage_bytes(memo, mask, p, t, j, pi, k, plan_view_in_flight(v, pi, k),
                                        by_type);
            for (int x = 0; x < s->ngpus; x++)
                if (s->gpus[x] >= 0 && s->gpus[x] < ngpus) {
                    mem[s->gpus[x]] += m;
                    used[s->gpus[x]] = 1;
                }
        }
    }
    for (int g = 0; g < ngpus; g++)
        mem[g] = used[g] ? mem[g] + COST_RUNTIME_OVERHEAD_BYTES : 0;
}

int plan_view_memory(const plan_view *v, const plan *p, const topology *t, const job *j,
                     double **out)
{
    int ngpus = v->ngpus;
    double *mem = calloc((size_t)(ngpus > 0 ? ngpus : 1), sizeof *mem);
    char *used = calloc((size_t)(ngpus > 0 ? ngpus : 1), 1);
    stage_mem_slot *memo = calloc(memo_size((size_t)v->stage0[v->npipes]), sizeof *memo);
    if (!mem || !used || !memo) {
        free(mem);
        free(used);
        free(memo);
        return -1;
    }
    view_memory_into(v, p, t, j, mem, used, memo, NULL);
    free(used);
    free(memo);
    *out = mem;
    return 0;
}

int plan_gpus_used(const plan *p)
{
    int n = 0;
    for (int pi = 0; pi < p->npipes; pi++) {
        int S = plan_physical_stages(p, pi);
        for (int k = 0; k < S; k++)
            n += p->pipes[pi].stages[k].ngpus;
    }
    return n;
}

static int check_batch(const plan *p, const job *j, gt_err *e)
{
    if (p->accumulation > 0 && j->accumulation > 0 && p->accumulation != j->accumulation)
        return gt_fail(e, "accumulation_steps is %d in the plan but %d in the job "
                          "(--accumulation-steps)", p->accumulation, j->accumulation);
    int k = plan_accumulation(p, j);
    long long total = 0;
    for (int pi = 0; pi < p->npipes; pi++)
        total += p->pipes[pi].microbatches;
    /* total * microbatch_size can pass 2^63 (1e5 pipelines x 1e8 microbatches
     * x 1e6): multiply in double, exact up to 2^53, far above any int batch */
    double seqs = (double)total * p->microbatch_size * k;
    if (seqs != j->batch && k == 1)
        return gt_fail(e, "microbatches add up to %lld x microbatch_size %d = %.0f sequences, "
                          "but the job's batch is %d",
                       total, p->microbatch_size, seqs, j->batch);
    if (seqs != j->batch)
        return gt_fail(e, "microbatches add up to %lld x microbatch_size %d x "
                          "accumulation_steps %d = %.0f sequences, but the job's batch is %d",
                       total, p->microbatch_size, k, seqs, j->batch);
    return 0;
}

static int check_layers(const plan *p, const job *j, gt_err *e)
{
    int L = j->model.layers;
    for (int pi = 0; pi < p->npipes; pi++) {
        const plan_pipeline *pp = &p->pipes[pi];
        int next = 0;
        for (int k = 0; k < pp->nstages; k++) {
            const plan_stage *s = &pp->stages[k];
            if (s->first > next)
                return gt_fail(e, "pipelines[%d]: layers %d..%d are missing (stage %d starts "
                                  "at %d)", pi, next, s->first - 1, k, s->first);
            if (s->first < next)
                return gt_fail(e, "pipelines[%d].stages[%d]: layers [%d, %d] overlap the "
                                  "previous stage (which ends at %d)",
                               pi, k, s->first, s->last, next - 1);
            next = s->last + 1;
        }
        if (next < L)
            return gt_fail(e, "pipelines[%d]: layers %d..%d are missing (the model has %d "
                              "layers)", pi, next, L - 1, L);
        if (next > L)
            return gt_fail(e, "pipelines[%d]: layer %d does not exist (the model has %d "
                              "layers, 0..%d)", pi, next - 1, L, L - 1);
    }
    return 0;
}

static int check_stage_gpus(const plan *p, const topology *t, int pi, int k, int *owner,
                            gt_err *e)
{
    const plan_stage *s = &p->pipes[pi].stages[k];
    char name[160], other[160]; /* formatted only for a message: the planners check often */
    for (int x = 0; x < s->ngpus; x++) {
        int g = s->gpus[x];
        if (t->gpus[g].node != t->gpus[s->gpus[0]].node) {
            topo_gpu_name(t, g, name, sizeof name);
            topo_gpu_name(t, s->gpus[0], other, sizeof other);
            return gt_fail(e, "pipelines[%d].stages[%d]: tensor-parallel GPUs must share a "
                              "node (%s and %s do not)", pi, k, other, name);
        }
        if (owner[g] >= 0) {
            int opi = owner[g] >> 16, ok = owner[g] & 0xffff;
            topo_gpu_name(t, g, name, sizeof name);
            return gt_fail(e, "GPU %s is used twice (pipelines[%d].stages[%d] and "
                              "pipelines[%d].stages[%d])", name, opi, ok, pi, k);
        }
        owner[g] = (pi << 16) | (k & 0xffff);
    }
    return 0;
}

static int check_interleave(const plan *p, const plan_view *v, int pi, gt_err *e)
{
    const plan_pipeline *pp = &p->pipes[pi];
    int S = v->S[pi];
    if (pp->nstages % S)
        return gt_fail(e, "pipelines[%d]: interleaved schedule needs a multiple of %d stages "
                          "(got %d)", pi, S, pp->nstages);
    for (int k = S; k < pp->nstages; k++) {
        const plan_stage *a = &pp->stages[k], *b = &pp->stages[k % S];
        if (a->ngpus != b->ngpus || memcmp(a->gpus, b->gpus, sizeof(int) * (size_t)a->ngpus))
            return gt_fail(e, "pipelines[%d].stages[%d]: interleaved stages must repeat the "
                              "GPUs of stage %d", pi, k, k % S);
    }
    return 0;
}

static int check_gpus(const plan *p, plan_check_buf *b, const topology *t, gt_err *e)
{
    const plan_view *v = &b->v;
    if (gt_grow(&b->owner, &b->cap[2], (size_t)t->ngpus, sizeof *b->owner))
        return gt_fail(e, "out of memory");
    int *owner = b->owner;
    for (int g = 0; g < t->ngpus; g++)
        owner[g] = -1;
    int rc = 0;
    for (int pi = 0; pi < p->npipes && !rc; pi++) {
        if (p->pipes[pi].nstages > 0xffff || pi > 0x7fff) {
            rc = gt_fail(e, "plan too large (%d pipelines)", p->npipes);
            break;
        }
        if (p->schedule == SCHED_INTERLEAVED && (rc = check_interleave(p, v, pi, e)))
            break;
        int S = v->S[pi];
        for (int k = 0; k < S && !rc; k++)
            rc = check_stage_gpus(p, t, pi, k, owner, e);
    }
    return rc;
}

/* Fills b->mem (the buffers grown to the view's GPUs) and checks each
 * stage's GPU against its memory. */
static int check_memory(const plan *p, plan_check_buf *b, const topology *t, const job *j,
                        gt_err *e)
{
    const plan_view *v = &b->v;
    int n = v->ngpus > 0 ? v->ngpus : 1;
    size_t slots = memo_size((size_t)v->stage0[v->npipes]);
    if (gt_grow(&b->mem, &b->cap[0], (size_t)n, sizeof *b->mem) ||
        gt_grow(&b->used, &b->cap[1], (size_t)n, 1) ||
        gt_grow(&b->memo, &b->cap_memo, slots, sizeof *b->memo) ||
        gt_grow(&b->by_type, &b->cap_by_type, (size_t)t->ntypes, 1))
        return gt_fail(e, "out of memory");
    memset(b->memo, 0, sizeof *b->memo * slots);
    view_memory_into(v, p, t, j, b->mem, b->used, b->memo, b->by_type);
    const double *mem = b->mem;
    int rc = 0;
    for (int pi = 0; pi < p->npipes && !rc; pi++) {
        int S = v->S[pi];
        for (int k = 0; k < S; k++) {
            const plan_stage *s = &p->pipes[pi].stages[k];
            int g = s->gpus[0];
            double need = mem[g], have = topo_gpu_type(t, g)->mem_bytes;
            if (need > have && !rc) {
                char name[160];
                topo_gpu_name(t, g, name, sizeof name);
                rc = gt_fail(e, "pipelines[%d].stages[%d]: GPU %s (%s) needs %.2f GiB for "
                                "layers [%d, %d] but has %.2f GiB",
                             pi, k, name, topo_gpu_type(t, g)->id, need / GIB, s->first,
                             s->last, have / GIB);
            }
        }
    }
    return rc;
}

long long plan_op_count(const plan *p)
{
    long long n = 0;
    for (int pi = 0; pi < p->npipes; pi++)
        n += 2LL * p->pipes[pi].nstages * p->pipes[pi].microbatches;
    return n;
}

/* Size first, before anything is allocated for the plan: the op count (the
 * simulator keeps about 200 bytes per op, so PLAN_MAX_OPS stays under 1 GiB)
 * and the interleaved schedule's microbatch rule (the workload needs it). */
static int check_size(const plan *p, const plan_view *v, const job *j, gt_err *e)
{
    long long ops = plan_op_count(p), acc = plan_accumulation(p, j);
    if (ops > PLAN_MAX_OPS / acc)
        return gt_fail(e, "the plan has %lld ops (2 x stages x microbatches%s), over the cap of "
                          "%d (about 200 bytes each in a replay)",
                       ops * acc, acc > 1 ? " x accumulation steps" : "", PLAN_MAX_OPS);
    for (int pi = 0; p->schedule == SCHED_INTERLEAVED && pi < p->npipes; pi++)
        if (p->pipes[pi].microbatches % v->S[pi])
            return gt_fail(e, "pipelines[%d]: the interleaved schedule needs microbatches "
                              "(%d) to be a multiple of the stages (%d)",
                           pi, p->pipes[pi].microbatches, v->S[pi]);
    return 0;
}

/* A forced fused kernel on a GPU that runs no FlashAttention (attn_choice.h)
 * prices a kernel that does not exist there: refused. */
static int check_attention(const plan *p, const topology *t, const job *j, gt_err *e)
{
    if (j->attention != ATTN_FUSED)
        return 0;
    for (int pi = 0; pi < p->npipes; pi++)
        for (int k = 0; k < p->pipes[pi].nstages; k++) {
            const plan_stage *s = &p->pipes[pi].stages[k];
            for (int x = 0; x < s->ngpus; x++) {
                const gpu_type *g = topo_gpu_type(t, s->gpus[x]);
                if (attn_arch_runs_no_flash(g))
                    return gt_fail(e, "pipelines[%d].stages[%d]: --attention forces a fused "
                                      "kernel, but GPU type %s (%s) runs no FlashAttention "
                                      "(Turing or newer needed); use --attention auto or "
                                      "unfused", pi, k, g->id, g->arch);
            }
        }
    return 0;
}

int plan_check(const plan *p, const topology *t, const job *j, gt_err *e)
{
    plan_check_buf b = {0};
    int rc = plan_check_into(p, t, j, &b, e);
    plan_check_buf_free(&b);
    return rc;
}

void plan_check_buf_free(plan_check_buf *b)
{
    plan_view_free(&b->v);
    free(b->mem);
    free(b->used);
    free(b->owner);
    free(b->memo);
    free(b->by_type);
    memset(b, 0, sizeof *b);
}

int plan_check_into(const plan *p, const topology *t, const job *j, plan_check_buf *b, gt_err *e)
{
    job jb;
    j = plan_job(p, j, &jb);
    if (p->npipes <= 0)
        return gt_fail(e, "the plan has no pipelines");
    if (p->microbatch_size <= 0)
        return gt_fail(e, "microbatch_size must be >= 1");
    for (int pi = 0; pi < p->npipes; pi++)
        for (int k = 0; k < p->pipes[pi].nstages; k++)
            for (int x = 0; x < p->pipes[pi].stages[k].ngpus; x++) {
                int g = p->pipes[pi].stages[k].gpus[x];
                if (g < 0 || g >= t->ngpus)
                    return gt_fail(e, "pipelines[%d].stages[%d]: GPU index %d not in the "
                                      "topology", pi, k, g);
            }
    if (check_attention(p, t, j, e))
        return -1;
    if (p->dp_shard != SHARD_NONE && p->sync == SYNC_HIERARCHICAL)
        return gt_fail(e, "dp_shard \"%s\" needs dp_sync \"ring\" or \"ps\" (a sharded "
                          "sync is a reduce-scatter and all-gathers; \"hierarchical\" has no "
                          "such split)", shard_name(p->dp_shard));
    /* as large as the plan's own stage lists */
    if (plan_view_rebuild(&b->v, p, t->ngpus, e))
        return -1;
    const plan_view *v = &b->v;
    return check_size(p, v, j, e) || check_batch(p, j, e) || check_layers(p, j, e) ||
                   check_gpus(p, b, t, e) || plan_freq_check(p, t, e)
               ? -1
               : check_memory(p, b, t, j, e);
}
