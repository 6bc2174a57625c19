/* topo_traces.c — resolving and checking the bandwidth traces a topology's
 * links name (see topo_traces.h). */
#include "sim/inputs/topo_traces.h"

#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/datadir.h"
#include "sim/inputs/trace.h"

int topo_trace_resolve(const char *topo_path, const char *file, char *out, size_t cap)
{
    if (file[0] == '/' || access(file, R_OK) == 0) {
        snprintf(out, cap, "%s", file);
        return 0;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", topo_path);
    snprintf(out, cap, "%s/%s", dirname(dir), file);
    if (access(out, R_OK) == 0)
        return 0;
    return datadir_find_sub("traces", file, out, cap);
}

int topo_check_link_trace(const jdoc *d, const char *lp, const topo_link *l, gt_err *e)
{
    char jp[300], path[4096];
    snprintf(jp, sizeof jp, "%s.trace", lp);
    if (topo_trace_resolve(d->path, l->trace, path, sizeof path))
        return jdoc_fail(d, e, jp, "trace file \"%s\" not found (as given, beside the "
                                   "topology, or under traces/)", l->trace);
    if (l->per_pair)
        return jdoc_fail(d, e, jp, "a bandwidth trace needs a shared link (not "
                                   "\"per_pair\")");
    bwtrace tr;
    gt_err te;
    if (bwtrace_load(path, &tr, &te))
        return jdoc_fail(d, e, jp, "%s", te.msg);
    bwtrace_free(&tr);
    return 0;
}
