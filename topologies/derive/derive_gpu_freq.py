#!/usr/bin/env python3
"""derive_gpu_freq.py - fit GeoTrain's per-GPU SM-frequency model (topologies/gpu_freq.csv).

Needs  <shared>/energy/freq_stage_profiles.csv (Perseus SOSP'24 artifact per-stage profiles:
       8 stages x forward/backward x locked SM clock -> time and energy, GPT-3 175B and Bloom,
       A100 SXM4 80GB and A40) and <shared>/energy/clocks.csv (clock ranges, P2P-blocking power),
       plus topologies/gpus.csv (the ids and idle power of every GPU type).
Writes topologies/gpu_freq.csv         one row per GPU type of gpus.csv (model + its error)
       topologies/gpu_freq_points.csv  the measured points the fit reproduces (median over
                                       the stage/op series of each GPU, normalised)

Model (docs/energy-model.md):
  time   t(f) = t(f_max) * (alpha + (1 - alpha) * f_max / f)
         alpha = share of the op that does not scale with the SM clock (memory-bound part)
  power  P(f) = P(f_max) * (p_static + (1 - p_static) * (f / f_max) ** p_exp)
         p_static = static (clock-independent) share, the rest dynamic ~ f V(f)^2 ~ f^p_exp
Each stage/op series gets its own scale (its value at f_max, fitted, which averages out the
noise of a single reading); alpha, p_static and p_exp are shared by all series of one GPU.
Errors are relative, |model / measured - 1|, over every raw point (rms and max).

Usage:  python3 topologies/derive/derive_gpu_freq.py --data DIR   (the reference-data folder,
        docs/data-sources.md; or GEOTRAIN_REFDATA)
Python 3 standard library only; deterministic output.
"""
import argparse
import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import public_sources  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PERSEUS = ("Perseus SOSP'24 artifact (github.com/ml-energy/zeus branch kronos "
           "1b1c4a9d sosp24_data/emulation/stage_profile; GPT-3 175B + Bloom bf16; "
           "8 stages x fwd/bwd)")
# P2P-blocking power measured by Perseus (evaluation.ipynb print_savings / blocking_power;
# profile_p2p.py: rank 0 blocked in dist.recv).
P2P_SRC = "Perseus SOSP'24 artifact evaluation.ipynb blocking_power (profile_p2p.py)"
MEASURED = {  # our id -> (profile gpu name, clock grid max, P2P-blocking W)
    "a100_sxm_80gb": ("A100-SXM4-80GB", 1410, 83.64),
    "a40": ("A40-48GB", 1740, 70.38),
}
STEP_MHZ = 15  # Perseus enumerates both grids in 15 MHz steps (generate_profile_csv.py)

# GPU types without a frequency profile: (nearest measured architecture, f_max MHz,
# f_max source). HBM datacenter parts take the A100 (GA100) curve, GDDR cards the A40
# (GA102) curve. f_min keeps the measured share f_min/f_max of that architecture.
NV_SMI = "nvidia-smi -q Max Clocks (NVIDIA/nvidia-docker issues #914/#1648/#1628)"
EKS = "AWS EKS GPU AMI initialize_nvidia_clock.sh (max application clock)"
SPEC = "vendor spec-sheet boost clock"
SAME_DIE = ("ASSUMED equal to the H100 SXM's max application clock (same GH100 die; no clock "
            "figure for this part in the sources read)")
NO_CLOCK = ("ASSUMED equal to the H100 SXM's max application clock (no public clock figure for "
            "Blackwell parts in the sources read)")
TRANSFER = {
    "h100_sxm": ("a100_sxm_80gb", 1980, EKS),
    "h100_pcie": ("a100_sxm_80gb", 1755, SPEC),
    "h200_sxm": ("a100_sxm_80gb", 1980, "nvidia-smi -q -d CLOCK (awslabs/amazon-eks-ami#1985)"),
    "a100_sxm_40gb": ("a100_sxm_80gb", 1410, NV_SMI),
    "a100_pcie_40gb": ("a100_sxm_80gb", 1410, "Perseus artifact generate_profile_csv.py grid"),
    "a100_pcie_80gb": ("a100_sxm_80gb", 1410, "Perseus artifact generate_profile_csv.py grid"),
    "a10": ("a40", 1695, SPEC),
    "l4": ("a40", 2040, SPEC + " (sourcecode.com / pcpartdb.com)"),
    "l40s": ("a40", 2520, SPEC),
    "v100_sxm2_32gb": ("a100_sxm_80gb", 1530, NV_SMI),
    "v100_sxm2_16gb": ("a100_sxm_80gb", 1530, NV_SMI),
    "v100_pcie_16gb": ("a100_sxm_80gb", 1380, SPEC),
    "t4": ("a40", 1590, NV_SMI),
    "rtx_4090": ("a40", 2520, "nvbench device query (NVIDIA/nvbench#207)"),
    "rtx_3090": ("a40", 1695, SPEC + " (hardwaredb.net)"),
    "rtx_a6000": ("a40", 1800, SPEC),
    "mi250x": ("a100_sxm_80gb", 1700, SPEC + " (AMD; no NVIDIA-style clock data)"),
    "mi300x": ("a100_sxm_80gb", 2100, SPEC + " (AMD; no NVIDIA-style clock data)"),
    # Types added with the kernel model: no clock figure for them in the sources read.
    "h100_nvl": ("a100_sxm_80gb", 1980, SAME_DIE),
    "gh200": ("a100_sxm_80gb", 1980, SAME_DIE),
    "h100_sxm_96gb": ("a100_sxm_80gb", 1980, SAME_DIE),
    "b200": ("a100_sxm_80gb", 1980, NO_CLOCK),
    "gb200": ("a100_sxm_80gb", 1980, NO_CLOCK),
    "gb300": ("a100_sxm_80gb", 1980, NO_CLOCK),
}
# The Perseus A100 P2P figure was measured on its PCIe 80GB nodes (clocks.csv).
P2P_ALSO = {"a100_pcie_80gb": 83.64}


def fail(msg):
    sys.exit(f"derive_gpu_freq.py: {msg}")


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def series_of(rows, gpu):
    """(model, stage, op) -> sorted [(f, t, P)] for one GPU."""
    out = {}
    for r in rows:
        if r["gpu"] != gpu or r["knob"] != "sm_freq_mhz":
            continue
        t, e = float(r["time_s"]), float(r["energy_j"])
        key = (r["model"], r["stage"], r["instruction"])
        out.setdefault(key, []).append((int(r["knob_value"]), t, e / t))
    return [sorted(v) for _, v in sorted(out.items())]


def fit_shape(series, shape, params):
    """Best parameters of `shape(f, p)` (a list of candidates); each series gets its own
    least-squares scale. Returns (sse, params, scales)."""
    best = None
    for p in params:
        sse, scales = 0.0, []
        for s in series:
            g = [shape(f, p) for f, _ in s]
            k = sum(y * gi for (_, y), gi in zip(s, g)) / sum(gi * gi for gi in g)
            scales.append(k)
            sse += sum((y / (k * gi) - 1) ** 2 for (_, y), gi in zip(s, g))
        if best is None or sse < best[0]:
            best = (sse, p, scales)
    return best


def errors(series, shape, p, scales):
    rel = [abs(k * shape(f, p) / y - 1) for s, k in zip(series, scales) for f, y in s]
    return math.sqrt(sum(x * x for x in rel) / len(rel)), max(rel), len(rel)


def grid(lo, hi, step):
    n = int(round((hi - lo) / step))
    return [lo + i * step for i in range(n + 1)]


def fit_gpu(rows, gpu, fmax):
    ser = series_of(rows, gpu)
    if not ser:
        fail(f"no sm_freq_mhz rows for {gpu} in freq_stage_profiles.csv")
    ts = [[(f, t) for f, t, _ in s] for s in ser]
    ps = [[(f, p) for f, _, p in s] for s in ser]
    tshape = lambda f, a: a + (1 - a) * fmax / f
    _, a0, _ = fit_shape(ts, tshape, grid(0.0, 1.0, 0.01))
    _, alpha, tsc = fit_shape(ts, tshape, grid(max(0, a0 - 0.01), min(1, a0 + 0.01), 0.0005))
    pshape = lambda f, q: q[0] + (1 - q[0]) * (f / fmax) ** q[1]
    coarse = [(s, k) for s in grid(0.0, 0.9, 0.05) for k in grid(0.5, 8.0, 0.25)]
    _, (s0, k0), _ = fit_shape(ps, pshape, coarse)
    fine = [(s, k) for s in grid(max(0, s0 - 0.05), s0 + 0.05, 0.0025)
            for k in grid(max(0.1, k0 - 0.25), k0 + 0.25, 0.0125)]
    _, (ps_, pk), psc = fit_shape(ps, pshape, fine)
    terr = errors(ts, tshape, alpha, tsc)
    perr = errors(ps, pshape, (ps_, pk), psc)
    fmin = min(f for s in ser for f, _, _ in s)
    # median normalised point per clock: what tests/test_freq.c checks the C model against
    pts = {}
    for s, kt, kp in zip(ser, tsc, psc):
        for f, t, p in s:
            pts.setdefault(f, ([], []))
            pts[f][0].append(t / kt)
            pts[f][1].append(p / kp)
    med = [(f, statistics.median(v[0]), statistics.median(v[1])) for f, v in sorted(pts.items())]
    return dict(alpha=alpha, p_static=ps_, p_exp=pk, terr=terr, perr=perr, fmin=fmin,
                fmax=fmax, points=med)


def comm_rule(p2p, idle_w, how):
    """comm_w from a P2P-blocking figure: never below idle_w. A GPU blocked on a receive
    is an idle GPU with a CUDA context plus a polling kernel; a measured figure a few %
    below our idle_w estimate says that estimate is slightly high, not that waiting is
    cheaper than idling (the exact planner's energy bound relies on comm_w >= idle_w)."""
    if p2p >= idle_w:
        return p2p, f"P2P-blocking power {fmt(p2p, 3)} W ({how}; {P2P_SRC})"
    return idle_w, (f"idle_w {fmt(idle_w, 3)} W: the P2P-blocking power {fmt(p2p, 3)} W "
                    f"({how}; {P2P_SRC}) is {fmt(100 * (1 - p2p / idle_w), 2)} % below "
                    f"idle_w - within the idle estimate's error - and waiting cannot cost "
                    f"less than idling")


def grid_min(fmax, share):
    """Lowest clock on the 15 MHz grid below f_max that keeps f/f_max >= share."""
    n = int(math.floor((fmax - share * fmax) / STEP_MHZ + 1e-9))
    return fmax - n * STEP_MHZ


def fmt(x, nd=6):
    return f"{x:.{nd}f}".rstrip("0").rstrip(".")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", metavar="DIR", help=public_sources.DATA_HELP)
    a = ap.parse_args()
    shared = public_sources.data_dir(a.data, ["energy/freq_stage_profiles.csv"],
                                     "derive_gpu_freq.py")
    prof = os.path.join(shared, "energy", "freq_stage_profiles.csv")
    rows = read_rows(prof)
    gpus = read_rows(os.path.join(ROOT, "topologies", "gpus.csv"))
    idle = {g["id"]: float(g["idle_w"]) for g in gpus}
    fits = {k: fit_gpu(rows, v[0], v[1]) for k, v in MEASURED.items()}
    out = []
    for g in gpus:
        gid = g["id"]
        if gid in MEASURED:
            m = fits[gid]
            fmin, fmax, basis = m["fmin"], m["fmax"], "measured"
            comm, csrc = comm_rule(MEASURED[gid][2], idle[gid], "measured on this GPU")
            src = (f"{PERSEUS}; clocks {fmin}-{fmax} MHz step {STEP_MHZ} = the profiled grid; "
                   f"comm_w = {csrc}")
        elif gid in TRANSFER:
            near, fmax, fsrc = TRANSFER[gid]
            m = fits[near]
            fmin = grid_min(fmax, m["fmin"] / m["fmax"])
            basis = f"transfer:{near}"
            if gid in P2P_ALSO:
                comm, csrc = comm_rule(P2P_ALSO[gid], idle[gid], "measured on A100 PCIe 80GB")
            else:
                ratio = MEASURED[near][2] / idle[near]
                comm, csrc = comm_rule(idle[gid] * ratio, idle[gid],
                                       f"idle_w x {fmt(ratio, 4)} = the P2P-blocking / idle_w "
                                       f"ratio of {near}")
            src = (f"TRANSFER (no frequency profile for this GPU): alpha/p_static/p_exp of "
                   f"{near} fitted on {PERSEUS}; f_max {fmax} MHz from {fsrc}; f_min keeps "
                   f"{near}'s profiled share {m['fmin']}/{m['fmax']}; comm_w = {csrc}")
        else:
            fail(f"GPU {gid} of gpus.csv has no frequency rule; add it to TRANSFER")
        out.append([gid, str(fmin), str(fmax), str(STEP_MHZ), fmt(m["alpha"]),
                    fmt(m["p_static"]), fmt(m["p_exp"]), fmt(comm, 3),
                    fmt(m["terr"][0]), fmt(m["terr"][1]), fmt(m["perr"][0]), fmt(m["perr"][1]),
                    str(m["terr"][2]), basis, src])
    hdr = ["id", "f_min_mhz", "f_max_mhz", "step_mhz", "alpha", "p_static", "p_exp", "comm_w",
           "t_err_rms", "t_err_max", "p_err_rms", "p_err_max", "npoints", "basis", "source"]
    with open(os.path.join(ROOT, "topologies", "gpu_freq.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(hdr)
        w.writerows(out)
    with open(os.path.join(ROOT, "topologies", "gpu_freq_points.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "f_mhz", "t_ratio", "p_ratio", "source"])
        for gid, m in fits.items():
            for fr, t, p in m["points"]:
                w.writerow([gid, fr, fmt(t), fmt(p),
                            "median over the stage/op series of " + PERSEUS])
    for gid, m in fits.items():
        print(f"{gid}: alpha {m['alpha']:.4f} p_static {m['p_static']:.4f} p_exp "
              f"{m['p_exp']:.4f}; time err rms {m['terr'][0]:.4f} max {m['terr'][1]:.4f}; "
              f"power err rms {m['perr'][0]:.4f} max {m['perr'][1]:.4f} ({m['terr'][2]} points)")


if __name__ == "__main__":
    main()
