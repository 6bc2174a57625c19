#!/usr/bin/env python3
"""derive_validation.py - build validation/runs.csv, the project's validation set.

Input:  validation/measured_runs.csv of the reference-data folder (docs/data-sources.md;
        593 published measured training runs, one metric each, with the public source of
        every row), given with --data DIR or GEOTRAIN_REFDATA.
Output: validation/runs.csv (docs/validation.md): one row per input row, in the project's
        format: the catalog GPU id, the parallel layout (tp, pp, dp, virtual stages,
        microbatch, global batch, schedule, recompute, sequence parallelism, precision,
        attention kernel), the data-parallel options the source's framework ran (dp_shard,
        grad_sync, grad_bucket_mb, grad_dtype, tp_comm_overlap: dp_options below), the node shape and NIC rate the topology needs, the measured value
        and the measured iteration time it implies (formula per source), the role of the row
        (fit / holdout) and, for rows `geotrain validate` cannot represent, the reason. The
        original public source of each row is kept in `source`.

`geotrain validate` builds each row's topology (one site of nodes with node_gpus GPUs and
the NIC rate below) and plan (Megatron rank order: TP innermost, then DP, then PP; layers
split evenly) in memory from these columns.

Python 3 standard library only; deterministic output.
"""
import argparse
import csv
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "topologies", "derive"))
import public_sources  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HEADER = ["id", "source", "gpu", "n_gpus", "node_gpus", "nic_gbps", "model", "layers",
          "hidden", "heads", "kv_heads", "ffn", "vocab", "seq", "gated_mlp", "bias",
          "learned_pos", "micro_batch", "global_batch", "tp", "pp", "dp", "vp", "schedule",
          "dp_shard", "grad_sync", "grad_bucket_mb", "grad_dtype", "tp_comm_overlap",
          "recompute", "sequence_parallel", "precision", "attention", "metric", "value", "measured_iteration_s", "role", "skip", "assumptions"]

# Free-text GPU names of the sources -> catalog ids (docs/validation.md).
GPU_MAP = [("GB300", "gb300"), ("GB200", "gb200"), ("B200", "b200"),
           ("A100-40GB", "a100_sxm_40gb"), ("A100", "a100_sxm_80gb"),
           ("H100", "h100_sxm"), ("V100", "v100_sxm2_32gb")]

# Node NIC rate (Gbit/s per node) of the systems named in `interconnect`.
NIC = {"dgx_a100": 1600,   # DGX A100: 8 x 200 Gb/s HDR InfiniBand (NVIDIA DGX A100 datasheet)
       "dgx_h100": 3200,   # DGX H100: 8 x 400 Gb/s NDR (NVIDIA DGX H100 datasheet)
       "dgx2": 800,        # DGX-2: 8 x 100 Gb/s EDR (NVIDIA DGX-2 datasheet)
       "nvl72": 28800,     # GB200/GB300 NVL72: 72 x 400 Gb/s ConnectX-7/8 per rack
       "roce1600": 1600}   # llm-foundry table heading: 1600 Gbps node-node RoCE

# Model names without dimensions in the source -> published configs (model cards / papers).
NAMED = {
    "LLAMA2-7B": (32, 4096, 32, 32, 11008, 32000, True),
    "LLAMA2-13B": (40, 5120, 40, 40, 13824, 32000, True),
    "LLAMA2-70B": (80, 8192, 64, 8, 28672, 32000, True),
    "LLAMA3-8B": (32, 4096, 32, 8, 14336, 128256, True),
    "LLAMA3_8B": (32, 4096, 32, 8, 14336, 128256, True),
    "LLAMA3-70B": (80, 8192, 64, 8, 28672, 128256, True),
    "LLAMA3_70B": (80, 8192, 64, 8, 28672, 128256, True),
    "LLAMA3.1_405B": (126, 16384, 128, 8, 53248, 128256, True),
    "GPT3-5B": (24, 4096, 32, 32, 16384, 51200, False),
    "GPT3-20B": (44, 6144, 48, 48, 24576, 51200, False),
    "GPT3-175B": (96, 12288, 96, 96, 49152, 51200, False),
}
NAMED_WHY = ("model dims not in the source table: taken from the published config of %s "
             "(Llama 2/3 model cards; NeMo GPT-3 5B/20B/175B launcher configs)")

# Sources whose rows are used to fit k_sat (docs/validation.md); all others are held out.
FIT_SOURCES = {"KOR", "NAR", "MEG20", "NEMO2407", "NEMOL"}
# Sources never to be used (held-out checks of the issue): none of them is in the input.
UNFUSED_SOURCES = {"KOR", "NAR", "MEG20", "MEG19", "MEG21JAN"}  # Megatron-LM before 2022
# Sources whose fused attention is the Triton FlashAttention kernel rather than the
# architecture's default fused kernel: llm-foundry's benchmark table (commit 5e85bd62,
# scripts/train/benchmarking/submit_benchmarks.py) defaults to attn_impl 'triton', which
# llmfoundry/models/layers/attention.py runs as HazyResearch's flash_attn_triton (the
# FlashAttention-1 algorithm in Triton, triton-pre-mlir).
TRITON_SOURCES = {"LLMF"}
# ... except where the sweep that measured a section passed another attn_impl. The table's
# sections come from three sweeps (scripts/train/benchmarking/ history; docs/validation.md):
# * 'A100 40GB' and the two 'bf16 / mp PURE' 70b rows of 'A100 80GB': the first sweep
#   (sweep.sh at 300cc5c58, May 2023: image mosaicml/pytorch:1.13.1_cu117, triton
#   2.0.0.dev20221202, attn_impl default triton);
# * 'A100 80GB' (other rows), 'H100 80GB BF16', 'H100 80GB FP8': the second sweep (sweep.sh at
#   b2a43a147, Oct 2023: image mosaicml/pytorch:2.1.0_cu121, attn_impl default triton);
# * 'H100 80GB BF16 (Large Scale, >= 128 GPUs)': sweep.py at 5e85bd62 (Jan 2024, llm-foundry
#   main installed with [gpu-flash2], flash-attn 2.4.2), which passes --attn_impl flash
#   (FlashAttention-2) for the 1b, 3b, 7b and 70b models and --attn_impl triton for 13b, 30b.
LLMF_FLASH2_MODELS = {"MPT-1b", "MPT-3b", "MPT-7b", "MPT-70b"}


def llmf_run(row):
    """(attention kernel, why) of an llm-foundry row: the sweep that measured its section."""
    sec, model = row["table_or_figure"], row["model"].split()[0]
    if "Large Scale" in sec:
        if model in LLMF_FLASH2_MODELS:
            return "flash2_unpad", (
                "FlashAttention-2 through its variable-length API (sweep.py at 5e85bd62 passes "
                "--attn_impl flash for this model; flash-attn 2.4.2; llmfoundry/models/layers/"
                "attention.py flash_attn_fn unpads Q, K, V with bert_padding.unpad_input and "
                "pads the output back with pad_input)")
        return "triton", ("Triton FlashAttention kernel (sweep.py at 5e85bd62 passes "
                          "--attn_impl triton for this model)")
    if "mp PURE" in row["schedule"]:
        return "triton", ("Triton FlashAttention kernel (attn_impl default triton); measured "
                          "by the first sweep (sweep.sh at 300cc5c58: torch 1.13.1 image)")
    return "triton", ("Triton FlashAttention kernel (attn_impl default triton); measured by "
                      "the second sweep (sweep.sh at b2a43a147: torch 2.1.0 image)")
# Sources that ran Megatron-Core / NeMo with the distributed optimizer and overlapped
# gradient reduce-scatter / parameter all-gather (docs/validation.md, "data-parallel options").
MCORE_SOURCES = {"MH100", "NEMO2407", "NEMOL", "MB2511"}
# Megatron-Core's default DDP bucket: max(40M, 1M x dp) parameters (Megatron-LM
# megatron/training/training.py, get_model: bucket_size for DistributedDataParallelConfig).
MCORE_BUCKET_PARAMS = 40e6
# llm-foundry's MPT keeps llmfoundry/models/mpt/configuration_mpt.py's defaults, which the
# benchmark yamls (scripts/train/yamls/pretrain/mpt-*.yaml) do not override: no_bias False
# (every linear layer and LayerNorm has a bias), learned_pos_emb True and alibi False (a
# learned positional embedding of max_seq_len rows). The table's NumParams column equals
# that count exactly on all 216 configurations (it grows by seq x d_model with the sequence).
MPT_SOURCES = {"LLMF"}
MPT_WHY = ("MPT with biases and learned positional embeddings (llm-foundry MPTConfig "
           "defaults no_bias False, learned_pos_emb True, alibi False; the table's NumParams "
           "equals that parameter count)")
# FSDP reduces and gathers one wrapped unit at a time; llm-foundry / Megatron-FSDP wrap each
# transformer block. A bucket cap below any block's size makes each bucket one block.
FSDP_BUCKET_MB = 1


def dp_options(src, sched_text, prec, dp):
    """(dp_shard, grad_sync, grad_bucket_mb, grad_dtype, why) of the framework a source ran."""
    if "FSDP" in sched_text:
        shard = "zero2" if "SHARD_GRAD_OP" in sched_text else "fsdp"
        # llm-foundry / Composer FSDP mixed precision: DEFAULT reduces gradients in fp32,
        # PURE in bf16 (param, reduce and buffer dtypes all bf16).
        gd = "fp32" if "mp DEFAULT" in sched_text else "bf16"
        why = ("%s: %s sharding, per-block gradient reduce-scatter overlapped with the backward "
               "(FSDP backward prefetch), gradients reduced in %s" %
               (sched_text.split(",")[0], shard, gd))
        if "mp " not in sched_text:
            why += " (reduce dtype not stated: bf16 assumed)"
        return shard, "overlap", FSDP_BUCKET_MB, gd, why
    if src in MCORE_SOURCES:
        # Megatron-Core distributed optimizer: reduce-scatter of the gradients + all-gather of
        # the weights (ZeRO-1 traffic), both overlapped (--overlap-grad-reduce
        # --overlap-param-gather, the Megatron-Core README runs; NeMo's default optim config).
        # Gradients reduced in bf16: NeMo-Framework-Launcher's H100 FP8 examples pass
        # optim.grad_sync_dtype=bf16; MH100 (bf16, Megatron-Core r0.8) reduces in fp32
        # (Megatron forces fp32 accumulation / all-reduce under bf16).
        gd = "fp32" if src == "MH100" else "bf16"
        bucket = max(MCORE_BUCKET_PARAMS, 1e6 * dp) * (4 if gd == "fp32" else 2) / 2**20
        why = ("distributed optimizer (zero1 traffic) with overlapped gradient sync, buckets "
               "of %d M params, gradients in %s%s" %
               (max(MCORE_BUCKET_PARAMS, 1e6 * dp) / 1e6, gd,
                "" if src == "MH100" else " (assumed from the NeMo launcher FP8 examples)"))
        return "zero1", "overlap", bucket, gd, why
    # Megatron-LM before Megatron-Core: its own DDP all-reduces after the backward; under
    # bf16 the gradients are accumulated and all-reduced in fp32 (Megatron-LM arguments.py),
    # under fp16 in fp16.
    gd = "fp32" if prec == "bf16" else ("fp16" if prec == "fp16" else "bf16")
    return ("none", "after_backward", 0, gd,
            "Megatron-LM DDP: all-reduce after the backward, gradients in %s" % gd)



def num(s):
    """A number, or None for an empty or non-numeric field ('~250k')."""
    try:
        return float(s.strip())
    except ValueError:
        return None


def gpu_id(name):
    for key, gid in GPU_MAP:
        if key in name:
            return gid
    return ""


def nic_for(row, gid):
    ic = row["interconnect"]
    if "1600 Gbps" in ic:
        return NIC["roce1600"], "NIC: 1600 Gbps per node (table heading)"
    if gid in ("gb200", "gb300"):
        return NIC["nvl72"], "NIC: NVL72 rack of 72 GPUs, 72 x 400 Gb/s (assumed)"
    if gid.startswith("h100") or gid == "b200":
        return NIC["dgx_h100"], "NIC: DGX H100/B200 class 8 x 400 Gb/s (assumed from the system)"
    if gid.startswith("v100"):
        return NIC["dgx2"], "NIC: DGX-2 8 x 100 Gb/s EDR (assumed)"
    return NIC["dgx_a100"], "NIC: DGX A100 8 x 200 Gb/s HDR (assumed)"


def implied_iter(row, dims, gb, n):
    """Measured iteration time (s) implied by the row's metric, or (None, reason)."""
    m, v = row["metric"], float(row["value"])
    notes = row["notes"]
    seq = dims["seq"]
    if m == "iteration_s":
        return v, ""
    if m == "tokens_per_s" and gb:
        per_gpu = "per GPU" in notes or "tokens/s per GPU" in notes
        return gb * seq / (v * (n if per_gpu else 1)), ""
    if m == "samples_per_s" and gb:
        return gb / v, ""
    if m == "tflops_per_gpu" and gb and row["id"].startswith("MH100"):
        # Megatron-LM model FLOPs without recomputation: 72 B s l h^2 (1 + s/6h + V/12lh)
        L, h, V = dims["layers"], dims["hidden"], dims["vocab"]
        fl = 72.0 * gb * seq * L * h * h * (1 + seq / (6.0 * h) + V / (12.0 * L * h))
        return fl / (n * v * 1e12), ""
    return None, "metric %s without a FLOP formula / batch to turn it into an iteration time" % m


def layout(row):
    sched = row["schedule"]
    vp = 1
    mvp = re.search(r"VP=(\d+)", sched)
    if mvp:
        vp = int(mvp.group(1))
    mchunks = re.search(r"=> (\d+) model chunks", sched)
    if mchunks:
        vp = int(mchunks.group(1))
    if "calculon uses 3 virtual" in sched:
        vp = 3
    kind = "interleaved" if vp > 1 else "1f1b"
    return kind, vp


def derive(rows):
    out, seen, keys = [], {}, []
    for row in rows:
        rid = row["id"]
        src = rid.split("-")[0]
        gid = gpu_id(row["gpu"])
        why = []
        skip = ""
        dims = {k: num(row[k]) for k in ("layers", "hidden", "heads", "ffn", "vocab", "seq")}
        kv, gated = dims["heads"], False
        base = row["model"].split()[0] if row["model"] else ""
        if dims["hidden"] is None and base in NAMED:
            L, h, a, kvh, f, V, g = NAMED[base]
            dims.update(layers=L, hidden=h, heads=a, ffn=f, vocab=V)
            kv, gated = kvh, g
            why.append(NAMED_WHY % base)
        if dims["ffn"] is None and dims["hidden"]:
            dims["ffn"] = 4 * dims["hidden"]
            why.append("ffn not given: 4 x hidden assumed")
        kv = kv or dims["heads"]
        n = int(num(row["n_gpus"]) or 0) if re.fullmatch(r"\d+", row["n_gpus"].strip()) else 0
        tp, pp, dp = (int(num(row[k])) if num(row[k]) else 0 for k in ("tp", "pp", "dp"))
        mb, gb = num(row["micro_batch"]), num(row["global_batch"])
        if mb is None and src == "MH100":
            mb = 1
            why.append("micro_batch not stated: 1 assumed")
        if src == "MEG20" and mb is None:
            mb = gb / max(dp, 1) if gb else None
            why.append("micro_batch = global_batch / dp (no pipeline in these runs)")
        sched, vp = layout(row)
        rc = row["recompute"].lower()
        if src == "MEG20" and not rc:
            rc = "full"
            why.append("recompute not stated: full assumed (the 2020 Megatron-LM GPT-2 scripts "
                       "pass --checkpoint-activations)")
        recompute = "full" if "full" in rc else ("selective" if "selective" in rc else "none")
        sp = 1 if "sequence parallel" in rc else 0
        if src in ("NEMO2407", "NEMOL", "MB2511", "MH100") and tp > 1:
            sp = 1
            why.append("sequence parallelism assumed on (NeMo / Megatron-Core default with TP)")
        text = row["schedule"] + " " + row["notes"]
        prec = "fp8" if re.search(r"fp8|FP8", text) else ("fp16" if gid.startswith("v100") or
                                                          "fp16" in row["notes"] else "bf16")
        attention = ("unfused" if src in UNFUSED_SOURCES else
                     "triton" if src in TRITON_SOURCES else "fused")
        if src in TRITON_SOURCES:
            attention, attn_why = llmf_run(row)
        shard, gsync, bucket, gdtype, dwhy = dp_options(src, row["schedule"], prec, dp)
        why.append(dwhy)
        # Megatron-Core's TP communication overlap, where the source names the flag
        tpov = 1 if "--tp-comm-overlap" in row["schedule"] and sp else 0
        if tpov:
            why.append("--tp-comm-overlap: TP all-gathers / reduce-scatters under their GEMMs")
        if "CP=" in row["schedule"]:
            skip = "context parallelism (CP=2) not modelled"
        elif "DiLoCo" in row["schedule"]:
            skip = "DiLoCo outer/inner steps not modelled"
        elif row["metric"] == "power_w":
            skip = "power metric (node level), not an iteration time"
        elif not gid:
            skip = "GPU '%s' not mapped to the catalog" % row["gpu"]
        elif None in dims.values() or not (tp and pp and dp and mb and gb):
            skip = "configuration incomplete in the source (dims or tp/pp/dp/batch missing)"
        elif tp * pp * dp != n:
            skip = "tp x pp x dp = %d differs from n_gpus %d" % (tp * pp * dp, n)
        elif dims["layers"] % (pp * vp):
            skip = "layers %d not divisible by pp x vp = %d" % (dims["layers"], pp * vp)
        elif gb % (dp * mb):
            skip = "global batch not a multiple of dp x microbatch"
        meas, mwhy = (None, "")
        if not skip:
            meas, mwhy = implied_iter(row, dims, gb, n)
            if meas is None:
                skip = mwhy
        key = (src, gid, n, row["model"], dims["layers"], dims["hidden"], dims["seq"], mb, gb,
               tp, pp, dp, row["schedule"], recompute, prec)
        if not skip:
            if key in seen:
                skip = "duplicate of %s (same configuration, another metric)" % seen[key]
            else:
                seen[key] = rid
        keys.append(key)
        node_gpus = 72 if gid in ("gb200", "gb300") else 8
        nic, nwhy = nic_for(row, gid)
        why.append(nwhy)
        if src in MPT_SOURCES:
            why.append(MPT_WHY)
        if attention == "unfused":
            why.append("unfused attention (Megatron-LM before FlashAttention)")
        elif src in TRITON_SOURCES:
            why.append(attn_why)
        out.append([rid, row["source"], gid, str(n), str(node_gpus), str(nic), row["model"],
                    *(fmt(dims[k]) for k in ("layers", "hidden", "heads")), fmt(kv),
                    *(fmt(dims[k]) for k in ("ffn", "vocab", "seq")),
                    "1" if gated else "0", "0" if gated else "1",
                    "1" if src in UNFUSED_SOURCES or src in MPT_SOURCES else "0",
                    fmt(mb), fmt(gb), str(tp), str(pp), str(dp), str(vp), sched, shard, gsync,
                    fmt(bucket), gdtype, str(tpov),
                    recompute, str(sp), prec, attention, row["metric"], row["value"],
                    fmt(meas), "fit" if src in FIT_SOURCES else "holdout", skip,
                    "; ".join(why)])
    # a metric without a formula whose configuration another row gives: a duplicate
    col = HEADER.index("skip")
    for r, key in zip(out, keys):
        if r[col].startswith("metric ") and key in seen:
            r[col] = "duplicate of %s (same configuration, another metric)" % seen[key]
    return out


def fmt(x):
    if x is None:
        return ""
    if float(x).is_integer():
        return str(int(x))
    return ("%.6f" % x).rstrip("0").rstrip(".")


def clean(s):
    return " ".join(s.replace(",", ";").replace('"', "'").split())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", metavar="DIR", help=public_sources.DATA_HELP)
    args = ap.parse_args()
    data = public_sources.data_dir(args.data, ["validation/measured_runs.csv"],
                                   "derive_validation.py")
    path = os.path.join(data, "validation", "measured_runs.csv")
    rows = list(csv.DictReader(open(path, newline="")))
    out = derive(rows)
    dst = os.path.join(ROOT, "validation", "runs.csv")
    tmp = dst + ".tmp"
    with open(tmp, "w", newline="") as fp:
        fp.write(",".join(HEADER) + "\n")
        for r in out:
            assert len(r) == len(HEADER)
            fp.write(",".join(clean(f) for f in r) + "\n")
    os.replace(tmp, dst)
    ok = sum(1 for r in out if not r[HEADER.index("skip")])
    print("wrote validation/runs.csv: %d rows, %d representable, %d skipped" %
          (len(out), ok, len(out) - ok))
    return 0


if __name__ == "__main__":
    sys.exit(main())
