/* test_network_oracle.c — the incremental (pruned) max-min solver against
 * full solvers, to the last bit. Random flow sets arrive and finish over a
 * four-site topology whose NICs, shared WAN links and per-pair links bind or
 * not depending on the mix; capacities change now and then. After every
 * event three answers must be bit-identical (memcmp of every rate):
 *   - the simulator's network (re-solves only the pruned component),
 *   - the same network with pruning off (re-solves whole components),
 *   - a naive global progressive filling written here from the definition
 *     (all joined flows at once, no components, no visiting order).
 * A second test starts one flow set in different orders: the rates must not
 * depend on the order (the canonical filling's promise). A third drives the
 * deferred mode (one re-solve per instant) against the naive filling. */
#include "testutil.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>

#include "sim/models/cost.h"
#include "sim/engine/eventq.h"
#include "sim/engine/network.h"

enum { EV_DONE = 1, MAX_FLOWS = 1200 };

/* Four sites of two nodes x two GPUs with different NIC rates; shared and
 * per-pair (node and GPU scope) WAN links of different rates and
 * latencies, so TCP caps differ per link too. */
static void make_topo(topology *t)
{
    static const char json[] =
        "{\"name\":\"oracle\",\"sites\":["
        "{\"id\":\"s0\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":10,"
        "\"repeat\":2}],\"lan\":{\"gbps\":8,\"latency_ms\":0}},"
        "{\"id\":\"s1\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":25,"
        "\"repeat\":2}],\"lan\":{\"gbps\":100,\"latency_ms\":0}},"
        "{\"id\":\"s2\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":40,"
        "\"repeat\":2}],\"lan\":{\"gbps\":30,\"latency_ms\":0}},"
        "{\"id\":\"s3\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100,"
        "\"repeat\":2}],\"lan\":{\"gbps\":100,\"latency_ms\":0}}],"
        "\"links\":[{\"a\":\"s0\",\"b\":\"s1\",\"gbps\":10,\"latency_ms\":5},"
        "{\"a\":\"s0\",\"b\":\"s2\",\"gbps\":5,\"latency_ms\":20,\"sharing\":\"per_pair\"},"
        "{\"a\":\"s1\",\"b\":\"s2\",\"gbps\":40,\"latency_ms\":10},"
        "{\"a\":\"s2\",\"b\":\"s3\",\"gbps\":20,\"latency_ms\":3,\"sharing\":\"per_pair\","
        "\"pair\":\"gpu\"}],"
        "\"default_wan\":{\"gbps\":15,\"latency_ms\":40},"
        "\"tcp\":{\"window_mb\":3,\"connections\":4}}";
    gt_err e;
    assert_int_equal(topo_parse(t, "oracle", json, sizeof json - 1, NULL, &e), 0);
}

/* Max-min rates of every joined flow by the definition: all unfrozen flows
 * rise together; at each level x (least remaining/unfrozen of a resource,
 * least private cap) the flows whose cap or some resource's share equals x
 * freeze at x, and each resource then gives up (its flows frozen at this
 * level) x x. Global and order-free. rate[] of an unjoined flow is 0. */
static bool joined(const network *n, int id)
{
    const net_live *l = net_flow_live(n, id);
    return l && l->joined;
}

static void naive_fill(const network *n, double *rate)
{
    int nf = n->nflows, nr = n->nres;
    bool *unfrozen = calloc((size_t)nf, sizeof *unfrozen);
    double *left = malloc(sizeof *left * (size_t)nr), *share = malloc(sizeof *share * (size_t)nr);
    int *cnt = malloc(sizeof *cnt * (size_t)nr), *k = malloc(sizeof *k * (size_t)nr);
    int(*res)[NET_MAX_RES] = malloc(sizeof *res * (size_t)nf), *nres = malloc(sizeof *nres * (size_t)nf);
    double *cap = malloc(sizeof *cap * (size_t)nf);
    assert_non_null(unfrozen);
    assert_true(left && share && cnt && k && res && nres && cap);
    int todo = 0;
    for (int i = 0; i < nf; i++) {
        rate[i] = 0;
        unfrozen[i] = joined(n, i);
        nres[i] = unfrozen[i] ? net_flow_path(n, i, res[i], &cap[i]) : 0;
        todo += unfrozen[i];
    }
    for (int r = 0; r < nr; r++)
        left[r] = n->res[r].cap;
    while (todo > 0) {
        memset(cnt, 0, sizeof *cnt * (size_t)nr);
        memset(k, 0, sizeof *k * (size_t)nr);
        for (int i = 0; i < nf; i++)
            for (int j = 0; unfrozen[i] && j < nres[i]; j++)
                cnt[res[i][j]]++;
        double x = INFINITY;
        for (int r = 0; r < nr; r++)
            if (cnt[r] > 0) {
                share[r] = left[r] / cnt[r];
                x = fmin(x, share[r]);
            }
        for (int i = 0; i < nf; i++)
            if (unfrozen[i])
                x = fmin(x, cap[i]);
        x = x < 0 ? 0 : x;
        for (int i = 0; i < nf; i++) {
            if (!unfrozen[i])
                continue;
            bool bind = cap[i] <= x;
            for (int j = 0; j < nres[i]; j++)
                bind |= share[res[i][j]] <= x;
            if (!bind)
                continue;
            rate[i] = x;
            unfrozen[i] = false;
            todo--;
            for (int j = 0; j < nres[i]; j++)
                k[res[i][j]]++;
        }
        for (int r = 0; r < nr; r++)
            left[r] -= (double)k[r] * x;
    }
    free(unfrozen);
    free(left);
    free(share);
    free(cnt);
    free(k);
    free(res);
    free(nres);
    free(cap);
}

/* Every rate and finish of a and b bit-identical, and equal to the naive
 * filling's rates. */
static void assert_same(const network *a, const network *b)
{
    assert_int_equal(a->nflows, b->nflows);
    double *want = malloc(sizeof *want * (size_t)(a->nflows + 1));
    assert_non_null(want);
    naive_fill(a, want);
    for (int i = 0; i < a->nflows; i++) {
        if (!joined(a, i))
            continue;
        assert_true(joined(b, i));
        const net_live *la = net_flow_live(a, i), *lb = net_flow_live(b, i);
        assert_memory_equal(&la->rate, &lb->rate, sizeof la->rate);
        assert_memory_equal(&la->rate, &want[i], sizeof la->rate);
        assert_true(la->finish == lb->finish);
    }
    free(want);
}

static double pick_bytes(gsl_rng *g)
{
    static const double sizes[] = {1e6, 5e6, 2.5e7}; /* equal sizes: same-ns ends */
    if (gsl_rng_uniform(g) < 0.5)
        return sizes[gsl_rng_uniform_int(g, 3)];
    return 1e5 + gsl_rng_uniform(g) * 5e7;
}

/* One random run: arrivals, completions and capacity changes, compared
 * after every one. */
static void oracle_run(unsigned long seed, long *pruned_flows, long *full_flows)
{
    topology t;
    make_topo(&t);
    network a, b;
    eventq qa, qb;
    gt_err e;
    assert_int_equal(net_init(&a, &t, MAX_FLOWS, -1, 0, &e), 0);
    assert_int_equal(net_init(&b, &t, MAX_FLOWS, -1, 0, &e), 0);
    b.prune = false;
    assert_int_equal(eventq_init(&qa), 0);
    assert_int_equal(eventq_init(&qb), 0);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, seed);
    int64_t now = 0;
    int active = 0;
    while (a.nflows < MAX_FLOWS || active > 0) {
        double u = gsl_rng_uniform(g);
        if (a.nflows < MAX_FLOWS && (active < 8 || (u < 0.5 && active < 200))) {
            int src = (int)gsl_rng_uniform_int(g, (unsigned long)t.ngpus), dst;
            do
                dst = (int)gsl_rng_uniform_int(g, (unsigned long)t.ngpus);
            while (dst == src);
            double bytes = pick_bytes(g);
            int ia = net_flow_new(&a, src, dst, bytes, 0, now);
            int ib = net_flow_new(&b, src, dst, bytes, 0, now);
            assert_true(ia >= 0 && ia == ib);
            assert_int_equal(net_flow_start(&a, ia, now, &qa, EV_DONE), 0);
            assert_int_equal(net_flow_start(&b, ib, now, &qb, EV_DONE), 0);
            active++;
        } else if (u < 0.52) { /* a WAN link's or a NIC's rate changes */
            int r = t.ngpus * 2 + (int)gsl_rng_uniform_int(g, (unsigned long)(a.nres - 2 * t.ngpus));
            double cap = a.res[r].cap * (0.5 + gsl_rng_uniform(g));
            assert_int_equal(net_set_capacity(&a, r, cap, now, &qa, EV_DONE), 0);
            assert_int_equal(net_set_capacity(&b, r, cap, now, &qb, EV_DONE), 0);
        } else {
            event ea, eb;
            assert_int_equal(eventq_pop(&qa, &ea), 1);
            assert_int_equal(eventq_pop(&qb, &eb), 1);
            assert_true(ea.time == eb.time && ea.id == eb.id && ea.version == eb.version);
            now = ea.time;
            int da = net_flow_done_event(&a, ea.id, ea.version, now, &qa, EV_DONE);
            int db = net_flow_done_event(&b, eb.id, eb.version, now, &qb, EV_DONE);
            assert_int_equal(da, 1); /* one addressable event per flow: never early */
            assert_int_equal(db, 1);
            active--;
        }
        assert_same(&a, &b);
    }
    *pruned_flows += a.solved_flows;
    *full_flows += b.solved_flows;
    gsl_rng_free(g);
    eventq_free(&qa);
    eventq_free(&qb);
    net_free(&a);
    net_free(&b);
    topo_free(&t);
}

static void test_incremental_equals_full(void **state)
{
    (void)state;
    long pruned = 0, full = 0;
    for (unsigned long seed = 1; seed <= 6; seed++)
        oracle_run(seed, &pruned, &full);
    /* the pruning must have cut something, or the comparison tests nothing */
    print_message("flows filled: pruned %ld, whole components %ld\n", pruned, full);
    assert_true(pruned < full);
}

/* Deferred mode: bursts of arrivals at one instant and every completion of
 * one nanosecond are re-solved once (net_settle); after each settle every
 * rate equals the naive filling of the flows then joined. */
static void test_deferred_batches(void **state)
{
    (void)state;
    topology t;
    make_topo(&t);
    network n;
    eventq q;
    gt_err e;
    assert_int_equal(net_init(&n, &t, MAX_FLOWS, -1, 0, &e), 0);
    assert_int_equal(eventq_init(&q), 0);
    net_defer(&n, true);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 11);
    double *want = malloc(sizeof *want * MAX_FLOWS);
    assert_non_null(want);
    int64_t now = 0;
    long batches = 0;
    while (n.nflows < MAX_FLOWS || eventq_peek_time(&q) != INT64_MAX) {
        int burst = n.nflows < MAX_FLOWS ? 1 + (int)gsl_rng_uniform_int(g, 40) : 0;
        for (int i = 0; i < burst && n.nflows < MAX_FLOWS; i++) {
            int src = (int)gsl_rng_uniform_int(g, (unsigned long)t.ngpus), dst;
            do
                dst = (int)gsl_rng_uniform_int(g, (unsigned long)t.ngpus);
            while (dst == src);
            int id = net_flow_new(&n, src, dst, pick_bytes(g), 0, now);
            assert_int_equal(net_flow_start(&n, id, now, &q, EV_DONE), 0);
        }
        assert_int_equal(net_settle(&n, now, &q, EV_DONE), 0);
        /* then every completion of the next few instants, one settle each */
        for (int k = 0; k < 3 && eventq_peek_time(&q) != INT64_MAX; k++) {
            event ev;
            now = eventq_peek_time(&q);
            while (eventq_peek_time(&q) == now) {
                assert_int_equal(eventq_pop(&q, &ev), 1);
                assert_int_equal(net_flow_done_event(&n, ev.id, ev.version, now, &q, EV_DONE), 1);
            }
            assert_int_equal(net_settle(&n, now, &q, EV_DONE), 0);
            batches++;
            naive_fill(&n, want);
            for (int i = 0; i < n.nflows; i++)
                if (joined(&n, i))
                    assert_memory_equal(&net_flow_live(&n, i)->rate, &want[i], sizeof want[i]);
        }
    }
    assert_true(batches > 100);
    free(want);
    gsl_rng_free(g);
    eventq_free(&q);
    net_free(&n);
    topo_free(&t);
}

/* One flow set started at one instant in three orders: identical rates. */
static void test_order_independent(void **state)
{
    (void)state;
    topology t;
    make_topo(&t);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 7);
    enum { NF = 300 };
    int src[NF], dst[NF], order[3][NF];
    for (int i = 0; i < NF; i++) {
        src[i] = (int)gsl_rng_uniform_int(g, (unsigned long)t.ngpus);
        do
            dst[i] = (int)gsl_rng_uniform_int(g, (unsigned long)t.ngpus);
        while (dst[i] == src[i]);
        order[0][i] = i;
        order[1][i] = NF - 1 - i;
        order[2][i] = i;
    }
    gsl_ran_shuffle(g, order[2], NF, sizeof(int));
    network n[3];
    eventq q[3];
    gt_err e;
    for (int v = 0; v < 3; v++) {
        assert_int_equal(net_init(&n[v], &t, NF, -1, 0, &e), 0);
        assert_int_equal(eventq_init(&q[v]), 0);
        for (int i = 0; i < NF; i++)
            assert_int_equal(net_flow_new(&n[v], src[i], dst[i], 1e7, 0, 0), i);
        for (int i = 0; i < NF; i++)
            assert_int_equal(net_flow_start(&n[v], order[v][i], 0, &q[v], EV_DONE), 0);
    }
    assert_same(&n[0], &n[1]);
    assert_same(&n[0], &n[2]);
    for (int v = 0; v < 3; v++) {
        eventq_free(&q[v]);
        net_free(&n[v]);
    }
    gsl_rng_free(g);
    topo_free(&t);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incremental_equals_full),
        cmocka_unit_test(test_order_independent),
        cmocka_unit_test(test_deferred_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
