/* grammar.h — the one definition of what an identifier and a number may look
 * like in GeoTrain's input files (docs/robustness.md, "Identifiers and
 * numbers"). Readers call these instead of strtol/strtod directly, so that
 * what one reader refuses no other accepts.
 *
 *   site id   1..63 of [A-Za-z0-9._-] (no '/', ',', space, quote or control
 *             character: ids go unquoted into GPU names, CSV rows and tables)
 *   GPU id    SITE/NODE/GPU with NODE and GPU canonical indices
 *   index     "0" or [1-9][0-9]* (no sign, space, leading zero), up to 9 digits
 *   integer   an optional '-' then an index
 *   long      an integer of up to 18 digits (command-line counts and seeds)
 *   number    decimal: -?DIGITS[.DIGITS][(e|E)[+-]DIGITS], finite; no hex
 *             (0x10), inf/nan, leading '+', '.5' or surrounding spaces */
#ifndef GT_GRAMMAR_H
#define GT_GRAMMAR_H

#include <stddef.h>

#define GRAM_ID_MAX 63

/* NULL when `id` is a valid site id, else why not (into buf). */
const char *gram_site_id_error(const char *id, char *buf, size_t cap);

/* The first `len` characters of s as an index; 0 = ok, -1 = not one. */
int gram_index(const char *s, size_t len, long *out);
/* The whole string as an integer / a finite decimal number; 0 = ok, -1 = not. */
int gram_integer(const char *s, long *out);
/* As gram_integer, with up to 18 digits (fits a 64-bit long). */
int gram_long(const char *s, long long *out);
int gram_number(const char *s, double *out);

/* s with bytes outside printable ASCII (and '"', '\\') written as \xNN, so
 * that an untrusted string quoted in an error stays on one line. */
const char *gram_printable(const char *s, char *buf, size_t cap);

#endif
