/* job.c — job defaults (see job.h). */
#include "sim/inputs/job.h"

#include <string.h>

void job_defaults(job *j, const model_spec *m)
{
    memset(j, 0, sizeof *j);
    j->model = *m;
    j->batch = 1024;
    j->microbatch = 1;
    j->seq = m->seq_len;
    j->precision_bytes = 2;
    j->precision = PREC_BF16;
    j->attention = ATTN_AUTO;
    j->opt_bytes_per_param = 16;
    j->recompute = RECOMPUTE_NONE;
    j->iterations = 1;
    j->accumulation = 0;
    j->grad_bytes = 2;
}

static const char *const prec_names[] = {"bf16", "fp16", "fp8", "tf32", "fp32"};

const char *precision_name(precision_kind p)
{
    return (unsigned)p < 5 ? prec_names[p] : "?";
}

int precision_parse(const char *s, precision_kind *out)
{
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, prec_names[i])) {
            *out = (precision_kind)i;
            return 0;
        }
    return -1;
}

int precision_act_bytes(precision_kind p)
{
    return p == PREC_TF32 || p == PREC_FP32 ? 4 : 2;
}
