/* bench_sim.c — speed figures of the simulator (`make bench`; printed, never
 * asserted; issue 18 goals in brackets), all measured in one run:
 *   1. event queue throughput with >= 1 M pending events     [>= 10 M events/s]
 *   2. the scale study: one iteration of S-stage pipelines over S sites,
 *      S pipelines (64, 256, 1,024, 4,096 and, within 300 s of CPU and
 *      8 GiB, 16,384 GPUs; 128 microbatches, gpt3_6.7b layer shapes, shared
 *      10 Gbps WAN): iteration time, wall
 *      and CPU time, events, stale share, events per CPU second of the whole
 *      run (Mev/s) and of the replay alone (replay: no estimator, no
 *      workload build), peak RSS, the mean flows per re-solve and the
 *      completion events moved per event (what grows with the pipelines
 *      sharing a WAN link) (each case in its own
 *      child process, so the RSS is that case's), and the growth exponent of
 *      CPU time in ops                                [1,024: < 0.25 s, < 64 MiB;
 *      4,096: < 1.5 s; linear growth; >= 10 M events/s; < 5 % stale]
 *   3. all-to-all of 256 endpoints, equal sizes, in the network alone, one
 *      re-solve per nanosecond (net_defer)                   [< 0.5 s]
 *   4. estimator evaluations of a 64-GPU plan per CPU second, on the fast
 *      path and on the op path, each with a reused workspace, along a local
 *      search (each plan one mutation from the last, as a planner varies
 *      them), and on the same plan repeated (the caches' best case)
 *                                             [>= 100,000/s (128 mb), >= 200,000/s (8 mb)]
 *   5. a closing summary: the table with every figure of this run.
 * `bench_sim NAME` runs one part: eventq, scale, 1024, alltoall, estimator. */
#include <gsl/gsl_rng.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "sim/models/cost.h"
#include "sim/estimator/estimator.h"
#include "sim/engine/eventq.h"
#include "sim/engine/network.h"
#include "sim/engine/simulate.h"

/* Every figure of the table, gathered for the closing summary
 * (negative = not measured in this run). */
static struct figures {
    double heap_mps;
    double ev_mps_1024, replay_mps_1024, stale_1024, cpu_1024, rss_1024;
    double cpu_4096, growth, rss_4096, cpu_16384, rss_16384, growth_big, growth_big_ev;
    int ran_16384;
    double alltoall_cpu;
    double est_128, est_8;
} fig = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, -1, -1, -1};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process: the machine is shared, so rates are per CPU
 * second (wall time is printed beside where it matters). */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static void bench_eventq(void)
{
    eventq q;
    eventq_init(&q);
    uint64_t x = 88172645463325252ULL;
    const int pending = 1 << 20;
    for (int i = 0; i < pending; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        eventq_push(&q, (int64_t)(x % 1000000000), 0, i, 0);
    }
    /* steady state: pop the earliest, push one later (hold model) */
    const long ops = 5000000;
    event ev;
    double t0 = cpu_s();
    for (long i = 0; i < ops; i++) {
        eventq_pop(&q, &ev);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        eventq_push(&q, ev.time + (int64_t)(x % 1000000), 0, ev.id, 0);
    }
    double dt = cpu_s() - t0;
    fig.heap_mps = ops / dt / 1e6;
    printf("bench sim.eventq: %.2f M events/CPU-s (pop+push) with %d pending [goal >= 10]\n",
           fig.heap_mps, pending);
    eventq_free(&q);
    /* hand the queue's ~90 MiB back to the system: the scale cases run in
     * forked children, whose peak RSS would otherwise include it */
    malloc_trim(0);
}

/* 32 sites of D A100 (nodes of up to 8), every pair joined by a shared
 * 10 Gbps WAN link; D pipelines, each spanning all 32 sites (stage k in
 * site k). D = 32 is the 1,024-GPU case of the table. */
static int sites_json(topology *t, int nsites, int per_node, int nodes, gt_err *e)
{
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    if (!buf)
        return gt_fail(e, "out of memory");
    int n = snprintf(buf, cap, "{\"name\":\"bench\",\"sites\":[");
    for (int s = 0; s < nsites; s++)
        n += snprintf(buf + n, cap - (size_t)n,
                      "%s{\"id\":\"s%d\",\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":%d,"
                      "\"nic_gbps\":100,\"repeat\":%d}],\"lan\":{\"gbps\":100,\"latency_ms\":0.05}}",
                      s ? "," : "", s, per_node, nodes);
    n += snprintf(buf + n, cap - (size_t)n,
                  "],\"default_wan\":{\"gbps\":10,\"latency_ms\":40},"
                  "\"tcp\":{\"window_mb\":3,\"connections\":16}}");
    int rc = topo_parse(t, "bench", buf, (size_t)n, NULL, e);
    free(buf);
    return rc;
}

static int world(topology *t, int S, int D, gt_err *e)
{
    int per = D < 8 ? D : 8;
    return sites_json(t, S, per, D / per, e);
}

/* D pipelines of S stages (stage k in site k) over L layers, mb
 * microbatches each. */
static void plan_world(plan *p, const topology *t, int S, int D, int L, int mb)
{
    plan_init(p, D);
    p->schedule = SCHED_1F1B;
    p->sync = SYNC_HIERARCHICAL;
    for (int d = 0; d < D; d++) {
        plan_pipe_alloc(p, d, S);
        p->pipes[d].microbatches = mb;
        for (int k = 0; k < S; k++)
            p->pipes[d].stages[k] = (plan_stage){.ngpus = 1,
                                                 .gpus = {t->sites[k].first_gpu + d},
                                                 .first = k * L / S,
                                                 .last = (k + 1) * L / S - 1};
    }
}

typedef struct scale_row {
    int ok, ops;
    long events, stale, solves, solved, moved, sync_flows, flows;
    double wall, cpu, replay_cpu, iter_s, est_s;
} scale_row;

/* One scale case, in this process. */
static scale_row scale_case(int S, int D, const char *model, int layers, int mb)
{
    scale_row r = {0};
    topology t;
    gt_err e;
    model_spec m;
    if (world(&t, S, D, &e) || model_resolve(model, &m, &e))
        return r;
    job j;
    job_defaults(&j, &m);
    if (layers > 0) { /* same layer shapes, a deeper stack for up to 64 stages */
        m.layers = j.model.layers = layers;
        j.recompute = RECOMPUTE_FULL; /* 8 of these layers fit 80 GB only so */
    }
    j.batch = D * mb;
    plan p;
    plan_world(&p, &t, S, D, m.layers, mb);
    sim_options o;
    sim_options_default(&o);
    sim_detail d;
    double t0 = now_s(), c0 = cpu_s();
    if (!sim_detail_run(&t, &j, &p, &o, &d, &e)) {
        r = (scale_row){.ok = 1, .ops = d.w.nops, .events = d.events,
                        .stale = d.stale_events, .solves = d.solves, .solved = d.solved_flows,
                        .moved = d.moved_events, .wall = now_s() - t0, .cpu = cpu_s() - c0,
                        .replay_cpu = d.replay_cpu_s, .iter_s = d.res.iteration_s,
                        .est_s = d.res.est_iteration_s};
        r.flows = d.nflows;
        for (int f = 0; f < d.nflows; f++)
            r.sync_flows += d.flows[f].owner_kind == NET_OWNER_COLL;
        sim_detail_free(&d);
    } else {
        fprintf(stderr, "bench sim.scale: %d GPUs: %s\n", S * D, e.msg);
    }
    plan_free(&p);
    topo_free(&t);
    return r;
}

/* Runs scale_case in a child (own peak RSS, from wait4), given at most
 * LIMIT_S of CPU (BIG_LIMIT_S for the 16,384-GPU case) and BIG_AS_GIB of
 * address space, so a case that does not fit fails instead of pressing the
 * machine. */
#define LIMIT_S 150
#define BIG_LIMIT_S 300
#define BIG_AS_GIB 8
static int case_limit_s = LIMIT_S;
static scale_row scale_child(int S, int D, const char *model, int layers, int mb,
                             double *rss_mib)
{
    scale_row r = {0};
    int fd[2];
    *rss_mib = 0;
    if (pipe(fd))
        return r;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        struct rlimit lim = {(rlim_t)case_limit_s, (rlim_t)case_limit_s};
        setrlimit(RLIMIT_CPU, &lim);
        struct rlimit as = {(rlim_t)BIG_AS_GIB << 30, (rlim_t)BIG_AS_GIB << 30};
        setrlimit(RLIMIT_AS, &as);
        scale_row x = scale_case(S, D, model, layers, mb);
        ssize_t w = write(fd[1], &x, sizeof x);
        _exit(w == (ssize_t)sizeof x ? 0 : 1);
    }
    close(fd[1]);
    if (pid < 0 || read(fd[0], &r, sizeof r) != (ssize_t)sizeof r)
        r.ok = 0;
    close(fd[0]);
    int st;
    struct rusage ru;
    if (pid > 0 && wait4(pid, &st, 0, &ru) == pid)
        *rss_mib = ru.ru_maxrss / 1024.0;
    return r;
}

static void scale_line(const char *label, const scale_row *r, double rss)
{
    if (!r->ok) {
        printf("  %-6s failed or did not finish within %d s of CPU and %d GiB\n", label,
               case_limit_s, BIG_AS_GIB);
        return;
    }
    printf("  %-6s %9d %9.2f %8.3f %8.3f %10ld %6.1f%% %9.2f %9.2f %9.0f %8.1f %8.2f\n", label,
           r->ops, r->iter_s, r->wall, r->cpu, r->events,
           r->events ? 100.0 * r->stale / r->events : 0, r->events / r->cpu / 1e6,
           r->replay_cpu > 0 ? r->events / r->replay_cpu / 1e6 : 0, rss,
           r->solves ? (double)r->solved / r->solves : 0,
           r->events ? (double)r->moved / r->events : 0);
}

static double growth(const scale_row *a, const scale_row *b)
{
    return log(b->cpu / a->cpu) / log((double)b->ops / a->ops);
}

/* 64 .. 4,096 GPUs on the 64-layer scale stack, then 16,384 (128 x 128,
 * 128 layers: one per stage; 64 microbatches, since 128 would be 4.2 M ops,
 * over the plan checker's cap of 4 M) if it fits the case's limits. */
static void bench_scale(int only_1024)
{
    int Ss[] = {8, 16, 32, 64, 128};
    scale_row rows[5] = {{0}};
    double rss[5] = {0};
    char label[16];
    printf("bench sim.scale: one iteration, S x S GPUs = S sites x S pipelines of S 1F1B stages "
           "(stage k in site k), 128 microbatches, gpt3_6.7b layers x 64 (16,384 GPUs: x 128, 64 microbatches; full recomputation), shared 10 Gbps WAN, "
           "hierarchical sync\n");
    printf("  %-6s %9s %9s %8s %8s %10s %7s %9s %9s %9s %8s %8s\n", "GPUs", "ops", "iter_s",
           "wall_s", "cpu_s", "events", "stale", "Mev/s", "replay", "RSS_MiB", "fl/solve",
           "moves/ev");
    for (int i = 0; i < 5 && !only_1024; i++) {
        case_limit_s = i == 4 ? BIG_LIMIT_S : LIMIT_S;
        rows[i] = scale_child(Ss[i], Ss[i], "gpt3_6.7b", i == 4 ? 128 : 64, i == 4 ? 64 : 128,
                              &rss[i]);
        snprintf(label, sizeof label, "%d", Ss[i] * Ss[i]);
        scale_line(label, &rows[i], rss[i]);
        case_limit_s = LIMIT_S;
    }
    if (rows[3].ok) {
        fig.cpu_4096 = rows[3].cpu;
        fig.rss_4096 = rss[3];
    }
    fig.ran_16384 = !only_1024;
    if (rows[4].ok) {
        fig.cpu_16384 = rows[4].cpu;
        fig.rss_16384 = rss[4];
    }
    if (rows[0].ok && rows[3].ok) {
        fig.growth = growth(&rows[0], &rows[3]);
        printf("  growth 64 -> 4,096 GPUs: %.0fx ops, %.0fx CPU: CPU ~ ops^%.2f "
               "[goal: linear, exponent 1 +/- 0.2]\n",
               (double)rows[3].ops / rows[0].ops, rows[3].cpu / rows[0].cpu, fig.growth);
    }
    if (rows[3].ok && rows[4].ok) {
        fig.growth_big = growth(&rows[3], &rows[4]);
        fig.growth_big_ev =
            log(rows[4].cpu / rows[3].cpu) / log((double)rows[4].events / rows[3].events);
        printf("  growth 4,096 -> 16,384 GPUs: %.0fx ops, %.1fx CPU: CPU ~ ops^%.2f; %.1fx "
               "events: CPU ~ events^%.2f\n",
               (double)rows[4].ops / rows[3].ops, rows[4].cpu / rows[3].cpu, fig.growth_big,
               (double)rows[4].events / rows[3].events, fig.growth_big_ev);
    }
    for (int i = 0; i < 5; i++) /* where the events come from */
        if (rows[i].ok)
            printf("  %d GPUs: %.2f events per op; %ld flows, %.0f %% of them gradient sync\n",
                   Ss[i] * Ss[i], (double)rows[i].events / rows[i].ops, rows[i].flows,
                   rows[i].flows ? 100.0 * rows[i].sync_flows / rows[i].flows : 0);
    double r1024;
    scale_row r = scale_child(32, 32, "gpt3_6.7b", 0, 128, &r1024);
    printf("  the issue's 1,024-GPU case (32 x 32, gpt3_6.7b) [goal < 0.25 s, < 64 MiB]:\n");
    scale_line("1024", &r, r1024);
    if (r.ok && r.events > 0) {
        fig.ev_mps_1024 = r.events / r.cpu / 1e6;
        fig.replay_mps_1024 = r.replay_cpu > 0 ? r.events / r.replay_cpu / 1e6 : -1;
        fig.stale_1024 = 100.0 * r.stale / r.events;
        fig.cpu_1024 = r.cpu;
        fig.rss_1024 = r1024;
    }
}

/* 256 GPUs (8 sites x 4 nodes x 8), each sending `bytes` to every other at
 * t = 0: 65,280 flows through NICs and 56 shared WAN links. */
static double alltoall_run(void)
{
    topology t;
    gt_err e;
    if (sites_json(&t, 8, 8, 4, &e)) {
        printf("bench sim.alltoall: skipped: %s\n", e.msg);
        return -1;
    }
    int G = t.ngpus, nf = G * (G - 1);
    network net;
    eventq q;
    if (net_init(&net, &t, nf, -1, 0, &e) || eventq_init(&q)) {
        printf("bench sim.alltoall: skipped: out of memory\n");
        topo_free(&t);
        return -1;
    }
    double t0 = now_s(), c0 = cpu_s();
    for (int a = 0; a < G; a++)
        for (int b = 0; b < G; b++)
            if (a != b) {
                int id = net_flow_new(&net, a, b, 1e7, 0, 0);
                eventq_push(&q, cost_ns(net_flow_latency(&net, id)), 0, id, 0);
            }
    /* every start and completion of one nanosecond, then one re-solve */
    net_defer(&net, true);
    event ev;
    long events = 0;
    int64_t last = 0;
    while (eventq_pop(&q, &ev) > 0) {
        events++;
        int rc = ev.kind == 0 ? net_flow_start(&net, ev.id, ev.time, &q, 1)
                              : net_flow_done_event(&net, ev.id, ev.version, ev.time, &q, 1);
        if (rc < 0 || (eventq_peek_time(&q) != ev.time && net_settle(&net, ev.time, &q, 1)))
            break;
        last = ev.time > last ? ev.time : last;
    }
    double cpu = cpu_s() - c0;
    printf("bench sim.alltoall: 256 endpoints x 255, 10 MB each (%d flows, %ld events, %ld "
           "re-solves of %.0f flows on average, one per nanosecond with changes): "
           "%.3f s wall, %.3f s CPU [goal < 0.5 s]; last flow ends at %.3f s simulated\n",
           nf, events, net.solves, net.solves ? (double)net.solved_flows / net.solves : 0,
           now_s() - t0, cpu, last * 1e-9);
    eventq_free(&q);
    net_free(&net);
    topo_free(&t);
    return cpu;
}

/* The all-to-all in a child held to LIMIT_S of CPU. */
static void bench_alltoall(void)
{
    int fd[2];
    if (pipe(fd))
        return;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        struct rlimit lim = {LIMIT_S, LIMIT_S};
        setrlimit(RLIMIT_CPU, &lim);
        double cpu = alltoall_run();
        fflush(stdout);
        ssize_t w = write(fd[1], &cpu, sizeof cpu);
        _exit(w == (ssize_t)sizeof cpu ? 0 : 1);
    }
    close(fd[1]);
    double cpu = -1;
    if (pid < 0 || read(fd[0], &cpu, sizeof cpu) != (ssize_t)sizeof cpu)
        cpu = -1;
    close(fd[0]);
    fig.alltoall_cpu = cpu;
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        printf("bench sim.alltoall: 256 endpoints x 255: did not finish within %d s of CPU "
               "[goal < 0.5 s]\n", LIMIT_S);
}

/* Evaluations per CPU second of plan p with workspace ws (at least 1 s),
 * the same plan every time: the caches' best case. */
static double est_rate(est_workspace *ws, const topology *t, const job *j, const plan *p,
                       long *skipped, int *reused)
{
    est_summary s;
    gt_err e;
    long n = 0;
    double t0 = cpu_s(), dt;
    do {
        estimate_plan_ws(ws, t, j, p, &s, &e);
        n++;
    } while ((dt = cpu_s() - t0) < 1.0);
    *skipped = est_workspace_skipped(ws);
    *reused = est_workspace_reused(ws);
    return n / dt;
}

/* One step of a local search over plans, the memetic planner's reslice and
 * swap mutations (planner/operators.c): a layer moves across the boundary
 * of two neighbour stages of a pipeline, or two stages anywhere in the plan
 * swap their GPUs. Applying a step twice with dir negated undoes it. */
typedef struct walk_step {
    int move;              /* 1: a layer moves, 0: two stages swap GPUs */
    int pi, k, pj, k2, dir;
} walk_step;

static walk_step walk_draw(gsl_rng *r, const plan *p)
{
    walk_step w = {(int)gsl_rng_uniform_int(r, 2), (int)gsl_rng_uniform_int(r, p->npipes), 0,
                   (int)gsl_rng_uniform_int(r, p->npipes), 0, gsl_rng_uniform_int(r, 2) ? 1 : -1};
    w.k = (int)gsl_rng_uniform_int(r, p->pipes[w.pi].nstages - (w.move ? 1 : 0));
    w.k2 = (int)gsl_rng_uniform_int(r, p->pipes[w.pj].nstages);
    return w;
}

/* Applies w (dir > 0: stage k's last layer goes to stage k+1; dir < 0: the
 * other way); returns 0 when the move would leave a stage without layers. */
static int walk_apply(plan *p, walk_step w)
{
    if (!w.move) {
        plan_stage *a = &p->pipes[w.pi].stages[w.k], *b = &p->pipes[w.pj].stages[w.k2];
        plan_stage x = *a;
        memcpy(a->gpus, b->gpus, sizeof a->gpus);
        a->ngpus = b->ngpus;
        memcpy(b->gpus, x.gpus, sizeof b->gpus);
        b->ngpus = x.ngpus;
        return 1;
    }
    plan_stage *a = &p->pipes[w.pi].stages[w.k], *b = a + 1;
    if ((w.dir > 0 && a->last == a->first) || (w.dir < 0 && b->last == b->first))
        return 0;
    a->last -= w.dir;
    b->first -= w.dir;
    return 1;
}

/* Evaluations per CPU second (at least 1 s) along a local search from p:
 * each evaluation prices the plan one random step from the last valid one
 * (a step to an invalid plan is undone; those evaluations take time but
 * are not counted), and every WALK_STEPS valid steps the search goes back
 * to p, so its plans stay within a few mutations of a good plan, as a
 * planner's offspring stay near its elites. The caches see what such a
 * search gives them: sync groups and stages that repeat, new ones after
 * most swaps. */
#define WALK_STEPS 8
static double est_walk_rate(est_workspace *ws, const topology *t, const job *j, const plan *p,
                            unsigned long seed, long *valid, long *tried)
{
    plan cur;
    if (plan_copy(&cur, p))
        return -1;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) {
        plan_free(&cur);
        return -1;
    }
    gsl_rng_set(r, seed);
    est_summary s;
    gt_err e;
    walk_step done[WALK_STEPS];
    long n = 0, all = 0;
    int nd = 0;
    double t0 = cpu_s(), dt;
    do {
        if (nd == WALK_STEPS) /* back to p: the valid steps undone, last first */
            while (nd > 0) {
                walk_step w = done[--nd];
                w.dir = -w.dir;
                walk_apply(&cur, w);
            }
        walk_step w = walk_draw(r, &cur);
        if (!walk_apply(&cur, w))
            continue;
        all++;
        if (estimate_plan_ws(ws, t, j, &cur, &s, &e) == 0) {
            n++;
            done[nd++] = w;
        } else {
            w.dir = -w.dir;
            walk_apply(&cur, w);
        }
    } while ((dt = cpu_s() - t0) < 1.0);
    gsl_rng_free(r);
    plan_free(&cur);
    *valid = n;
    *tried = all;
    return n / dt;
}

/* The estimator on the fast path (the default) and on the op path (the
 * oracle), each with its own reused workspace, at 128 and 8 microbatches. */
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
    est_workspace *fast = est_workspace_new(), *ops = est_workspace_new();
    if (!fast || !ops) {
        printf("bench sim.estimator: skipped: out of memory\n");
        est_workspace_free(fast);
        est_workspace_free(ops);
        plan_free(&p);
        topo_free(&t);
        return;
    }
    est_workspace_set_path(ops, EST_PATH_OPS);
    int ms[] = {128, 8};
    for (int k = 0; k < 2; k++) {
        j.batch = 8 * ms[k];
        for (int d = 0; d < p.npipes; d++)
            p.pipes[d].microbatches = ms[k];
        long skipped, valid, tried, ovalid, otried;
        int reused;
        double same = est_rate(fast, &t, &j, &p, &skipped, &reused),
               rf = est_walk_rate(fast, &t, &j, &p, 5, &valid, &tried),
               ro = est_walk_rate(ops, &t, &j, &p, 5, &ovalid, &otried);
        *(k ? &fig.est_8 : &fig.est_128) = rf;
        printf("bench sim.estimator: 64-GPU plan (8x8 1F1B, %d microbatches per pipeline), "
               "along a local search (each plan one random step from the last: a layer moved "
               "between neighbour stages or two stages' GPUs swapped, back to the plan every "
               "%d steps; %ld of %ld steps valid): "
               "fast path %.0f evaluations/CPU-s, op path %.0f/CPU-s, %.1fx [goal >= %s]; "
               "the same plan repeated: %.0f/CPU-s (%d of %d pipelines took an identical "
               "earlier one's result; of the %d rounds of the rest, %ld jumped)\n",
               ms[k], WALK_STEPS, valid, tried, rf, ro, rf / ro, k ? "200,000" : "100,000", same, reused,
               p.npipes, (p.npipes - reused) * (ms[k] + 7), skipped);
    }
    est_workspace_free(fast);
    est_workspace_free(ops);
    plan_free(&p);
    topo_free(&t);
}

/* One figure's "now" column: the value, or why it is missing. */
static const char *cell(char *buf, size_t cap, double v, const char *fmt)
{
    if (v < 0)
        snprintf(buf, cap, "not measured");
    else
        snprintf(buf, cap, fmt, v);
    return buf;
}

static void row(const char *figure, const char *now, const char *goal)
{
    printf("  %-44s %-26s %s\n", figure, now, goal);
}

/* The table with this run's figures (each measured above). */
static void summary(void)
{
    char a[64], b[64];
    printf("bench sim.summary: issue 18's table, every figure from this run (CPU seconds)\n");
    row("figure", "now", "goal");
    snprintf(b, sizeof b, "%s, %s", cell(a, 32, fig.ev_mps_1024, "%.2f M/s"),
             cell(a + 32, 32, fig.stale_1024, "%.1f %% stale"));
    row("whole-simulator events/s (1,024 GPUs)", b, ">= 10 M/s, < 5 % stale");
    row("  the same, per CPU-s of the replay alone",
        cell(b, sizeof b, fig.replay_mps_1024, "%.2f M/s"), "(no estimator, no workload build)");
    snprintf(b, sizeof b, "%s, %s", cell(a, 32, fig.cpu_1024, "%.3f s"),
             cell(a + 32, 32, fig.rss_1024, "%.0f MiB"));
    row("1,024-GPU iteration (32 x 32, 128 mb)", b, "< 0.25 s, < 64 MiB");
    snprintf(b, sizeof b, "%s, %s", cell(a, 32, fig.cpu_4096, "%.2f s"),
             cell(a + 32, 32, fig.rss_4096, "%.0f MiB"));
    row("4,096-GPU iteration (64 x 64, scale stack)", b, "< 1.5 s");
    row("cost growth 64 -> 4,096 GPUs", cell(b, sizeof b, fig.growth, "ops^%.2f"),
        "linear in ops (+/- 20 %)");
    if (fig.growth_big >= 0) {
        snprintf(b, sizeof b, "ops^%.2f, events^%.2f", fig.growth_big, fig.growth_big_ev);
        row("cost growth 4,096 -> 16,384 GPUs", b, "(events per op grow: sync rings)");
    } else {
        row("cost growth 4,096 -> 16,384 GPUs", "not measured", "(if 16,384 fits)");
    }
    row("all-to-all, 256 endpoints, equal sizes", cell(b, sizeof b, fig.alltoall_cpu, "%.2f s"),
        "< 0.5 s");
    row("event heap, 1 M pending (bench loop)", cell(b, sizeof b, fig.heap_mps, "%.2f M/s"),
        ">= 10 M/s");
    row("estimator, 64-GPU plan, 128 microbatches",
        cell(b, sizeof b, fig.est_128, "%.0f/s (local search)"), ">= 100,000/s");
    row("estimator, 8 microbatches", cell(b, sizeof b, fig.est_8, "%.0f/s (local search)"),
        ">= 200,000/s");
    if (fig.cpu_16384 >= 0) {
        snprintf(b, sizeof b, "%.1f s, %.0f MiB", fig.cpu_16384, fig.rss_16384);
        row("16,384-GPU iteration (128 x 128, 64 mb)", b, "(if it fits in memory)");
    } else {
        snprintf(b, sizeof b, "did not fit %d s CPU, %d GiB", BIG_LIMIT_S, BIG_AS_GIB);
        row("16,384-GPU iteration (128 x 128, 64 mb)", fig.ran_16384 ? b : "not measured",
            "(if it fits in memory)");
    }
}

int main(int argc, char **argv)
{
    mallopt(M_MMAP_THRESHOLD, 256 << 20); /* as geotrain's main does */
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    const char *only = argc > 1 ? argv[1] : "";
    if (!*only || !strcmp(only, "eventq"))
        bench_eventq();
    if (!*only || !strcmp(only, "scale") || !strcmp(only, "1024"))
        bench_scale(!strcmp(only, "1024"));
    if (!*only || !strcmp(only, "alltoall"))
        bench_alltoall();
    if (!*only || !strcmp(only, "estimator"))
        bench_estimator();
    if (!*only)
        summary();
    return 0;
}
