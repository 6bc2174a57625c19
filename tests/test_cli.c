/* test_cli.c — the command-line room's building blocks, without running the
 * binary: typo suggestions (edit distance against hand-counted cases),
 * --opt=value splitting, list and output checks, the CSV reader's quoted
 * fields against the writer (round trip), and the provenance checksum
 * against zlib crc32's published check value. tests/test_cli_runs.c runs
 * the binary. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/suggest.h"
#include "cli/version.h"
#include "sim/base/csv.h"
#include "testutil.h"

/* Distances counted by hand: one swap, three edits, the empty string. */
static void test_edit_distance(void **state)
{
    (void)state;
    assert_int_equal(cli_edit_distance("--bacth", "--batch"), 1);    /* swap */
    assert_int_equal(cli_edit_distance("kitten", "sitting"), 3);     /* k->s, e->i, +g */
    assert_int_equal(cli_edit_distance("", "abc"), 3);
    assert_int_equal(cli_edit_distance("seed", "seed"), 0);
    assert_int_equal(cli_edit_distance("--seeds", "--seed"), 1);      /* deletion */
    assert_int_equal(cli_edit_distance("ab", "ba"), 1);
}

static void test_nearest_option(void **state)
{
    (void)state;
    const char *help[] = {"  --batch B   global batch\n  --seed S  seed\n"
                          "  --seeds N  seeds\n  [--json FILE|-]\n", NULL};
    char out[64];
    assert_true(cli_nearest_option("--bacth", help, out, sizeof out));
    assert_string_equal(out, "--batch");
    assert_true(cli_nearest_option("--jsno", help, out, sizeof out));
    assert_string_equal(out, "--json");
    assert_true(cli_nearest_option("--bacth=3", help, out, sizeof out));  /* value ignored */
    assert_string_equal(out, "--batch");
    /* far from everything: no suggestion rather than a wrong one */
    assert_false(cli_nearest_option("--xyzzyplugh", help, out, sizeof out));
    /* a short word needs a near match: "--ab" is 3 edits from anything */
    assert_false(cli_nearest_option("--ab", help, out, sizeof out));
    const char *names[] = {"simulate", "compare", "topo show"};
    assert_string_equal(cli_nearest("simulat", names, 3), "simulate");
    assert_string_equal(cli_nearest("topo shwo", names, 3), "topo show");
    assert_null(cli_nearest("frobnicate", names, 3));
}

static void test_split_equals(void **state)
{
    (void)state;
    char a0[] = "geotrain", a1[] = "simulate", a2[] = "--batch=3", a3[] = "-m", a4[] = "x=y",
         a5[] = "--mix=h100:1,t4:1", a6[] = "--=z", a7[] = "--", a8[] = "--raw=1";
    char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL};
    int n;
    char **out = cli_split_equals(9, argv, &n);
    assert_non_null(out);
    const char *want[] = {"geotrain", "simulate", "--batch", "3", "-m", "x=y", "--mix",
                          "h100:1,t4:1", "--=z", "--", "--raw=1"};
    assert_int_equal(n, 11);
    for (int i = 0; i < n; i++)
        assert_string_equal(out[i], want[i]);
    assert_null(out[n]);
    free(out);
}

static void test_check_list(void **state)
{
    (void)state;
    assert_int_equal(cli_check_list("t", "--planners", "greedy,memetic"), 0);
    assert_int_equal(cli_check_list("t", "--planners", "greedy"), 0);
    assert_int_equal(cli_check_list("t", "--planners", "greedy,"), -1);
    assert_int_equal(cli_check_list("t", "--planners", "memetic,,greedy"), -1);
    assert_int_equal(cli_check_list("t", "--planners", ",greedy"), -1);
    assert_int_equal(cli_check_list("t", "--planners", ""), -1);
    assert_int_equal(cli_check_list("t", "--planners", ","), -1);
}

static void test_check_outputs(void **state)
{
    (void)state;
    char dir[64], in[128], alias_path[128], other[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(in, sizeof in, "%s/in.json", dir);
    snprintf(alias_path, sizeof alias_path, "%s/alias.json", dir);
    snprintf(other, sizeof other, "%s/out.json", dir);
    assert_int_equal(tu_write_file(in, "{}"), 0);
    assert_int_equal(link(in, alias_path), 0);
    const char *ins[] = {in, "gpt3-xl", NULL};
    const char *ok[] = {other, NULL, "-"};
    assert_int_equal(cli_check_outputs("t", ok, 3, ins, 3), 0);
    const char *twice[] = {other, other};
    assert_int_equal(cli_check_outputs("t", twice, 2, ins, 3), -1);
    const char *two_stdout[] = {"-", "-"};
    assert_int_equal(cli_check_outputs("t", two_stdout, 2, ins, 3), -1);
    const char *over_input[] = {in};
    assert_int_equal(cli_check_outputs("t", over_input, 1, ins, 3), -1);
    /* the same file under another name (a hard link) is still the input */
    const char *alias[] = {alias_path};
    assert_int_equal(cli_check_outputs("t", alias, 1, ins, 3), -1);
    tu_rmtree(dir);
}

/* csv_put_field then the reader gives every string back, quotes and commas
 * included; a plain field is written unquoted. */
static void test_csv_round_trip(void **state)
{
    (void)state;
    const char *fields[] = {"plain", "a,b", "say \"hi\"", "", "\"", ",", "x y"};
    enum { N = sizeof fields / sizeof *fields };
    char dir[64], path[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.csv", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (int row = 0; row < 2; row++) {
        for (int i = 0; i < N; i++) {
            if (i)
                fputc(',', fp);
            csv_put_field(fp, row == 0 ? "h" : fields[i]);
            if (row == 0)
                fprintf(fp, "%d", i);
        }
        fputc('\n', fp);
    }
    fclose(fp);
    char *text = tu_read_file(path, NULL);
    assert_non_null(strstr(text, "\nplain,\"a,b\",\"say \"\"hi\"\"\",,\"\"\"\",\",\",x y\n"));
    free(text);
    csv_reader r;
    gt_err e;
    assert_int_equal(csv_open(&r, path, &e), 0);
    assert_int_equal(csv_next(&r, &e), 1);
    assert_int_equal(r.nfield, N);
    for (int i = 0; i < N; i++)
        assert_string_equal(csv_get(&r, i), fields[i]);
    assert_int_equal(csv_next(&r, &e), 0);
    csv_close(&r);
    /* an unclosed quote is an error naming line and column */
    assert_int_equal(tu_write_file(path, "a,b\nx,\"open\n"), 0);
    assert_int_equal(csv_open(&r, path, &e), 0);
    assert_int_equal(csv_next(&r, &e), -1);
    assert_non_null(strstr(e.msg, ":2:3: quoted field not closed"));
    csv_close(&r);
    assert_int_equal(tu_write_file(path, "a,b\n\"x\"y,z\n"), 0);
    assert_int_equal(csv_open(&r, path, &e), 0);
    assert_int_equal(csv_next(&r, &e), -1);
    assert_non_null(strstr(e.msg, "text after the closing quote"));
    csv_close(&r);
    /* a field's error names file:line:column, the column counted in characters
     * from the start of the line to the field ("x" at 1, quoted "a,b" at 3,
     * "0x1" at 9) */
    assert_int_equal(tu_write_file(path, "a,b,c\nx,\"a,b\",0x1\n"), 0);
    assert_int_equal(csv_open(&r, path, &e), 0);
    assert_int_equal(csv_next(&r, &e), 1);
    assert_int_equal(csv_col_at(&r, 0), 1);
    assert_int_equal(csv_col_at(&r, 1), 3);
    assert_int_equal(csv_col_at(&r, 2), 9);
    double v;
    assert_int_equal(csv_double(&r, 2, 0, 1, 0, 0, &v, &e), -1);
    char want[256];
    snprintf(want, sizeof want, "%s:2:9: column 'c': '0x1' is not a finite number (decimal, "
             "e.g. 12.5 or 1e-3)", path);
    assert_string_equal(e.msg, want);
    csv_close(&r);
    tu_rmtree(dir);
    /* the writer into a buffer: same text as into a file, snprintf-like length */
    char small[8];
    assert_int_equal(csv_format_field(small, sizeof small, "say \"hi\""), 12);
    assert_string_equal(small, "\"say \"\"");
    char big[32];
    assert_int_equal(csv_format_field(big, sizeof big, "a,b"), 5);
    assert_string_equal(big, "\"a,b\"");
    assert_int_equal(csv_format_field(big, sizeof big, "plain"), 5);
    assert_string_equal(big, "plain");
}

/* The option parser's numbers (cli_long / cli_double) take exactly the one
 * grammar and the closed range [lo, hi]. */
static void test_cli_numbers(void **state)
{
    (void)state;
    long l;
    double d;
    assert_int_equal(cli_long("t", "--n", "4294967295", 0, 4294967295L, &l), 0);
    assert_int_equal(l, 4294967295L);
    assert_int_equal(cli_long("t", "--n", "1", 1, 5, &l), 0);
    assert_int_equal(cli_long("t", "--n", "0", 1, 5, &l), -1);
    assert_int_equal(cli_long("t", "--n", "6", 1, 5, &l), -1);
    const char *bad_int[] = {"0x10", " 5", "5 ", "+5", "05", "1e3", "", "5.0",
                             "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad_int / sizeof *bad_int; i++)
        if (cli_long("t", "--n", bad_int[i], 0, 100, &l) != -1)
            fail_msg("cli_long accepted '%s'", bad_int[i]);
    assert_int_equal(cli_double("t", "--x", "1e-9", 1e-9, 1e7, &d), 0);
    assert_true(d == 1e-9);
    assert_int_equal(cli_double("t", "--x", "1e7", 1e-9, 1e7, &d), 0);
    const char *bad_num[] = {"inf", "nan", "1e400", "0x1p0", " 1", "+1", ".5", "1.", ""};
    for (size_t i = 0; i < sizeof bad_num / sizeof *bad_num; i++)
        if (cli_double("t", "--x", bad_num[i], -1e300, 1e300, &d) != -1)
            fail_msg("cli_double accepted '%s'", bad_num[i]);
}

/* crc32 of "123456789" is 0xcbf43926, the published check value of the
 * CRC-32 (ISO-HDLC) that zlib computes. */
static void test_provenance_checksum(void **state)
{
    (void)state;
    char dir[64], path[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(path, sizeof path, "%s/check.txt", dir);
    assert_int_equal(tu_write_file(path, "123456789"), 0);
    char a0[] = "geotrain", a1[] = "plan", a2[] = "--name", a3[] = "it's here";
    char *argv[] = {a0, a1, a2, a3, NULL};
    cli_set_command_line(4, argv);
    assert_string_equal(cli_command_line(), "geotrain plan --name 'it'\\''s here'");
    const char *ins[] = {path, "gpt3-xl", NULL, "-"};
    json_t *p = cli_provenance(ins, 4);
    assert_string_equal(json_string_value(json_object_get(p, "version")), cli_version());
    json_t *in = json_object_get(p, "inputs");
    assert_int_equal(json_array_size(in), 1);   /* catalog id, NULL and '-' are no files */
    json_t *f = json_array_get(in, 0);
    assert_string_equal(json_string_value(json_object_get(f, "crc32")), "cbf43926");
    assert_int_equal(json_integer_value(json_object_get(f, "bytes")), 9);
    json_decref(p);
    tu_rmtree(dir);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edit_distance),
        cmocka_unit_test(test_nearest_option),
        cmocka_unit_test(test_split_equals),
        cmocka_unit_test(test_check_list),
        cmocka_unit_test(test_check_outputs),
        cmocka_unit_test(test_csv_round_trip),
        cmocka_unit_test(test_cli_numbers),
        cmocka_unit_test(test_provenance_checksum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
