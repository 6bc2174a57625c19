#!/usr/bin/env python3
"""derive_catalogs.py - build GeoTrain's GPU and model catalogs from the shared data.

Reads  <shared>/gpus.csv and <shared>/models.csv (the team's reference tables, see
       <refdata>/README.md) and writes, in the project's own formats:

  topologies/gpus.csv    id,name,memory_gib,mem_bw_gbs,tflops,tdp_w,idle_w,efficiency,
                         link_gbs,source,efficiency_source, and the kernel-model columns
                         arch,sms,tflops_fp8,tflops_tf32,tflops_fp32,gemm_eff,mem_eff,
                         kernel_us,link_lat_us,link_eff,k_sat,attn_fwd_eff,attn_bwd_eff,
                         fa2_fwd_eff,fa2_bwd_eff,gemm_eff_fp8,kernel_source
                         (docs/compute-model.md)
  topologies/models.csv  id,layers,hidden,heads,kv_heads,ffn,vocab,seq_len,gated_mlp,
                         tied_embeddings,bias,norm,learned_pos,params_published,source

Every derived number (idle power with a CUDA context, achievable efficiency, per-direction
GPU link) is computed here by a rule that is written next to it in the `source` /
`efficiency_source` column and explained in topologies/README.md. The script also counts
each model's parameters with the formula of docs/models.md and prints the models whose
count is more than 1 % away from the published size.

Usage:  python3 topologies/derive/derive_catalogs.py --data DIR
        DIR defaults to <refdata>; a relative DIR is taken relative to the repository
        root (the folder that holds topologies/). Python 3 standard library only; the output
        is deterministic (rows in the shared tables' order, fixed number formatting).
"""
import argparse
import csv
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "topologies", "derive"))
import public_sources  # noqa: E402
import kernel_params  # noqa: E402  (the kernel-model columns and the added GPU types)
import kernel_params  # noqa: E402  (the kernel-model columns and the added GPU types)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# --------------------------------------------------------------------------------------
# GPU catalog
# --------------------------------------------------------------------------------------

GPU_HEADER = ["id", "name", "memory_gib", "mem_bw_gbs", "tflops", "tdp_w", "idle_w",
              "efficiency", "link_gbs", "source", "efficiency_source",
              "arch", "sms", "tflops_fp8", "tflops_tf32", "tflops_fp32", "gemm_eff", "mem_eff",
              "kernel_us", "link_lat_us", "link_eff", "k_sat", "attn_fwd_eff", "attn_bwd_eff",
              "fa2_fwd_eff", "fa2_bwd_eff", "gemm_eff_fp8", "kernel_source"]

VADARI = "Vadari 'The Model Parking Tax' arXiv:2605.23918 as quoted in <refdata>/README.md"
# Context premium of an idle GPU that holds a CUDA context (docs/models.md: idle_w is P0
# with a context). Vadari reports +26..50 W on H100/A100 (midpoint 38 W used) and +66 W
# on L40S.
PREM_HOPPER_AMPERE_W = (26 + 50) / 2.0
PREM_L40S_W = 66.0
# Where no premium is published, it is scaled by TDP from the most similar measured part:
FRAC_HBM = PREM_HOPPER_AMPERE_W / 400.0   # A100 SXM (400 W): 0.095 of TDP
FRAC_GDDR = PREM_L40S_W / 350.0           # L40S (350 W): 0.1886 of TDP

# idle rule per GPU: (kind, argument). Kinds:
#   vadari   shared idle_power_w + the Vadari premium given as argument (W)
#   sibling  no shared idle: base = sibling's shared idle scaled by TDP (argument = sibling id;
#            'same' as argument means: same board power so the sibling's W are used as is),
#            + the H100/A100 Vadari premium
#   hbm      shared idle_power_w + FRAC_HBM x TDP
#   gddr     shared idle_power_w + FRAC_GDDR x TDP
#   gddr_sib no shared idle: sibling's shared idle (argument) + FRAC_GDDR x TDP
#   ratio    nothing published: (h100_sxm idle + premium) / h100_sxm TDP x TDP
IDLE_RULE = {
    "h100_sxm": ("vadari", PREM_HOPPER_AMPERE_W),
    "h100_pcie": ("sibling", "h100_sxm"),
    "h200_sxm": ("sibling_same", "h100_sxm"),
    "a100_sxm_80gb": ("vadari", PREM_HOPPER_AMPERE_W),
    "a100_sxm_40gb": ("vadari", PREM_HOPPER_AMPERE_W),
    "a100_pcie_40gb": ("sibling", "a100_sxm_40gb"),
    "a100_pcie_80gb": ("sibling", "a100_sxm_80gb"),
    "a10": ("gddr", None),
    "a40": ("gddr_sib", "rtx_a6000"),
    "l4": ("gddr", None),
    "l40s": ("vadari", PREM_L40S_W),
    "v100_sxm2_32gb": ("hbm", None),
    "v100_sxm2_16gb": ("hbm", None),
    "v100_pcie_16gb": ("hbm", None),
    "t4": ("gddr", None),
    "rtx_4090": ("gddr", None),
    "rtx_3090": ("gddr", None),
    "rtx_a6000": ("gddr", None),
    "mi250x": ("ratio", None),
    "mi300x": ("ratio", None),
}

EFF_DEFAULT = 0.45
SRC_LLAMA3 = ("Dubey et al. 'The Llama 3 Herd of Models' arXiv:2407.21783 Table 4: 38-43 % "
              "BF16 MFU on 8K-16K H100 (end-to-end incl. communication); the top value is used "
              "because GeoTrain models communication separately")
SRC_MEGATRON21 = ("Narayanan et al. SC21 arXiv:2104.04473 (Megatron-LM on up to 3072 A100): "
                  "44-52 % of peak per GPU end-to-end; 52 % for the 1T model; 0.50 used")
SRC_MEGATRON_V100 = ("NVIDIA ADLR blog 'MegatronLM's Supercharged V1.0' (nv-adlr.github.io/"
                     "MegatronLMV1): 1.2B GPT-2 single-GPU baseline 62.4 TFLOPS = 48 % of peak "
                     "on a DGX-2H V100 (the 2019 paper arXiv:1909.08053 had 39 TFLOPS = 30 %); "
                     "DGX-2H parts run at 450 W so a 300 W p3 V100 may reach somewhat less")
SRC_FRONTIER = ("Dash et al. 'Optimizing Distributed Training on Frontier for Large Language "
                "Models' ISC 2024 arXiv:2312.12705: 38.38 % / 36.14 % / 31.96 % of peak for "
                "22B / 175B / 1T GPT on MI250X; the 22B figure is used")
EFFICIENCY = {
    "h100_sxm": (0.43, SRC_LLAMA3),
    "h100_pcie": (0.43, "assumed equal to h100_sxm (same Hopper tensor cores; the PCIe peak "
                        "already reflects its lower clocks); no separate public figure. "
                        + SRC_LLAMA3),
    "h200_sxm": (0.43, "assumed equal to h100_sxm (same compute die; more and faster HBM); "
                       "no separate public figure. " + SRC_LLAMA3),
    "a100_sxm_80gb": (0.50, SRC_MEGATRON21),
    "a100_sxm_40gb": (0.50, "same compute as a100_sxm_80gb. " + SRC_MEGATRON21),
    "a100_pcie_40gb": (EFF_DEFAULT, "default 0.45: no public training MFU figure for the 250 W "
                                    "PCIe A100; the SXM 0.50 is not used because sustained "
                                    "clocks are lower at the PCIe power limit (shared gpus.csv "
                                    "note)"),
    "a100_pcie_80gb": (EFF_DEFAULT, "default 0.45: no public training MFU figure for the 300 W "
                                    "PCIe A100; the SXM 0.50 is not used because sustained "
                                    "clocks are lower at the PCIe power limit"),
    "v100_sxm2_32gb": (0.48, SRC_MEGATRON_V100),
    "v100_sxm2_16gb": (0.48, "same compute as v100_sxm2_32gb. " + SRC_MEGATRON_V100),
    "v100_pcie_16gb": (0.48, "assumed equal to the SXM2 V100 (its 112 TFLOPS peak already "
                             "reflects the lower PCIe clocks). " + SRC_MEGATRON_V100),
    "mi250x": (0.38, SRC_FRONTIER),
    "t4": (EFF_DEFAULT, "default 0.45: no better public figure found; probably optimistic "
                        "because the 70 W board limit throttles clocks under sustained tensor "
                        "load"),
    "rtx_4090": (EFF_DEFAULT, "default 0.45: no better public figure found (consumer card; "
                              "tflops is already the half-rate FP32-accumulate peak)"),
    "rtx_3090": (EFF_DEFAULT, "default 0.45: no better public figure found (consumer card; "
                              "tflops is already the half-rate FP32-accumulate peak)"),
}
for _g in ("a10", "a40", "l4", "l40s", "rtx_a6000", "mi300x"):
    EFFICIENCY[_g] = (EFF_DEFAULT, "default 0.45: no better public figure found")
IDLE_RULE.update(kernel_params.EXTRA_IDLE_RULE)
for _g in kernel_params.EXTRA_IDLE_RULE:
    EFFICIENCY[_g] = (0.40, kernel_params.EXTRA_EFFICIENCY_WHY)


def clean(text):
    """Make a field safe for the project's plain split-on-comma CSV reader."""
    return " ".join(text.replace(",", ";").replace('"', "'").split())


def fmt(x):
    """Compact deterministic number formatting (no trailing zeros, no exponent)."""
    if isinstance(x, int):
        return str(x)
    s = "%.4f" % x
    s = s.rstrip("0").rstrip(".")
    return s if s not in ("", "-0") else "0"


def num(s):
    return float(s) if s.strip() else None


def gpu_rows(shared):
    rows = list(csv.DictReader(open(os.path.join(shared, "gpus.csv"), newline="")))
    by_id = {r["gpu_id"]: r for r in rows}
    if "v100_sxm2_16gb" not in by_id:
        base = dict(by_id["v100_sxm2_32gb"])
        base["gpu_id"] = "v100_sxm2_16gb"
        base["model"] = "Tesla V100 SXM2 16GB (AWS p3)"
        base["memory_gib"] = "16"
        base["_derived"] = ("not in shared gpus.csv: copied from its v100_sxm2_32gb row (same "
                            "compute; memory bandwidth; power; NVLink) with memory 16 GiB - the "
                            "AWS p3 part per <refdata>/README.md and yuan2022_scenarios.md")
        idx = [r["gpu_id"] for r in rows].index("v100_sxm2_32gb")
        rows.insert(idx + 1, base)
        by_id["v100_sxm2_16gb"] = base
    for extra in kernel_params.EXTRA_GPUS:
        if extra["gpu_id"] not in by_id:
            row = dict(extra, _derived="not in shared gpus.csv: from its datasheet")
            rows.append(row)
            by_id[row["gpu_id"]] = row
    return rows, by_id


def idle_for(g, by_id):
    """Return (idle_w, explanation)."""
    gid = g["gpu_id"]
    tdp = float(g["tdp_w"])
    idle = num(g["idle_power_w"])
    obs = g["idle_power_observed"] or "no range given"
    kind, arg = IDLE_RULE[gid]
    if kind == "vadari":
        val = idle + arg
        why = ("idle = shared idle_power_w %s W (%s) + CUDA-context premium %s W (%s; %s)"
               % (fmt(idle), obs, fmt(arg),
                  "midpoint of +26..50 W on H100/A100" if arg != PREM_L40S_W else "+66 W on L40S",
                  VADARI))
    elif kind in ("sibling", "sibling_same"):
        sib = by_id[arg]
        sidle, stdp = float(sib["idle_power_w"]), float(sib["tdp_w"])
        base = sidle if kind == "sibling_same" else sidle / stdp * tdp
        val = base + PREM_HOPPER_AMPERE_W
        if kind == "sibling_same":
            basewhy = "%s shared idle %s W used as is (same %s W board power)" % (
                arg, fmt(sidle), fmt(tdp))
        else:
            basewhy = "%s shared idle %s W x TDP ratio %s/%s = %s W" % (
                arg, fmt(sidle), fmt(tdp), fmt(stdp), fmt(base))
        val_why = ("idle = ESTIMATE (no idle figure in shared gpus.csv): base = %s; + CUDA-context "
                   "premium %s W (midpoint of +26..50 W on H100/A100; %s)"
                   % (basewhy, fmt(PREM_HOPPER_AMPERE_W), VADARI))
        why = val_why
    elif kind == "hbm":
        prem = FRAC_HBM * tdp
        val = idle + prem
        why = ("idle = shared idle_power_w %s W (%s) + ESTIMATED CUDA-context premium %s W = "
               "0.095 x TDP (the A100 premium 38 W / 400 W scaled by TDP; no published premium "
               "for this part; %s)" % (fmt(idle), obs, fmt(prem), VADARI))
    elif kind == "gddr":
        prem = FRAC_GDDR * tdp
        val = idle + prem
        why = ("idle = shared idle_power_w %s W (%s) + ESTIMATED CUDA-context premium %s W = "
               "0.1886 x TDP (the L40S premium 66 W / 350 W scaled by TDP; no published premium "
               "for this part; %s)" % (fmt(idle), obs, fmt(prem), VADARI))
    elif kind == "gddr_sib":
        sib = by_id[arg]
        sidle = float(sib["idle_power_w"])
        prem = FRAC_GDDR * tdp
        val = sidle + prem
        why = ("idle = ESTIMATE (no idle figure in shared gpus.csv): base = %s shared idle %s W (same "
               "GA102 board class and %s W TDP) + CUDA-context premium %s W = 0.1886 x TDP (L40S "
               "premium 66 W / 350 W scaled; %s)" % (arg, fmt(sidle), fmt(tdp), fmt(prem), VADARI))
    elif kind == "ratio":
        h = by_id["h100_sxm"]
        frac = (float(h["idle_power_w"]) + PREM_HOPPER_AMPERE_W) / float(h["tdp_w"])
        val = frac * tdp
        why = ("idle = ESTIMATE (no public idle figure for this part): %s of TDP = h100_sxm idle with "
               "context (%s + %s W) / %s W" % (fmt(frac), h["idle_power_w"],
                                               fmt(PREM_HOPPER_AMPERE_W), h["tdp_w"]))
    else:
        raise ValueError(kind)
    return round(val, 1), why


def link_for(g):
    """Intra-node GPU-to-GPU bandwidth per direction, GB/s, and its explanation."""
    nv = num(g["gpu_gpu_bw_gbs_bidir"])
    host = float(g["host_link_gbs_bidir"])
    kind = g["intra_node_link"]
    bridge_only = "bridge" in kind.lower()
    if nv is not None and not bridge_only:
        return nv / 2.0, "link = %s GB/s bidirectional per GPU (%s) / 2" % (fmt(nv), kind)
    if nv is not None and bridge_only:
        return host / 2.0, ("link = host link %s GB/s bidirectional (%s) / 2: the %s (%s GB/s) "
                            "joins only pairs of cards so a node's GPUs talk over PCIe"
                            % (fmt(host), g["pcie_gen"], kind, fmt(nv)))
    return host / 2.0, "link = host link %s GB/s bidirectional (%s; %s) / 2" % (
        fmt(host), g["pcie_gen"], kind)


def tflops_for(g):
    bf = num(g["bf16_tensor_dense_tflops"])
    if bf is not None:
        return bf, "tflops = dense BF16 tensor (FP32 accumulate) %s" % fmt(bf)
    fp = float(g["fp16_tensor_dense_tflops"])
    return fp, "tflops = dense FP16 tensor with FP32 accumulate %s (no BF16 on this GPU)" % fmt(fp)


def build_gpus(shared):
    rows, by_id = gpu_rows(shared)
    out = []
    for g in rows:
        gid = g["gpu_id"]
        tf, tfwhy = tflops_for(g)
        idle, idlewhy = idle_for(g, by_id)
        link, linkwhy = link_for(g)
        eff, effwhy = EFFICIENCY[gid]
        tdp = float(g["tdp_w"])
        assert idle < tdp, gid
        origin = g.get("_derived") or "shared gpus.csv row %s" % gid
        src = ("%s: memory_gib; mem_bw_gbs; tdp_w from it; %s; %s; %s. Shared row source: %s"
               % (origin, tfwhy, linkwhy, idlewhy, g["source"]))
        out.append([gid, clean(g["vendor"] + " " + g["model"]), fmt(float(g["memory_gib"])),
                    fmt(float(g["mem_bw_gbs"])), fmt(tf), fmt(tdp), fmt(idle), fmt(eff),
                    fmt(link), clean(src), clean(effwhy)]
                   + [clean(x) for x in kernel_params.kernel_cols(g, fmt, num)])
    return out


# --------------------------------------------------------------------------------------
# Model catalog
# --------------------------------------------------------------------------------------

MODEL_HEADER = ["id", "layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len",
                "gated_mlp", "tied_embeddings", "bias", "norm", "learned_pos",
                "params_published", "source"]

# Corrections to transcribed configs (each explained in topologies/README.md).
MODEL_FIX = {
    "gpt3_1.3b": {"n_heads": "16", "n_kv_heads": "16",
                  "_why": ("heads 24 -> 16: Brown et al. Table 2.1 prints n_heads 24 with d_head "
                           "128 but d_model 2048 = 16 x 128 and 2048 is not a multiple of 24 "
                           "(shared table d_head 85.33); Yuan et al.'s GPT3-XL run script uses "
                           "--num-heads 16 and Megatron configs use 16; parameter count "
                           "unchanged")},
}


def published(s):
    """'1.5B (1558M)' -> 1558000000 (the parenthetical, more precise figure when present)."""
    s = s.strip()
    if "(" in s:
        s = s[s.index("(") + 1:s.index(")")]
    mult = {"M": 1e6, "B": 1e9, "T": 1e12}[s[-1]]
    return int(round(float(s[:-1]) * mult))


def count_params(m):
    """Parameter count with the formula of docs/models.md (and the brief)."""
    L, h, a, kv, f, V, s = (m[k] for k in ("layers", "hidden", "heads", "kv_heads", "ffn",
                                           "vocab", "seq_len"))
    kvdim = kv * h // a
    per = 2 * h * h + 2 * h * kvdim
    per += (3 if m["gated_mlp"] else 2) * h * f
    if m["bias"]:
        per += (h + 2 * kvdim) + h + (f + h)
    normp = 2 * h if m["norm"] == "layernorm" else h
    per += 2 * normp
    total = L * per + V * h + (s * h if m["learned_pos"] else 0) + normp
    if not m["tied_embeddings"]:
        total += V * h
    return total


def build_models(shared):
    rows = list(csv.DictReader(open(os.path.join(shared, "models.csv"), newline="")))
    out, checks = [], []
    for r in rows:
        fix = MODEL_FIX.get(r["model_id"], {})
        g = dict(r)
        g.update({k: v for k, v in fix.items() if not k.startswith("_")})
        fam = r["family"]
        llama = fam.startswith("Llama")
        m = {
            "id": r["model_id"],
            "layers": int(g["n_layers"]), "hidden": int(g["d_model"]),
            "heads": int(g["n_heads"]), "kv_heads": int(g["n_kv_heads"]),
            "ffn": int(g["d_ffn"]), "vocab": int(g["vocab_size"]), "seq_len": int(g["seq_len"]),
            "gated_mlp": 1 if g["ffn_type"].strip().lower() == "swiglu" else 0,
            "tied_embeddings": 1 if g["tied_embeddings"].strip().lower() == "yes" else 0,
            # shared README: GPT/OPT = learned positions; biases; 2 LayerNorms/layer;
            # Llama = no biases; RMSNorm; SwiGLU; untied head; GQA
            "bias": 0 if llama else 1,
            "norm": "rmsnorm" if llama else "layernorm",
            "learned_pos": 1 if g["pos_embedding"].strip().lower() == "learned" else 0,
            "params_published": published(r["params_reported"]),
        }
        assert m["hidden"] % m["heads"] == 0, m["id"]
        ours = count_params(m)
        shared_count = int(r["params_computed"])
        rel = ours / m["params_published"] - 1.0
        checks.append((m["id"], ours, shared_count, m["params_published"], rel))
        arch = ("%s %s; %s; %s" % (
            "bias=0 rmsnorm" if llama else "bias=1 layernorm",
            "(shared README: Llama = no biases; RMSNorm; SwiGLU; untied LM head)" if llama
            else "(shared README: GPT/OPT = learned positions; biases; 2 LayerNorms/layer; tied LM head)",
            "ffn_type %s -> gated_mlp %d" % (g["ffn_type"], m["gated_mlp"]),
            "params_published from params_reported '%s'" % r["params_reported"]))
        src = "shared models.csv row %s: config columns as given; %s" % (r["model_id"], arch)
        if fix:
            src += "; CORRECTED: " + fix["_why"]
        if r["notes"].strip():
            src += "; shared note: " + r["notes"].strip().rstrip(".")
        src += ". Shared row source: " + r["source"]
        out.append([m["id"]] + [str(m[k]) for k in MODEL_HEADER[1:12]] +
                   [str(m["learned_pos"]), str(m["params_published"]), clean(src)])
    return out, checks


# --------------------------------------------------------------------------------------

def write_csv(path, header, rows):
    """Write atomically: temp file in the same folder, then rename."""
    for row in rows:
        assert len(row) == len(header)
        for f in row:
            assert "," not in f and '"' not in f and "\n" not in f, (path, f)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w", newline="") as fp:
        fp.write(",".join(header) + "\n")
        for row in rows:
            fp.write(",".join(row) + "\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", metavar="DIR", help=public_sources.DATA_HELP)
    args = ap.parse_args()
    need = ['gpus.csv', 'models.csv']
    shared = public_sources.data_dir(args.data, need, 'derive_catalogs.py')

    gpus = build_gpus(shared)
    write_csv(os.path.join(ROOT, "topologies", "gpus.csv"), GPU_HEADER, gpus)
    models, checks = build_models(shared)
    write_csv(os.path.join(ROOT, "topologies", "models.csv"), MODEL_HEADER, models)
    public_sources.scrub_tree()
    print("wrote topologies/gpus.csv (%d GPUs) and topologies/models.csv (%d models)"
          % (len(gpus), len(models)))

    print("\nparameter check (docs/models.md formula vs published size; shared params_computed):")
    print("%-12s %16s %16s %16s %8s" % ("model", "ours", "shared_computed", "published", "diff"))
    off = []
    for mid, ours, sh, pub, rel in checks:
        print("%-12s %16d %16d %16d %+7.2f%%" % (mid, ours, sh, pub, 100 * rel))
        if abs(rel) > 0.01:
            off.append((mid, rel))
    if off:
        print("\nmore than 1 %% from the published size (%d): %s" % (
            len(off), "; ".join("%s %+.2f%%" % (m, 100 * r) for m, r in off)))
        print("(published sizes are rounded labels; see topologies/README.md 'Parameter check')")
    else:
        print("\nall models within 1 % of the published size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
