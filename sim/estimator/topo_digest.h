/* topo_digest.h — the part of a topology the estimator's caches read, kept
 * as bytes so that the next evaluation can tell whether its topology still
 * has that content (coll_cache_begin: any difference drops the caches).
 *
 * The caches recognise a topology by content, not by address: a caller may
 * parse another topology into the same variable, or change one in place,
 * between two evaluations. So the content is compared on every evaluation.
 * Before, the compare covered every byte of the sites, nodes, GPUs, WAN
 * links and the whole catalog of GPU types: about 44 KB on case5 (8 sites,
 * 64 GPUs, 26 types), compared against a copy of the same size, so every
 * evaluation streamed about 88 KB through a 48 KB first-level data cache
 * and evicted what the rest of the evaluation was about to read again.
 *
 * The digest leaves out what no cached figure reads: the text of the
 * sites (id, region, source) and of the WAN links (trace file, source)
 * are never read by the estimator, and a GPU type that no node has is
 * never priced. It holds:
 *   - the counts (sites, nodes, GPUs, types);
 *   - each site from its coordinates to its GPU range (every number);
 *   - every node and every GPU whole;
 *   - each WAN link up to its text (presence, rate, latency, per-pair
 *     flags, policy);
 *   - the GPU type of each node, then of each GPU, that differs from the
 *     one before it, whole (its id too: measured profiles are found by
 *     it); the nodes and GPUs are in the digest, so two equal digests
 *     named the same types and every type a node or GPU has is equal;
 *   - the TCP window and connections.
 * Anything else a cached figure came to read would have to join it. */
#ifndef GT_TOPO_DIGEST_H
#define GT_TOPO_DIGEST_H

#include <stddef.h>

#include "sim/inputs/topology.h"

typedef struct topo_digest {
    unsigned char *buf;   /* the digest of the topology last taken */
    size_t len, cap;
    int have;             /* a digest was taken */
} topo_digest;

/* 1 when t's digest equals the one held, 0 when it differs or none is
 * held. Reads t and the held bytes once, stopping at the first
 * difference; writes nothing. */
int topo_digest_same(const topo_digest *d, const topology *t);
/* Takes t's digest in place of the one held; 0, or -1 when out of memory
 * (nothing held then). */
int topo_digest_take(topo_digest *d, const topology *t);
void topo_digest_free(topo_digest *d);

#endif
