/* job.c — job defaults (see job.h). */
#include "job.h"

#include <string.h>

void job_defaults(job *j, const model_spec *m)
{
    memset(j, 0, sizeof *j);
    j->model = *m;
    j->batch = 1024;
    j->microbatch = 1;
    j->seq = m->seq_len;
    j->precision_bytes = 2;
    j->opt_bytes_per_param = 16;
    j->recompute = RECOMPUTE_NONE;
    j->iterations = 1;
    j->accumulation = 0;
    j->grad_bytes = 2;
}
