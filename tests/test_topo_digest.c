/* test_topo_digest.c — the digest the estimator's caches recognise a
 * topology by (sim/estimator/topo_digest.h), field by field on est_plans.h's
 * topology: a change of any number a cached figure reads (a site's LAN, a
 * GPU's site, a WAN link's latency or per-pair flag, a used GPU type's id
 * or rate, the TCP settings, the counts) makes it differ, and undoing the
 * change makes it equal again; a change of what no cached figure reads
 * (a site's or a link's text, a GPU type no GPU has) leaves it equal.
 * The caches' end-to-end oracle is test_estimator_fast.c
 * (test_caches_follow_in_place_changes). */
#include "testutil.h"

#include "est_plans.h"
#include "sim/estimator/topo_digest.h"

/* Flips one byte at p: the digest must then be `expect` (1 equal, 0
 * differ), and equal again once the byte is back. */
static void flip(topo_digest *d, const topology *t, void *p, int expect, const char *what)
{
    unsigned char *b = p, old = *b;
    *b ^= 0x5a;
    if (topo_digest_same(d, t) != expect)
        fail_msg("%s: digest %s after the change", what, expect ? "differs" : "equal");
    *b = old;
    if (!topo_digest_same(d, t))
        fail_msg("%s: digest differs once the change is undone", what);
}

static void test_digest_fields(void **state)
{
    (void)state;
    topology t;
    est_parse_topo(&t, "digest", TOPO);
    topo_digest d = {0};
    assert_int_equal(topo_digest_same(&d, &t), 0); /* nothing held yet */
    assert_int_equal(topo_digest_take(&d, &t), 0);
    assert_int_equal(topo_digest_same(&d, &t), 1);
    int used = t.gpus[0].type, unused = -1;
    for (int ty = 0; ty < t.ntypes && unused < 0; ty++) {
        int any = 0;
        for (int g = 0; g < t.ngpus; g++)
            any |= t.gpus[g].type == ty;
        for (int i = 0; i < t.nnodes; i++)
            any |= t.nodes[i].type == ty;
        unused = any ? -1 : ty;
    }
    assert_true(unused >= 0);
    topo_link *ab = &t.wan[0 * t.nsites + 1];
    flip(&d, &t, &t.sites[1].lan_bw, 0, "site LAN rate");
    flip(&d, &t, &t.sites[2].ngpus, 0, "site GPU count");
    flip(&d, &t, &t.nodes[3].nic_bw, 0, "node NIC rate");
    flip(&d, &t, &t.gpus[t.ngpus - 1].site, 0, "GPU site");
    flip(&d, &t, &ab->lat_s, 0, "WAN latency");
    flip(&d, &t, &ab->per_pair, 0, "WAN per-pair flag");
    flip(&d, &t, &t.wan[t.nsites * t.nsites - 2].bw, 0, "last WAN link's rate");
    flip(&d, &t, &t.types[used].id[0], 0, "used type's id");
    flip(&d, &t, &t.types[used].link_bw, 0, "used type's link rate");
    flip(&d, &t, &t.tcp_window_bytes, 0, "TCP window");
    flip(&d, &t, &t.tcp_connections, 0, "TCP connections");
    flip(&d, &t, &t.nsites, 0, "site count");
    flip(&d, &t, &t.ntypes, 0, "type count");
    flip(&d, &t, &t.sites[0].id[0], 1, "site id");
    flip(&d, &t, &t.sites[0].region[0], 1, "site region");
    flip(&d, &t, &t.sites[0].source[0], 1, "site source");
    flip(&d, &t, &ab->trace[0], 1, "WAN trace file");
    flip(&d, &t, &ab->source[0], 1, "WAN source");
    flip(&d, &t, &t.types[unused].peak_flops, 1, "a type no GPU has");
    flip(&d, &t, &t.name[0], 1, "topology name");
    /* another topology in the same variable: one site fewer */
    topo_free(&t);
    char two[4096];
    snprintf(two, sizeof two, "%s", TOPO);
    char *c = strstr(two, ",{\"id\":\"c\"");
    char *links = strstr(two, "],\"links\"");
    assert_non_null(c);
    assert_non_null(links);
    memmove(c, links, strlen(links) + 1);
    est_parse_topo(&t, "digest", two);
    assert_int_equal(t.nsites, 2);
    assert_int_equal(topo_digest_same(&d, &t), 0);
    assert_int_equal(topo_digest_take(&d, &t), 0);
    assert_int_equal(topo_digest_same(&d, &t), 1);
    topo_free(&t);
    topo_digest_free(&d);
}

int main(void)
{
    tu_chdir_root();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digest_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
