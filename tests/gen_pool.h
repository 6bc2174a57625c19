/* gen_pool.h — one generated GPU pool for the planner tests (header only).
 *
 * Several suites run planners on pools made by topologies/gen.h; this is
 * the one place that turns a short spec into topogen_opts and a topology,
 * failing the calling test (with the generator's message) when it cannot.
 *
 *   gen_pool_spec s = {gpus, sites, node, seed, regions, mix};
 *   gen_pool(&s, data, &t)   data: preloaded tables, or NULL to load the
 *                            shipped ones; regions / mix NULL = the defaults
 *
 * Include after testutil.h (it uses cmocka's fail()).
 */
#ifndef GEOTRAIN_TESTS_GEN_POOL_H
#define GEOTRAIN_TESTS_GEN_POOL_H

#include <stdio.h>

#include "topologies/gen.h"

typedef struct gen_pool_spec {
    long gpus;
    int sites, node;
    unsigned long seed;
    const char *regions, *mix; /* NULL = topogen_defaults' */
} gen_pool_spec;

static inline void gen_pool(const gen_pool_spec *s, const topogen_data *d, topology *t)
{
    topogen_opts o;
    gt_err e;
    topogen_defaults(&o);
    o.gpus = s->gpus;
    o.sites = s->sites;
    o.node_size = s->node;
    o.seed = s->seed;
    o.data = d;
    if (s->regions)
        snprintf(o.regions, sizeof o.regions, "%s", s->regions);
    if (s->mix)
        snprintf(o.mix, sizeof o.mix, "%s", s->mix);
    if (topo_generate(&o, t, &e)) {
        print_message("topology: %s\n", e.msg);
        fail();
    }
}

#endif
