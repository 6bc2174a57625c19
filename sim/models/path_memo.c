/* path_memo.c — GPU pairs' paths worked out once per topology (path_memo.h). */
#include "sim/models/path_memo.h"

#include <stdlib.h>
#include <string.h>

int path_memo_reset(path_memo *m, const topology *t)
{
    m->ngpus = 0;
    if (t->ngpus <= 0 || t->ngpus > PATH_MEMO_MAX_GPUS)
        return 0;
    size_t n = (size_t)t->ngpus * (size_t)t->ngpus;
    if (n > m->cap) {
        free(m->e);
        m->e = calloc(n, sizeof *m->e);
        m->cap = m->e ? n : 0;
        m->gen = 0;
        if (!m->e)
            return -1;
    }
    if (++m->gen == 0) { /* the generations wrapped: every entry marked unfilled */
        memset(m->e, 0, sizeof *m->e * m->cap);
        m->gen = 1;
    }
    m->ngpus = t->ngpus;
    return 0;
}

void path_memo_free(path_memo *m)
{
    free(m->e);
    memset(m, 0, sizeof *m);
}
