/* arena.c — bump allocation through kept chunks (arena.h). */
#include "sim/base/arena.h"

#include <stdint.h>
#include <stdlib.h>

#define ARENA_CHUNK (256u << 10)

struct arena_chunk {
    arena_chunk *next;
    size_t size;                 /* bytes of data */
    _Alignas(16) unsigned char data[];
};

static size_t round16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* A chunk of at least n bytes at the head of a->chunks: a spare one when
 * it is large enough, else a new one. */
static int fresh_chunk(arena *a, size_t n)
{
    arena_chunk *c = a->spare;
    if (c && c->size >= n)
        a->spare = c->next;
    else {
        size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        c = malloc(sizeof *c + size);
        if (!c)
            return -1;
        c->size = size;
    }
    c->next = a->chunks;
    a->chunks = c;
    a->used = 0;
    return 0;
}

void *arena_alloc(arena *a, size_t n)
{
    if (n > SIZE_MAX / 2) /* no chunk header could be added to it */
        return NULL;
    n = round16(n);
    if ((!a->chunks || a->chunks->size - a->used < n) && fresh_chunk(a, n))
        return NULL;
    void *p = a->chunks->data + a->used;
    a->used += n;
    return p;
}

void arena_empty(arena *a)
{
    while (a->chunks) {
        arena_chunk *c = a->chunks;
        a->chunks = c->next;
        c->next = a->spare;
        a->spare = c;
    }
    a->used = 0;
}

void arena_free(arena *a)
{
    arena_empty(a);
    while (a->spare) {
        arena_chunk *c = a->spare;
        a->spare = c->next;
        free(c);
    }
}
