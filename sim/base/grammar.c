/* grammar.c — identifier and number grammar of the input files (grammar.h). */
#include "sim/base/grammar.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int id_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

const char *gram_site_id_error(const char *id, char *buf, size_t cap)
{
    size_t n = strlen(id);
    if (n == 0)
        return "must not be empty";
    if (n > GRAM_ID_MAX) {
        snprintf(buf, cap, "is longer than %d characters", GRAM_ID_MAX);
        return buf;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if (c == '/')
            return "must not contain '/'";
        if (!id_char(c)) {
            if (c > ' ' && c < 0x7f)
                snprintf(buf, cap, "must not contain '%c' (expected letters, digits, '.', "
                                   "'_' or '-')", c);
            else
                snprintf(buf, cap, "must not contain byte 0x%02x (expected letters, digits, "
                                   "'.', '_' or '-')", c);
            return buf;
        }
    }
    return NULL;
}

const char *gram_printable(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 5 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= ' ' && c < 0x7f && c != '"' && c != '\\')
            buf[n++] = (char)c;
        else
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", c);
    }
    buf[n] = '\0';
    return buf;
}

/* Up to `maxd` canonical digits: "0" or no leading zero. */
static int index_digits(const char *s, size_t len, size_t maxd, long long *out)
{
    if (len == 0 || len > maxd || (s[0] == '0' && len > 1))
        return -1;
    long long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int gram_index(const char *s, size_t len, long *out)
{
    long long v;
    if (index_digits(s, len, 9, &v))
        return -1;
    *out = (long)v;
    return 0;
}

int gram_long(const char *s, long long *out)
{
    int neg = s[0] == '-';
    long long v;
    if (index_digits(s + neg, strlen(s + neg), 18, &v))
        return -1;
    *out = neg ? -v : v;
    return 0;
}

int gram_integer(const char *s, long *out)
{
    int neg = s[0] == '-';
    long v;
    if (gram_index(s + neg, strlen(s + neg), &v))
        return -1;
    *out = neg ? -v : v;
    return 0;
}

static size_t digits(const char *s)
{
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    return n;
}

int gram_number(const char *s, double *out)
{
    size_t i = s[0] == '-', d = digits(s + i);
    if (d == 0)
        return -1;
    i += d;
    if (s[i] == '.') {
        d = digits(s + i + 1);
        if (d == 0)
            return -1;
        i += 1 + d;
    }
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        if (s[i] == '+' || s[i] == '-')
            i++;
        d = digits(s + i);
        if (d == 0)
            return -1;
        i += d;
    }
    if (s[i] != '\0')
        return -1;
    errno = 0;
    double v = strtod(s, NULL); /* the syntax is checked: strtod only converts */
    if (errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}
