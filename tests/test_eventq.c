/* test_eventq.c — the event queue against a brute-force oracle on the
 * simulator's own pattern: the clock only moves forward, every new event is
 * at or after the one just popped (so the radix buckets split again and
 * again instead of being rebuilt), handles move earlier and later, batches
 * share a sequence number, times are negative and positive, close together
 * (same-nanosecond ties) and far apart (top bits of the time). Every pop
 * must return the pending event of least (time, order of scheduling,
 * handle inside a batch) with its own body; every peek must name its time.
 * A second oracle run keeps most events on the current instant (the
 * sorted run: appends, in-order inserts of older batch keys, keys taken
 * out in place). A large hold model checks the big buckets by invariant
 * (pop order and conservation).
 * (test_network.c holds the random-order oracle, which rewinds the clock.) */
#include "testutil.h"

#include <string.h>

#include "sim/engine/eventq.h"

typedef struct pending {
    int64_t time;
    uint64_t order;
    int handle, body;
} pending;

enum { H = 300, MAXP = 3000 };
static pending pend[MAXP];
static int np;

static uint64_t rng = 2024;
static uint64_t next(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng >> 11;
}

/* A time at or after now: a tie, a few ns, or up to 2^(10..61) ns later. */
static int64_t later(int64_t now)
{
    uint64_t r = next();
    switch (r % 4) {
    case 0: return now;
    case 1: return now + (int64_t)(r >> 8) % 16;
    default: {
        int bits = 10 + (int)((r >> 8) % 52);
        if (now > INT64_C(1) << 61) /* stays far from overflowing int64 */
            bits = 20;
        return now + (int64_t)((r >> 20) & ((UINT64_C(1) << bits) - 1));
    }
    }
}

static void drop_handle(int h)
{
    for (int i = 0; i < np; i++)
        if (pend[i].handle == h) {
            pend[i] = pend[--np];
            return;
        }
}

static int oracle_min(void)
{
    int best = -1;
    for (int i = 0; i < np; i++) {
        const pending *p = &pend[i], *b = best < 0 ? NULL : &pend[best];
        if (!b || p->time < b->time ||
            (p->time == b->time &&
             (p->order < b->order || (p->order == b->order && p->handle < b->handle))))
            best = i;
    }
    return best;
}

static void check_pop(eventq *q)
{
    int best = oracle_min();
    event ev;
    if (best < 0) {
        assert_true(eventq_peek_time(q) == INT64_MAX);
        assert_int_equal(eventq_pop(q, &ev), 0);
        return;
    }
    assert_true(eventq_peek_time(q) == pend[best].time);
    assert_int_equal(eventq_pop(q, &ev), 1);
    assert_true(ev.time == pend[best].time);
    assert_int_equal(ev.handle, pend[best].handle);
    assert_int_equal(ev.id, pend[best].body);
    assert_int_equal(ev.version, (uint32_t)pend[best].body);
    assert_int_equal(ev.kind, pend[best].handle < 0 ? 0 : 1);
    pend[best] = pend[--np];
}

/* Pop the oracle's least and return the clock's new time. */
static int64_t pop_step(eventq *q, int64_t now)
{
    int best = oracle_min();
    int64_t t = best >= 0 ? pend[best].time : now;
    check_pop(q);
    return t;
}

/* Drop everything pending (handles are free again), then the queue must
 * be empty. */
static void clear_all(eventq *q)
{
    eventq_clear(q);
    np = 0;
    check_pop(q);
}

/* Pop every pending event in the oracle's order, then free the queue. */
static void drain(eventq *q)
{
    while (np > 0)
        check_pop(q);
    check_pop(q);
    eventq_free(q);
}

static void test_eventq_forward_oracle(void **state)
{
    (void)state;
    eventq q;
    assert_int_equal(eventq_init(&q), 0);
    int64_t now = -(INT64_C(1) << 40); /* starts below zero, crosses it */
    uint64_t order = 0;
    int body = 0;
    for (int step = 0; step < 60000; step++) {
        uint64_t r = next();
        int op = (int)(r % 8);
        if (np > MAXP - 16)
            op = 7; /* full: pop */
        if (op <= 1) { /* plain push */
            int64_t t = later(now);
            assert_int_equal(eventq_push(&q, t, 0, body, (uint32_t)body), 0);
            pend[np++] = (pending){t, order++, -1, body++};
        } else if (op <= 3) { /* one handle moved (earlier or later) or set */
            int h = (int)(next() % H);
            int64_t t = later(now);
            drop_handle(h);
            assert_int_equal(eventq_set(&q, h, t, 1, body, (uint32_t)body), 0);
            pend[np++] = (pending){t, order++, h, body++};
        } else if (op == 4) { /* a batch: same-instant members pop in handle order */
            int64_t batch = eventq_batch(&q), base = later(now);
            int count = 2 + (int)(next() % 6);
            for (int c = 0; c < count; c++) {
                int h = (int)(next() % H);
                int64_t t = base + (int64_t)(next() % 3);
                drop_handle(h);
                assert_int_equal(eventq_set_batch(&q, batch, h, t, 1, body, (uint32_t)body), 0);
                pend[np++] = (pending){t, order, h, body++};
            }
            order++;
        } else { /* pop: the clock moves to the popped time */
            now = pop_step(&q, now);
        }
        if (step == 40000)
            clear_all(&q);
    }
    drain(&q);
}

/* A time for the same-instant oracle: mostly now itself (the lockstep
 * pipelines' ties), sometimes a few ns later, rarely far. */
static int64_t soon(int64_t now)
{
    uint64_t r = next() % 16;
    return r < 11 ? now : r < 15 ? now + (int64_t)(r - 10) : now + (int64_t)(next() % 100000);
}

/* The run of keys at the current instant against the same brute-force
 * oracle: most events land on the instant being handled; batch numbers are
 * reserved and used only after later pushes (their keys are older than the
 * run's tail and must be inserted in order); handles pending at the current
 * instant are moved away, moved within it and set again (taken out of the
 * run in place). Every pop must be the oracle's least. */
static void test_eventq_same_instant_oracle(void **state)
{
    (void)state;
    eventq q;
    assert_int_equal(eventq_init(&q), 0);
    np = 0;
    int64_t now = 1000;
    uint64_t order = 0;
    int body = 0;
    int64_t held = -1; /* a reserved batch number not used yet */
    uint64_t held_order = 0;
    for (int step = 0; step < 80000; step++) {
        int op = (int)(next() % 10);
        if (np > MAXP - 16)
            op = 9;
        if (op <= 2) {
            int64_t t = soon(now);
            assert_int_equal(eventq_push(&q, t, 0, body, (uint32_t)body), 0);
            pend[np++] = (pending){t, order++, -1, body++};
        } else if (op <= 4) {
            int h = (int)(next() % 40); /* few handles: most are pending when moved */
            int64_t t = soon(now);
            drop_handle(h);
            assert_int_equal(eventq_set(&q, h, t, 1, body, (uint32_t)body), 0);
            pend[np++] = (pending){t, order++, h, body++};
        } else if (op == 5) {
            if (held < 0) { /* reserve now, use after other pushes */
                held = eventq_batch(&q);
                held_order = order++;
                continue;
            }
            int count = 1 + (int)(next() % 5);
            for (int c = 0; c < count; c++) {
                int h = 40 + (int)(next() % 200);
                int64_t t = soon(now);
                drop_handle(h);
                assert_int_equal(eventq_set_batch(&q, held, h, t, 1, body, (uint32_t)body), 0);
                pend[np++] = (pending){t, held_order, h, body++};
            }
            held = -1;
        } else {
            now = pop_step(&q, now);
        }
        if (step == 50000)
            clear_all(&q);
    }
    drain(&q);
}

/* A hold model with 20,000 pending plain events over a 2^40 ns spread, so
 * buckets grow past a few thousand entries and are emptied and given back:
 * the pops must come in non-decreasing (time, sequence) order, each event
 * exactly once with its own body (together: each pop was the least). */
static void test_eventq_large_hold(void **state)
{
    (void)state;
    enum { PENDING = 20000, STEPS = 200000, TOTAL = PENDING + STEPS };
    static unsigned char seen[TOTAL];
    memset(seen, 0, sizeof seen);
    eventq q;
    assert_int_equal(eventq_init(&q), 0);
    int id = 0;
    for (; id < PENDING; id++)
        assert_int_equal(eventq_push(&q, (int64_t)(next() & ((UINT64_C(1) << 40) - 1)), 2, id,
                                     (uint32_t)id * 2654435761u),
                         0);
    event ev, prev = {INT64_MIN, 0, 0, 0, 0, 0};
    long popped = 0;
    int r;
    while ((r = eventq_pop(&q, &ev)) > 0) {
        assert_true(ev.time > prev.time || (ev.time == prev.time && ev.seq > prev.seq));
        assert_true(ev.id >= 0 && ev.id < TOTAL && !seen[ev.id]);
        assert_int_equal(ev.version, (uint32_t)ev.id * 2654435761u);
        assert_int_equal(ev.kind, 2);
        seen[ev.id] = 1;
        prev = ev;
        popped++;
        if (id < TOTAL) { /* the next one at or after this instant */
            int64_t t = ev.time + (int64_t)(next() % 4 ? next() & ((1 << 30) - 1) : 0);
            assert_int_equal(eventq_push(&q, t, 2, id, (uint32_t)id * 2654435761u), 0);
            id++;
        }
    }
    assert_int_equal(r, 0);
    assert_int_equal(popped, TOTAL);
    eventq_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eventq_forward_oracle),
        cmocka_unit_test(test_eventq_same_instant_oracle),
        cmocka_unit_test(test_eventq_large_hold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
