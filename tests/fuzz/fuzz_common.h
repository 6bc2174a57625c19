/* fuzz_common.h — what the libFuzzer targets share (tests/fuzz/README.md).
 *
 * Targets run from the repository root (tests/fuzz/Makefile does that), so
 * the shipped catalogs are found as topologies/gpus.csv (or $GEOTRAIN_DATA).
 * A finding is any sanitizer report, a leak, a timeout, or a broken property
 * (FUZZ_REQUIRE), which aborts with the reason. */
#ifndef GT_FUZZ_COMMON_H
#define GT_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/inputs/catalog.h"
#include "sim/base/error.h"

#define FUZZ_REQUIRE(cond, ...)                                                        \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "fuzz property broken: %s (%s:%d)\n  ", #cond, __FILE__,   \
                    __LINE__);                                                         \
            fprintf(stderr, __VA_ARGS__);                                              \
            fputc('\n', stderr);                                                       \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* The GPU catalog, loaded once (topologies/gpus.csv or $GEOTRAIN_DATA). */
static inline const gpu_catalog *fuzz_catalog(void)
{
    static gpu_catalog cat;
    static int loaded;
    if (!loaded) {
        gt_err e;
        if (gpu_catalog_load_default(&cat, &e)) {
            fprintf(stderr, "fuzz: %s (run from the repository root)\n", e.msg);
            abort();
        }
        loaded = 1;
    }
    return &cat;
}

/* Readers that take a path get the input through an in-memory file: returns
 * "/proc/self/fd/N" holding exactly data[0..size). Nothing touches the disk,
 * and nothing is left behind when the fuzzer is killed. */
static inline const char *fuzz_memfile(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("gt-fuzz", 0);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz_memfile");
        abort();
    }
    return path;
}

/* Every input error names the input: "NAME:..." */
static inline int fuzz_names(const gt_err *e, const char *name)
{
    return strncmp(e->msg, name, strlen(name)) == 0 && e->msg[strlen(name)] == ':';
}

#endif
