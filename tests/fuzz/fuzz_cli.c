/* fuzz_cli.c — the command-line option parser (cli/cli.c, cli/suggest.c).
 *
 * Input: arguments separated by NUL bytes (at most 48), as argv after the
 * program name. Properties, each against an independent oracle:
 *   - cli_split_equals: every "--name=value" before "--" becomes "--name"
 *     "value", everything else is kept, in order (rebuilt and compared);
 *   - cli_take_common consumes 0, 1 or 2 arguments, never runs past argc, and
 *     a value it accepts is inside the documented range and in the one number
 *     grammar (an integer's text is its canonical "%ld" form; a number's text
 *     is decimal digits, '.', '-', and an exponent only: no hex, inf, space);
 *   - cli_check_list accepts exactly the lists with no empty item (checked
 *     character by character);
 *   - a suggestion is at most 2 edits away and the distance is symmetric. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/suggest.h"
#include "fuzz_common.h"

#define MAX_ARGS 48

/* Oracle for cli_check_list: non-empty, no ",,", no comma at either end. */
static bool list_ok(const char *s)
{
    size_t n = strlen(s);
    if (!n || s[0] == ',' || s[n - 1] == ',')
        return false;
    return strstr(s, ",,") == NULL;
}

static void check_split(int argc, char **argv, char **copy)
{
    int n;
    char **out = cli_split_equals(argc, argv, &n);
    FUZZ_REQUIRE(out, "out of memory");
    /* rebuild the expected list from the untouched copy */
    int k = 0;
    bool plain = false;
    for (int i = 0; i < argc; i++) {
        const char *a = copy[i], *eq = strchr(a, '=');
        if (!strcmp(a, "--"))
            plain = true;
        if (!plain && i > 0 && !strncmp(a, "--", 2) && eq && eq > a + 2) {
            FUZZ_REQUIRE(k + 1 < n, "split lost arguments");
            FUZZ_REQUIRE(strlen(out[k]) == (size_t)(eq - a) && !strncmp(out[k], a, eq - a),
                         "name of '%s'", a);
            FUZZ_REQUIRE(!strcmp(out[k + 1], eq + 1), "value of '%s'", a);
            k += 2;
        } else {
            FUZZ_REQUIRE(k < n && !strcmp(out[k], a), "argument %d changed", i);
            k++;
        }
    }
    FUZZ_REQUIRE(k == n && out[n] == NULL, "%d arguments, expected %d", n, k);
    free(out);
}

/* Oracle for an accepted number's text (independent of sim/base/grammar.c):
 * starts with a digit or '-', holds only digits, '.', '-', 'e'/'E' and a '+'
 * right after the exponent letter. */
static bool number_text_ok(const char *s)
{
    if (!((*s >= '0' && *s <= '9') || *s == '-'))
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == 'e' || *p == 'E' ||
              (*p == '+' && p > s && (p[-1] == 'e' || p[-1] == 'E'))))
            return false;
    return true;
}

/* An accepted integer option's value is written exactly as "%ld" prints it. */
static void check_accepted(const cli_common *c, const char *opt, const char *v)
{
    static const char *const INTS[] = {"--batch", "--microbatch", "--seq", "--iterations",
                                       "--accumulation-steps"};
    const long *vals[] = {&c->batch, &c->microbatch, &c->seq, &c->iterations,
                          &c->accumulation};
    for (int k = 0; k < 5; k++)
        if (!strcmp(opt, INTS[k])) {
            char canon[32];
            snprintf(canon, sizeof canon, "%ld", *vals[k]);
            FUZZ_REQUIRE(!strcmp(canon, v), "%s '%s' accepted as %s", opt, v, canon);
        }
    if (!strcmp(opt, "--opt-bytes"))
        FUZZ_REQUIRE(number_text_ok(v), "--opt-bytes '%s' accepted", v);
}

static void check_common(int argc, char **argv)
{
    cli_common c;
    cli_init(&c, "fuzz");
    for (int i = 1; i < argc; i++) {
        int before = i, r = cli_take_common(&c, argc, argv, &i);
        FUZZ_REQUIRE(r >= -1 && r <= 1, "result %d", r);
        FUZZ_REQUIRE(i < argc && i - before <= 1, "moved from %d to %d of %d", before, i, argc);
        if (r < 0)
            break;
        if (r == 1 && i == before + 1)
            check_accepted(&c, argv[before], argv[i]);
    }
    FUZZ_REQUIRE(c.batch == -1 || (c.batch >= 1 && c.batch <= 100000000), "batch %ld", c.batch);
    FUZZ_REQUIRE(c.seq == -1 || (c.seq >= 1 && c.seq <= 10000000), "seq %ld", c.seq);
    FUZZ_REQUIRE(c.opt_bytes <= 0 || (c.opt_bytes >= 1 && c.opt_bytes <= 1024), "opt-bytes");
    FUZZ_REQUIRE(c.recompute >= -1 && c.recompute <= 1, "recompute %d", c.recompute);
}

static void check_words(int argc, char **argv)
{
    const char *texts[] = {CLI_JOB_HELP, NULL};
    for (int i = 0; i < argc; i++) {
        bool ok = cli_check_list("fuzz", "--list", argv[i]) == 0;
        FUZZ_REQUIRE(ok == list_ok(argv[i]), "list '%s': %d", argv[i], ok);
        char near[64];
        if (cli_nearest_option(argv[i], texts, near, sizeof near) && !strchr(argv[i], '=')) {
            int d = cli_edit_distance(argv[i], near);
            FUZZ_REQUIRE(d >= 1 && d <= 2, "'%s' -> '%s' at %d", argv[i], near, d);
        }
        const char *other = argv[(i + 1) % argc];
        FUZZ_REQUIRE(cli_edit_distance(argv[i], other) == cli_edit_distance(other, argv[i]),
                     "asymmetric distance");
        FUZZ_REQUIRE(cli_edit_distance(argv[i], argv[i]) == (strlen(argv[i]) < 64 ? 0 : 99),
                     "distance to itself");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 2], *copy[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"geotrain";
    for (char *p = buf; argc < MAX_ARGS && p <= buf + size; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    for (int i = 0; i < argc; i++)
        copy[i] = strdup(argv[i]);
    /* usage errors are printed on stderr: keep the log readable (fd 2, where
     * the sanitizers report, stays open) */
    static FILE *devnull;
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    FILE *err = stderr;
    if (devnull)
        stderr = devnull;
    check_words(argc, argv);
    check_common(argc, argv);
    check_split(argc, argv, copy);   /* last: it writes into the arguments */
    stderr = err;
    for (int i = 0; i < argc; i++)
        free(copy[i]);
    free(buf);
    return 0;
}
