/* plan_opts.h — command-line overrides of a plan's training options
 * (dp_shard, grad_sync, grad_bucket_mb; docs/training-model.md), so that a
 * plan can be replayed under ZeRO / FSDP or with overlapped sync without
 * editing the file. */
#ifndef GT_PLAN_OPTS_H
#define GT_PLAN_OPTS_H

#include "sim/inputs/plan.h"

typedef struct plan_opts {
    int dp_shard;        /* -1 = keep the plan's */
    int grad_sync;       /* -1 = keep the plan's */
    double bucket_mb;    /* <= 0 = keep the plan's */
} plan_opts;

#define PLAN_OPTS_HELP                                                                      \
    "Training options (override the plan's fields):\n"                                     \
    "  --dp-shard none|zero1|zero2|zero3|fsdp   sharded data parallelism\n"                \
    "  --grad-sync after_backward|overlap       when the gradient sync starts\n"           \
    "  --grad-bucket-mb MB    gradient bucket of the overlapped sync (default 25)\n"

void plan_opts_init(plan_opts *o);
/* Consume argv[*i] (and its value) if it is one of ours: 1 consumed, 0 not
 * ours, -1 usage error (printed for command `cmd`). */
int plan_opts_take(plan_opts *o, const char *cmd, int argc, char **argv, int *i);
void plan_opts_apply(const plan_opts *o, plan *p);

#endif
