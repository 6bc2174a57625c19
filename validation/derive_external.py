#!/usr/bin/env python3
"""derive_external.py — writes validation/external_runs.csv: published measured
throughput of training runs that are NOT in validation/runs.csv (other
sources), in runs.csv's format with role=ext, replayed by
`geotrain validate --external` and never used for fitting (docs/validation.md,
"External checks").

Every figure below is transcribed by hand from the file named in its source
(repository, path, commit, table). torchtitan logs tokens per second per GPU
as local tokens / (step time x TP x PP degree) (torchtitan train.py at the
benchmarks' commits), so the iteration time is
    micro_batch x seq / (tps_per_gpu x tp x pp).
Usage: validation/derive_external.py [-o FILE] (default: next to this script).
"""
import argparse
import csv
import os

HEAD = ("id,source,gpu,n_gpus,node_gpus,nic_gbps,model,layers,hidden,heads,kv_heads,ffn,"
        "vocab,seq,gated_mlp,bias,learned_pos,micro_batch,global_batch,tp,pp,dp,vp,schedule,"
        "dp_shard,grad_sync,grad_bucket_mb,grad_dtype,tp_comm_overlap,recompute,"
        "sequence_parallel,precision,attention,metric,value,measured_iteration_s,role,skip,"
        "assumptions,power_limit_w,eager").split(",")

# Llama shapes from the models' published configs (layers, hidden, heads,
# kv heads, ffn, vocab).
MODELS = {
    "Llama 3.1 8B": (32, 4096, 32, 8, 14336, 128256),
    "Llama 3.1 70B": (80, 8192, 64, 8, 28672, 128256),
    "Llama 3.1 405B": (126, 16384, 128, 8, 53248, 128256),
    "Llama 2 13B": (40, 5120, 40, 40, 13824, 32000),
    "Llama 2 70B": (80, 8192, 64, 8, 28672, 32000),
}

TT = "pytorch/torchtitan "
DEC24 = TT + "benchmarks/llama3_h100_202412_torchtitan.md @820504e20d1149fbf0b98c567af24c4b0433b22d"
ATP = TT + "benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md @2887250bbd9103d0bc997ea2efb3a525b5e5dbc0"
A100 = TT + "docs/performance.md @4d88a8a44fe439f73f564b83d60b29a906ef3507 (2024-12-03)"
L2 = TT + "docs/performance.md @041336434916bdc0f88c1f89fda176fd3c2092e4"
H200 = (TT + "benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md "
        "@4a61bd87d3c7e92bcfeb5d5464d9e6bd13ef440a")

GT = ("H100 of Grand Teton: 96GB HBM2e (2.4 TB/s) at the default 500 W power limit (the "
      "source's Hardware section), replayed as the catalog's h100_sxm_96gb with power_limit_w "
      "500 (GEMMs at the clock the limit holds); 400 Gb/s per GPU")
# The Grand Teton H100 rows: the part and the power limit their sources state.
GT_GPU, GT_LIMIT_W = "h100_sxm_96gb", 500
FSDP = "FSDP2: one block per bucket, overlapped, fp32 reduce"
COMPILE = "torch.compile (elementwise ops priced as fused kernels)"
SAC_OP = ("selective op AC: recompute ops (torchtitan _custom_policy: every second mm "
          "and the pointwise ops redone in backward; attention output kept)")

# Rows run without torch.compile, and how their RMSNorm ran, from the training
# config of the run's own torchtitan commit (train_configs/*.toml: compile,
# norm_type): "ops" = eager ops with the fused Triton RMSNorm (norm_type
# fused_rmsnorm), "ops+norm" = eager RMSNorm too (norm_type rmsnorm). The
# Dec-2024 FSDP rows: 9dec370 (the page's "Versions"), llama3_8b.toml compile
# false, rmsnorm. The A100 rows: their figures are first published at
# 04133643 (Apr 2024; the Llama 3 table is unchanged at 4d88a8a4), whose
# configs say compile false, fused_rmsnorm for llama3_8b and llama2_13b,
# rmsnorm for llama3_70b and llama2_70b. Rows not listed ran compiled (their
# table says torch.compile) or are left fused: the 405B rows (4d88a8a4's
# llama3_405b.toml sets compile true; the table's "None" row does not say).
EAGER = {
    "TTX-T1-fsdp": "ops+norm", "TTX-T3-fsdp": "ops+norm",
    "TTX-A100-8b-op": "ops", "TTX-A100-70b-full": "ops+norm",
    "TTX-A100-l2-13b-none": "ops", "TTX-A100-l2-13b-op": "ops",
    "TTX-A100-l2-70b-op": "ops+norm", "TTX-A100-l2-70b-full": "ops+norm",
}
EAGER_NOTE = {"ops": "eager PyTorch ops, fused RMSNorm (compile false, fused_rmsnorm)",
              "ops+norm": "eager PyTorch ops and RMSNorm (compile false, rmsnorm)"}

# id, source + table row, gpu, n_gpus, nic per node, model, seq, micro_batch,
# tp, pp, dp, recompute, precision, tp_comm_overlap, tps_per_gpu, skip, notes
ROWS = [
    ("TTX-T1-fsdp", DEC24 + " Table 1 row FSDP", "h100_sxm", 8, 3200, "Llama 3.1 8B", 8192, 2,
     1, 1, 8, "selective", "bf16", 0, 5762, "", [GT, FSDP, SAC_OP]),
    ("TTX-T1-compile", DEC24 + " Table 1 row FSDP + torch.compile", "h100_sxm", 8, 3200,
     "Llama 3.1 8B", 8192, 2, 1, 1, 8, "selective", "bf16", 0, 6667, "", [GT, FSDP, SAC_OP, COMPILE]),
    ("TTX-T1-compile-fp8", DEC24 + " Table 1 row FSDP + torch.compile + Float8", "h100_sxm", 8,
     3200, "Llama 3.1 8B", 8192, 2, 1, 1, 8, "selective", "fp8", 0, 8532, "",
     [GT, FSDP, SAC_OP, COMPILE]),
    ("TTX-T2-cp1", DEC24 + " Table 2 row FSDP 8 CP 1", "h100_sxm", 8, 3200, "Llama 3.1 8B",
     32768, 1, 1, 1, 8, "full", "fp8", 0, 3890, "", [GT, FSDP, COMPILE]),
    ("TTX-T3-fsdp", DEC24 + " Table 3 row FSDP", "h100_sxm", 128, 3200, "Llama 3.1 8B", 8192, 2,
     1, 1, 128, "selective", "bf16", 0, 5605, "", [GT, FSDP, SAC_OP]),
    ("TTX-T3-compile", DEC24 + " Table 3 row FSDP + torch.compile", "h100_sxm", 128, 3200,
     "Llama 3.1 8B", 8192, 2, 1, 1, 128, "selective", "bf16", 0, 6514, "",
     [GT, FSDP, SAC_OP, COMPILE]),
    ("TTX-T3-compile-fp8", DEC24 + " Table 3 row FSDP + torch.compile + Float8", "h100_sxm",
     128, 3200, "Llama 3.1 8B", 8192, 2, 1, 1, 128, "selective", "fp8", 0, 8380, "",
     [GT, FSDP, SAC_OP, COMPILE]),
    ("TTX-T4-2d", DEC24 + " Table 4 row 2D", "h100_sxm", 256, 3200, "Llama 3.1 70B", 8192, 16,
     8, 1, 32, "full", "fp8", 0, 829, "", [GT, FSDP, COMPILE, "TP with sequence parallel"]),
    ("TTX-T4-2d-async", DEC24 + " Table 4 row 2D + AsyncTP", "h100_sxm", 256, 3200,
     "Llama 3.1 70B", 8192, 16, 8, 1, 32, "full", "fp8", 1, 876, "",
     [GT, FSDP, COMPILE, "async TP replayed as TP communication overlap"]),
    ("TTX-T5-1f1b", DEC24 + " Table 5 row 1F1B", "h100_sxm", 512, 3200, "Llama 3.1 405B", 8192,
     4, 8, 8, 8, "full", "fp8", 1, 100,
     "126 layers do not split evenly over 8 stages (torchtitan's split is not stated)", [GT]),
    ("TTX-ATP-70b-bf16", ATP + " table Llama3 70b row None (bfloat16), Vanilla TP", "h100_sxm",
     256, 3200, "Llama 3.1 70B", 8192, 16, 8, 1, 32, "full", "bf16", 0, 597.3, "",
     [GT, FSDP, COMPILE, "TP with sequence parallel"]),
    ("TTX-ATP-70b-bf16-async", ATP + " table Llama3 70b row None (bfloat16), Async TP",
     "h100_sxm", 256, 3200, "Llama 3.1 70B", 8192, 16, 8, 1, 32, "full", "bf16", 1, 652.4, "",
     [GT, FSDP, COMPILE, "async TP replayed as TP communication overlap"]),
    ("TTX-ATP-70b-fp8", ATP + " table Llama3 70b row float8 tensorwise, Vanilla TP", "h100_sxm",
     256, 3200, "Llama 3.1 70B", 8192, 16, 8, 1, 32, "full", "fp8", 0, 809.8, "",
     [GT, FSDP, COMPILE]),
    ("TTX-ATP-70b-fp8-async", ATP + " table Llama3 70b row float8 tensorwise, Async TP",
     "h100_sxm", 256, 3200, "Llama 3.1 70B", 8192, 16, 8, 1, 32, "full", "fp8", 1, 942.4, "",
     [GT, FSDP, COMPILE, "async TP replayed as TP communication overlap"]),
    ("TTX-ATP-70b-fp8row", ATP + " table Llama3 70b row float8 rowwise, Vanilla TP", "h100_sxm",
     256, 3200, "Llama 3.1 70B", 8192, 16, 8, 1, 32, "full", "fp8", 0, 599.6,
     "float8 rowwise scaling: the source flags this baseline as a known performance bug", [GT]),
    ("TTX-ATP-8b-bf16", ATP + " table Llama3 8b row None (bfloat16), Vanilla TP", "h100_sxm", 64,
     3200, "Llama 3.1 8B", 8192, 12, 8, 1, 8, "selective", "bf16", 0, 4378, "",
     [GT, FSDP, COMPILE, SAC_OP]),
    ("TTX-ATP-8b-bf16-async", ATP + " table Llama3 8b row None (bfloat16), Async TP", "h100_sxm",
     64, 3200, "Llama 3.1 8B", 8192, 12, 8, 1, 8, "selective", "bf16", 1, 4809.4, "",
     [GT, FSDP, COMPILE, SAC_OP, "async TP replayed as TP communication overlap"]),
    ("TTX-ATP-8b-fp8", ATP + " table Llama3 8b row float8 tensorwise, Vanilla TP", "h100_sxm",
     64, 3200, "Llama 3.1 8B", 8192, 12, 8, 1, 8, "selective", "fp8", 0, 5078.1, "",
     [GT, FSDP, COMPILE, SAC_OP]),
    ("TTX-ATP-8b-fp8-async", ATP + " table Llama3 8b row float8 tensorwise, Async TP",
     "h100_sxm", 64, 3200, "Llama 3.1 8B", 8192, 12, 8, 1, 8, "selective", "fp8", 1, 5570.1, "",
     [GT, FSDP, COMPILE, SAC_OP, "async TP replayed as TP communication overlap"]),
    ("TTX-405B-2d", A100 + " Llama 3.1 table row 405B None", "h100_sxm", 128, 3200,
     "Llama 3.1 405B", 8192, 2, 8, 1, 16, "full", "bf16", 0, 109, "",
     [GT, FSDP, "TP with sequence parallel"]),
    ("TTX-405B-2d-fp8", A100 + " Llama 3.1 table row 405B Float8", "h100_sxm", 128, 3200,
     "Llama 3.1 405B", 8192, 2, 8, 1, 16, "full", "fp8", 0, 177, "", [GT, FSDP]),
    ("TTX-405B-2d-fp8-async", A100 + " Llama 3.1 table row 405B Float8 + Async TP", "h100_sxm",
     128, 3200, "Llama 3.1 405B", 8192, 2, 8, 1, 16, "full", "fp8", 1, 185, "",
     [GT, FSDP, "async TP replayed as TP communication overlap"]),
    ("TTX-A100-8b-layer", A100 + " Llama 3 table row 8B selective layer", "a100_sxm_80gb", 64,
     1600, "Llama 3.1 8B", 8192, 1, 1, 1, 64, "selective", "bf16", 0, 2904,
     "selective layer AC (every second block fully recomputed) is not a recompute option", []),
    ("TTX-A100-8b-op", A100 + " Llama 3 table row 8B selective op", "a100_sxm_80gb", 64, 1600,
     "Llama 3.1 8B", 8192, 1, 1, 1, 64, "selective", "bf16", 0, 2973, "",
     [FSDP, SAC_OP, "NIC ASSUMED 8 x 200 Gb/s per node (not stated)"]),
    ("TTX-A100-70b-full", A100 + " Llama 3 table row 70B full", "a100_sxm_80gb", 64, 1600,
     "Llama 3.1 70B", 8192, 1, 1, 1, 64, "full", "bf16", 0, 331, "",
     [FSDP, "NIC ASSUMED 8 x 200 Gb/s per node (not stated)"]),
    ("TTX-A100-l2-13b-none", L2 + " Llama 2 table row 13B 2 no", "a100_sxm_80gb", 64, 1600,
     "Llama 2 13B", 4096, 2, 1, 1, 64, "none", "bf16", 0, 2162, "",
     [FSDP, "NIC ASSUMED 8 x 200 Gb/s per node (not stated)"]),
    ("TTX-A100-l2-13b-op", L2 + " Llama 2 table row 13B 2 selective op", "a100_sxm_80gb", 64,
     1600, "Llama 2 13B", 4096, 2, 1, 1, 64, "selective", "bf16", 0, 1904, "",
     [FSDP, SAC_OP, "NIC ASSUMED 8 x 200 Gb/s per node (not stated)"]),
    ("TTX-A100-l2-70b-op", L2 + " Llama 2 table row 70B 1 selective op", "a100_sxm_80gb", 64,
     1600, "Llama 2 70B", 4096, 1, 1, 1, 64, "selective", "bf16", 0, 355, "",
     [FSDP, SAC_OP, "NIC ASSUMED 8 x 200 Gb/s per node (not stated)"]),
    ("TTX-A100-l2-70b-full", L2 + " Llama 2 table row 70B 2 full", "a100_sxm_80gb", 64, 1600,
     "Llama 2 70B", 4096, 2, 1, 1, 64, "full", "bf16", 0, 353, "",
     [FSDP, "NIC ASSUMED 8 x 200 Gb/s per node (not stated)"]),
    ("TTX-H200-4n", H200 + " Results row NUM_NODES 4", "h200_sxm", 32, 3200, "Llama 3.1 8B",
     8192, 2, 1, 1, 32, "selective", "fp8", 0, 10938, "",
     [FSDP, SAC_OP, COMPILE, "400 Gb/s per GPU (CX-7)"]),
    ("TTX-H200-8n", H200 + " Results row NUM_NODES 8", "h200_sxm", 64, 3200, "Llama 3.1 8B",
     8192, 2, 1, 1, 64, "selective", "fp8", 0, 10753, "",
     [FSDP, SAC_OP, COMPILE, "400 Gb/s per GPU (CX-7)"]),
]


def row(r):
    (rid, src, gpu, n, nic, model, seq, mb, tp, pp, dp, rc, prec, tpo, tps, skip, notes) = r
    L, h, a, kv, f, v = MODELS[model]
    if SAC_OP in notes:
        rc = "ops"
    eager = EAGER.get(rid, "")
    if eager:
        assert COMPILE not in notes
        notes = notes + [EAGER_NOTE[eager]]
    it = mb * seq / (tps * tp * pp)
    limit = ""
    if GT in notes:
        assert gpu == "h100_sxm"
        gpu, limit = GT_GPU, GT_LIMIT_W
    return {
        "id": rid, "source": src, "gpu": gpu, "n_gpus": n, "node_gpus": 8, "nic_gbps": nic,
        "model": model, "layers": L, "hidden": h, "heads": a, "kv_heads": kv, "ffn": f,
        "vocab": v, "seq": seq, "gated_mlp": 1, "bias": 0, "learned_pos": 0,
        "micro_batch": mb, "global_batch": mb * dp, "tp": tp, "pp": pp, "dp": dp, "vp": 1,
        "schedule": "1f1b", "dp_shard": "fsdp", "grad_sync": "overlap", "grad_bucket_mb": 1,
        "grad_dtype": "fp32", "tp_comm_overlap": tpo, "recompute": rc,
        "sequence_parallel": 1 if tp > 1 else 0, "precision": prec, "attention": "fused",
        "metric": "tokens_per_s_per_gpu", "value": tps, "measured_iteration_s": "%.6g" % it,
        "role": "ext", "skip": skip, "assumptions": "; ".join(notes), "power_limit_w": limit,
        "eager": eager,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", default=os.path.join(os.path.dirname(__file__), "external_runs.csv"))
    args = ap.parse_args()
    with open(args.o, "w", newline="") as fp:
        w = csv.DictWriter(fp, fieldnames=HEAD, lineterminator="\n")
        w.writeheader()
        for r in ROWS:
            w.writerow(row(r))


if __name__ == "__main__":
    main()
