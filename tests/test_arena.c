/* test_arena.c — sim/base/arena.h on 3,000 random block sizes (0 to 5,000
 * bytes, and one in a hundred past the chunk size): every block is 16-byte
 * aligned and holds what was written into it after all the others were
 * written (no two overlap); once emptied, the same sizes asked again get
 * the same addresses (the chunks are used again, none is allocated). */
#include "testutil.h"

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "sim/base/arena.h"

enum { N = 3000 };

static void fill_all(arena *a, const size_t *size, unsigned char **p)
{
    for (int i = 0; i < N; i++) {
        p[i] = arena_alloc(a, size[i]);
        assert_non_null(p[i]);
        assert_int_equal((uintptr_t)p[i] % 16, 0);
        memset(p[i], i & 0xff, size[i]);
    }
}

static void check_all(const size_t *size, unsigned char *const *p)
{
    for (int i = 0; i < N; i++)
        for (size_t k = 0; k < size[i]; k++)
            if (p[i][k] != (unsigned char)(i & 0xff))
                fail_msg("block %d (%zu bytes): byte %zu overwritten", i, size[i], k);
}

static void test_arena_blocks(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    static size_t size[N];
    static unsigned char *p[N], *q[N];
    for (int i = 0; i < N; i++)
        size[i] = gsl_rng_uniform_int(r, 100) == 0 ? (300u << 10) + gsl_rng_uniform_int(r, 5000)
                                                   : gsl_rng_uniform_int(r, 5001);
    arena a = {0};
    fill_all(&a, size, p);
    check_all(size, p);
    arena_empty(&a);
    fill_all(&a, size, q);
    check_all(size, q);
    for (int i = 0; i < N; i++)
        if (p[i] != q[i])
            fail_msg("block %d: another address once emptied", i);
    assert_null(arena_alloc(&a, SIZE_MAX - 3)); /* refused, not wrapped round */
    arena_free(&a);
    gsl_rng_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
