/* version.h — what this binary is (`geotrain --version`) and what a run read
 * (the provenance block of every --json output and plan file). */
#ifndef GT_CLI_VERSION_H
#define GT_CLI_VERSION_H

#include <jansson.h>

/* Version, git commit ("unknown" when built outside git, e.g. a tarball) and
 * build flags, set by the Makefile with -D (see cli/version.c). */
const char *cli_version(void);
const char *cli_commit(void);
const char *cli_build_flags(void);

/* Remember the process's command line (geotrain.c calls it first). */
void cli_set_command_line(int argc, char **argv);
/* The command line as one string, arguments containing spaces or quotes
 * quoted with '...' (shell style); "" before cli_set_command_line. */
const char *cli_command_line(void);

/* {"version", "commit", "command", "inputs": [{"path", "crc32", "bytes"}]}
 * for the n input paths (NULL entries and "-" skipped; a file that cannot be
 * read gets "crc32": null). crc32 is zlib's crc32() of the whole file, as
 * 8 lowercase hex digits. New reference. */
json_t *cli_provenance(const char *const *inputs, int n);

/* root["provenance"] = cli_provenance(inputs, n), appended last. */
void cli_add_provenance(json_t *root, const char *const *inputs, int n);

/* `geotrain version` / `geotrain --version` */
int cmd_version(int argc, char **argv);

#endif
