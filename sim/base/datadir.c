/* datadir.c — locate shipped catalogs (see datadir.h). */
#include "sim/base/datadir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int try_path(const char *dir, const char *sub, const char *file, char *out,
                    size_t cap)
{
    if ((size_t)snprintf(out, cap, "%s%s/%s", dir, sub, file) >= cap)
        return -1;
    return access(out, R_OK) == 0 ? 0 : -1;
}

int datadir_find(const char *file, char *out, size_t cap)
{
    return datadir_find_sub("topologies", file, out, cap);
}

int datadir_find_sub(const char *sub, const char *file, char *out, size_t cap)
{
    const char *env = getenv("GEOTRAIN_DATA");
    if (env && *env && !strcmp(sub, "topologies") && try_path(env, "", file, out, cap) == 0)
        return 0;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        char rel[512];
        snprintf(rel, sizeof rel, "/%s", sub);
        if (try_path(exe, rel, file, out, cap) == 0)
            return 0;
        snprintf(rel, sizeof rel, "/../%s", sub);
        if (try_path(exe, rel, file, out, cap) == 0)
            return 0;
        snprintf(rel, sizeof rel, "/../share/geotrain/%s", sub);
        if (try_path(exe, rel, file, out, cap) == 0)
            return 0;
    }
    char rel[512];
    snprintf(rel, sizeof rel, "/%s", sub);
    return try_path(".", rel, file, out, cap);
}
