/* version.c — version string, provenance block (see version.h). The
 * Makefile passes GT_VERSION (the VERSION file), GT_COMMIT (git describe, or
 * "unknown" without git) and GT_BUILD_FLAGS (compiler and flags) with -D to
 * this file only, so a new commit rebuilds one object. */
#include "cli/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli/cli.h"

#ifndef GT_VERSION
#define GT_VERSION "unknown"
#endif
#ifndef GT_COMMIT
#define GT_COMMIT "unknown"
#endif
#ifndef GT_BUILD_FLAGS
#define GT_BUILD_FLAGS "unknown"
#endif

static char g_cmdline[8192];

const char *cli_version(void)
{
    return GT_VERSION;
}

const char *cli_commit(void)
{
    return GT_COMMIT;
}

const char *cli_build_flags(void)
{
    return GT_BUILD_FLAGS;
}

/* Append s to g_cmdline, quoted when the shell would split or expand it. */
static void append_arg(size_t *len, const char *s)
{
    bool quote = !*s || strpbrk(s, " \t\n'\"\\$*?[]{}()<>|&;`#~") != NULL;
    size_t cap = sizeof g_cmdline;
    if (*len && *len + 1 < cap)
        g_cmdline[(*len)++] = ' ';
    if (quote && *len + 1 < cap)
        g_cmdline[(*len)++] = '\'';
    for (; *s && *len + 4 < cap; s++) {
        if (*s == '\'') {      /* ' -> '\'' */
            memcpy(g_cmdline + *len, "'\\''", 4);
            *len += 4;
        } else {
            g_cmdline[(*len)++] = *s;
        }
    }
    if (quote && *len + 1 < cap)
        g_cmdline[(*len)++] = '\'';
    g_cmdline[*len] = '\0';
}

void cli_set_command_line(int argc, char **argv)
{
    size_t len = 0;
    g_cmdline[0] = '\0';
    for (int i = 0; i < argc; i++)
        append_arg(&len, i == 0 ? "geotrain" : argv[i]);
}

const char *cli_command_line(void)
{
    return g_cmdline;
}

/* crc32 and size of a file; -1 when it cannot be read. */
static int file_crc(const char *path, unsigned long *crc, long long *bytes)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    unsigned char buf[65536];
    uLong c = crc32(0L, Z_NULL, 0);
    size_t n;
    *bytes = 0;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) {
        c = crc32(c, buf, (uInt)n);
        *bytes += (long long)n;
    }
    int bad = ferror(fp);
    fclose(fp);
    *crc = c;
    return bad ? -1 : 0;
}

json_t *cli_provenance(const char *const *inputs, int n)
{
    json_t *o = json_object(), *in = json_array();
    json_object_set_new(o, "version", json_string(GT_VERSION));
    json_object_set_new(o, "commit", json_string(GT_COMMIT));
    json_object_set_new(o, "command", json_string(g_cmdline));
    for (int i = 0; i < n; i++) {
        if (!inputs[i] || !strcmp(inputs[i], "-"))
            continue;
        FILE *probe = fopen(inputs[i], "rb");   /* a catalog id (gpt3-xl) is not a file */
        if (!probe)
            continue;
        fclose(probe);
        unsigned long crc;
        long long bytes;
        json_t *f = json_object();
        json_object_set_new(f, "path", json_string(inputs[i]));
        if (file_crc(inputs[i], &crc, &bytes)) {
            json_object_set_new(f, "crc32", json_null());
        } else {
            char hex[16];
            snprintf(hex, sizeof hex, "%08lx", crc & 0xffffffffUL);
            json_object_set_new(f, "crc32", json_string(hex));
            json_object_set_new(f, "bytes", json_integer(bytes));
        }
        json_array_append_new(in, f);
    }
    json_object_set_new(o, "inputs", in);
    return o;
}

void cli_add_provenance(json_t *root, const char *const *inputs, int n)
{
    json_object_set_new(root, "provenance", cli_provenance(inputs, n));
}

int cmd_version(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: geotrain version   (or geotrain --version)\n\n"
               "Print the version, the git commit the binary was built from (\"unknown\"\n"
               "outside a git checkout; \"-dirty\" with uncommitted changes) and the\n"
               "compiler flags of the build. The same three fields are recorded in the\n"
               "provenance block of every --json output and plan file.\n");
        return EXIT_OK;
    }
    if (argc > 1)
        return cli_usage_error("version", "takes no arguments");
    printf("geotrain %s\ncommit %s\nbuild %s\n", GT_VERSION, GT_COMMIT, GT_BUILD_FLAGS);
    return EXIT_OK;
}
