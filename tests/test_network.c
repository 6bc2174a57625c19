/* test_network.c — the fluid network against hand-computed answers:
 * a lone transfer takes latency + bytes / bandwidth; two equal flows on one
 * link get half each; three flows on two links with one shared follow
 * max-min; the TCP cap binds when connections * window / RTT is below the
 * link rate (and throughput rises linearly with K until the link rate);
 * under `temporal` two equal flows end at S/C and 2S/C, under `fair` both
 * at 2S/C; on a `per_pair` link k flows of one endpoint pair get C/k each
 * while flows of different pairs do not slow each other. */
#include "testutil.h"

#include "sim/models/cost.h"
#include "sim/engine/eventq.h"
#include "sim/engine/network.h"
#include "sim/models/path.h"

#define GBPS 125000000.0
enum { EV_DONE = 3 };

/* Sites a, b, c with single-GPU nodes (nic 100 Gbps); WAN links a-b and
 * a-c of `gbps` with 10 ms one-way latency; 4 GPUs in a, one in b and c. */
static void make_topo(topology *t, double gbps, const char *policy, int conns, double window_mb)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf,
        "{\"name\":\"net\",\"sites\":["
        "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100,\"repeat\":4}],"
        "\"lan\":{\"gbps\":100,\"latency_ms\":0}},"
        "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
        "\"lan\":{\"gbps\":100,\"latency_ms\":0}},"
        "{\"id\":\"c\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
        "\"lan\":{\"gbps\":100,\"latency_ms\":0}}],"
        "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":%g,\"latency_ms\":10,\"policy\":\"%s\"},"
        "{\"a\":\"a\",\"b\":\"c\",\"gbps\":%g,\"latency_ms\":10,\"policy\":\"%s\"},"
        "{\"a\":\"b\",\"b\":\"c\",\"gbps\":%g,\"latency_ms\":10}],"
        "\"tcp\":{\"window_mb\":%g,\"connections\":%d}}",
        gbps, policy, gbps, policy, gbps, window_mb, conns);
    gt_err e;
    assert_int_equal(topo_parse(t, "net", buf, (size_t)n, NULL, &e), 0);
}

/* Run flows (src, dst GPU) of `bytes` all started at t=0; fill end times. */
static void run_flows(const topology *t, int nf, const int *src, const int *dst, double bytes,
                      int64_t *end)
{
    network net;
    eventq q;
    gt_err e;
    assert_int_equal(net_init(&net, t, nf, -1, 0, &e), 0);
    assert_int_equal(eventq_init(&q), 0);
    int ids[16];
    for (int i = 0; i < nf; i++) {
        ids[i] = net_flow_new(&net, src[i], dst[i], bytes, (double)i, 0);
        assert_true(ids[i] >= 0);
        assert_int_equal(eventq_push(&q, cost_ns(net_flow_latency(&net, ids[i])), 2, ids[i], 0), 0);
    }
    event ev;
    while (eventq_pop(&q, &ev) > 0) {
        if (ev.kind == EV_DONE) /* one addressable event per flow: never stale */
            assert_int_equal(ev.version, net_flow_live(&net, ev.id)->version);
        if (ev.kind == 2)
            assert_int_equal(net_flow_start(&net, ev.id, ev.time, &q, EV_DONE), 0);
        else if (net_flow_done_event(&net, ev.id, ev.version, ev.time, &q, EV_DONE) == 1)
            for (int i = 0; i < nf; i++)
                if (ids[i] == ev.id)
                    end[i] = ev.time;
    }
    eventq_free(&q);
    net_free(&net);
}

static void test_lone_flow(void **state)
{
    (void)state;
    topology t;
    make_topo(&t, 1, "fair", 1000, 1000);
    int src[] = {0}, dst[] = {4};
    int64_t end[1];
    run_flows(&t, 1, src, dst, 1e8, end);
    /* 10 ms + 1e8 B / 125e6 B/s = 0.81 s */
    assert_int_equal(end[0], cost_ns(0.010) + cost_ns(1e8 / GBPS));
    topo_free(&t);
}

static void test_two_flows_share(void **state)
{
    (void)state;
    topology t;
    make_topo(&t, 1, "fair", 1000, 1000);
    int src[] = {0, 1}, dst[] = {4, 4};
    int64_t end[2];
    /* both cross a->b (the receiver's NIC is 100 Gbps, not binding) */
    run_flows(&t, 2, src, dst, 1e8, end);
    double expect = 0.010 + 2 * 1e8 / GBPS;
    assert_true(rel_diff(end[0] * 1e-9, expect) < 1e-9);
    assert_true(rel_diff(end[1] * 1e-9, expect) < 1e-9);
    topo_free(&t);
}

/* Flows 0,1 on a->b (1 Gbps) and flow 2 on a->c: max-min gives 0.5, 0.5, 1.
 * Then make a->c carry two and a->b one with sender NIC shared by flows
 * from GPU 0: covered by the NIC test below. */
static void test_three_flows_maxmin(void **state)
{
    (void)state;
    topology t;
    make_topo(&t, 1, "fair", 1000, 1000);
    int src[] = {0, 1, 2}, dst[] = {4, 4, 5};
    int64_t end[3];
    run_flows(&t, 3, src, dst, 1e8, end);
    assert_true(rel_diff(end[0] * 1e-9, 0.010 + 2e8 / GBPS) < 1e-9);
    assert_true(rel_diff(end[1] * 1e-9, 0.010 + 2e8 / GBPS) < 1e-9);
    assert_true(rel_diff(end[2] * 1e-9, 0.010 + 1e8 / GBPS) < 1e-9);
    topo_free(&t);
}

/* One sender NIC (100 Gbps) shared by two flows to different sites whose
 * WAN links are 80 Gbps: the NIC binds at 50 each; when the WAN is 40 Gbps
 * the links bind instead (40 each). */
static void test_shared_nic(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        double wan = k == 0 ? 80 : 40, share = k == 0 ? 50 : 40;
        topology t;
        make_topo(&t, wan, "fair", 4000, 1000);
        int src[] = {0, 0}, dst[] = {4, 5};
        int64_t end[2];
        run_flows(&t, 2, src, dst, 1e9, end);
        double expect = 0.010 + 1e9 / (share * GBPS);
        assert_true(rel_diff(end[0] * 1e-9, expect) < 1e-9);
        assert_true(rel_diff(end[1] * 1e-9, expect) < 1e-9);
        topo_free(&t);
    }
}

/* TCP cap K * window / RTT: RTT 20 ms, window 1 MB -> 50 MB/s per
 * connection; link 10 Gbps = 1.25 GB/s: linear up to K = 25, flat after. */
static void test_tcp_cap(void **state)
{
    (void)state;
    for (int K = 1; K <= 64; K *= 2) {
        topology t;
        make_topo(&t, 10, "fair", K, 1);
        int src[] = {0}, dst[] = {4};
        int64_t end[1];
        run_flows(&t, 1, src, dst, 1e9, end);
        double rate = 1e9 / (end[0] * 1e-9 - 0.010);
        double expect = K * 1e6 / 0.020 < 10 * GBPS ? K * 1e6 / 0.020 : 10 * GBPS;
        assert_true(rel_diff(rate, expect) < 1e-6);
        topo_free(&t);
    }
}

static void test_temporal_vs_fair(void **state)
{
    (void)state;
    const char *pol[] = {"temporal", "fair"};
    for (int k = 0; k < 2; k++) {
        topology t;
        make_topo(&t, 1, pol[k], 1000, 1000);
        int src[] = {0, 1}, dst[] = {4, 4};
        int64_t end[2];
        run_flows(&t, 2, src, dst, 1e8, end);
        double S_C = 1e8 / GBPS;
        if (k == 0) {
            assert_true(rel_diff(end[0] * 1e-9, 0.010 + S_C) < 1e-9);
            assert_true(rel_diff(end[1] * 1e-9, 0.010 + 2 * S_C) < 1e-9);
        } else {
            assert_true(rel_diff(end[0] * 1e-9, 0.010 + 2 * S_C) < 1e-9);
            assert_true(rel_diff(end[1] * 1e-9, 0.010 + 2 * S_C) < 1e-9);
        }
        topo_free(&t);
    }
}

/* Addressable events against a brute-force oracle: random pushes, moves of
 * handles (earlier and later, alone or in a batch sharing one sequence
 * number) and pops; every pop must return the pending entry of least
 * (time, order of its last scheduling, handle inside a batch), each handle
 * at most once pending, and eventq_peek_time must name its time first. */
static void test_eventq_set_oracle(void **state)
{
    (void)state;
    enum { H = 40, MAXP = 4000 };
    typedef struct pending { int64_t time; uint64_t order; int handle, live, body; } pending;
    /* each event's body (kind, id, version) is its own number, so a body
     * that travels with the wrong key is caught */
    static pending pend[MAXP];
    int np = 0, body = 0;
    uint64_t order = 0, x = 777;
    eventq q;
    assert_int_equal(eventq_init(&q), 0);
    for (int step = 0; step < 20000; step++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int op = (int)(x >> 60) % 4;
        int64_t t = (int64_t)((x >> 20) % 64);
        if (step == 10000) { /* drop everything: handles and slots are free again */
            eventq_clear(&q);
            np = 0;
        }
        if (op == 0 && np < MAXP) { /* plain push */
            assert_int_equal(eventq_push(&q, t, 0, body, (uint32_t)body), 0);
            pend[np++] = (pending){t, order++, -1, 1, body++};
        } else if ((op == 1 || op == 3) && np + 6 < MAXP) { /* (re)schedule handles */
            int count = op == 1 ? 1 : 2 + (int)((x >> 4) % 5);
            int64_t batch = op == 3 ? eventq_batch(&q) : -1;
            for (int c = 0; c < count; c++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                int h = (int)((x >> 8) % H);
                int64_t tt = op == 3 ? (int64_t)((x >> 20) % 8) : t; /* many ties */
                for (int i = 0; i < np; i++)
                    if (pend[i].live && pend[i].handle == h)
                        pend[i].live = 0;
                if (op == 1)
                    assert_int_equal(eventq_set(&q, h, tt, 1, body, (uint32_t)body), 0);
                else
                    assert_int_equal(eventq_set_batch(&q, batch, h, tt, 1, body, (uint32_t)body),
                                     0);
                pend[np++] = (pending){tt, order, h, 1, body++};
                order += op == 1;
            }
            order += op == 3;
        } else { /* pop */
            int best = -1;
            for (int i = 0; i < np; i++) {
                if (!pend[i].live)
                    continue;
                const pending *p = &pend[i], *b = best < 0 ? NULL : &pend[best];
                if (!b || p->time < b->time ||
                    (p->time == b->time && (p->order < b->order ||
                                            (p->order == b->order && p->handle < b->handle))))
                    best = i;
            }
            event ev;
            if (best < 0) {
                assert_true(eventq_peek_time(&q) == INT64_MAX);
                assert_int_equal(eventq_pop(&q, &ev), 0);
                continue;
            }
            assert_true(eventq_peek_time(&q) == pend[best].time);
            assert_int_equal(eventq_pop(&q, &ev), 1);
            assert_int_equal(ev.time, pend[best].time);
            assert_int_equal(ev.handle, pend[best].handle);
            assert_int_equal(ev.kind, pend[best].handle < 0 ? 0 : 1);
            assert_int_equal(ev.id, pend[best].body);
            assert_int_equal(ev.version, (uint32_t)pend[best].body);
            pend[best].live = 0;
        }
        if (np + 6 >= MAXP) { /* compact */
            int k = 0;
            for (int i = 0; i < np; i++)
                if (pend[i].live)
                    pend[k++] = pend[i];
            np = k;
        }
    }
    eventq_free(&q);
}

/* Site a: node 0 with GPUs 0, 1 and node 1 with GPU 2; site b: node 2 with
 * GPUs 3, 4. NICs 100 Gbps; link a-b per_pair at `gbps`, 10 ms, TCP cap far
 * above it. `pair` is "" (node pairs, the default) or "gpu". */
static void make_pair_topo(topology *t, double gbps, const char *pair)
{
    char buf[1024], pf[32] = "";
    if (*pair)
        snprintf(pf, sizeof pf, ",\"pair\":\"%s\"", pair);
    int n = snprintf(buf, sizeof buf,
        "{\"name\":\"pp\",\"sites\":["
        "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100},"
        "{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
        "\"lan\":{\"gbps\":100,\"latency_ms\":0}},"
        "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100}],"
        "\"lan\":{\"gbps\":100,\"latency_ms\":0}}],"
        "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":%g,\"latency_ms\":10,"
        "\"sharing\":\"per_pair\"%s}],"
        "\"tcp\":{\"window_mb\":1000,\"connections\":1000}}", gbps, pf);
    gt_err e;
    assert_int_equal(topo_parse(t, "pp", buf, (size_t)n, NULL, &e), 0);
}

/* k equal flows between one endpoint pair all start at the same instant:
 * max-min gives each C/k, so all end at latency + k S / C (k = 1 is the lone
 * flow; before pairs were resources each flow ran at C and ended at S / C). */
static void test_per_pair_k_flows(void **state)
{
    (void)state;
    topology t;
    make_pair_topo(&t, 1, "");
    for (int k = 1; k <= 6; k++) {
        int src[6], dst[6];
        int64_t end[6];
        for (int i = 0; i < k; i++) {
            src[i] = 2;
            dst[i] = 3;
        }
        run_flows(&t, k, src, dst, 1e8, end);
        double expect = 0.010 + k * 1e8 / GBPS;
        for (int i = 0; i < k; i++)
            assert_true(rel_diff(end[i] * 1e-9, expect) < 1e-9);
    }
    /* the rates themselves, right after both of two flows started */
    network net;
    eventq q;
    gt_err e;
    assert_int_equal(net_init(&net, &t, 2, -1, 0, &e), 0);
    assert_int_equal(eventq_init(&q), 0);
    for (int i = 0; i < 2; i++) {
        int id = net_flow_new(&net, 2, 3, 1e9, i, 0);
        assert_int_equal(net_flow_start(&net, id, 0, &q, EV_DONE), 0);
    }
    assert_true(net_flow_live(&net, 0)->rate == GBPS / 2 && net_flow_live(&net, 1)->rate == GBPS / 2);
    eventq_free(&q);
    net_free(&net);
    topo_free(&t);
}

/* Flows of different endpoint pairs over one per_pair link each get the
 * whole pair rate. Node scope: 0->3 and 2->3 are node pairs (0,2) and (1,2),
 * so both end at S / C; 0->3 and 1->4 are both node pair (0,2) and share it
 * (2 S / C). With "pair": "gpu" those last two are different GPU pairs. */
static void test_per_pair_independent(void **state)
{
    (void)state;
    const char *scope[] = {"", "node", "gpu"};
    for (int s = 0; s < 3; s++) {
        topology t;
        make_pair_topo(&t, 1, scope[s]);
        int64_t end[2];
        int src1[] = {0, 2}, dst1[] = {3, 3};
        run_flows(&t, 2, src1, dst1, 1e8, end);
        for (int i = 0; i < 2; i++)
            assert_true(rel_diff(end[i] * 1e-9, 0.010 + 1e8 / GBPS) < 1e-9);
        int src2[] = {0, 1}, dst2[] = {3, 4};
        run_flows(&t, 2, src2, dst2, 1e8, end);
        double expect = 0.010 + (s == 2 ? 1 : 2) * 1e8 / GBPS;
        for (int i = 0; i < 2; i++)
            assert_true(rel_diff(end[i] * 1e-9, expect) < 1e-9);
        topo_free(&t);
    }
}

/* Resource keys: a per-pair key lies above every other layout key, is the
 * same for GPUs of one node pair (node scope), and differs per GPU pair in
 * GPU scope; the path's third resource carries the link's rate. */
static void test_per_pair_keys(void **state)
{
    (void)state;
    for (int s = 0; s < 2; s++) {
        topology t;
        make_pair_topo(&t, 2, s ? "gpu" : "");
        long base = 2L * t.ngpus + 2L * t.nnodes + (long)t.nsites * t.nsites;
        path_res r1[3] = {{0, 0}}, r2[3] = {{0, 0}};
        assert_int_equal(path_resources(&t, 0, 3, r1), 3);
        assert_int_equal(path_resources(&t, 1, 4, r2), 3);
        assert_true(r1[2].key >= base && r2[2].key >= base);
        assert_true(r1[2].cap == 2 * GBPS);
        assert_true(s ? r1[2].key != r2[2].key : r1[2].key == r2[2].key);
        assert_true(path_resources(&t, 3, 0, r2) == 3 && r2[2].key != r1[2].key);
        topo_free(&t);
    }
}

/* One path model: for every GPU pair the simulator's flow loads exactly
 * the resources path_resources lists, at the same capacities (dense keys
 * also through path_dense_cap), and its private cap is the rate a lone
 * flow gets beyond them (path_lone). */
static void test_path_one_layout(void **state)
{
    (void)state;
    for (int s = 0; s < 2; s++) {
        topology t;
        make_pair_topo(&t, 2, s ? "gpu" : "");
        network n;
        gt_err e;
        assert_int_equal(net_init(&n, &t, t.ngpus * t.ngpus, -1, 0, &e), 0);
        for (int a = 0; a < t.ngpus; a++)
            for (int b = 0; b < t.ngpus; b++) {
                if (a == b)
                    continue;
                path_res r[PATH_MAX_RES];
                int k = path_resources(&t, a, b, r);
                int id = net_flow_new(&n, a, b, 1e6, 0, 0);
                assert_true(id >= 0);
                int fres[NET_MAX_RES];
                double lone;
                assert_int_equal(net_flow_path(&n, id, fres, &lone), k);
                for (int i = 0; i < k; i++) {
                    assert_true(n.res[fres[i]].cap == r[i].cap);
                    if (r[i].key < path_dense_count(&t))
                        assert_true(path_dense_cap(&t, r[i].key) == r[i].cap &&
                                    fres[i] == r[i].key);
                    lone = fmin(lone, r[i].cap);
                }
                double lat, rate;
                path_lone(&t, a, b, &lat, &rate);
                assert_true(rate == lone && lat == net_flow_latency(&n, id));
            }
        net_free(&n);
        topo_free(&t);
    }
}

/* "pair" needs per_pair sharing and one of node / gpu. */
static void test_per_pair_bad_field(void **state)
{
    (void)state;
    const char *bad[] = {
        "\"sharing\":\"shared\",\"pair\":\"gpu\"",
        "\"sharing\":\"per_pair\",\"pair\":\"site\"",
    };
    for (int k = 0; k < 2; k++) {
        char buf[1024];
        int n = snprintf(buf, sizeof buf,
            "{\"name\":\"x\",\"sites\":["
            "{\"id\":\"a\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
            "\"lan\":{\"gbps\":100,\"latency_ms\":0}},"
            "{\"id\":\"b\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":1,\"nic_gbps\":100}],"
            "\"lan\":{\"gbps\":100,\"latency_ms\":0}}],"
            "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":1,\"latency_ms\":10,%s}]}", bad[k]);
        topology t;
        gt_err e;
        assert_int_not_equal(topo_parse(&t, "x.json", buf, (size_t)n, NULL, &e), 0);
        assert_non_null(strstr(e.msg, "links[0].pair"));
    }
}

/* The heap pops in (time, insertion) order. */
/* The packed tag's limits refuse instead of wrapping: a handle past 2^25,
 * and the last sequence number (set directly: 2^38 pushes would take hours). */
static void test_eventq_limits(void **state)
{
    (void)state;
    eventq q;
    event ev;
    assert_int_equal(eventq_init(&q), 0);
    assert_int_equal(eventq_set(&q, (int32_t)EVENTQ_MAX_SLOTS, 5, 0, 0, 0), -1);
    assert_int_equal(eventq_set(&q, INT32_MAX, 5, 0, 0, 0), -1);
    assert_int_equal(eventq_set(&q, -1, 5, 0, 0, 0), -1);
    assert_int_equal(eventq_pop(&q, &ev), 0); /* nothing was queued by the refusals */
    q.next_seq = EVENTQ_MAX_SEQ - 1;
    assert_int_equal(eventq_push(&q, 7, 1, 2, 3), 0);
    assert_int_equal(eventq_push(&q, 6, 1, 2, 3), -1);
    assert_int_equal(eventq_set(&q, 0, 6, 1, 2, 3), -1);
    assert_int_equal(eventq_pop(&q, &ev), 1);
    assert_int_equal(ev.time, 7);
    assert_int_equal(ev.seq, EVENTQ_MAX_SEQ - 1);
    assert_int_equal(eventq_pop(&q, &ev), 0);
    eventq_free(&q);
}

static void test_eventq_order(void **state)
{
    (void)state;
    eventq q;
    assert_int_equal(eventq_init(&q), 0);
    uint64_t x = 12345;
    for (int i = 0; i < 5000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        assert_int_equal(eventq_push(&q, (int64_t)(x >> 54), 0, i, 0), 0);
    }
    event prev = {-1, 0, 0, -1, 0, -1}, ev;
    int n = 0;
    while (eventq_pop(&q, &ev) > 0) {
        assert_true(ev.time > prev.time || (ev.time == prev.time && ev.id > prev.id));
        prev = ev;
        n++;
    }
    assert_int_equal(n, 5000);
    eventq_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lone_flow),        cmocka_unit_test(test_two_flows_share),
        cmocka_unit_test(test_three_flows_maxmin), cmocka_unit_test(test_shared_nic),
        cmocka_unit_test(test_tcp_cap),          cmocka_unit_test(test_temporal_vs_fair),
        cmocka_unit_test(test_eventq_order),     cmocka_unit_test(test_eventq_limits),     cmocka_unit_test(test_per_pair_k_flows),
        cmocka_unit_test(test_per_pair_independent), cmocka_unit_test(test_per_pair_keys),
        cmocka_unit_test(test_path_one_layout),
        cmocka_unit_test(test_per_pair_bad_field), cmocka_unit_test(test_eventq_set_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
