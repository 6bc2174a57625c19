/* test_network.c — the fluid network against hand-computed answers:
 * a lone transfer takes latency + bytes / bandwidth; two equal flows on one
 * link get half each; three flows on two links with one shared follow
 * max-min; the TCP cap binds when connections * window / RTT is below the
 * link rate (and throughput rises linearly with K until the link rate);
 * under `temporal` two equal flows end at S/C and 2S/C, under `fair` both
 * at 2S/C. */
#include "testutil.h"

#include "sim/cost.h"
#include "sim/eventq.h"
#include "sim/network.h"

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
    assert_int_equal(eventq_init(&q, 64), 0);
    int ids[16];
    for (int i = 0; i < nf; i++) {
        ids[i] = net_flow_new(&net, src[i], dst[i], bytes, (double)i, 0);
        assert_true(ids[i] >= 0);
        assert_int_equal(eventq_push(&q, cost_ns(net_flow_latency(&net, ids[i])), 2, ids[i], 0), 0);
    }
    event ev;
    while (eventq_pop(&q, &ev)) {
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

/* The heap pops in (time, insertion) order. */
static void test_eventq_order(void **state)
{
    (void)state;
    eventq q;
    assert_int_equal(eventq_init(&q, 4), 0);
    uint64_t x = 12345;
    for (int i = 0; i < 5000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        assert_int_equal(eventq_push(&q, (int64_t)(x >> 54), 0, i, 0), 0);
    }
    event prev = {-1, 0, 0, -1, 0}, ev;
    int n = 0;
    while (eventq_pop(&q, &ev)) {
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
        cmocka_unit_test(test_eventq_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
