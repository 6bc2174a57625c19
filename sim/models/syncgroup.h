/* syncgroup.h — who synchronises which gradients (docs/models.md, "per-layer sync
 * groups"). Gradients of layer l are all-reduced among the stages of every
 * pipeline that hold l. Consecutive layers held by the same set of GPUs form
 * one group, so that pipelines with identical splits give one group per
 * stage, and pipelines with different splits give smaller groups. A
 * tensor-parallel stage syncs its 1/t shard (t of the group's first member). */
#ifndef GT_SYNCGROUP_H
#define GT_SYNCGROUP_H

#include "sim/models/workload.h"

int syncgroups_build(workload *w, const job *j, const plan *p, gt_err *e);

#endif
