/* trace.h — readers of the time-varying and measured inputs under traces/
 * (formats in traces/README.md):
 *
 *   WAN bandwidth series   time_s,gbps                       piecewise constant
 *   availability events    time_s,event,node                 event = add | remove
 *   prefill request mix    prompt_tokens,probability         a histogram, sums to 1
 *   per-layer profile      gpu,model,layer_kind,b,seq,fwd_ms,bwd_ms
 *
 * Every file starts with at least one "# source: ..." comment line before the
 * header (a trace without a source is refused). Validation is strict: every
 * error names file:line and the column, the value and what was expected. The
 * readers allocate; each has a free function that also accepts a zeroed or
 * already freed struct. Internal units: nanoseconds and bytes/s. */
#ifndef GT_TRACE_H
#define GT_TRACE_H

#include <stdint.h>
#include "sim/inputs/catalog.h"
#include "sim/base/error.h"

#define TRACE_SOURCE_MAX 1024
#define TRACE_MAX_TIME_S 1e9   /* ~31 years: keeps int64 nanoseconds far from overflow */

/* --- WAN bandwidth time series ------------------------------------------ */
/* Sample i holds from t_ns[i] until t_ns[i+1]; the last one holds forever.
 * The first sample is at time 0 (no undefined start) and times increase. */
typedef struct bwtrace {
    int n;
    int64_t *t_ns;
    double *bw;                       /* bytes/s, > 0 */
    char source[TRACE_SOURCE_MAX];
} bwtrace;

int bwtrace_load(const char *path, bwtrace *out, gt_err *e);
void bwtrace_free(bwtrace *tr);
/* Bandwidth in force at time t (bytes/s); t < 0 gives the first sample. */
double bwtrace_at(const bwtrace *tr, int64_t t_ns);
/* Time of the first change strictly after t, or INT64_MAX when none. */
int64_t bwtrace_next_change(const bwtrace *tr, int64_t t_ns);

/* --- availability / preemption events ------------------------------------ */
typedef enum { AVAIL_REMOVE = 0, AVAIL_ADD = 1 } avail_kind;

typedef struct avail_event {
    int64_t t_ns;
    avail_kind kind;
    int node;                         /* index into avail_trace.nodes */
} avail_event;

/* Times never decrease (several events may share a time, in file order); a
 * node is added only when absent and removed only when present. */
typedef struct avail_trace {
    int n;
    avail_event *ev;
    int nnodes;
    char (*nodes)[64];                /* node names in order of first appearance */
    int (*node_at)[2];                /* line and column of each name's first appearance */
    int max_live;                     /* most nodes present at once */
    char source[TRACE_SOURCE_MAX];
} avail_trace;

int avail_load(const char *path, avail_trace *out, gt_err *e);
void avail_free(avail_trace *a);

/* --- prefill request mix (BubbleTea) ------------------------------------- */
/* Prompt lengths strictly increase; probabilities are in (0, 1] and sum to 1
 * within 1e-6 (they are renormalised to exactly 1). */
typedef struct prefill_mix {
    int n;
    int *tokens;
    double *prob;
    double mean_tokens;
    char source[TRACE_SOURCE_MAX];
} prefill_mix;

int prefill_mix_load(const char *path, prefill_mix *out, gt_err *e);
void prefill_mix_free(prefill_mix *m);

/* --- per-layer compute profile ------------------------------------------- */
typedef enum { LAYER_EMBEDDING = 0, LAYER_BLOCK = 1, LAYER_HEAD = 2 } layer_kind;

typedef struct profile_row {
    char gpu[32];
    char model[64];
    layer_kind kind;
    int b, seq;
    int64_t fwd_ns, bwd_ns;           /* one microbatch through one layer of `kind` */
    int line;                         /* line in the file (for errors) */
    int model_col;                    /* column of its model field (for errors) */
} profile_row;

typedef struct profile {
    int n;
    profile_row *rows;
    char source[TRACE_SOURCE_MAX];
} profile;

/* `cat` may be NULL (GPU ids are then not checked against the catalog).
 * A (gpu, model, layer_kind, b, seq) key given twice is an error. */
int profile_load(const char *path, const gpu_catalog *cat, profile *out, gt_err *e);
/* Every row must be for the job's model: "FILE:LINE: column 'model': ..." otherwise. */
int profile_check_model(const profile *p, const char *path, const char *model_id, gt_err *e);
void profile_free(profile *p);
/* The row for this key, or NULL. */
const profile_row *profile_find(const profile *p, const char *gpu, const char *model,
                                layer_kind kind, int b, int seq);
/* "embedding" | "layer" | "head" */
const char *layer_kind_name(layer_kind k);

#endif
