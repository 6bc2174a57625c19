/* timeline.c — Chrome trace-event writer through zlib (timeline.h): the file,
 * the event primitives shared with timeline_net.c / timeline_power.c, GPU op
 * tracks and BubbleTea's prefill tracks. */
#include "sim/outputs/timeline_int.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/base/atomic_file.h"

void tl_escape(const char *in, char *out, size_t cap)
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

void tl_sep(tl_ctx *c)
{
    gzputs(c->gz, c->first ? "\n" : ",\n");
    c->first = 0;
}

void tl_meta(tl_ctx *c, int pid, int tid, const char *what, const char *name)
{
    char esc[512];
    tl_escape(name, esc, sizeof esc);
    tl_sep(c);
    gzprintf(c->gz, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"args\":{\"name\":\"%s\"}}",
             pid, tid, what, esc);
}

void tl_span(tl_ctx *c, int pid, int tid, const char *name, const char *cat, int64_t s,
             int64_t e, const char *args)
{
    tl_sep(c);
    gzprintf(c->gz,
             "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"cat\":\"%s\","
             "\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s}}",
             pid, tid, name, cat, s / 1e3, ((double)e - (double)s) / 1e3, args);
}

void tl_counter(tl_ctx *c, int pid, const char *name, int64_t ts, const char *series,
                double value)
{
    char esc[512];
    tl_escape(name, esc, sizeof esc);
    tl_sep(c);
    gzprintf(c->gz, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"%s\",\"ts\":%.3f,\"args\":{\"%s\":%.9g}}",
             pid, esc, ts / 1e3, series, value);
}

static int step_cmp(const void *a, const void *b)
{
    const tl_step *x = a, *y = b;
    if (x->t != y->t)
        return (x->t > y->t) - (x->t < y->t);
    if (x->count != y->count)
        return x->count - y->count;
    return x->level - y->level;
}

void tl_sort_steps(tl_step *s, size_t n)
{
    qsort(s, n, sizeof *s, step_cmp);
}

static void gpu_tracks(tl_ctx *c)
{
    const workload *w = &c->d->w;
    tl_meta(c, PID_GPU, 0, "process_name", "GPUs");
    for (int l = 0; l < w->nlanes; l++) {
        char name[256], gpu[160];
        topo_gpu_name(c->t, w->lanes[l].gpu, gpu, sizeof gpu);
        snprintf(name, sizeof name, "%s %s (pipeline %d)", gpu,
                 topo_gpu_type(c->t, w->lanes[l].gpu)->id, w->lanes[l].pipe);
        tl_meta(c, PID_GPU, l, "thread_name", name);
    }
    for (int i = 0; i < w->nops; i++) {
        const wl_op *o = &w->ops[i];
        const op_time *ot = &c->d->tm.ops[i];
        char name[32], args[160];
        snprintf(name, sizeof name, "%c%d", o->kind == OP_FWD ? 'F' : 'B', o->mb);
        snprintf(args, sizeof args, "\"pipeline\":%d,\"stage\":%d,\"microbatch\":%d", o->pipe,
                 o->stage, o->mb);
        tl_span(c, PID_GPU, o->lane, name, o->kind == OP_FWD ? "forward" : "backward", ot->start,
             ot->end, args);
    }
    for (int l = 0; l < w->nlanes; l++) {
        const lane_time *lt = &c->d->tm.lanes[l];
        if (lt->sync_end > lt->bwd_end)
            tl_span(c, PID_GPU, l, "sync", "sync", lt->bwd_end, lt->sync_end, "");
        tl_span(c, PID_GPU, l, "optimizer", "optimizer", lt->opt_start, lt->opt_end, "");
    }
}

static void prefill_tracks(tl_ctx *c)
{
    if (!c->pf || c->pf->nplaced == 0)
        return;
    tl_meta(c, PID_PREFILL, 0, "process_name", "prefill (BubbleTea)");
    for (int i = 0; i < c->pf->nplaced; i++) {
        const prefill_piece *p = &c->pf->placed[i];
        char args[96];
        snprintf(args, sizeof args, "\"tokens\":%d,\"request\":%d", p->tokens, p->request);
        tl_span(c, PID_PREFILL, p->lane, "prefill", "prefill", p->start, p->end, args);
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
    tl_link_tracks(c);
    tl_flows(c);
    tl_wan_counters(c);
    tl_power_counters(c);
    prefill_tracks(c);
    gzputs(c->gz, "\n]}\n");
    return gzclose(c->gz) == Z_OK ? 0 : -1;
}

int timeline_write(const char *path, const topology *t, const sim_detail *d,
                   const prefill_result *pf, gt_err *e)
{
    size_t n = strlen(path);
    bool gz = n >= 3 && !strcmp(path + n - 3, ".gz");
    tl_ctx c = {t, d, pf, NULL, 1, NULL, NULL, gz ? "wb6" : "wbT"};
    int rc = atomic_write(path, write_body, &c, e);
    free(c.flow_pid);
    free(c.flow_tid);
    return rc;
}
