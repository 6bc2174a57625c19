/* timeline_int.h — shared by the timeline writer's files (not public):
 * timeline.c (file, GPU ops, prefill), timeline_net.c (link tracks, send ->
 * receive flows, WAN throughput counters), timeline_power.c (GPU power). */
#ifndef GT_TIMELINE_INT_H
#define GT_TIMELINE_INT_H

#include <stdint.h>
#include <zlib.h>

#include "sim/engine/prefill.h"
#include "sim/outputs/timeline.h"

/* Perfetto groups tracks by pid: one "process" per kind of track. */
enum { PID_GPU = 1, PID_WAN = 2, PID_PREFILL = 3, PID_LAN = 4, PID_NVLINK = 5, PID_POWER = 6,
       PID_WAN_RATE = 7 };

typedef struct tl_ctx {
    const topology *t;
    const sim_detail *d;
    const prefill_result *pf;
    gzFile gz;
    int first;
    int *flow_pid, *flow_tid;   /* link track of each flow (tl_link_tracks), or NULL */
    const char *mode;   /* gzip for *.gz, zlib's transparent (plain) write otherwise */
} tl_ctx;

/* JSON-safe copy of a name (ids are user input). */
void tl_escape(const char *in, char *out, size_t cap);
/* ",\n" between events. */
void tl_sep(tl_ctx *c);
/* Metadata event: process_name / thread_name. */
void tl_meta(tl_ctx *c, int pid, int tid, const char *what, const char *name);
/* Complete event [s, e] (ns); `args` is the inside of the args object. */
void tl_span(tl_ctx *c, int pid, int tid, const char *name, const char *cat, int64_t s,
             int64_t e, const char *args);
/* Counter sample: from ts on, counter `name` of `pid` is `value` (series `series`). */
void tl_counter(tl_ctx *c, int pid, const char *name, int64_t ts, const char *series,
                double value);

/* A piecewise-constant series from +delta/-delta steps (a sweep). */
typedef struct tl_step {
    int64_t t;
    double delta;
    int count;          /* +1 opening, -1 closing: the sum is exactly 0 when none open */
    int level;          /* priority class for power (timeline_power.c), 0 otherwise */
} tl_step;
/* Sort steps by time (ties: closing before opening, then level). */
void tl_sort_steps(tl_step *s, size_t n);

void tl_link_tracks(tl_ctx *c);
void tl_flows(tl_ctx *c);
void tl_wan_counters(tl_ctx *c);
void tl_power_counters(tl_ctx *c);

#endif
