/* kineto.c — Kineto Chrome trace -> per-layer forward/backward times
 * (see kineto.h for the naming and timing rules). */
#include "kineto.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonio.h"

#define MAX_BLOCK 100000

/* One interval attributed to a layer key (kind, block, backward). */
typedef struct span {
    int kind, block, bwd;
    long long tid;
    double t0, t1;
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

static int push(spans *s, span x, gt_err *e)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        span *nv = realloc(s->v, cap * sizeof *nv);
        if (!nv)
            return gt_fail(e, "out of memory");
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

/* "layers.12" style: `word` followed by '.' or '_' and digits, at a boundary. */
static int dotted_index(const char *name, const char *word)
{
    size_t w = strlen(word);
    int found = -1;
    for (const char *p = strstr(name, word); p; p = strstr(p + 1, word)) {
        bool start = p == name || p[-1] == '.' || p[-1] == ' ' || p[-1] == '/';
        if (start && p[w] == '.' && isdigit((unsigned char)p[w + 1]))
            found = atoi(p + w + 1) % (MAX_BLOCK + 1);
    }
    return found;
}

/* "LlamaDecoderLayer_3" / "GPT2Block_3" (PyTorch's nn.Module event names). */
static int class_index(const char *name)
{
    const char *u = strrchr(name, '_');
    if (!u || !isdigit((unsigned char)u[1]))
        return -1;
    for (const char *q = u + 1; *q; q++)
        if (!isdigit((unsigned char)*q))
            return -1;
    size_t n = (size_t)(u - name);
    if ((n >= 5 && !strncmp(u - 5, "Layer", 5)) || (n >= 5 && !strncmp(u - 5, "Block", 5)))
        return atoi(u + 1) % (MAX_BLOCK + 1);
    return -1;
}

static bool contains_ci(const char *s, const char *word)
{
    size_t w = strlen(word);
    for (; *s; s++)
        if (!strncasecmp(s, word, w))
            return true;
    return false;
}

/* Layer kind and block of an event name; -1 if it names no layer. */
static int classify(const char *name, int *block)
{
    if (!strncmp(name, "nn.Module: ", 11))
        name += 11;
    static const char *const WORDS[] = {"layers", "layer", "h", "blocks"};
    *block = -1;
    for (int i = 0; i < 4 && *block < 0; i++)
        *block = dotted_index(name, WORDS[i]);
    if (*block < 0)
        *block = class_index(name);
    if (*block >= 0)
        return LAYER_BLOCK;
    if (strstr(name, "lm_head"))
        return LAYER_HEAD;
    if (contains_ci(name, "embed") || strstr(name, "wte") || strstr(name, "wpe"))
        return LAYER_EMBEDDING;
    return -1;
}

static double num(json_t *o, const char *k, bool *ok)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_number(v)) {
        *ok = false;
        return 0;
    }
    return json_number_value(v);
}

static long long tid_of(json_t *ev)
{
    json_t *t = json_object_get(ev, "tid");
    return json_is_integer(t) ? (long long)json_integer_value(t) : -1;
}

static long long correlation(json_t *ev)
{
    json_t *c = json_object_get(json_object_get(ev, "args"), "correlation");
    return json_is_integer(c) ? (long long)json_integer_value(c) : -1;
}

/* A CPU launch (runtime event) or a GPU kernel, joined by correlation id. */
typedef struct link {
    long long corr, tid;
    double t0, t1;
} link;

static int by_corr(const void *a, const void *b)
{
    long long x = ((const link *)a)->corr, y = ((const link *)b)->corr;
    return (x > y) - (x < y);
}

typedef struct collected {
    spans cpu;               /* layer events, bwd decided later */
    link *launch, *kernel;
    size_t nl, nk;
} collected;

static int collect_event(const jdoc *d, json_t *ev, size_t i, collected *c, gt_err *e)
{
    json_t *ph = json_object_get(ev, "ph"), *nm = json_object_get(ev, "name");
    if (!json_is_string(ph) || strcmp(json_string_value(ph), "X") || !json_is_string(nm))
        return 0;
    bool ok = true;
    double ts = num(ev, "ts", &ok), dur = num(ev, "dur", &ok);
    char where[64];
    snprintf(where, sizeof where, "traceEvents[%zu]", i);
    if (!ok || dur < 0)
        return jdoc_fail(d, e, where, "complete event without numeric ts and dur >= 0");
    json_t *cat = json_object_get(ev, "cat");
    const char *cs = json_is_string(cat) ? json_string_value(cat) : "";
    long long corr = correlation(ev);
    link l = {corr, tid_of(ev), ts, ts + dur};
    if (!strcmp(cs, "kernel") && corr >= 0) {
        c->kernel[c->nk++] = l;
        return 0;
    }
    if ((!strcmp(cs, "cuda_runtime") || !strcmp(cs, "cuda_driver")) && corr >= 0) {
        c->launch[c->nl++] = l;
        return 0;
    }
    int block, kind = classify(json_string_value(nm), &block);
    if (kind < 0)
        return 0;
    span s = {kind, block, contains_ci(json_string_value(nm), "backward"), l.tid, ts, ts + dur};
    return push(&c->cpu, s, e);
}

/* Events without "backward" in their name are backward when on another
 * thread than the earliest of them (the forward thread). */
static void mark_backward_threads(spans *s)
{
    long long fwd_tid = -1;
    double first = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!s->v[i].bwd && (fwd_tid < 0 || s->v[i].t0 < first)) {
            fwd_tid = s->v[i].tid;
            first = s->v[i].t0;
        }
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].tid != fwd_tid)
            s->v[i].bwd = 1;
}

/* The layer event on `tid` whose interval holds time t (innermost: shortest). */
static const span *enclosing(const spans *s, long long tid, double t)
{
    const span *best = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const span *x = &s->v[i];
        if (x->tid == tid && x->t0 <= t && t <= x->t1 &&
            (!best || x->t1 - x->t0 < best->t1 - best->t0))
            best = x;
    }
    return best;
}

/* Kernel intervals keyed by the layer event that launched them. */
static int attribute_kernels(collected *c, spans *out, gt_err *e)
{
    qsort(c->launch, c->nl, sizeof *c->launch, by_corr);
    for (size_t i = 0; i < c->nk; i++) {
        link key = {c->kernel[i].corr, 0, 0, 0};
        const link *l = bsearch(&key, c->launch, c->nl, sizeof *c->launch, by_corr);
        const span *s = l ? enclosing(&c->cpu, l->tid, l->t0) : NULL;
        if (!s)
            continue;   /* optimizer, loss, data loading: not a layer */
        span k = *s;
        k.t0 = c->kernel[i].t0;
        k.t1 = c->kernel[i].t1;
        if (push(out, k, e))
            return -1;
    }
    return 0;
}

static int by_key_time(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    if (x->bwd != y->bwd)
        return x->bwd - y->bwd;
    if (x->block != y->block)
        return x->block - y->block;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Per (kind, direction): total union length and number of disjoint runs,
 * summed over the keys (blocks) of that kind; runs[] counts keys too. */
typedef struct totals {
    double len[3][2];
    int runs[3][2], keys[3][2];
    int first_block_runs;
} totals;

static void union_lengths(spans *s, totals *t)
{
    memset(t, 0, sizeof *t);
    t->first_block_runs = -1;
    qsort(s->v, s->n, sizeof *s->v, by_key_time);
    for (size_t i = 0; i < s->n;) {
        const span *k = &s->v[i];
        double lo = k->t0, hi = k->t1, len = 0;
        int runs = 1;
        size_t j = i + 1;
        for (; j < s->n && s->v[j].kind == k->kind && s->v[j].bwd == k->bwd &&
               s->v[j].block == k->block; j++) {
            if (s->v[j].t0 > hi) {
                len += hi - lo;
                lo = s->v[j].t0;
                hi = s->v[j].t1;
                runs++;
            } else if (s->v[j].t1 > hi) {
                hi = s->v[j].t1;
            }
        }
        len += hi - lo;
        t->len[k->kind][k->bwd] += len;
        t->runs[k->kind][k->bwd] += runs;
        t->keys[k->kind][k->bwd]++;
        if (k->kind == LAYER_BLOCK && !k->bwd && t->first_block_runs < 0)
            t->first_block_runs = runs;
        i = j;
    }
}

static int load_events(const jdoc *d, collected *c, gt_err *e)
{
    json_t *evs = json_object_get(d->root, "traceEvents");
    if (!json_is_array(evs))
        return jdoc_fail(d, e, "traceEvents", "missing, expected the array of trace events");
    size_t n = json_array_size(evs);
    c->launch = malloc((n + 1) * sizeof *c->launch);
    c->kernel = malloc((n + 1) * sizeof *c->kernel);
    if (!c->launch || !c->kernel)
        return gt_fail(e, "%s: out of memory", d->path);
    for (size_t i = 0; i < n; i++)
        if (json_is_object(json_array_get(evs, i)) &&
            collect_event(d, json_array_get(evs, i), i, c, e))
            return -1;
    if (!c->cpu.n)
        return jdoc_fail(d, e, "traceEvents",
                         "no layer events (expected names such as \"nn.Module: "
                         "model.layers.0\" or record_function(\"layers.0\"); see "
                         "docs/library.md)");
    return 0;
}

int kineto_load(const char *path, kineto_times *out, gt_err *e)
{
    memset(out, 0, sizeof *out);
    jdoc d;
    if (jdoc_load(&d, path, e))
        return -1;
    collected c = {{0}, NULL, NULL, 0, 0};
    spans k = {0};
    int rc = load_events(&d, &c, e);
    if (!rc) {
        mark_backward_threads(&c.cpu);
        rc = attribute_kernels(&c, &k, e);
    }
    if (!rc) {
        out->from_kernels = k.n > 0;
        totals t;
        union_lengths(out->from_kernels ? &k : &c.cpu, &t);
        totals cpu;
        union_lengths(&c.cpu, &cpu);   /* runs (microbatches) come from CPU events */
        for (int kind = 0; kind < 3; kind++)
            for (int b = 0; b < 2; b++)
                if (cpu.runs[kind][b]) {
                    double v = t.len[kind][b] / cpu.runs[kind][b];
                    *(b ? &out->bwd_us[kind] : &out->fwd_us[kind]) = v;
                }
        out->blocks = cpu.keys[LAYER_BLOCK][0];
        out->microbatches = cpu.first_block_runs;
    }
    free(c.cpu.v);
    free(c.launch);
    free(c.kernel);
    free(k.v);
    jdoc_free(&d);
    return rc;
}
