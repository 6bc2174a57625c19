/* catalog.h — GPU types: the hardware side of the cost model.
 *
 * Loaded from topologies/gpus.csv (see topologies/README.md for every
 * number's source). Units inside: bytes, bytes/s, FLOP/s, watts. */
#ifndef GT_CATALOG_H
#define GT_CATALOG_H

#include "sim/base/error.h"
#include "sim/inputs/freq.h"

typedef struct gpu_type {
    char id[32];
    char name[64];
    double mem_bytes;       /* device memory */
    double mem_bw;          /* bytes/s */
    double peak_flops;      /* dense BF16/FP16 tensor FLOP/s */
    double tdp_w;           /* compute (active) power */
    double idle_w;          /* idle with a CUDA context */
    double efficiency;      /* achievable fraction of peak for training matmuls */
    double link_bw;         /* intra-node GPU link, bytes/s per direction */
    gpu_freq freq;          /* SM-frequency model (gpu_freq.csv beside gpus.csv) */
    /* Kernel model (sim/models/kernels.c); optional columns. gemm_eff == 0 means the
     * type lacks the data and its compute falls back to peak x efficiency. */
    char arch[16];          /* volta, ampere, hopper, ada, blackwell, cdna2, ... */
    int sms;                /* streaming multiprocessors (compute units) */
    double peak_fp8;        /* dense FP8 tensor FLOP/s, 0 = none */
    double peak_tf32;       /* dense TF32 tensor FLOP/s, 0 = none */
    double peak_fp32;       /* FP32 (non-tensor) FLOP/s */
    double gemm_eff;        /* fraction of peak a large square GEMM reaches */
    double mem_eff;         /* fraction of mem_bw a streaming kernel reaches */
    double kernel_s;        /* fixed cost per kernel (launch + ramp + tail) */
    double link_lat_s;      /* per step of an intra-node ring collective */
    double link_eff;        /* fraction of link_bw a collective reaches (bus bw) */
    double k_sat;           /* GEMM saturation: efficiency x K / (K + k_sat) */
    /* Fused attention (sim/models/flash_attn.c); optional columns, 0 = no measurement
     * (the attention core is then priced as GEMMs). Fraction of the 16-bit peak a
     * causal d = 128, s = 8192 attention reaches, forward / backward: the architecture's
     * default fused kernel (attn_*) and FlashAttention-2 (fa2_*). */
    double attn_fwd_eff, attn_bwd_eff;
    double fa2_fwd_eff, fa2_bwd_eff;
    double gemm_eff_fp8;    /* gemm_eff of fp8 GEMMs (optional; 0 = gemm_eff) */
} gpu_type;

typedef struct gpu_catalog {
    gpu_type *types;
    int n;
} gpu_catalog;

int gpu_catalog_load(gpu_catalog *c, const char *path, gt_err *e);
/* Load topologies/gpus.csv found by datadir_find(). */
int gpu_catalog_load_default(gpu_catalog *c, gt_err *e);
void gpu_catalog_free(gpu_catalog *c);
/* Index of a type by id, or -1. */
int gpu_catalog_find(const gpu_catalog *c, const char *id);

/* Power of the communication-wait state: comm_w of the frequency catalog
 * (Perseus's P2P-blocking measurement, at least idle_w); idle_w for a type
 * without a row (the measured blocking power is within 3 % of idle_w). */
double gpu_comm_w(const gpu_type *g);

#endif
