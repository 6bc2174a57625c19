/* test_grammar.c — the one id and number grammar of the input files
 * (sim/base/grammar.h; issue 16, item 5), against hand-written answers. */
#include "testutil.h"

#include "sim/base/grammar.h"
#include "sim/inputs/topology.h"

/* The one grammar (sim/base/grammar.h), case by case against hand-written answers. */
static void test_grammar(void **state)
{
    (void)state;
    static const struct { const char *s; int ok; double v; } NUM[] = {
        {"0", 1, 0}, {"12.5", 1, 12.5}, {"-3", 1, -3}, {"1e-3", 1, 1e-3}, {"2E+2", 1, 200},
        {"007", 1, 7}, {"0x10", 0, 0}, {"0x1p0", 0, 0}, {"+5", 0, 0}, {" 5", 0, 0},
        {"5 ", 0, 0}, {".5", 0, 0}, {"5.", 0, 0}, {"1e", 0, 0}, {"inf", 0, 0}, {"nan", 0, 0},
        {"1e999", 0, 0}, {"", 0, 0}, {"-", 0, 0}, {"1,5", 0, 0}};
    for (size_t i = 0; i < sizeof NUM / sizeof *NUM; i++) {
        double v = -1;
        int ok = gram_number(NUM[i].s, &v) == 0;
        if (ok != NUM[i].ok || (ok && v != NUM[i].v))
            fail_msg("gram_number(\"%s\"): ok %d v %g", NUM[i].s, ok, v);
    }
    static const struct { const char *s; int ok; long v; } INT[] = {
        {"0", 1, 0}, {"7", 1, 7}, {"-12", 1, -12}, {"123456789", 1, 123456789},
        {"01", 0, 0}, {"+1", 0, 0}, {" 1", 0, 0}, {"1 ", 0, 0}, {"0x10", 0, 0}, {"-0", 1, 0},
        {"1234567890", 0, 0}, {"", 0, 0}, {"1.0", 0, 0}};
    for (size_t i = 0; i < sizeof INT / sizeof *INT; i++) {
        long v = -1;
        int ok = gram_integer(INT[i].s, &v) == 0;
        if (ok != INT[i].ok || (ok && v != INT[i].v))
            fail_msg("gram_integer(\"%s\"): ok %d v %ld", INT[i].s, ok, v);
    }
    /* gram_long: the same grammar with up to 18 digits (command-line seeds) */
    static const struct { const char *s; int ok; long long v; } LONG[] = {
        {"4294967295", 1, 4294967295LL}, {"-1234567890", 1, -1234567890LL},
        {"999999999999999999", 1, 999999999999999999LL}, {"1000000000000000000", 0, 0},
        {"0x10", 0, 0}, {" 5", 0, 0}, {"+5", 0, 0}, {"05", 0, 0}, {"1e3", 0, 0}, {"", 0, 0}};
    for (size_t i = 0; i < sizeof LONG / sizeof *LONG; i++) {
        long long v = -1;
        int ok = gram_long(LONG[i].s, &v) == 0;
        if (ok != LONG[i].ok || (ok && v != LONG[i].v))
            fail_msg("gram_long(\"%s\"): ok %d v %lld", LONG[i].s, ok, v);
    }
    char buf[128];
    assert_null(gram_site_id_error("us-east.1_b", buf, sizeof buf));
    const char *bad[] = {"", "us/east", "us,east", "us east", "us\neast", "us\x01", "\"q\"",
                         "caf\xc3\xa9", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_non_null(gram_site_id_error(bad[i], buf, sizeof buf));
}

/* Untrusted text quoted in an error stays on one line. */
static void test_printable(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(gram_printable("a/0/\n1\x07\"", buf, sizeof buf), "a/0/\\x0a1\\x07\\x22");
    assert_string_equal(gram_printable("plain-id_1.x", buf, sizeof buf), "plain-id_1.x");
    char small[8];
    gram_printable("\n\n\n\n", small, sizeof small); /* truncated, still terminated */
    assert_true(strlen(small) < sizeof small);
}

/* GPU ids resolve only in the canonical form: a/0/1, not a/0/01, a/0/+1, a/0/ 1. */
static void test_gpu_id_grammar(void **state)
{
    (void)state;
    topology t;
    gt_err e;
    assert_int_equal(topo_load(&t, "tests/bad/support/topo.json", NULL, &e), 0);
    int g = topo_gpu_lookup(&t, "s1/0/1");
    assert_true(g >= 0);
    const char *bad[] = {"s1/0/01", "s1/0/+1", "s1/0/ 1", "s1/00/1", "s1/0/1 ", "s1/0/1/",
                         "s1//1", "s1/0/", "s1/-0/1", "s1/0/0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (topo_gpu_lookup(&t, bad[i]) >= 0)
            fail_msg("%s resolves to a GPU", bad[i]);
    topo_free(&t);
}

int main(void)
{
    if (tu_chdir_root()) {
        fprintf(stderr, "test_grammar: cannot find the repository root\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_gpu_id_grammar),
        cmocka_unit_test(test_printable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
