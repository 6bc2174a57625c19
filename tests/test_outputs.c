/* test_outputs.c — the output-writing rules of sim/base/atomic_file.h: a failed or
 * interrupted write leaves the previous output intact with no temporary file;
 * symlinks are written through, devices and FIFOs directly; directories,
 * read-only files and dangling links are refused; /dev/full gives ENOSPC; the
 * temporary name cannot be planted (issue 16, item 1). */
#include "testutil.h"

#include <signal.h>
#include <sys/stat.h>

#include "sim/base/atomic_file.h"

/* --- atomic output -------------------------------------------------------- */

static int write_new(FILE *fp, void *ctx)
{
    return fputs((const char *)ctx, fp) < 0 ? -1 : 0;
}

/* Writes half of its text, then fails. */
static int write_half_then_fail(FILE *fp, void *ctx)
{
    const char *s = ctx;
    fwrite(s, 1, strlen(s) / 2, fp);
    return -1;
}

static void test_atomic_write_failure_keeps_previous_file(void **state)
{
    (void)state;
    char dir[64], path[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(path, sizeof path, "%s/plan.json", dir);
    assert_int_equal(tu_write_file(path, "previous\n"), 0);
    gt_err e;
    e.msg[0] = '\0';
    assert_int_equal(atomic_write(path, write_half_then_fail, "a new and longer content\n", &e),
                     -1);
    assert_non_null(strstr(e.msg, path));
    char *got = tu_read_file(path, NULL);
    assert_string_equal(got, "previous\n");
    free(got);
    assert_int_equal(tu_count_entries(dir), 1); /* no temporary file left */
    /* and a successful write replaces it whole, again with no temp file */
    assert_int_equal(atomic_write(path, write_new, "replaced\n", &e), 0);
    got = tu_read_file(path, NULL);
    assert_string_equal(got, "replaced\n");
    free(got);
    assert_int_equal(tu_count_entries(dir), 1);
    tu_rmtree(dir);
}

static void test_atomic_write_failure_creates_nothing(void **state)
{
    (void)state;
    char dir[64], path[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.json", dir);
    gt_err e;
    assert_int_equal(atomic_write(path, write_half_then_fail, "content\n", &e), -1);
    assert_false(tu_exists(path));
    assert_int_equal(tu_count_entries(dir), 0);
    /* an unwritable folder is an error naming the path, not a crash */
    snprintf(path, sizeof path, "%s/no/such/folder/out.json", dir);
    assert_int_equal(atomic_write(path, write_new, "x", &e), -1);
    assert_non_null(strstr(e.msg, "cannot write"));
    assert_int_equal(tu_count_entries(dir), 0);
    tu_rmtree(dir);
}

static void on_term(int sig)
{
    (void)sig;
    atomic_cleanup_on_signal();
    _exit(130);
}

static int write_then_get_killed(FILE *fp, void *ctx)
{
    fputs((const char *)ctx, fp);
    fflush(fp);
    raise(SIGTERM);
    return 0;
}

/* SIGTERM in the middle of a write: the handler's atomic_cleanup_on_signal()
 * removes the temporary file and the previous output stays. */
static void test_atomic_write_interrupted_keeps_previous_file(void **state)
{
    (void)state;
    char dir[64], path[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(path, sizeof path, "%s/timeline.json", dir);
    assert_int_equal(tu_write_file(path, "previous\n"), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGTERM, on_term);
        gt_err e;
        atomic_write(path, write_then_get_killed, "partial new content", &e);
        _exit(0); /* not reached: the handler exits 130 */
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 130);
    char *got = tu_read_file(path, NULL);
    assert_string_equal(got, "previous\n");
    free(got);
    assert_int_equal(tu_count_entries(dir), 1);
    tu_rmtree(dir);
}

/* --- the output-writing rules (sim/base/atomic_file.h) ---------------------------- */

/* A symlink is written through: the file it points to gets the new content
 * (keeping its mode), the link stays a link; a dangling link is refused. */
static void test_atomic_write_through_symlink(void **state)
{
    (void)state;
    char dir[64], link[128], real[128], dang[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(real, sizeof real, "%s/real.json", dir);
    snprintf(link, sizeof link, "%s/link.json", dir);
    snprintf(dang, sizeof dang, "%s/dangling.json", dir);
    assert_int_equal(tu_write_file(real, "old\n"), 0);
    assert_int_equal(chmod(real, 0640), 0);
    assert_int_equal(symlink("real.json", link), 0);
    assert_int_equal(symlink("no/such/file", dang), 0);
    gt_err e;
    assert_int_equal(atomic_write(link, write_new, "new\n", &e), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(real, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    char *got = tu_read_file(real, NULL);
    assert_string_equal(got, "new\n");
    free(got);
    assert_int_equal(atomic_write(dang, write_new, "x", &e), -1);
    assert_non_null(strstr(e.msg, "symbolic link to a missing"));
    assert_int_equal(tu_count_entries(dir), 3); /* no temporary left */
    tu_rmtree(dir);
}

/* A FIFO is written directly (a reader gets the bytes, the FIFO stays). */
static void test_atomic_write_fifo_directly(void **state)
{
    (void)state;
    char dir[64], fifo[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        gt_err e;
        _exit(atomic_write(fifo, write_new, "through the pipe\n", &e) == 0 ? 0 : 1);
    }
    FILE *fp = fopen(fifo, "r");
    assert_non_null(fp);
    char buf[64] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    assert_int_equal(n, strlen("through the pipe\n"));
    assert_string_equal(buf, "through the pipe\n");
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(tu_count_entries(dir), 1);
    tu_rmtree(dir);
}

/* A read-only file is refused even for root (mode bits), and kept; a
 * directory is refused; a new file gets 0666 minus the umask. */
static void test_atomic_write_refusals_and_modes(void **state)
{
    (void)state;
    char dir[64], ro[128], fresh[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(ro, sizeof ro, "%s/ro.json", dir);
    snprintf(fresh, sizeof fresh, "%s/fresh.json", dir);
    assert_int_equal(tu_write_file(ro, "keep\n"), 0);
    assert_int_equal(chmod(ro, 0444), 0);
    gt_err e;
    assert_int_equal(atomic_write(ro, write_new, "x", &e), -1);
    assert_non_null(strstr(e.msg, "read-only file (mode 0444)"));
    char *got = tu_read_file(ro, NULL);
    assert_string_equal(got, "keep\n");
    free(got);
    assert_int_equal(atomic_write(dir, write_new, "x", &e), -1);
    assert_non_null(strstr(e.msg, "is a directory"));
    mode_t old = umask(027);
    assert_int_equal(atomic_write(fresh, write_new, "x", &e), 0);
    umask(old);
    struct stat st;
    assert_int_equal(stat(fresh, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(tu_count_entries(dir), 2);
    chmod(ro, 0644);
    tu_rmtree(dir);
}

/* /dev/full stays a device and the error says why the write failed. */
static void test_atomic_write_dev_full(void **state)
{
    (void)state;
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
        skip();
    gt_err e;
    assert_int_equal(atomic_write("/dev/full", write_new, "no room\n", &e), -1);
    assert_non_null(strstr(e.msg, "/dev/full: write failed: No space left on device"));
    assert_int_equal(stat("/dev/full", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* /dev/null too, when it is still a device (on a shared machine an old
     * binary's rename may have replaced it with a regular file) */
    if (stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode)) {
        assert_int_equal(atomic_write("/dev/null", write_new, "gone\n", &e), 0);
        assert_int_equal(stat("/dev/null", &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    }
}

/* The temporary name is not predictable: a symlink planted at the old
 * "<out>.tmp.<pid>" name is neither followed nor removed. */
static void test_atomic_write_ignores_planted_temp_name(void **state)
{
    (void)state;
    char dir[64], out[128], plant[160], victim[128];
    assert_non_null(tu_mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out.json", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(plant, sizeof plant, "%s.tmp.%ld", out, (long)getpid());
    assert_int_equal(tu_write_file(victim, "victim\n"), 0);
    assert_int_equal(symlink("victim", plant), 0);
    gt_err e;
    assert_int_equal(atomic_write(out, write_new, "result\n", &e), 0);
    char *got = tu_read_file(victim, NULL);
    assert_string_equal(got, "victim\n");
    free(got);
    assert_int_equal(tu_count_entries(dir), 3);
    tu_rmtree(dir);
}

int main(void)
{
    if (getenv("CMOCKA_TEST_FILTER"))
        cmocka_set_test_filter(getenv("CMOCKA_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atomic_write_failure_keeps_previous_file),
        cmocka_unit_test(test_atomic_write_failure_creates_nothing),
        cmocka_unit_test(test_atomic_write_interrupted_keeps_previous_file),
        cmocka_unit_test(test_atomic_write_through_symlink),
        cmocka_unit_test(test_atomic_write_fifo_directly),
        cmocka_unit_test(test_atomic_write_refusals_and_modes),
        cmocka_unit_test(test_atomic_write_dev_full),
        cmocka_unit_test(test_atomic_write_ignores_planted_temp_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
