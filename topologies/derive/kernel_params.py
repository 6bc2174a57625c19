"""kernel_params.py - the kernel-model columns of topologies/gpus.csv and the GPU types
that the shared GPU table lacks (used by derive_catalogs.py; docs/compute-model.md).

Every number carries its source in the row's `kernel_source` column. Three kinds:
  datasheet  SM count, FP8 / TF32 / FP32 peaks (vendor datasheets and whitepapers);
  measured   gemm_eff = best large BF16 matmul / peak (the "Maximum Achievable Matmul
             FLOPS" table of S. Bekman's ml-engineering book, compute/accelerator/README.md,
             measured with mamf-finder.py);
  assumed    values without a per-part public measurement, marked ASSUMED with the
             reasoning (mem_eff, kernel_us, link figures, gemm_eff of unmeasured parts).
k_sat (the GEMM saturation constant) is the one parameter fitted to measured runs, per
architecture, on the fitting rows of validation/ (see docs/validation.md); FIT_K_SAT
below holds the fitted values and names the rows they were fitted on.
"""

MAMF = ("measured large-GEMM efficiency: Bekman ml-engineering 'Maximum Achievable Matmul "
        "FLOPS comparison table' (BF16 matmul via mamf-finder.py)")

# Fitted per architecture by `geotrain validate --fit` (grid 0..6144) on the rows with
# role=fit only: the Megatron-LM / NeMo sources KOR, NAR, MEG20, NEMO2407, NEMOL (43 rows:
# A100, V100, H100). llm-foundry (LLMF), Megatron-Core H100 (MH100) and Megatron-Bridge
# (MB2511) rows are held out (docs/validation.md).
FITTED_K_SAT = {"volta": 256, "ampere": 768, "hopper": 2560}
# An architecture without fitting rows takes the per-tile overhead *time* of the nearest
# fitted architecture of its vendor: k_sat (K-steps per tile) scaled by the ratio of the
# reference parts' per-SM GEMM rate (dense 16-bit peak / SMs x gemm_eff). Why time and not
# K-steps: across the fitted architectures k_sat grew with the per-SM rate (volta -> ampere
# x3.0 for a rate x2.0, ampere -> hopper x3.3 for x2.4), not stayed put. Reference parts:
# (id, dense BF16 TFLOP/s, SMs, gemm_eff) as in KERNEL and the datasheet rows.
K_SAT_REF = {"volta": ("v100_sxm2_32gb", 125.0, 80, 0.80),
             "ampere": ("a100_sxm_80gb", 312.0, 108, 0.859),
             "hopper": ("h100_sxm", 989.4, 132, 0.801),
             "turing": ("t4", 65.0, 40, 0.70),
             "ada": ("l40s", 362.05, 142, 0.80),
             "blackwell": ("b200", 2250.0, 148, 0.776)}
K_SAT_FROM = {"turing": "volta", "ada": "ampere", "blackwell": "hopper"}


def _per_sm(arch):
    _, tflops, sms, geff = K_SAT_REF[arch]
    return tflops / sms * geff


FIT_K_SAT = dict(FITTED_K_SAT)
for _a, _f in K_SAT_FROM.items():
    FIT_K_SAT[_a] = round(FITTED_K_SAT[_f] * _per_sm(_a) / _per_sm(_f))
FIT_K_SAT.update({"cdna2": 128, "cdna3": 128})
FIT_WHY = ("k_sat FITTED per architecture by geotrain validate --fit on the role=fit rows "
           "(Megatron-LM / NeMo sources KOR NAR MEG20 NEMO2407 NEMOL: volta 256; ampere 768; "
           "hopper 2560; refitted with the fused-attention and fp8-GEMM measurements); "
           "architectures without fitting rows take the per-tile overhead time of the nearest "
           "fitted architecture of their vendor (k_sat x per-SM GEMM rate ratio of the reference "
           "parts: turing %d from volta, ada %d from ampere, blackwell %d from hopper); AMD "
           "(no fitted architecture) keeps the prior 128 (two K-steps of a 64-deep pipelined "
           "mainloop); see docs/validation.md"
           % (FIT_K_SAT["turing"], FIT_K_SAT["ada"], FIT_K_SAT["blackwell"]))

# Fused causal attention: fraction of the 16-bit dense peak at s = 8192, d = 128 (FLOPs
# counted as the FlashAttention benchmarks count them: causal = half of 4 s^2 d per head
# forward, 2.5x backward), forward / backward, for the architecture's default fused kernel
# (attn_*) and FlashAttention-2 (fa2_*; empty = the default kernel). sim/models/flash_attn.c
# scales them to other shapes. Architectures not listed keep the GEMM-based estimate.
_FA2_PAPER = ("Dao 'FlashAttention-2' arXiv:2307.08691 (Sec. 4.1 and abstract: up to 73 % of "
              "the A100 peak forward and 63 % backward; FA2 is the fused kernel on Ampere, "
              "FlashAttention-3 is Hopper-only)")
_H100_FA = ("measured on H100 by flash-attention's benchmark_attn.py, causal d=128 s=8192 "
            "(Dao-AILab/flash-attention pull request 1791, main branch): FlashAttention-3 "
            "forward 630.0 / backward 531.6 TFLOP/s, FlashAttention-2 284.1 / 287.1 TFLOP/s, "
            "of 989.4; the default fused kernel on Hopper (cuDNN via Transformer Engine, "
            "FlashAttention-3) is taken at the FA3 figures")
ATTN = {
    "ampere": (0.73, 0.63, 0.73, 0.63, "attention: " + _FA2_PAPER),
    "hopper": (0.637, 0.537, 0.287, 0.29, "attention: " + _H100_FA),
    "blackwell": (0.63, 0.497, None, None,
                  "attention: measured on B200 by flash-attention's benchmark (FlashAttention-4 "
                  "CuTe kernels, causal d=128 s=8192, 1-CTA backward; Dao-AILab/"
                  "flash-attention pull request 2280): forward 1418.1 / backward 1117.9 "
                  "TFLOP/s of 2250; no FlashAttention-2 figure (the default kernel is used)"),
}
ATTN_SAME = ("the same fractions of this part's own peak are ASSUMED as for the measured part "
             "of its architecture")
ATTN_MEASURED_ON = {"hopper": ("h100_sxm",), "ampere": ("a100_sxm_80gb", "a100_sxm_40gb"),
                    "blackwell": ("b200",)}

# fp8 GEMMs: measured large-GEMM share of the fp8 dense peak, where a public measurement
# exists (empty = gemm_eff).
GEMM_FP8 = {
    "hopper": (0.709, "fp8 GEMMs: measured 1404 TFLOP/s of 1978.9 = 70.9 % on an H800 SXM (the "
                      "H100 SXM compute die) for a 4096 x 7168 x 16384 FP8 GEMM with 128 x 128 "
                      "block tiles (deepseek-ai/DeepGEMM pull request 73, base column)"),
}

MEM_EFF_HBM = (0.85, "mem_eff ASSUMED 0.85: stream benchmarks (BabelStream) reach 80-90 % of "
                     "peak HBM bandwidth on V100/A100/H100; the middle is used")
MEM_EFF_GDDR = (0.80, "mem_eff ASSUMED 0.80: GDDR parts reach a little less of their peak in "
                      "stream benchmarks than HBM parts")
KERNEL_US = (4.0, "kernel_us ASSUMED 4 us per kernel: CUDA launch latency of a few us plus the "
                  "ramp-up/tail of a kernel as seen in Nsight traces of Megatron-LM layers")
NVLINK = (1.0, 0.78, "NVLink ring: link_lat_us ASSUMED 1 us per ring step (NCCL small-message "
                     "all-reduce on 8 NVSwitch GPUs takes ~10-20 us over 14 steps); link_eff "
                     "ASSUMED 0.78 (nccl-tests all-reduce bus bandwidth ~230 GB/s of 300 GB/s "
                     "per direction on DGX A100)")
PCIE = (3.0, 0.80, "PCIe ring: link_lat_us ASSUMED 3 us per step (PCIe switch + host "
                   "round trips); link_eff ASSUMED 0.80 of the x16 rate")
XGMI = (1.5, 0.70, "Infinity Fabric ring: link_lat_us ASSUMED 1.5 us; link_eff ASSUMED 0.70 "
                   "(RCCL all-reduce bus bandwidth is a smaller share of the link than NCCL's)")

# id: (arch, sms, fp8 dense TFLOPS (0 = none), gemm_eff, gemm source, memory kind, link kind,
#      datasheet source of sms and fp8)
KERNEL = {
    "h100_sxm": ("hopper", 132, 1978.9, 0.801, MAMF + ": H100 SXM 792.1 of 989 = 80.1 %",
                 "hbm", "nvlink", "NVIDIA H100 datasheet / Hopper whitepaper: 132 SMs (SXM5); "
                 "FP8 3958 sparse = 1978.9 dense"),
    "h100_pcie": ("hopper", 114, 1513.0, 0.801,
                  "ASSUMED equal to H100 SXM (" + MAMF + ": 80.1 %); no PCIe H100 measurement",
                  "hbm", "pcie", "NVIDIA H100 PCIe product brief: 114 SMs; FP8 3026 sparse = "
                  "1513 dense"),
    "h200_sxm": ("hopper", 132, 1978.9, 0.803, MAMF + ": H100/H200 SXM 794.5 of 989 = 80.3 %",
                 "hbm", "nvlink", "NVIDIA H200 datasheet: same GH100 die as H100 SXM (132 "
                 "SMs); FP8 3958 sparse = 1978.9 dense"),
    "h100_nvl": ("hopper", 132, 1670.5, 0.801,
                 "ASSUMED equal to H100 SXM (" + MAMF + ": 80.1 %)", "hbm", "pcie",
                 "NVIDIA H100 NVL product brief: 132 SMs; FP8 3341 sparse = 1670.5 dense"),
    "gh200": ("hopper", 132, 1978.9, 0.830, MAMF + ": GH200 SXM 821.0 of 989 = 83.0 %",
              "hbm", "nvlink", "NVIDIA GH200 Grace Hopper Superchip datasheet: H100 GPU with "
              "132 SMs; FP8 3958 sparse = 1978.9 dense"),
    "a100_sxm_80gb": ("ampere", 108, 0, 0.859, MAMF + ": A100 SXM 267.9 of 312 = 85.9 %",
                      "hbm", "nvlink", "NVIDIA A100 datasheet / Ampere GA100 whitepaper: 108 "
                      "SMs; no FP8"),
    "a100_sxm_40gb": ("ampere", 108, 0, 0.859, MAMF + ": A100 SXM 267.9 of 312 = 85.9 %",
                      "hbm", "nvlink", "NVIDIA A100 datasheet: 108 SMs; no FP8"),
    "a100_pcie_40gb": ("ampere", 108, 0, 0.822, MAMF + ": A100 PCIe 256.4 of 312 = 82.2 %",
                       "hbm", "pcie", "NVIDIA A100 datasheet: 108 SMs; no FP8"),
    "a100_pcie_80gb": ("ampere", 108, 0, 0.822, MAMF + ": A100 PCIe 256.4 of 312 = 82.2 %",
                       "hbm", "pcie", "NVIDIA A100 datasheet: 108 SMs; no FP8"),
    "a10": ("ampere", 72, 0, 0.80, "ASSUMED 0.80 (lower end of the measured NVIDIA parts in "
            + MAMF + ")", "gddr", "pcie", "NVIDIA A10 datasheet / GA102 whitepaper: 72 SMs"),
    "a40": ("ampere", 84, 0, 0.80, "ASSUMED 0.80 (lower end of the measured NVIDIA parts in "
            + MAMF + ")", "gddr", "pcie", "NVIDIA A40 datasheet / GA102 whitepaper: 84 SMs"),
    "l4": ("ada", 58, 242.5, 0.80, "ASSUMED 0.80 (lower end of the measured NVIDIA parts in "
           + MAMF + ")", "gddr", "pcie", "NVIDIA L4 datasheet: 58 SMs; FP8 485 sparse = "
           "242.5 dense"),
    "l40s": ("ada", 142, 733.0, 0.80, "ASSUMED 0.80 (lower end of the measured NVIDIA parts in "
             + MAMF + ")", "gddr", "pcie", "NVIDIA L40S datasheet: 142 SMs; FP8 1466 sparse = "
             "733 dense"),
    "v100_sxm2_32gb": ("volta", 80, 0, 0.80, "ASSUMED 0.80 (lower end of the measured NVIDIA "
                       "parts in " + MAMF + "; no V100 row)", "hbm", "nvlink",
                       "NVIDIA Tesla V100 datasheet / Volta whitepaper: 80 SMs; no FP8/TF32"),
    "v100_sxm2_16gb": ("volta", 80, 0, 0.80, "ASSUMED 0.80 as v100_sxm2_32gb", "hbm", "nvlink",
                       "NVIDIA Tesla V100 datasheet: 80 SMs; no FP8/TF32"),
    "v100_pcie_16gb": ("volta", 80, 0, 0.80, "ASSUMED 0.80 as v100_sxm2_32gb", "hbm", "pcie",
                       "NVIDIA Tesla V100 datasheet: 80 SMs; no FP8/TF32"),
    "t4": ("turing", 40, 0, 0.70, "ASSUMED 0.70: the 70 W board limit throttles clocks under "
           "sustained tensor load (below the measured NVIDIA parts in " + MAMF + ")", "gddr",
           "pcie", "NVIDIA T4 datasheet / Turing whitepaper: 40 SMs; no FP8/TF32"),
    "rtx_4090": ("ada", 128, 330.3, 0.80, "ASSUMED 0.80 (lower end of the measured NVIDIA parts "
                 "in " + MAMF + ")", "gddr", "pcie", "NVIDIA Ada whitepaper (RTX 4090): 128 "
                 "SMs; FP8 with FP32 accumulate 330.3 dense"),
    "rtx_3090": ("ampere", 82, 0, 0.80, "ASSUMED 0.80 (lower end of the measured NVIDIA parts "
                 "in " + MAMF + ")", "gddr", "pcie", "NVIDIA GA102 whitepaper: 82 SMs"),
    "rtx_a6000": ("ampere", 84, 0, 0.80, "ASSUMED 0.80 (lower end of the measured NVIDIA parts "
                  "in " + MAMF + ")", "gddr", "pcie", "NVIDIA RTX A6000 datasheet: 84 SMs"),
    "mi250x": ("cdna2", 220, 0, 0.767, MAMF + ": MI250X 147.0 of 191.5 per GCD = 76.7 %",
               "hbm", "xgmi", "AMD Instinct MI250X datasheet: 220 CUs (2 GCDs); no FP8"),
    "mi300x": ("cdna3", 304, 2614.9, 0.601, MAMF + ": MI300X 781.9 of 1300 = 60.1 %",
               "hbm", "xgmi", "AMD Instinct MI300X datasheet: 304 CUs; FP8 2614.9 dense"),
    "h100_sxm_96gb": ("hopper", 132, 1978.9, 0.801, "ASSUMED equal to the H100 SXM (same GH100 "
                      "SXM5 compute die; " + MAMF + ": 80.1 %)", "hbm", "nvlink",
                      "SMs and FP8 as the H100 SXM datasheet (132 SMs; FP8 3958 sparse = "
                      "1978.9 dense): the same SXM5 part with HBM2e"),
    "b200": ("blackwell", 148, 4500.0, 0.776, MAMF + " (Blackwell section): B200 SXM 1745.0 "
             "of 2250 = 77.6 %", "hbm", "nvlink", "NVIDIA HGX B200 datasheet (per GPU = HGX "
             "figure / 8): FP8 9 PF sparse = 4.5 PF dense; 148 SMs (Blackwell whitepaper)"),
    "gb200": ("blackwell", 148, 5000.0, 0.776, "ASSUMED equal to B200 (" + MAMF + ": 77.6 %)",
              "hbm", "nvlink", "NVIDIA GB200 NVL72 datasheet (rack figures / 72 GPUs): FP8 "
              "720 PF sparse = 5 PF dense per GPU; SMs ASSUMED as B200 (148)"),
    "gb300": ("blackwell", 160, 5000.0, 0.776, "ASSUMED equal to B200 (" + MAMF + ": 77.6 %)",
              "hbm", "nvlink", "NVIDIA GB300 NVL72 datasheet (rack figures / 72): FP8 5 PF "
              "dense per GPU; Blackwell Ultra 160 SMs (NVIDIA Blackwell Ultra technical blog)"),
}

# GPU types the shared table lacks, in the shared table's columns (datasheet values;
# idle by the 'ratio' rule of derive_catalogs.py).
_COMMON = {"vendor": "NVIDIA", "idle_power_w": "", "idle_power_observed": "", "notes": "",
           "fp16_fp16acc_tensor_dense_tflops": ""}
EXTRA_GPUS = [
    dict(_COMMON, gpu_id="h100_nvl", model="H100 NVL 94GB", form_factor="PCIe dual-slot",
         architecture="Hopper", release_year="2023", memory_gib="94", memory_type="HBM3",
         mem_bw_gbs="3900", bf16_tensor_dense_tflops="835", fp16_tensor_dense_tflops="835",
         tf32_tensor_dense_tflops="417.5", fp32_tflops="60", tdp_w="400",
         intra_node_link="NVLink bridge (pairs of cards)", gpu_gpu_bw_gbs_bidir="600",
         pcie_gen="Gen5 x16", host_link_gbs_bidir="128",
         source="NVIDIA H100 NVL product brief (BF16 1671 sparse = 835 dense; 94 GB HBM3; "
                "3.9 TB/s; 350-400 W; NVLink bridge 600 GB/s)"),
    dict(_COMMON, gpu_id="gh200", model="GH200 Grace Hopper 96GB", form_factor="superchip",
         architecture="Hopper", release_year="2023", memory_gib="96", memory_type="HBM3",
         mem_bw_gbs="4000", bf16_tensor_dense_tflops="989.4", fp16_tensor_dense_tflops="989.4",
         tf32_tensor_dense_tflops="494.7", fp32_tflops="67", tdp_w="700",
         intra_node_link="NVLink 4 via NVLink Switch", gpu_gpu_bw_gbs_bidir="900",
         pcie_gen="Gen5 x16", host_link_gbs_bidir="128",
         source="NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3; 4 TB/s; BF16 1979 "
                "sparse = 989.4 dense; NVLink 900 GB/s); module power 450-1000 W configurable "
                "incl. the Grace CPU: tdp_w ESTIMATE 700 W = the H100 SXM GPU share"),
    dict(_COMMON, gpu_id="h100_sxm_96gb", model="H100 SXM 96GB HBM2e (Grand Teton)",
         form_factor="SXM5", architecture="Hopper", release_year="2023", memory_gib="96",
         memory_type="HBM2e", mem_bw_gbs="2400", bf16_tensor_dense_tflops="989.4",
         fp16_tensor_dense_tflops="989.4", tf32_tensor_dense_tflops="494.7", fp32_tflops="67",
         tdp_w="700", intra_node_link="NVLink 4 (8 GPUs fully connected)",
         gpu_gpu_bw_gbs_bidir="900", pcie_gen="Gen5 x16", host_link_gbs_bidir="128",
         source="pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md (Hardware: "
                "H100 with 96GB HBM2e at 2.4 TB/s peak, 8 per host over NVLink, default 500 W "
                "power limit, 700 W TDP; footnote: HBM2e-based SXM H100, peak between SXM and "
                "NVL); BF16 / TF32 / FP32 peaks ASSUMED the H100 SXM datasheet's (same die: "
                "the 500 W limit is a setting, replayed as a clock: validation power_limit_w)"),
    dict(_COMMON, gpu_id="b200", model="B200 180GB (HGX B200)", form_factor="SXM6",
         architecture="Blackwell", release_year="2024", memory_gib="180", memory_type="HBM3e",
         mem_bw_gbs="8000", bf16_tensor_dense_tflops="2250", fp16_tensor_dense_tflops="2250",
         tf32_tensor_dense_tflops="1125", fp32_tflops="75", tdp_w="1000",
         intra_node_link="NVLink 5 via NVSwitch (HGX)", gpu_gpu_bw_gbs_bidir="1800",
         pcie_gen="Gen5 x16", host_link_gbs_bidir="128",
         source="NVIDIA HGX B200 datasheet, per GPU = HGX-8 figure / 8 (1440 GB HBM3e; 64 TB/s; "
                "FP16/BF16 36 PF sparse; TF32 18 PF sparse; FP32 600 TF; NVLink 5 1.8 TB/s "
                "per GPU); 1000 W per GPU"),
    dict(_COMMON, gpu_id="gb200", model="GB200 Blackwell GPU (NVL72)", form_factor="superchip",
         architecture="Blackwell", release_year="2024", memory_gib="186", memory_type="HBM3e",
         mem_bw_gbs="8000", bf16_tensor_dense_tflops="2500", fp16_tensor_dense_tflops="2500",
         tf32_tensor_dense_tflops="1250", fp32_tflops="80", tdp_w="1200",
         intra_node_link="NVLink 5 via NVLink Switch (NVL72)", gpu_gpu_bw_gbs_bidir="1800",
         pcie_gen="Gen6 x16", host_link_gbs_bidir="256",
         source="NVIDIA GB200 NVL72 datasheet, per GPU = rack figure / 72 (13.4 TB HBM3e; "
                "576 TB/s; FP16/BF16 360 PF sparse; TF32 180 PF sparse; FP32 5760 TF; NVLink "
                "130 TB/s); tdp_w ESTIMATE 1200 W per GPU (reported GB200 GPU power)"),
    dict(_COMMON, gpu_id="gb300", model="GB300 Blackwell Ultra GPU (NVL72)",
         form_factor="superchip", architecture="Blackwell", release_year="2025",
         memory_gib="279", memory_type="HBM3e", mem_bw_gbs="8000",
         bf16_tensor_dense_tflops="2500", fp16_tensor_dense_tflops="2500",
         tf32_tensor_dense_tflops="1250", fp32_tflops="80", tdp_w="1400",
         intra_node_link="NVLink 5 via NVLink Switch (NVL72)", gpu_gpu_bw_gbs_bidir="1800",
         pcie_gen="Gen6 x16", host_link_gbs_bidir="256",
         source="NVIDIA GB300 NVL72 datasheet, per GPU = rack figure / 72 (up to 20 TB HBM3e "
                "= 279 GB; 576 TB/s; FP16/BF16 dense as GB200); tdp_w ESTIMATE 1400 W per GPU "
                "(reported Blackwell Ultra GPU power)"),
]
EXTRA_IDLE_RULE = {g["gpu_id"]: ("ratio", None) for g in EXTRA_GPUS}
EXTRA_EFFICIENCY_WHY = ("fallback efficiency only (the kernel model is used for this type): "
                        "ASSUMED 0.40 like the Llama 3 H100 MFU range")


def kernel_cols(g, fmt, num):
    """The kernel-model columns of one shared-format GPU row (strings)."""
    gid = g["gpu_id"]
    arch, sms, fp8, geff, gwhy, memk, linkk, dsw = KERNEL[gid]
    tf32 = num(g["tf32_tensor_dense_tflops"]) or 0.0
    fp32 = float(g["fp32_tflops"])
    meff, mwhy = MEM_EFF_HBM if memk == "hbm" else MEM_EFF_GDDR
    lat, leff, lwhy = {"nvlink": NVLINK, "pcie": PCIE, "xgmi": XGMI}[linkk]
    # a PCIe-class catalog link (no NVSwitch) uses the PCIe figures whatever the bridge
    kus, kwhy = KERNEL_US
    parts = [dsw, "tf32/fp32 from the shared row (datasheet)", gwhy, mwhy, kwhy, lwhy, FIT_WHY]
    attn = ["", "", "", ""]
    if arch in ATTN:
        af, ab, ff, fb, awhy = ATTN[arch]
        attn = [fmt(af), fmt(ab), fmt(ff) if ff else "", fmt(fb) if fb else ""]
        on = ATTN_MEASURED_ON[arch]
        parts.append(awhy if gid in on else awhy + "; " + ATTN_SAME)
    fp8eff = ""
    if arch in GEMM_FP8 and fp8:
        fp8eff = fmt(GEMM_FP8[arch][0])
        parts.append(GEMM_FP8[arch][1] + ("" if gid == "h100_sxm" else "; " + ATTN_SAME))
    return [arch, str(sms), fmt(fp8), fmt(tf32), fmt(fp32), fmt(geff), fmt(meff), fmt(kus),
            fmt(lat), fmt(leff), fmt(FIT_K_SAT[arch])] + attn + [fp8eff, "; ".join(parts)]
