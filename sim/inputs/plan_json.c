/* plan_json.c — writing plans in the format of docs/formats.md (see plan.h). */
#include <jansson.h>

#include "sim/base/jsonio.h"
#include "sim/inputs/plan.h"
#include "sim/inputs/plan_freq.h"

json_t *plan_to_json(const plan *p, const topology *t)
{
    json_t *root = json_object();
    json_object_set_new(root, "planner", json_string(p->planner));
    json_object_set_new(root, "objective", json_string(p->objective));
    json_object_set_new(root, "schedule", json_string(sched_name(p->schedule)));
    json_object_set_new(root, "dp_sync", json_string(sync_name(p->sync)));
    json_object_set_new(root, "microbatch_size", json_integer(p->microbatch_size));
    /* the training options appear only when set, so that plans of today's
     * behaviour are written byte for byte as before */
    if (p->accumulation > 0)
        json_object_set_new(root, "accumulation_steps", json_integer(p->accumulation));
    if (p->dp_shard != SHARD_NONE)
        json_object_set_new(root, "dp_shard", json_string(shard_name(p->dp_shard)));
    if (p->grad_sync == GSYNC_OVERLAP)
        json_object_set_new(root, "grad_sync", json_string("overlap"));
    if (p->bucket_mb > 0)
        json_object_set_new(root, "grad_bucket_mb", json_real(p->bucket_mb));
    if (p->recompute_full)
        json_object_set_new(root, "recompute", json_string("full"));
    if (p->opt_bytes_per_param > 0)
        json_object_set_new(root, "opt_bytes_per_param", json_real(p->opt_bytes_per_param));
    json_t *pipes = json_array();
    for (int pi = 0; pi < p->npipes; pi++) {
        const plan_pipeline *pp = &p->pipes[pi];
        json_t *pj = json_object();
        json_object_set_new(pj, "microbatches", json_integer(pp->microbatches));
        json_t *stages = json_array();
        for (int k = 0; k < pp->nstages; k++) {
            const plan_stage *s = &pp->stages[k];
            json_t *sj = json_object(), *gpus = json_array(), *lay = json_array();
            for (int x = 0; x < s->ngpus; x++) {
                char name[160];
                topo_gpu_name(t, s->gpus[x], name, sizeof name);
                json_array_append_new(gpus, json_string(name));
            }
            json_array_append_new(lay, json_integer(s->first));
            json_array_append_new(lay, json_integer(s->last));
            json_object_set_new(sj, "gpus", gpus);
            json_object_set_new(sj, "layers", lay);
            plan_stage_freq_to_json(sj, s);
            json_array_append_new(stages, sj);
        }
        json_object_set_new(pj, "stages", stages);
        json_array_append_new(pipes, pj);
    }
    json_object_set_new(root, "pipelines", pipes);
    return root;
}

int plan_write(const plan *p, const topology *t, const char *path, gt_err *e)
{
    json_t *root = plan_to_json(p, t);
    int rc = json_write_atomic(root, path, e);
    json_decref(root);
    return rc;
}
