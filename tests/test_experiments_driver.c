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
 *     report is still written;
 *   - a failed rerun keeps the previous good results and says so; the next run
 *     retries it;
 *   - "Run." lines name the results folder actually written;
 *   - cases a run leaves out (not_run) are marked on the figure and under it.
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
    "    [ ! -e \"$GT_EXP_DEFS/../fail\" ] || { echo \"told to fail\" >&2; exit 3; }\n"
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

/* Runs two of three cases and records the third as not run. */
static const char *DEF_T4 =
    "ID=T4\nTITLE=\"Partial\"\nQUESTION=\"-\"\nNEEDS=\"\"\nINPUTS=\"\"\n"
    "run() {\n"
    "    not_run case \"1 2 3\" \"1 3\" QUICK\n"
    "    printf 'case,y\\n1,1\\n3,9\\n' >\"$OUT/T4.csv\"\n"
    "}\n"
    "section() { fig T4 \"two cases\"; verdict reproduced \"partial\"; }\n";
static const char *PLOT_T4 =
    "set output fig(\"T4\")\nplot csv(\"T4\") using 1:2 with points title \"y\"\n";

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
    /* stderr is a file: plain lines, no bar and no carriage return; the
     * first step of an experiment always prints (it says which one runs) */
    assert_non_null(strstr(log, "experiments: T1 [1/2] first: 0% of the run, elapsed "));
    assert_null(strchr(log, '\r'));
    assert_null(strstr(log, "[#"));
    assert_null(strstr(log, "[-"));
    free(log);
}

/* Progress lines name the experiment and step and carry an ETA; their rate is
 * GT_PROGRESS_EVERY_S (0: every step; a large value: the first step only). */
static void test_plain_progress_lines(void **state)
{
    (void)state;
    assert_int_equal(driver("GT_PROGRESS_EVERY_S=0"), 0);
    char *log = slurp("log");
    const char *a = strstr(log, "experiments: T1 [1/2] first: 0% of the run, elapsed ");
    const char *b = strstr(log, "experiments: T1 [2/2] second: ");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(a < b);
    assert_non_null(strstr(b, ", ETA "));
    free(log);
    assert_int_equal(driver("FORCE=1 GT_PROGRESS_EVERY_S=100000"), 0);
    log = slurp("log");
    assert_non_null(strstr(log, "experiments: T1 [1/2] first: "));
    assert_null(strstr(log, "[2/2]"));
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

/* A failed rerun keeps the previous good results (CSV, figure, report
 * section), says so in the report, and is retried by the next run. */
static void test_failed_run_keeps_previous_results(void **state)
{
    (void)state;
    assert_int_equal(driver(""), 0);
    char *before = slurp("results/T1/T1.csv");
    assert_non_null(before);
    put("fail", "");
    assert_int_equal(driver("FORCE=1"), 1);
    assert_int_equal(count_runs(), 1);   /* the failing run stopped before its step */
    char *after = slurp("results/T1/T1.csv");
    assert_non_null(after);
    assert_string_equal(after, before);
    free(after);
    assert_true(exists("results/T1/last-failure"));
    char *flog = slurp("results/T1/last-failure.log");
    assert_non_null(strstr(flog, "told to fail"));
    free(flog);
    assert_true(exists("results/figures/T1.png"));
    char *rep = slurp("results/REPORT.md");
    assert_non_null(strstr(rep, "**The latest run failed**"));
    assert_non_null(strstr(rep, "The results below are those of the previous successful run."));
    assert_non_null(strstr(rep, "**Verdict: reproduced.** sum 14"));  /* old numbers still shown */
    assert_non_null(strstr(rep, "**Run.** full mode"));
    free(rep);
    char *log = slurp("log");
    assert_non_null(strstr(log, "previous results"));
    free(log);
    /* nothing changed but the cause: the next run retries (no FORCE) and succeeds */
    char path[256];
    snprintf(path, sizeof path, "%s/fail", g_dir);
    unlink(path);
    assert_int_equal(driver(""), 0);
    assert_int_equal(count_runs(), 2);
    assert_false(exists("results/T1/last-failure"));
    rep = slurp("results/REPORT.md");
    assert_null(strstr(rep, "latest run failed"));
    free(rep);
    /* a first run that fails has nothing to keep: its logs are the results */
    put("defs/T3.sh", DEF_T3);
    assert_int_equal(driver("ONLY=T3"), 1);
    assert_true(exists("results/T3/run.log"));
    assert_false(exists("results/T3/last-failure"));
    free(before);
}

/* "Run." lines name the folder written: relative to the repository when
 * inside it (as results/quick is for QUICK=1), else absolute. */
static void test_run_lines_name_the_results_folder(void **state)
{
    (void)state;
    assert_int_equal(driver(""), 0);
    char *rep = slurp("results/REPORT.md"), want[512];
    snprintf(want, sizeof want, "(`%s/results/T1/`)", g_dir);
    assert_non_null(strstr(rep, want));
    free(rep);
    /* inside the repository, QUICK: a relative path under build/ (git-ignored) */
    char rel[128], env[256], cmd[300];
    snprintf(rel, sizeof rel, "build/gt-exptest-%ld", (long)getpid());
    snprintf(env, sizeof env, "QUICK=1 GT_RESULTS='%s'", rel);
    assert_int_equal(driver(env), 0);
    char path[300];
    snprintf(path, sizeof path, "%s/REPORT.md", rel);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    snprintf(want, sizeof want, "**Run.** QUICK mode, ");
    assert_non_null(strstr(buf, want));
    snprintf(want, sizeof want, "(`%s/T1/`)", rel);
    assert_non_null(strstr(buf, want));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", rel);
    assert_int_equal(system(cmd), 0);
}

/* Cases a run leaves out are marked on the figure and under it. */
static void test_figures_mark_cases_not_run(void **state)
{
    (void)state;
    put("defs/T4.sh", DEF_T4);
    put("plots/T4.gp", PLOT_T4);
    assert_int_equal(driver("ONLY=T4"), 0);
    char *svg = slurp("results/figures/T4.svg");
    assert_non_null(svg);
    assert_non_null(strstr(svg, "not run: case 2 (QUICK)"));
    free(svg);
    char *rep = slurp("results/REPORT.md");
    assert_non_null(strstr(rep, "*Not run, so not in the figure: case 2 (QUICK).*"));
    free(rep);
    /* T1 ran every case: no mark */
    assert_int_equal(driver("ONLY=T1"), 0);
    svg = slurp("results/figures/T1.svg");
    assert_null(strstr(svg, "not run"));
    free(svg);
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
        cmocka_unit_test_setup_teardown(test_plain_progress_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rerun_unchanged_does_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_and_missing_and_failing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_run_keeps_previous_results, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_lines_name_the_results_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_figures_mark_cases_not_run, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
