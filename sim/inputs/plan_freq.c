/* plan_freq.c — per-stage SM clocks in plan files (plan_freq.h). */
#include "sim/inputs/plan_freq.h"

#include <stdio.h>

#include "sim/inputs/freq.h"

/* One clock field: absent leaves *out; present must be a clock of each GPU. */
static int read_clock(const jdoc *d, json_t *st, const char *sp, const char *key,
                      const topology *t, const plan_stage *s, int *out, gt_err *e)
{
    json_t *v = json_object_get(st, key);
    if (!v)
        return 0;
    char jp[360], why[200];
    snprintf(jp, sizeof jp, "%s.%s", sp, key);
    if (!json_is_integer(v))
        return jdoc_fail(d, e, jp, "expected an SM clock in MHz (integer)");
    json_int_t f = json_integer_value(v);
    for (int x = 0; x < s->ngpus; x++) {
        const gpu_type *g = topo_gpu_type(t, s->gpus[x]);
        if (f < 1 || f > 100000 || freq_check(g, (int)f, why, sizeof why))
            return jdoc_fail(d, e, jp, "%s", f < 1 || f > 100000 ? "expected a clock in MHz" : why);
    }
    *out = (int)f;
    return 0;
}

int plan_stage_freq_parse(const jdoc *d, json_t *st, const char *sp, const topology *t,
                          plan_stage *s, gt_err *e)
{
    int both = 0;
    if (read_clock(d, st, sp, "freq_mhz", t, s, &both, e))
        return -1;
    s->freq_fwd_mhz = s->freq_bwd_mhz = both;
    if (read_clock(d, st, sp, "freq_mhz_fwd", t, s, &s->freq_fwd_mhz, e) ||
        read_clock(d, st, sp, "freq_mhz_bwd", t, s, &s->freq_bwd_mhz, e))
        return -1;
    return 0;
}

int plan_freq_check(const plan *p, const topology *t, gt_err *e)
{
    char why[200];
    for (int pi = 0; pi < p->npipes; pi++)
        for (int k = 0; k < p->pipes[pi].nstages; k++) {
            const plan_stage *s = &p->pipes[pi].stages[k];
            int f[2] = {s->freq_fwd_mhz, s->freq_bwd_mhz};
            for (int x = 0; x < s->ngpus; x++)
                for (int c = 0; c < 2; c++)
                    if (f[c] && freq_check(topo_gpu_type(t, s->gpus[x]), f[c], why, sizeof why))
                        return gt_fail(e, "pipelines[%d].stages[%d].freq_mhz%s: %s", pi, k,
                                       c ? "_bwd" : "_fwd", why);
        }
    return 0;
}

void plan_stage_freq_to_json(json_t *sj, const plan_stage *s)
{
    if (s->freq_fwd_mhz == s->freq_bwd_mhz) {
        if (s->freq_fwd_mhz)
            json_object_set_new(sj, "freq_mhz", json_integer(s->freq_fwd_mhz));
        return;
    }
    if (s->freq_fwd_mhz)
        json_object_set_new(sj, "freq_mhz_fwd", json_integer(s->freq_fwd_mhz));
    if (s->freq_bwd_mhz)
        json_object_set_new(sj, "freq_mhz_bwd", json_integer(s->freq_bwd_mhz));
}
