/* suggest.c — nearest known name for a typo (see suggest.h). The options of
 * a command are read from its --help text, so a new option is suggested as
 * soon as it is documented, with no second list to keep. */
#include "cli/suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_WORD 64

/* Optimal string alignment distance (Damerau-Levenshtein without repeated
 * edits of a substring): a swap of two neighbours ("bacth") counts as one. */
int cli_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n >= MAX_WORD || m >= MAX_WORD)
        return 99;
    int d[MAX_WORD + 1][MAX_WORD + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m] > 99 ? 99 : d[n][m];
}

/* A typo: at most 2 edits and fewer than half the letters of the word. */
static int near_enough(const char *word, int dist)
{
    size_t len = strlen(word);
    while (*word == '-') {
        word++;
        len--;
    }
    return dist <= 2 && (size_t)dist * 2 < len;
}

const char *cli_nearest(const char *word, const char *const *names, size_t n)
{
    const char *best = NULL;
    int bd = 99;
    for (size_t i = 0; i < n; i++) {
        int dist = cli_edit_distance(word, names[i]);
        if (dist < bd) {
            bd = dist;
            best = names[i];
        }
    }
    return best && bd > 0 && near_enough(word, bd) ? best : NULL;
}

/* Next "--name" token in s from *pos (a name: letters, digits, '-'). */
static int next_option(const char *s, size_t *pos, char *tok, size_t cap)
{
    for (size_t i = *pos; s[i]; i++) {
        if (s[i] != '-' || s[i + 1] != '-' || (i > 0 && !isspace((unsigned char)s[i - 1]) &&
                                                s[i - 1] != '[' && s[i - 1] != '('))
            continue;
        size_t k = 0;
        while (s[i + k] && (isalnum((unsigned char)s[i + k]) || s[i + k] == '-') &&
               k + 1 < cap) {
            tok[k] = s[i + k];
            k++;
        }
        tok[k] = '\0';
        *pos = i + k;
        if (k > 2)
            return 1;
    }
    return 0;
}

int cli_nearest_option(const char *word, const char *const *texts, char *out, size_t cap)
{
    char opt[MAX_WORD], name[MAX_WORD];
    /* "--bacth=3" was split by cli_split_equals; compare the name only */
    snprintf(name, sizeof name, "%s", word);
    char *eq = strchr(name, '=');
    if (eq)
        *eq = '\0';
    int bd = 99;
    for (size_t t = 0; texts[t]; t++)
        for (size_t pos = 0; next_option(texts[t], &pos, opt, sizeof opt);) {
            int dist = cli_edit_distance(name, opt);
            if (dist < bd && dist > 0 && near_enough(name, dist)) {
                bd = dist;
                snprintf(out, cap, "%s", opt);
            }
        }
    return bd < 99;
}
