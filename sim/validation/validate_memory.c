/* validate_memory.c — reading validation/memory_runs.csv, replaying a row's
 * peak memory with the memory model, and the report (validate_memory.h). */
#include "sim/validation/validate_memory.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/csv.h"
#include "sim/base/grow.h"
#include "sim/inputs/job.h"
#include "sim/inputs/plan.h"
#include "sim/models/memory.h"

#define GIB 1073741824.0

typedef struct col_def {
    const char *name;
    size_t off, cap; /* cap > 0: string field of that size; 0: int; 1: double */
} col_def;

#define S(f) {#f, offsetof(mem_row, f), sizeof(((mem_row *)0)->f)}
#define I(f) {#f, offsetof(mem_row, f), 0}
#define D(f) {#f, offsetof(mem_row, f), 1}
static const col_def COLS[] = {
    S(id), S(gpu), S(model), S(schedule), S(dp_shard), S(recompute), S(precision),
    S(attention), S(measure), S(role), S(skip), I(layers), I(hidden), I(heads),
    I(kv_heads), I(ffn), I(vocab), I(seq), I(gated_mlp), I(bias), I(learned_pos),
    I(micro_batch), I(microbatches), I(tp), I(pp), I(dp), I(vp), I(sequence_parallel),
    I(fsdp_keep_unsharded), I(tp_keeps_gathered), I(compile), D(loss_bytes), D(measured_gib)};
#undef S
#undef I
#undef D
#define NCOLS ((int)(sizeof COLS / sizeof *COLS))

/* Index in COLS of a column name (names are the table's own). */
static int cidx(const char *name)
{
    for (int i = 0; i < NCOLS; i++)
        if (!strcmp(COLS[i].name, name))
            return i;
    return 0;
}

/* Words a replayed row must use in its text columns. */
static int check_word(const csv_reader *c, int col, const char *v, const char *const *ok,
                      gt_err *e)
{
    for (const char *const *w = ok; *w; w++)
        if (!strcmp(v, *w))
            return 0;
    char list[160] = "";
    for (const char *const *w = ok; *w; w++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", w == ok ? "" : ", ", *w);
    return csv_fail_at(c, col, e, "expected one of %s, got '%s'", list, v);
}

static int check_words(const csv_reader *c, const int *ci, const mem_row *r, gt_err *e)
{
    static const char *const recompute[] = {"none", "selective", "full", "ops", NULL};
    static const char *const shard[] = {"none", "zero1", "zero2", "zero3", "fsdp", NULL};
    static const char *const sched[] = {"gpipe", "1f1b", "interleaved", NULL};
    static const char *const attn[] = {"fused", "unfused", NULL};
    static const char *const measure[] = {"reserved", NULL};
    static const char *const role[] = {"fit", "holdout", NULL};
    static const char *const prec[] = {"bf16", "fp16", "fp8", "tf32", "fp32", NULL};
    const struct { int col; const char *v; const char *const *ok; } w[] = {
        {ci[cidx("recompute")], r->recompute, recompute},
        {ci[cidx("dp_shard")], r->dp_shard, shard},
        {ci[cidx("schedule")], r->schedule, sched},
        {ci[cidx("attention")], r->attention, attn},
        {ci[cidx("measure")], r->measure, measure},
        {ci[cidx("role")], r->role, role},
        {ci[cidx("precision")], r->precision, prec}};
    for (size_t k = 0; k < sizeof w / sizeof *w; k++)
        if (check_word(c, w[k].col, w[k].v, w[k].ok, e))
            return -1;
    return 0;
}

static int read_row(csv_reader *c, const int *ci, mem_row *r, gt_err *e)
{
    memset(r, 0, sizeof *r);
    int need = 1;
    for (int i = 0; i < NCOLS; i++) {
        char *dst = (char *)r + COLS[i].off;
        const char *v = csv_get(c, ci[i]);
        if (COLS[i].cap > 1) {
            if (strlen(v) >= COLS[i].cap)
                return csv_fail_at(c, ci[i], e, "value too long (at most %zu characters)",
                                   COLS[i].cap - 1);
            snprintf(dst, COLS[i].cap, "%s", v);
            if (!strcmp(COLS[i].name, "skip"))
                need = !*v;
            continue;
        }
        if (!need && !*v)
            continue; /* a skipped row may leave its layout empty */
        if (COLS[i].cap == 0) {
            long x;
            if (csv_long(c, ci[i], 0, 100000000, &x, e))
                return -1;
            *(int *)dst = (int)x;
        } else if (csv_double(c, ci[i], 0, 1e6, 0, 0, (double *)dst, e))
            return -1;
    }
    if (!r->id[0])
        return csv_fail_at(c, ci[cidx("id")], e, "empty");
    snprintf(r->source_key, sizeof r->source_key, "%.*s", (int)strcspn(r->id, "-"), r->id);
    if (!need)
        return 0;
    if (check_words(c, ci, r, e))
        return -1;
    static const char *const pos[] = {"layers", "hidden", "heads", "vocab", "seq",
                                      "micro_batch", "microbatches", "tp", "pp", "dp", "vp"};
    for (size_t k = 0; k < sizeof pos / sizeof *pos; k++) {
        int i = cidx(pos[k]);
        if (*(const int *)((const char *)r + COLS[i].off) < 1)
            return csv_fail_at(c, ci[i], e, "must be >= 1 on a replayed row");
    }
    if (r->tp > PLAN_MAX_TP)
        return csv_fail_at(c, ci[cidx("tp")], e, "at most %d", PLAN_MAX_TP);
    if (!(r->measured_gib > 0))
        return csv_fail_at(c, ci[cidx("measured_gib")], e, "must be > 0 on a replayed row");
    return 0;
}

int mem_load(const char *path, mem_row **rows, int *n, gt_err *e)
{
    *rows = NULL;
    *n = 0;
    csv_reader c;
    if (csv_open(&c, path, e))
        return -1;
    int ci[NCOLS], gcol = csv_col(&c, "grad_dtype", 1, e);
    for (int i = 0; i < NCOLS && gcol >= 0; i++)
        if ((ci[i] = csv_col(&c, COLS[i].name, 1, e)) < 0)
            goto fail;
    if (gcol < 0)
        goto fail;
    size_t cap = 0;
    int got;
    while ((got = csv_next(&c, e)) == 1) {
        if ((size_t)*n == cap && gt_grow(rows, &cap, cap ? 2 * cap : 64, sizeof **rows)) {
            gt_fail(e, "%s: out of memory", path);
            goto fail;
        }
        mem_row *r = &(*rows)[*n];
        if (read_row(&c, ci, r, e))
            goto fail;
        const char *g = csv_get(&c, gcol);
        r->grad_bytes = !strcmp(g, "fp32") ? 4 : 2;
        if (!r->skip[0] && strcmp(g, "fp32") && strcmp(g, "bf16") && strcmp(g, "fp16")) {
            csv_fail_at(&c, gcol, e, "expected bf16, fp16 or fp32, got '%s'", g);
            goto fail;
        }
        ++*n;
    }
    if (got < 0)
        goto fail;
    csv_close(&c);
    return 0;
fail:
    csv_close(&c);
    free(*rows);
    *rows = NULL;
    *n = 0;
    return -1;
}
