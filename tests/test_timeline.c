/* test_timeline.c — the Perfetto timeline's flows and counters (sim/timeline*.c).
 *
 * The produced file is parsed back with Jansson and checked against
 * invariants of the simulation it came from:
 *   * every flow has one start and one end; the start lies inside the op
 *     that sends, the end at the start of the op that receives, not before
 *     the start; there is one flow per cross-GPU activation transfer;
 *   * each GPU's power counter, integrated over the iteration and times its
 *     site's PUE, equals account_lanes()'s energy for the same timing;
 *   * each WAN link's throughput counter integrates to the bytes it carried;
 *   * WAN, LAN and NVLink transfers each get their own tracks. */
#include "testutil.h"

#include <jansson.h>

#include "sim/models/accounting.h"
#include "sim/inputs/job.h"
#include "sim/inputs/model.h"
#include "sim/inputs/plan.h"
#include "sim/engine/simulate.h"
#include "sim/outputs/timeline.h"

/* Two sites of two 2-GPU nodes; each pipeline crosses NVLink, LAN and WAN. */
static const char TOPO[] =
    "{\"name\":\"tl\",\"sites\":["
    "{\"id\":\"a\",\"pue\":1.2,\"nodes\":[{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100},"
    "{\"gpu\":\"a100_sxm_80gb\",\"count\":2,\"nic_gbps\":100}],"
    "\"lan\":{\"gbps\":100,\"latency_ms\":0.01}},"
    "{\"id\":\"b\",\"pue\":1.5,\"nodes\":[{\"gpu\":\"v100_sxm2_16gb\",\"count\":2,\"nic_gbps\":25},"
    "{\"gpu\":\"v100_sxm2_16gb\",\"count\":2,\"nic_gbps\":25}],"
    "\"lan\":{\"gbps\":25,\"latency_ms\":0.01}}],"
    "\"links\":[{\"a\":\"a\",\"b\":\"b\",\"gbps\":2,\"latency_ms\":20}]}";
static const char PLAN[] =
    "{\"schedule\":\"1f1b\",\"dp_sync\":\"ring\",\"microbatch_size\":1,\"pipelines\":["
    "{\"microbatches\":4,\"stages\":[{\"gpus\":[\"a/0/0\"],\"layers\":[0,2]},"
    "{\"gpus\":[\"a/0/1\"],\"layers\":[3,4]},{\"gpus\":[\"a/1/0\"],\"layers\":[5,6]},"
    "{\"gpus\":[\"b/0/0\"],\"layers\":[7,7]}]},"
    "{\"microbatches\":4,\"stages\":[{\"gpus\":[\"b/1/0\"],\"layers\":[0,2]},"
    "{\"gpus\":[\"b/1/1\"],\"layers\":[3,4]},{\"gpus\":[\"b/0/1\"],\"layers\":[5,6]},"
    "{\"gpus\":[\"a/1/1\"],\"layers\":[7,7]}]}]}";
static const char MODEL[] =
    "{\"id\":\"tiny\",\"layers\":8,\"hidden\":512,\"heads\":8,\"ffn\":2048,\"vocab\":1000,"
    "\"seq_len\":1024}";

typedef struct world {
    topology t;
    job j;
    plan p;
    sim_detail d;
    json_t *ev;     /* traceEvents of the written timeline */
    json_t *root;
} world;

static json_t *read_timeline(const char *path)
{
    size_t n = 0;
    char *buf = tu_read_gz(path, &n);   /* reads plain JSON too */
    assert_non_null(buf);
    json_error_t je;
    json_t *root = json_loadb(buf, n, 0, &je);
    if (!root)
        fail_msg("timeline is not JSON: %d:%d: %s", je.line, je.column, je.text);
    free(buf);
    return root;
}

static void build(world *w, const char *topo, const char *model, const char *planf, int batch)
{
    gt_err e = {{0}};
    if (topo_load(&w->t, topo, NULL, &e))
        fail_msg("%s", e.msg);
    model_spec m;
    if (model_resolve(model, &m, &e))
        fail_msg("%s", e.msg);
    job_defaults(&w->j, &m);
    w->j.batch = batch;
    if (plan_load(&w->p, planf, &w->t, &e))
        fail_msg("%s", e.msg);
    sim_options o;
    sim_options_default(&o);
    if (sim_detail_run(&w->t, &w->j, &w->p, &o, &w->d, &e))
        fail_msg("%s", e.msg);
    char path[] = "/tmp/gt-timeline-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    assert_int_equal(timeline_write(path, &w->t, &w->d, NULL, &e), 0);
    w->root = read_timeline(path);
    w->ev = json_object_get(w->root, "traceEvents");
    assert_true(json_is_array(w->ev));
    unlink(path);
}

static void build_inline(world *w)
{
    char tp[64], mp[64], pp[64];
    write_temp(TOPO, tp, sizeof tp);
    write_temp(MODEL, mp, sizeof mp);
    write_temp(PLAN, pp, sizeof pp);
    char mjson[80];
    snprintf(mjson, sizeof mjson, "%s.json", mp);
    assert_int_equal(rename(mp, mjson), 0);
    build(w, tp, mjson, pp, 8);
    unlink(tp);
    unlink(mjson);
    unlink(pp);
}

static void destroy(world *w)
{
    json_decref(w->root);
    sim_detail_free(&w->d);
    plan_free(&w->p);
    topo_free(&w->t);
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}
static double numv(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}
static long long intv(json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

/* Complete events sorted by (pid, tid, ts), for lookups by time. */
typedef struct slice {
    long long pid, tid;
    double ts, end;
    json_t *ev;
} slice;

typedef struct slices {
    slice *v;
    size_t n;
} slices;

static int slice_cmp(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    if (x->pid != y->pid)
        return (x->pid > y->pid) - (x->pid < y->pid);
    if (x->tid != y->tid)
        return (x->tid > y->tid) - (x->tid < y->tid);
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static slices index_slices(json_t *ev)
{
    slices s = {calloc(json_array_size(ev) + 1, sizeof(slice)), 0};
    size_t i;
    json_t *x;
    json_array_foreach(ev, i, x) {
        if (strcmp(str(x, "ph"), "X"))
            continue;
        double ts = numv(x, "ts");
        s.v[s.n++] = (slice){intv(x, "pid"), intv(x, "tid"), ts, ts + numv(x, "dur"), x};
    }
    qsort(s.v, s.n, sizeof *s.v, slice_cmp);
    return s;
}

/* The slice on (pid, tid) holding ts (start inclusive); with at_start, one
 * that starts exactly at ts. Slices of one track do not overlap. */
static json_t *slice_at(const slices *s, long long pid, long long tid, double ts, int at_start)
{
    slice key = {pid, tid, ts, ts, NULL};
    size_t lo = 0, hi = s->n;   /* first slice > key */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (slice_cmp(&s->v[mid], &key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k-- > 0 && s->v[k].pid == pid && s->v[k].tid == tid;) {
        if (at_start ? s->v[k].ts == ts : s->v[k].end >= ts)
            return s->v[k].ev;
        if (!at_start || s->v[k].ts < ts)
            break;
    }
    return NULL;
}

static void check_flows(world *w)
{
    int expected = 0;
    for (int i = 0; i < w->d.w.nops; i++)
        expected += w->d.w.ops[i].xfer_bytes > 0;
    int nflows = w->d.nflows + 1;
    slices idx = index_slices(w->ev);
    json_t **s = calloc((size_t)nflows, sizeof *s), **f = calloc((size_t)nflows, sizeof *f);
    json_t **t = calloc((size_t)nflows, sizeof *t);
    int starts = 0;
    size_t i;
    json_t *x;
    json_array_foreach(w->ev, i, x) {
        const char *ph = str(x, "ph");
        if (strcmp(ph, "s") && strcmp(ph, "f") && strcmp(ph, "t"))
            continue;
        long long id = intv(x, "id");
        assert_true(id >= 1 && id < nflows);
        json_t **slot = ph[0] == 's' ? &s[id] : ph[0] == 'f' ? &f[id] : &t[id];
        assert_null(*slot);   /* one start and one end per id */
        *slot = x;
        starts += ph[0] == 's';
    }
    assert_int_equal(starts, expected);
    for (int id = 1; id < nflows; id++) {
        assert_true((s[id] == NULL) == (f[id] == NULL));
        if (!s[id])
            continue;
        assert_true(numv(f[id], "ts") >= numv(s[id], "ts"));
        json_t *send = slice_at(&idx, intv(s[id], "pid"), intv(s[id], "tid"), numv(s[id], "ts"), 0);
        json_t *recv = slice_at(&idx, intv(f[id], "pid"), intv(f[id], "tid"), numv(f[id], "ts"), 1);
        /* the step through the transfer's own slice on its link track */
        assert_non_null(t[id]);
        json_t *xfer = slice_at(&idx, intv(t[id], "pid"), intv(t[id], "tid"), numv(t[id], "ts"), 1);
        assert_non_null(xfer);
        assert_int_equal(intv(json_object_get(xfer, "args"), "flow"), id);
        assert_non_null(send);
        assert_non_null(recv);
        const char *cat = str(recv, "cat");
        assert_true(!strcmp(cat, "forward") || !strcmp(cat, "backward"));
        /* the receiving op starts after the sending op ends */
        assert_true(numv(recv, "ts") >= numv(send, "ts") + numv(send, "dur") - 0.0011);
    }
    free(s);
    free(f);
    free(t);
    free(idx.v);
}

/* Integral of a piecewise-constant counter series up to its last sample. */
static double integrate(json_t *ev, const char *name, const char *series)
{
    double last_t = 0, last_v = 0, sum = 0;
    int seen = 0;
    size_t i;
    json_t *x;
    json_array_foreach(ev, i, x) {
        if (strcmp(str(x, "ph"), "C") || strcmp(str(x, "name"), name))
            continue;
        json_t *v = json_object_get(json_object_get(x, "args"), series);
        if (!v)
            continue;
        double t = numv(x, "ts") * 1e-6;   /* us -> s */
        if (seen)
            sum += last_v * (t - last_t);
        assert_true(!seen || t >= last_t);
        last_t = t;
        last_v = json_number_value(v);
        seen = 1;
    }
    assert_true(seen);
    return sum;
}

static void check_power(world *w)
{
    lane_account *la = calloc((size_t)w->d.w.nlanes, sizeof *la);
    account_lanes(&w->t, &w->d.w, &w->d.tm, la);
    for (int l = 0; l < w->d.w.nlanes; l++) {
        int g = w->d.w.lanes[l].gpu;
        char gpu[160], name[200];
        topo_gpu_name(&w->t, g, gpu, sizeof gpu);
        snprintf(name, sizeof name, "%s power", gpu);
        double j = integrate(w->ev, name, "W") * w->t.sites[w->t.gpus[g].site].pue;
        if (rel_diff(j, la[l].energy_j) > 1e-9)
            fail_msg("%s: counter integrates to %.9g J, accounting says %.9g J", gpu, j,
                     la[l].energy_j);
    }
    free(la);
}

static void check_wan_counters(world *w)
{
    int ns = w->t.nsites, links = 0;
    for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++) {
            double bytes = w->d.wan_link_bytes[a * ns + b];
            if (a == b || bytes <= 0)
                continue;
            char name[200];
            snprintf(name, sizeof name, "%s -> %s", w->t.sites[a].id, w->t.sites[b].id);
            double got = integrate(w->ev, name, "Gbps") * 1e9 / 8;
            if (rel_diff(got, bytes) > 1e-6)
                fail_msg("%s: throughput integrates to %.9g bytes, link carried %.9g", name,
                         got, bytes);
            links++;
        }
    assert_true(links > 0);
}

static int count_cat(json_t *ev, const char *cat)
{
    int n = 0;
    size_t i;
    json_t *x;
    json_array_foreach(ev, i, x) n += !strcmp(str(x, "ph"), "X") && !strcmp(str(x, "cat"), cat);
    return n;
}

static void inline_world(void **st)
{
    (void)st;
    world w;
    build_inline(&w);
    assert_true(count_cat(w.ev, "wan") > 0);
    assert_true(count_cat(w.ev, "lan") > 0);
    assert_true(count_cat(w.ev, "nvlink") > 0);
    assert_int_equal(count_cat(w.ev, "forward") + count_cat(w.ev, "backward"), w.d.w.nops);
    check_flows(&w);
    check_power(&w);
    check_wan_counters(&w);
    destroy(&w);
}

/* A shipped case: 64 GPUs over 8 sites (Yuan et al. case 5), parameter-server sync. */
static void yuan_case5(void **st)
{
    (void)st;
    world w;
    build(&w, "topologies/yuan2022/case5.json", "gpt3-xl", "topologies/plans/case5-rank-order.plan.json",
          1024);
    check_flows(&w);
    check_power(&w);
    check_wan_counters(&w);
    destroy(&w);
}

int main(void)
{
    if (tu_chdir_root())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(inline_world),
        cmocka_unit_test(yuan_case5),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
