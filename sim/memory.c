/* memory.c — formulas of the memory model (see memory.h). */
#include "memory.h"

#include "cost.h"

double cost_stage_activation_bytes(const job *j, int b, int first, int last)
{
    const model_spec *m = &j->model;
    double s = j->seq, h = m->hidden, a = m->heads;
    double per_layer = j->recompute == RECOMPUTE_FULL
                           ? 2.0 * s * b * h
                           : s * b * h * (34.0 + 5.0 * a * s / h);
    return (last - first + 1) * per_layer;
}

double cost_stage_memory(const job *j, int b, int first, int last, int tp, int in_flight)
{
    double state = j->opt_bytes_per_param * cost_stage_params(&j->model, first, last) / tp;
    double act = cost_stage_activation_bytes(j, b, first, last) / tp * in_flight;
    return state + act + COST_RUNTIME_OVERHEAD_BYTES;
}
