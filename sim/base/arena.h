/* arena.h — memory handed out by bumping a pointer through chunks that are
 * kept when the arena is emptied, for stores whose items all go at once
 * (the estimator's collective cache: its entries' arrays live until the
 * cache starts over).
 *
 * Why: each new collective cost three to five malloc calls and, when the
 * cache started over, as many frees; their arrays are often past glibc's
 * per-thread cache size, so they went through the bins (a time-based
 * sample of the bench's local search put malloc and free at about 5 % of
 * the time). Here an allocation is an add and a compare, and emptying the
 * arena frees nothing: its chunks serve the next fill.
 *
 * Blocks are 16-byte aligned. A block larger than the chunk size gets a
 * chunk of its own. */
#ifndef GT_ARENA_H
#define GT_ARENA_H

#include <stddef.h>

typedef struct arena_chunk arena_chunk;

typedef struct arena {
    arena_chunk *chunks;  /* in use, newest first */
    arena_chunk *spare;   /* emptied, to be used again */
    size_t used;          /* in the newest chunk */
} arena;

/* n bytes (n = 0 gives a valid block of 0), or NULL when out of memory. */
void *arena_alloc(arena *a, size_t n);
/* Every block goes; the chunks are kept. */
void arena_empty(arena *a);
void arena_free(arena *a);

#endif
