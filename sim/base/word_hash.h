/* word_hash.h — the hash of an array of 64-bit words that the estimator's
 * content-addressed tables index by (the pipelines' and prepared stages'
 * store, run_memo.c; the collective shapes, coll_shape.c).
 *
 * Why four lanes: a single running value that each word is multiplied
 * into makes every multiply wait for the one before it, so hashing cost a
 * multiply's latency per word (on the bench's local search, the stores'
 * keys and the shapes' few hundred words made the hash a tenth of an
 * evaluation's time for a twentieth of its instructions). Words go round
 * robin into four independent values, which the processor multiplies side
 * by side, and which are folded together at the end.
 *
 * The tables compare a key in full on a hit, so the hash only decides
 * where a key is looked for: a collision costs a probe, never a wrong
 * answer, and no output depends on the hash's value. */
#ifndef GT_WORD_HASH_H
#define GT_WORD_HASH_H

#include <stddef.h>
#include <stdint.h>

#define WORD_HASH_K1 0x9e3779b97f4a7c15ULL
#define WORD_HASH_K2 0xbf58476d1ce4e5b9ULL

/* One word into a lane: a multiply carries its low bits up; the shift
 * brings the high ones back down, so every bit of a word reaches the
 * low bits a power-of-two table indexes by. */
static inline uint64_t word_hash_step(uint64_t h, uint64_t x)
{
    h = (h ^ x) * WORD_HASH_K1;
    return h ^ h >> 32;
}

static inline uint64_t word_hash_rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

/* The hash of v[0..n), seeded (n is mixed in: sequences of different
 * lengths that share a prefix hash apart). */
static inline uint64_t word_hash(const uint64_t *v, size_t n, uint64_t seed)
{
    uint64_t a = seed ^ n, b = seed + WORD_HASH_K1, c = seed ^ WORD_HASH_K2,
             d = ~seed;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a = word_hash_step(a, v[i]);
        b = word_hash_step(b, v[i + 1]);
        c = word_hash_step(c, v[i + 2]);
        d = word_hash_step(d, v[i + 3]);
    }
    for (; i < n; i++)
        a = word_hash_step(a, v[i]);
    uint64_t h = a ^ word_hash_rotl(b, 17) ^ word_hash_rotl(c, 31) ^ word_hash_rotl(d, 47);
    h ^= h >> 31;
    h *= WORD_HASH_K2;
    return h ^ h >> 29;
}

/* FNV-1a's step, for the small tables keyed by short int sequences (the
 * exact referee's placements and rows, the genome's canonical form): start
 * from WORD_HASH_FNV_BASIS, fold each value in. */
#define WORD_HASH_FNV_BASIS 1469598103934665603ULL
static inline uint64_t word_hash_fnv(uint64_t h, uint64_t v)
{
    return (h ^ v) * 1099511628211ULL;
}

#endif
