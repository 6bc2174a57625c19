/* run_memo.h — results of a pure computation kept across evaluations, found
 * by the content of its inputs (docs/estimator.md, "Buffers and caches").
 *
 * The fast path's per-pipeline recurrence depends on nothing but a few
 * numbers per stage (durations, lone transfer times, which inputs cross a
 * link, the optimizer step) and the pipeline's microbatches, accumulation
 * and schedule. Along a planner's search most pipelines of a plan are the
 * same as in plans it priced before (a mutation touches one or two), so
 * the recurrence's end state is stored under those numbers and copied back
 * when they come again: the same state the run would leave, bit for bit.
 * A key is a sequence of 64-bit words, a value a block of bytes; both are
 * copied in. The memo starts over past RUN_MEMO_MAX_ENTRIES entries or
 * RUN_MEMO_MAX_BYTES bytes (its buffers are kept: no allocation once warm). */
#ifndef GT_RUN_MEMO_H
#define GT_RUN_MEMO_H

#include <stddef.h>
#include <stdint.h>

#define RUN_MEMO_MAX_ENTRIES 4096
#define RUN_MEMO_MAX_BYTES ((size_t)16 << 20)

typedef struct run_memo {
    struct run_memo_entry *v;
    size_t n, cap;
    int *slot;             /* open addressing over v: index + 1, 0 empty */
    size_t nslot;
    unsigned char *pool;   /* keys and values, back to back */
    size_t used, cap_pool;
} run_memo;

/* The value stored under key[0..nkey), or NULL (*len: its bytes). */
const void *run_memo_get(const run_memo *m, const int64_t *key, size_t nkey, size_t *len);
/* Stores val[0..len) under key (not already present); 0, or -1 when out
 * of memory (the memo is then left empty, still usable). */
int run_memo_put(run_memo *m, const int64_t *key, size_t nkey, const void *val, size_t len);
void run_memo_clear(run_memo *m);
void run_memo_free(run_memo *m);

#endif
