/* test_experiments_driver.c — the experiment driver (experiments/run.sh) and
 * report generator (experiments/report.sh) on tiny experiment definitions in a
 * scratch folder (GT_EXP_DEFS, GT_PLOTS_DIR, GT_RESULTS, GEOTRAIN point there):
 *
 *   - a definition produces its CSV, its figures (PNG and SVG, via gnuplot) and
 *     its report section with a verdict;
 *   - a rerun with unchanged inputs does nothing (the definition does not run,
 *     the CSV and REPORT.md are not rewritten); changing an input, the
 *     definition or the binary reruns it;
 *   - ONLY selects experiments and rejects unknown ids;
 *   - a definition whose command is missing is reported "not run" with the
 *     verdict "not comparable"; a failing one makes the driver exit 1 while the
 *     report is still written.
 *
 * Runs from the repository root (tests/run.sh); needs sh, awk and gnuplot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char g_dir[128];   /* scratch folder of the current test */

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, rel);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static char *slurp(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, rel);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    size_t got = fread(b, 1, (size_t)n, fp);
    b[got] = '\0';
    fclose(fp);
    return b;
}

static int exists(const char *rel)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", g_dir, rel);
    return stat(path, &st) == 0;
}

/* Modification time (ns) and inode of a file, to tell a rewrite. */
static long long stamp_of(const char *rel)
{
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", g_dir, rel);
    if (stat(path, &st))
        return -1;
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec + (long long)st.st_ino * 7;
}

/* Run the driver with `env` (extra VAR=value words); its output goes to
 * g_dir/log. Returns the exit code. */
static int driver(const char *env)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "GT_EXP_DEFS='%s/defs' GT_PLOTS_DIR='%s/plots' GT_RESULTS='%s/results' "
             "GEOTRAIN='%s/fake-geotrain' QUICK= ONLY= FORCE= %s sh experiments/run.sh >'%s/log' 2>&1",
             g_dir, g_dir, g_dir, g_dir, env, g_dir);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int count_runs(void)
{
    char *s = slurp("runs");
    int n = 0;
    for (char *p = s; p && *p; p++)
        n += *p == '\n';
    free(s);
    return n;
}

/* A tiny experiment: reads input.txt (numbers), writes T1.csv, one figure. */
static const char *DEF_T1 =
    "# T1 — a tiny experiment for the driver test\n"
    "ID=T1\n"
    "TITLE=\"Tiny experiment\"\n"
    "QUESTION=\"Does the driver work?\"\n"
    "NEEDS=\"simulate\"\n"
    "INPUTS=\"$GT_EXP_DEFS/../input.txt\"\n"
    "EST_S=1\n"
    "EST_S_QUICK=1\n"
    "STEPS=2\n"
    "run() {\n"
    "    step \"first\"\n"
    "    echo run >>\"$GT_EXP_DEFS/../runs\"\n"
    "    step \"second\"\n"
    "    awk 'BEGIN { print \"x,y\" } { print NR \",\" $1 * $1 }' \"$GT_EXP_DEFS/../input.txt\" >\"$OUT/T1.csv\"\n"
    "}\n"
    "section() {\n"
    "    fig T1 \"squares\"\n"
    "    mdtable \"$OUT/T1.csv\" \"x|x|%d;y|x squared|%.1f\"\n"
    "    csvq '{ s += v(\"y\") } END { printf \"**Verdict: reproduced.** sum %d\\n\\n\", s }' \"$OUT/T1.csv\"\n"
    "}\n"
    "headline() { csvq '{ n++ } END { printf \"| tiny | - | %d rows | - | T1.csv |\\n\", n }' \"$OUT/T1.csv\"; }\n";

static const char *PLOT_T1 =
    "set output fig(\"T1\")\n"
    "set xlabel \"x\"\n"
    "set ylabel \"x squared\"\n"
    "plot csv(\"T1\") using 1:2 with linespoints title \"squares\"\n";

/* Missing command: "missingcmd --help" fails in the fake binary. */
static const char *DEF_T2 =
    "ID=T2\nTITLE=\"Needs a missing command\"\nQUESTION=\"-\"\nNEEDS=\"missingcmd\"\nINPUTS=\"\"\n"
    "run() { echo should-not-run >>\"$GT_EXP_DEFS/../runs\"; }\n"
    "section() { verdict reproduced \"never\"; }\n";

/* Fails. */
static const char *DEF_T3 =
    "ID=T3\nTITLE=\"Fails\"\nQUESTION=\"-\"\nNEEDS=\"\"\nINPUTS=\"\"\n"
    "run() { echo boom >&2; false; }\n"
    "section() { verdict reproduced \"never\"; }\n";

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/gt-exptest-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/defs' '%s/plots' && cp plots/common.gp '%s/plots/'",
             g_dir, g_dir, g_dir);
    if (system(cmd))
        return -1;
    put("fake-geotrain", "#!/bin/sh\n[ \"$1\" = missingcmd ] && exit 2\nexit 0\n");
    char path[256];
    snprintf(path, sizeof path, "%s/fake-geotrain", g_dir);
    chmod(path, 0755);
    put("input.txt", "1\n2\n3\n");
    put("defs/T1.sh", DEF_T1);
    put("plots/T1.gp", PLOT_T1);
    put("runs", "");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) ? -1 : 0;
}

static void test_produces_csv_figure_and_section(void **state)
{
    (void)state;
    assert_int_equal(driver(""), 0);
    assert_int_equal(count_runs(), 1);
    char *csv = slurp("results/T1/T1.csv");
    assert_non_null(csv);
    assert_string_equal(csv, "x,y\n1,1\n2,4\n3,9\n");
    free(csv);
    assert_true(exists("results/figures/T1.png"));
    assert_true(exists("results/figures/T1.svg"));
    char *rep = slurp("results/REPORT.md");
    assert_non_null(rep);
    assert_non_null(strstr(rep, "## T1"));
    assert_non_null(strstr(rep, "**Question.** Does the driver work?"));
    assert_non_null(strstr(rep, "![squares](figures/T1.png)"));
    assert_non_null(strstr(rep, "| 3 | 9.0 |"));
    assert_non_null(strstr(rep, "**Verdict: reproduced.** sum 14"));
    assert_non_null(strstr(rep, "| tiny | - | 3 rows | - | T1.csv |"));   /* headline, not typed */
    free(rep);
    char *log = slurp("log");
    assert_non_null(strstr(log, "T1: done in"));
    free(log);
}

static void test_rerun_unchanged_does_nothing(void **state)
{
    (void)state;
    assert_int_equal(driver(""), 0);
    long long csv = stamp_of("results/T1/T1.csv"), rep = stamp_of("results/REPORT.md");
    long long png = stamp_of("results/figures/T1.png");
    assert_true(csv > 0 && rep > 0 && png > 0);
    assert_int_equal(driver(""), 0);
    assert_int_equal(count_runs(), 1);
    assert_true(stamp_of("results/T1/T1.csv") == csv);
    assert_true(stamp_of("results/REPORT.md") == rep);
    assert_true(stamp_of("results/figures/T1.png") == png);
    char *log = slurp("log");
    assert_non_null(strstr(log, "T1: up to date"));
    free(log);

    /* a changed input reruns it, and so does a changed binary */
    put("input.txt", "1\n2\n3\n4\n");
    assert_int_equal(driver(""), 0);
    assert_int_equal(count_runs(), 2);
    char *rep2 = slurp("results/REPORT.md");
    assert_non_null(strstr(rep2, "sum 30"));
    free(rep2);
    put("fake-geotrain", "#!/bin/sh\n# rebuilt\n[ \"$1\" = missingcmd ] && exit 2\nexit 0\n");
    assert_int_equal(driver(""), 0);
    assert_int_equal(count_runs(), 3);
    /* FORCE=1 reruns regardless */
    assert_int_equal(driver("FORCE=1"), 0);
    assert_int_equal(count_runs(), 4);
}

static void test_only_and_missing_and_failing(void **state)
{
    (void)state;
    put("defs/T2.sh", DEF_T2);
    put("defs/T3.sh", DEF_T3);
    /* unknown id: usage error, nothing run */
    assert_int_equal(driver("ONLY=T9"), 2);
    assert_int_equal(count_runs(), 0);
    /* only T1 */
    assert_int_equal(driver("ONLY=T1"), 0);
    assert_int_equal(count_runs(), 1);
    assert_false(exists("results/T2"));
    /* missing command: not run, not comparable, exit 0 */
    assert_int_equal(driver("ONLY=T2"), 0);
    assert_int_equal(count_runs(), 1);
    char *rep = slurp("results/REPORT.md");
    assert_non_null(strstr(rep, "not run: geotrain missingcmd not available"));
    assert_non_null(strstr(rep, "| [T2](#t2) | Needs a missing command | not comparable |"));
    free(rep);
    /* failing definition: exit 1, report still lists it */
    assert_int_equal(driver("ONLY=T3"), 1);
    rep = slurp("results/REPORT.md");
    assert_non_null(strstr(rep, "The run failed"));
    assert_non_null(strstr(rep, "| [T3](#t3) | Fails | not comparable |"));
    assert_non_null(strstr(rep, "| [T1](#t1) | Tiny experiment | reproduced |"));
    free(rep);
}

int main(void)
{
    /* tests run from the repository root */
    if (access("experiments/run.sh", R_OK) != 0) {
        fprintf(stderr, "test_experiments_driver: run from the repository root\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_produces_csv_figure_and_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rerun_unchanged_does_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_and_missing_and_failing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
