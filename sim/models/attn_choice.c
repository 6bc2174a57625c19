/* attn_choice.c — the architecture rule behind --attention auto (see
 * attn_choice.h).
 *
 * Source: the Dao-AILab/flash-attention README. FlashAttention-2 supports
 * "Ampere, Ada, or Hopper GPUs" (Blackwell via FlashAttention-4 / cuDNN) and
 * the ROCm backend MI200 / MI300 (CDNA2, CDNA3); Turing (T4, RTX 2080) is
 * served only by FlashAttention 1.x; FlashAttention 1.x itself needs Turing
 * or Ampere, so Volta (V100) and older run no FlashAttention at all. The
 * 2020-2022 V100 runs in the validation set (Megatron-LM, Yuan et al.'s
 * geo-distributed cases, DT-FM) used the unfused softmax path. auto picks
 * the fused kernel where FlashAttention-2 runs: Turing gets the unfused path
 * by default (FlashAttention 1.x there is a legacy choice, still allowed when
 * forced). */
#include "sim/models/attn_choice.h"

#include <string.h>

static int arch_in(const gpu_type *g, const char *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(g->arch, list[i]))
            return 1;
    return 0;
}

static const char *const NO_FLASH[] = {"volta", "pascal", "maxwell", "kepler"};
#define N_NO_FLASH ((int)(sizeof NO_FLASH / sizeof NO_FLASH[0]))

int attn_arch_runs_no_flash(const gpu_type *g)
{
    return arch_in(g, NO_FLASH, N_NO_FLASH);
}

int attn_arch_runs_fa2(const gpu_type *g)
{
    return !attn_arch_runs_no_flash(g) && strcmp(g->arch, "turing") != 0;
}

int attn_fused_on(const job *j, const gpu_type *g)
{
    if (j->attention != ATTN_AUTO)
        return j->attention == ATTN_FUSED;
    return g == NULL || attn_arch_runs_fa2(g);
}

const job *attn_job_on(const job *j, const gpu_type *g, job *buf)
{
    if (j->attention != ATTN_AUTO)
        return j;
    *buf = *j;
    buf->attention = attn_fused_on(j, g) ? ATTN_FUSED : ATTN_UNFUSED;
    return buf;
}
