/* topo_traces.h — a topology's bandwidth-trace references: where a link's
 * "trace" file is found, and the check that it exists and reads cleanly,
 * done while the topology is parsed so that `topo check` refuses what
 * `simulate` would (issue 16, item 4). */
#ifndef GT_TOPO_TRACES_H
#define GT_TOPO_TRACES_H

#include <stddef.h>
#include "sim/base/error.h"
#include "sim/base/jsonio.h"
#include "sim/inputs/topology.h"

/* The trace's path: as given, then beside the topology file, then under the
 * shipped traces/ folder. 0 = found (out set), -1 = not found. */
int topo_trace_resolve(const char *topo_path, const char *file, char *out, size_t cap);

/* The link at JSON path `lp` names a trace: it must be found, load as a
 * bandwidth trace (traces/README.md) and sit on a shared link. Errors are
 * "TOPO:L:C: links[i].trace: ..." with the trace's own error inside. */
int topo_check_link_trace(const jdoc *d, const char *lp, const topo_link *l, gt_err *e);

#endif
