/* bench_sim.c — speed figures of the simulator (`make bench`; printed, never
 * asserted; DESIGN/issue goals in brackets):
 *   1. event queue throughput with >= 1 M pending events     [>= 10 M events/s]
 *   2. one iteration of a 1,024-GPU plan (32 x 32, 128 microbatches each)
 *      on a world-wide topology with shared WAN links          [< 1 s], peak RSS
 *   3. estimator evaluations of a 64-GPU plan per second      [>= 100,000/s] */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "sim/estimator.h"
#include "sim/eventq.h"
#include "sim/simulate.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void bench_eventq(void)
{
    eventq q;
    eventq_init(&q, 1 << 21);
    uint64_t x = 88172645463325252ULL;
    const int pending = 1 << 20;
    for (int i = 0; i < pending; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        eventq_push(&q, (int64_t)(x % 1000000000), 0, i, 0);
    }
    /* steady state: pop the earliest, push one later (hold model) */
    const long ops = 5000000;
    event ev;
    double t0 = now_s();
    for (long i = 0; i < ops; i++) {
        eventq_pop(&q, &ev);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        eventq_push(&q, ev.time + (int64_t)(x % 1000000), 0, ev.id, 0);
    }
    double dt = now_s() - t0;
    printf("bench sim.eventq: %.2f M events/s (pop+push) with %d pending [goal >= 10]\n",
           ops / dt / 1e6, pending);
    eventq_free(&q);
}

/* 32 sites x 32 A100 (4 nodes of 8), every pair joined by a shared 10 Gbps
 * WAN link; 32 pipelines, each spanning all 32 sites (stage k in site k). */
static int world_1024(topology *t, gt_err *e)
{
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    int n = snprintf(buf, cap, "{\"name\":\"bench-1024\",\"sites\":[");
    for (int s = 0; s < 32; s++)
        n += snprintf(buf + n, cap - (size_t)n,
                      "%s{\"id\":\"s%d\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":8,"
                      "\"nic_gbps\":100,\"repeat\":4}],\"lan\":{\"gbps\":100,\"latency_ms\":0.05}}",
                      s ? "," : "", s);
    n += snprintf(buf + n, cap - (size_t)n,
                  "],\"default_wan\":{\"gbps\":10,\"latency_ms\":40},"
                  "\"tcp\":{\"window_mb\":3,\"connections\":16}}");
    int rc = topo_parse(t, "bench-1024", buf, (size_t)n, NULL, e);
    free(buf);
    return rc;
}

static void plan_1024(plan *p, const topology *t)
{
    plan_init(p, 32);
    p->schedule = SCHED_1F1B;
    p->sync = SYNC_HIERARCHICAL;
    for (int d = 0; d < 32; d++) {
        plan_pipe_alloc(p, d, 32);
        p->pipes[d].microbatches = 128;
        for (int k = 0; k < 32; k++)
            p->pipes[d].stages[k] = (plan_stage){.ngpus = 1,
                                                 .gpus = {t->sites[k].first_gpu + d},
                                                 .first = k, .last = k};
    }
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void bench_1024(void)
{
    topology t;
    gt_err e;
    model_spec m;
    if (world_1024(&t, &e) || model_resolve("gpt3_6.7b", &m, &e)) {
        printf("bench sim.1024: skipped: %s\n", e.msg);
        return;
    }
    job j;
    job_defaults(&j, &m);
    j.batch = 32 * 128;
    plan p;
    plan_1024(&p, &t);
    sim_options o;
    sim_options_default(&o);
    sim_detail d;
    double t0 = now_s();
    if (sim_detail_run(&t, &j, &p, &o, &d, &e)) {
        printf("bench sim.1024: failed: %s\n", e.msg);
    } else {
        double dt = now_s() - t0;
        printf("bench sim.1024: one iteration of 1,024 GPUs (32x32, 128 mb, %d ops, %ld events) "
               "in %.3f s [goal < 1 s]; %.2f M events/s; simulated %.2f s (estimate %.2f s); "
               "peak RSS %.0f MiB\n",
               d.w.nops, d.events, dt, d.events / dt / 1e6, d.res.iteration_s,
               d.res.est_iteration_s, peak_rss_kib() / 1024.0);
        sim_detail_free(&d);
    }
    plan_free(&p);
    topo_free(&t);
}

static void bench_estimator(void)
{
    topology t;
    gt_err e;
    model_spec m;
    plan p;
    if (topo_load(&t, "topologies/yuan2022/case5.json", NULL, &e) ||
        model_resolve("gpt3-xl", &m, &e)) {
        printf("bench sim.estimator: skipped: %s\n", e.msg);
        return;
    }
    if (plan_load(&p, "topologies/plans/case5-rank-order.plan.json", &t, &e)) {
        printf("bench sim.estimator: skipped: %s\n", e.msg);
        topo_free(&t);
        return;
    }
    job j;
    job_defaults(&j, &m);
    int ms[] = {128, 8};
    for (int k = 0; k < 2; k++) {
        j.batch = 8 * ms[k];
        for (int d = 0; d < p.npipes; d++)
            p.pipes[d].microbatches = ms[k];
        est_summary s;
        long n = 0;
        double t0 = now_s(), dt;
        do {
            estimate_plan(&t, &j, &p, &s, &e);
            n++;
        } while ((dt = now_s() - t0) < 1.0);
        printf("bench sim.estimator: %.0f evaluations/s of a 64-GPU plan (8x8, %d microbatches "
               "per pipeline) [goal >= 100,000]\n", n / dt, ms[k]);
    }
    plan_free(&p);
    topo_free(&t);
}

int main(void)
{
    mallopt(M_MMAP_THRESHOLD, 256 << 20); /* as geotrain's main does */
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    bench_eventq();
    bench_1024();
    bench_estimator();
    return 0;
}
