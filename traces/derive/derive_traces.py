#!/usr/bin/env python3
"""derive_traces.py - build the traces/ files from the shared reference data.

Reads (from --data DIR, the reference-data folder of docs/data-sources.md):
  wan_bandwidth.csv                               skyplane-2022-01 / -11 throughput grids
  spot_trace_{aws_p3,aws_g4dn,gcp_a2_scaled}_events.csv   Oobleck spot preemption traces
  azure_llm_inference_2023_{conv,code}_sample.csv         Azure LLM inference samples
and topologies/gpus.csv, topologies/models.csv (for the example profile).

Writes (formats in traces/README.md):
  traces/wan/*.csv       WAN bandwidth series (time_s,gbps)
  traces/avail/*.csv     availability events (time_s,event,node)
  traces/prefill/*.csv   prompt-length histograms (prompt_tokens,probability)
  traces/profiles/*.csv  per-layer compute profile (gpu,model,layer_kind,b,seq,fwd_ms,bwd_ms)

Usage:  python3 traces/derive/derive_traces.py --data DIR
        Standard library only; deterministic (the one random series uses a fixed seed).
"""
import argparse
import csv
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "topologies", "derive"))
import public_sources  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACES = os.path.join(ROOT, "traces")

SKYPLANE = {
    "skyplane-2022-01": "Skyplane throughput grid run 2022-01-29 (github.com/skyplane-project/"
                        "skyplane profiles/throughput.csv blob 3485f5ca)",
    "skyplane-2022-11": "Skyplane throughput grid run 2022-11-28 (same repository; "
                        "skyplane/broadcast/profiles/whole_throughput_11_28.csv blob 962dc4de)",
}

OOBLECK = ("Oobleck (Jang et al.; SOSP 2023) simulator trace github.com/SymbioticLab/Oobleck "
           "commit 103c4777 tools/simulator/traces/%s (MIT); copied in <refdata>/%s")

AZURE = ("Azure LLM inference trace 2023 (github.com/Azure/AzurePublicDataset data/"
         "AzureLLMInferenceTrace_%s.csv; CC-BY 4.0; Patel et al. 'Splitwise' ISCA 2024): first "
         "%d requests as sampled in <refdata>/azure_llm_inference_2023_%s_sample.csv "
         "(2023-11-16)")


def read_csv(path):
    with open(path, newline="") as fp:
        return list(csv.DictReader(fp))


def fmt(x, nd=3):
    s = "%.*f" % (nd, x)
    return s.rstrip("0").rstrip(".") if "." in s else s


def write(rel, comments, header, rows):
    path = os.path.join(TRACES, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as fp:
        for c in comments:
            fp.write("# " + c.replace("\n", " ") + "\n")
        fp.write(header + "\n")
        for r in rows:
            fp.write(",".join(str(x) for x in r) + "\n")
    print("%s: %d rows" % (os.path.relpath(path, ROOT), len(rows)))


# --- WAN bandwidth series -------------------------------------------------------------

def skyplane_pair(shared, src, dst):
    got = {}
    for r in read_csv(os.path.join(shared, "wan_bandwidth.csv")):
        if r["src_region_id"] == src and r["dst_region_id"] == dst and \
                r["source_dataset"] in SKYPLANE:
            got[r["source_dataset"]] = float(r["bandwidth_gbps"])
    assert len(got) == 2, (src, dst, got)
    return got["skyplane-2022-01"], got["skyplane-2022-11"]


def square_wave(shared, src, dst, name, half_period=60, span=600):
    jan, nov = skyplane_pair(shared, src, dst)
    rows = [(t, fmt(jan if (t // half_period) % 2 == 0 else nov))
            for t in range(0, span, half_period)]
    write("wan/%s.csv" % name, [
        "source: %s -> %s; <refdata>/wan_bandwidth.csv skyplane-2022-01 = %s Gbps (%s) "
        "and skyplane-2022-11 = %s Gbps (%s); iperf3 receiver throughput with 64 TCP "
        "connections for 5 s" % (src, dst, fmt(jan), SKYPLANE["skyplane-2022-01"], fmt(nov),
                                 SKYPLANE["skyplane-2022-11"]),
        "construction: NOT a measured time series. The two published single 5-s measurements "
        "of this directed pair ten months apart alternate every %d s for %d s (square wave) "
        "to expose a plan to the measured range of variation; the last value holds after "
        "t = %d s. Built by traces/derive/derive_traces.py" % (half_period, span,
                                                              span - half_period),
    ], "time_s,gbps", rows)


def random_levels(shared, src, dst, name, step=10, span=600, seed=2022):
    jan, nov = skyplane_pair(shared, src, dst)
    lo, hi = min(jan, nov), max(jan, nov)
    rng = random.Random(seed)
    rows = [(t, fmt(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
            for t in range(0, span, step)]
    write("wan/%s.csv" % name, [
        "source: %s -> %s; <refdata>/wan_bandwidth.csv skyplane-2022-01 = %s Gbps and "
        "skyplane-2022-11 = %s Gbps (%s; %s)" % (src, dst, fmt(jan), fmt(nov),
                                                  SKYPLANE["skyplane-2022-01"],
                                                  SKYPLANE["skyplane-2022-11"]),
        "construction: NOT a measured time series. Every %d s a level is drawn log-uniformly "
        "between the two published measurements (Python random.Random(%d); "
        "traces/derive/derive_traces.py); only the range is measured; the timing and the "
        "levels in between are synthetic" % (step, seed),
    ], "time_s,gbps", rows)


# --- availability events --------------------------------------------------------------

def avail(shared, fname, out, what):
    rows = read_csv(os.path.join(shared, fname))
    srcs = sorted({r["source"] for r in rows})
    conv = [(fmt(int(r["time_ms"]) / 1000.0), r["event"], r["node_id"]) for r in rows]
    write("avail/%s.csv" % out, [
        "source: " + OOBLECK % (";".join(srcs), fname),
        "content: %s; time_s = time_ms / 1000 of the shared file; events and node names "
        "unchanged (traces/derive/derive_traces.py)" % what,
    ], "time_s,event,node", conv)


# --- prefill request mixes ------------------------------------------------------------

def prefill(shared, kind, width=256):
    fname = "azure_llm_inference_2023_%s_sample.csv" % kind
    toks = [int(r["ContextTokens"]) for r in read_csv(os.path.join(shared, fname))]
    bins = {}
    for t in toks:
        bins.setdefault(t // width, []).append(t)
    keys = sorted(bins)
    n = len(toks)
    # probabilities in millionths by largest remainder so that they sum to exactly 1
    exact = [len(bins[k]) * 1000000 / n for k in keys]
    micro = [int(x) for x in exact]
    for i in sorted(range(len(keys)), key=lambda i: (micro[i] - exact[i], i))[
            :1000000 - sum(micro)]:
        micro[i] += 1
    rows = [(round(sum(bins[k]) / len(bins[k])), "%.6f" % (m / 1e6))
            for k, m in zip(keys, micro)]
    mean = sum(toks) / n
    write("prefill/azure_%s_2023.csv" % kind, [
        "source: " + AZURE % (kind, n, kind),
        "construction: ContextTokens of all %d requests in %d-token bins; prompt_tokens = the "
        "mean prompt length inside the bin (rounded); probability = share of requests in the "
        "bin (largest-remainder rounding to 1e-6 so the column sums to 1); empty bins left "
        "out; sample mean %s tokens (traces/derive/derive_traces.py)" % (n, width, fmt(mean, 1)),
    ], "prompt_tokens,probability", rows)


# --- example per-layer profile --------------------------------------------------------

def profile(model_id="gpt3_1.3b", gpus=("h100_sxm", "a100_sxm_80gb", "v100_sxm2_16gb", "t4"),
            bs=(1, 2, 4)):
    m = {r["id"]: r for r in read_csv(os.path.join(ROOT, "topologies", "models.csv"))}[model_id]
    g = {r["id"]: r for r in read_csv(os.path.join(ROOT, "topologies", "gpus.csv"))}
    h, heads, kv = int(m["hidden"]), int(m["heads"]), int(m["kv_heads"])
    ffn, vocab, s = int(m["ffn"]), int(m["vocab"]), int(m["seq_len"])
    matmul = 2 * h * h + 2 * h * (kv * h // heads) + (3 if m["gated_mlp"] == "1" else 2) * h * ffn
    rows = []
    for gid in gpus:
        rate = float(g[gid]["tflops"]) * 1e12 * float(g[gid]["efficiency"])
        for b in bs:
            layer = 2.0 * b * s * matmul + 4.0 * b * s * s * h
            head = 2.0 * b * s * h * vocab
            for kind, f in (("layer", layer), ("head", head)):
                ms = f / rate * 1e3
                rows.append((gid, model_id, kind, b, s, "%.4f" % ms, "%.4f" % (2 * ms)))
    write("profiles/example_%s.csv" % model_id.replace(".", "_"), [
        "source: EXAMPLE, NOT MEASURED: computed with the FLOP formula of docs/models.md "
        "(layer forward = 2*b*s*matmul_params + 4*b*s*s*h; head = 2*b*s*h*V; backward = 2 x "
        "forward) and tflops x efficiency of topologies/gpus.csv; model %s from "
        "topologies/models.csv (traces/derive/derive_traces.py)" % model_id,
        "use: shows the format; a profile with these numbers must give the formula's op "
        "times (to the 0.1 us printed). Replace with measured per-layer times (e.g. "
        "torch.profiler or CUDA events around one layer; median of many steps) for real work",
    ], "gpu,model,layer_kind,b,seq,fwd_ms,bwd_ms", rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", metavar="DIR", help=public_sources.DATA_HELP)
    args = ap.parse_args()
    need = ['wan_bandwidth.csv', 'spot_trace_aws_p3_events.csv', 'spot_trace_aws_g4dn_events.csv', 'spot_trace_gcp_a2_scaled_events.csv', 'azure_llm_inference_2023_conv_sample.csv', 'azure_llm_inference_2023_code_sample.csv']
    shared = public_sources.data_dir(args.data, need, 'derive_traces.py')
    square_wave(shared, "gcp:europe-west1", "gcp:us-central1",
                "gcp-europe-west1_to_gcp-us-central1_skyplane-2022")
    random_levels(shared, "gcp:europe-west1", "gcp:us-central1",
                  "gcp-europe-west1_to_gcp-us-central1_random-levels")
    square_wave(shared, "aws:us-east-1", "aws:eu-west-1",
                "aws-us-east-1_to_aws-eu-west-1_skyplane-2022")
    avail(shared, "spot_trace_aws_p3_events.csv", "aws_p3_spot",
          "344 events over 11.4 h; at most 32 concurrent AWS p3 spot nodes")
    avail(shared, "spot_trace_aws_g4dn_events.csv", "aws_g4dn_spot",
          "153 events over 10.8 h; at most 24 concurrent AWS g4dn (T4) spot nodes")
    avail(shared, "spot_trace_gcp_a2_scaled_events.csv", "gcp_a2_spot_scaled",
          "161 events; at most 30 concurrent GCP a2-highgpu-1g (A100) nodes; a scaled real "
          "trace per Oobleck's simulator README")
    prefill(shared, "conv")
    prefill(shared, "code")
    profile()
    public_sources.scrub_tree()


if __name__ == "__main__":
    main()
