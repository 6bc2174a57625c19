/* timeline.c — Chrome trace-event writer through zlib (timeline.h). */
#include "timeline.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "atomic_file.h"
#include "prefill.h"

enum { PID_GPU = 1, PID_WAN = 2, PID_PREFILL = 3 };
#define WAN_ROWS 64

typedef struct tl_ctx {
    const topology *t;
    const sim_detail *d;
    const prefill_result *pf;
    gzFile gz;
    int first;
    const char *mode;   /* gzip for *.gz, zlib's transparent (plain) write otherwise */
} tl_ctx;

/* JSON-safe copy of a name (ids are user input). */
static void escape(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (; *in && n + 7 < cap; in++) {
        unsigned char c = (unsigned char)*in;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20) {
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = '\0';
}

static void sep(tl_ctx *c)
{
    gzputs(c->gz, c->first ? "\n" : ",\n");
    c->first = 0;
}

static void meta(tl_ctx *c, int pid, int tid, const char *what, const char *name)
{
    char esc[512];
    escape(name, esc, sizeof esc);
    sep(c);
    gzprintf(c->gz, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"args\":{\"name\":\"%s\"}}",
             pid, tid, what, esc);
}

static void span(tl_ctx *c, int pid, int tid, const char *name, const char *cat, int64_t s,
                 int64_t e, const char *args)
{
    sep(c);
    gzprintf(c->gz,
             "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"cat\":\"%s\","
             "\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s}}",
             pid, tid, name, cat, s / 1e3, (e - s) / 1e3, args);
}

static void gpu_tracks(tl_ctx *c)
{
    const workload *w = &c->d->w;
    meta(c, PID_GPU, 0, "process_name", "GPUs");
    for (int l = 0; l < w->nlanes; l++) {
        char name[256], gpu[160];
        topo_gpu_name(c->t, w->lanes[l].gpu, gpu, sizeof gpu);
        snprintf(name, sizeof name, "%s %s (pipeline %d)", gpu,
                 topo_gpu_type(c->t, w->lanes[l].gpu)->id, w->lanes[l].pipe);
        meta(c, PID_GPU, l, "thread_name", name);
    }
    for (int i = 0; i < w->nops; i++) {
        const wl_op *o = &w->ops[i];
        const op_time *ot = &c->d->tm.ops[i];
        char name[32], args[160];
        snprintf(name, sizeof name, "%c%d", o->kind == OP_FWD ? 'F' : 'B', o->mb);
        snprintf(args, sizeof args, "\"pipeline\":%d,\"stage\":%d,\"microbatch\":%d", o->pipe,
                 o->stage, o->mb);
        span(c, PID_GPU, o->lane, name, o->kind == OP_FWD ? "forward" : "backward", ot->start,
             ot->end, args);
    }
    for (int l = 0; l < w->nlanes; l++) {
        const lane_time *lt = &c->d->tm.lanes[l];
        if (lt->sync_end > lt->bwd_end)
            span(c, PID_GPU, l, "sync", "sync", lt->bwd_end, lt->sync_end, "");
        span(c, PID_GPU, l, "optimizer", "optimizer", lt->opt_start, lt->opt_end, "");
    }
}

/* Overlapping transfers on a link go to the first free row. */
static void wan_tracks(tl_ctx *c)
{
    const topology *t = c->t;
    const sim_detail *d = c->d;
    int ns = t->nsites;
    int64_t *row_free = calloc((size_t)ns * ns * WAN_ROWS, sizeof(int64_t));
    unsigned char *named = calloc((size_t)ns * ns * WAN_ROWS, 1);
    if (!row_free || !named) {
        free(row_free);
        free(named);
        return;
    }
    meta(c, PID_WAN, 0, "process_name", "WAN links");
    for (int f = 0; f < d->nflows; f++) {
        const net_flow *fl = &d->flows[f];
        if (fl->wan_a < 0)
            continue;
        int link = fl->wan_a * ns + fl->wan_b, row = 0;
        while (row < WAN_ROWS - 1 && row_free[link * WAN_ROWS + row] > fl->start)
            row++;
        row_free[link * WAN_ROWS + row] = fl->end;
        int tid = link * WAN_ROWS + row;
        if (!named[tid]) {
            char name[256];
            snprintf(name, sizeof name, "%s -> %s #%d", t->sites[fl->wan_a].id,
                     t->sites[fl->wan_b].id, row);
            meta(c, PID_WAN, tid, "thread_name", name);
            named[tid] = 1;
        }
        char args[128];
        snprintf(args, sizeof args, "\"bytes\":%.0f,\"latency_end_us\":%.3f", fl->bytes,
                 fl->bytes_start / 1e3);
        span(c, PID_WAN, tid, fl->owner_kind == 1 ? "activation" : "sync", "wan", fl->start,
             fl->end, args);
    }
    free(row_free);
    free(named);
}

static void prefill_tracks(tl_ctx *c)
{
    if (!c->pf || c->pf->nplaced == 0)
        return;
    meta(c, PID_PREFILL, 0, "process_name", "prefill (BubbleTea)");
    for (int i = 0; i < c->pf->nplaced; i++) {
        const prefill_piece *p = &c->pf->placed[i];
        char args[96];
        snprintf(args, sizeof args, "\"tokens\":%d,\"request\":%d", p->tokens, p->request);
        span(c, PID_PREFILL, p->lane, "prefill", "prefill", p->start, p->end, args);
    }
}

static int write_body(FILE *fp, void *ctx)
{
    tl_ctx *c = ctx;
    int fd = dup(fileno(fp));
    if (fd < 0)
        return -1;
    c->gz = gzdopen(fd, c->mode);
    if (!c->gz) {
        close(fd);
        return -1;
    }
    c->first = 1;
    gzputs(c->gz, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    gpu_tracks(c);
    wan_tracks(c);
    prefill_tracks(c);
    gzputs(c->gz, "\n]}\n");
    return gzclose(c->gz) == Z_OK ? 0 : -1;
}

int timeline_write(const char *path, const topology *t, const sim_detail *d,
                   const prefill_result *pf, gt_err *e)
{
    size_t n = strlen(path);
    bool gz = n >= 3 && !strcmp(path + n - 3, ".gz");
    tl_ctx c = {t, d, pf, NULL, 1, gz ? "wb6" : "wbT"};
    return atomic_write(path, write_body, &c, e);
}
