/* datadir.h — where the shipped catalogs live.
 *
 * Order: $GEOTRAIN_DATA (a folder holding gpus.csv and models.csv), then
 * <folder of the geotrain binary>/topologies (a build tree), then
 * <folder of the binary>/../share/geotrain/topologies (after `make install`),
 * then ./topologies. */
#ifndef GT_DATADIR_H
#define GT_DATADIR_H

#include <stddef.h>

/* Full path of a catalog file such as "gpus.csv" into out[cap]; returns 0 when
 * found, -1 (out holds the last path tried) otherwise. */
int datadir_find(const char *file, char *out, size_t cap);
/* The same search for a file under another shipped folder ("traces"). */
int datadir_find_sub(const char *sub, const char *file, char *out, size_t cap);

#endif
