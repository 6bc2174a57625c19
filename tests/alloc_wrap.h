/* alloc_wrap.h — the allocation entry points of a test binary linked with
 * the linker's --wrap of malloc, calloc and realloc (Makefile): the test
 * defines the __wrap_ functions (count, or fail on demand) and reaches the
 * C library through the __real_ ones. */
#ifndef GT_TEST_ALLOC_WRAP_H
#define GT_TEST_ALLOC_WRAP_H

#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

#endif
