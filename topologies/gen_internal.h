/* gen_internal.h — what the generator's files share and nobody else sees:
 * the resolved options and stage outcomes (gen_plan), the stage streams, and
 * the helpers one section calls in another. The public API is gen.h.
 *
 *   gen_tables.c   regions.csv and wan_measured.csv
 *   gen_fit.c      the distance fits and their cross-validation
 *   gen_options.c  options checked and resolved against the tables
 *   gen_stages.c   the seeded stages (regions, GPU counts, node types)
 *   gen.c          building the topology (and its bandwidth jitter) */
#ifndef GT_GEN_INTERNAL_H
#define GT_GEN_INTERNAL_H

#include <stdbool.h>

#include <gsl/gsl_rng.h>

#include "topologies/gen.h"

#define GBPS 125000000.0           /* bytes/s in one Gbit/s */
#define GEN_MAX_MIX 32             /* GPU types in one mix */

typedef enum { DIST_EVEN, DIST_RANDOM, DIST_ZIPF, DIST_UNIFORM } dist_kind;

typedef struct gen_mix {
    int n;
    int type[GEN_MAX_MIX];     /* catalog index */
    double w[GEN_MAX_MIX];
} gen_mix;

typedef struct gen_node {
    int site, size, type, order;
} gen_node;

/* Options resolved against the tables, then the outcome of each stage. */
typedef struct gen_plan {
    int *pool;                 /* candidate regions, in list order */
    int npool;
    bool listed;               /* --regions named regions only */
    int nsites;
    long ngpus;                /* 0 until drawn for uniform:LO:HI */
    dist_kind dist;
    double p1, p2;             /* zipf exponent; uniform LO, HI */
    gen_mix *mix;              /* 1, or one per site */
    int nmix;
    bool per_site_unit;        /* --mix-per site */
    int *site_region;
    long *site_gpus;
    gen_node *nodes;
    int nnodes;
} gen_plan;

enum { STAGE_REGIONS = 1, STAGE_COUNTS = 2, STAGE_TYPES = 3, STAGE_JITTER = 4 };

/* Index of region `id` in the tables, or -1. */
int gen_region_find(const topogen_data *d, const char *id);
/* Options checked and resolved into p (gen_plan_free it even on error). */
int gen_resolve(const topogen_opts *o, const topogen_data *d, gen_plan *p, gt_err *e);
void gen_plan_free(gen_plan *p);
/* The independent stream of one stage (NULL when out of memory). */
gsl_rng *gen_stage_rng(unsigned long seed, int stage);
/* Regions, GPU counts, nodes and their types into p. */
int gen_run_stages(const topogen_opts *o, gen_plan *p, gt_err *e);

#endif
