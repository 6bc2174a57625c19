/* suggest.h — "did you mean --batch?" for a mistyped option or subcommand:
 * the nearest known name by edit distance, when it is near enough to be a
 * typo (at most 2 edits, and fewer than half the word's length). */
#ifndef GT_CLI_SUGGEST_H
#define GT_CLI_SUGGEST_H

#include <stddef.h>

/* Edit distance (insert, delete, substitute, swap of two neighbours) between
 * a and b, capped at 99. */
int cli_edit_distance(const char *a, const char *b);
/* The nearest of the n names to word that passes the typo rule, or NULL. */
const char *cli_nearest(const char *word, const char *const *names, size_t n);
/* The nearest option ("--xxx" or "-x" token) that appears in any of the
 * texts (help texts; NULL-terminated list), written to out; 0 if none. */
int cli_nearest_option(const char *word, const char *const *texts, char *out, size_t cap);

#endif
