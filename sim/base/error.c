/* error.c — formatting of gt_err messages (see error.h). */
#include "sim/base/error.h"

#include <stdio.h>
#include <string.h>

int gt_fail(gt_err *e, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int gt_prefix(gt_err *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    char head[512], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    size_t hn = strlen(head), on = strlen(old);
    if (hn + 2 >= sizeof e->msg)
        hn = sizeof e->msg - 3;
    memcpy(e->msg, head, hn);
    memcpy(e->msg + hn, ": ", 2);
    if (hn + 2 + on >= sizeof e->msg)
        on = sizeof e->msg - hn - 3;
    memcpy(e->msg + hn + 2, old, on);
    e->msg[hn + 2 + on] = '\0';
    return -1;
}
