#!/usr/bin/env python3
"""derive_powercap_check.py - cross-check the SM-frequency model against power-limit sweeps.

The frequency model of topologies/gpu_freq.csv (derive_gpu_freq.py) was fitted on locked SM
clocks. This script tests it on measurements it was NOT fitted on: training under a GPU
*power limit*. A power limit is not a clock. The driver lowers clocks (and voltage) until the
draw fits under the limit, and a workload that draws less than the limit is not slowed at
all. The model's reading of a limit PL:

    the draw at clock f is P0 * p_ratio(f), P0 = the draw at the maximum limit;
    PL >= P0: no slowdown;  otherwise the clock is f* = the highest grid clock with
    P0 * p_ratio(f*) <= PL, and the time ratio is t_ratio(f*), the power ratio p_ratio(f*).
    If even f_min draws more than PL, the limit is below the model's clock range (reported
    apart: the model cannot say what happens there).

Needs  <shared>/energy/power_limit_traces.csv  (Zeus NSDI'23 single-GPU training traces:
       power limit -> time per epoch, average power; A40, V100, ...)
       <shared>/energy/pp_power_limit_sweeps.csv  (Perseus SOSP'24 artifact, Zeus baselines on
       real pipeline-parallel training with Merak: the same power limit on every stage ->
       iteration time and energy; A100 PCIe 80GB PP4, A40 PP8)
       plus topologies/gpu_freq.csv and topologies/gpus.csv.
Writes topologies/gpu_powercap_points.csv  the points used: per (GPU, workload, limit) the
       median over the trace's batch sizes / optimizers of time and power relative to the
       maximum limit (pipelines: time and energy relative to the maximum limit).
Prints the model's error on them, per GPU and set.

P0 of a pipeline: the artifact gives only the energy of all GPUs, so the per-GPU draw while
computing is not known; the model's own compute power at f_max, tdp_w of gpus.csv, is used.

Usage:  python3 topologies/derive/derive_powercap_check.py --data DIR  (or GEOTRAIN_REFDATA)
Python 3 standard library only; deterministic output.
"""
import argparse
import csv
import math
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import public_sources  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZEUS = "Zeus NSDI'23 power traces (github.com/ml-energy/zeus 75a8b939 summary_power_{gpu}.csv)"
PERSEUS = ("Perseus SOSP'24 artifact Zeus baselines on Merak, ZeusGlobal (github.com/ml-energy/"
           "zeus branch kronos 1b1c4a9d sosp24_data/zeus/csv/{gpu}/zeus_global.csv)")
# trace GPU name -> our id. The Zeus traces do not state the SKU; a V100 whose limit tops out
# at 250 W is the PCIe part (the SXM2 goes to 300 W). Quadro RTX 6000 and P100 have no row in
# gpus.csv and are not used.
ZEUS_GPU = {"A40": "a40", "V100": "v100_pcie_16gb"}
MILD = 0.75  # a limit >= 0.75 x the draw at the maximum limit counts as mild
PP_GPU = {"A40-48GB": ("a40", "A40"), "A100-PCIe-80GB": ("a100_pcie_80gb", "A100")}


def fail(msg):
    sys.exit(f"derive_powercap_check.py: {msg}")


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def fmt(x, nd=6):
    return f"{x:.{nd}f}".rstrip("0").rstrip(".")


class Model:
    """The frequency model of one gpu_freq.csv row (same formulas as sim/inputs/freq.c)."""

    def __init__(self, row):
        self.fmin, self.fmax = int(row["f_min_mhz"]), int(row["f_max_mhz"])
        self.step = int(row["step_mhz"])
        self.alpha, self.ps = float(row["alpha"]), float(row["p_static"])
        self.pe = float(row["p_exp"])
        self.basis = row["basis"]

    def t_ratio(self, f):
        return self.alpha + (1 - self.alpha) * self.fmax / f

    def p_ratio(self, f):
        return self.ps + (1 - self.ps) * (f / self.fmax) ** self.pe

    def under_cap(self, p0, cap):
        """(t ratio, p ratio, in_range) under a limit cap for a draw p0 at f_max."""
        if cap >= p0:
            return 1.0, 1.0, True
        for f in range(self.fmax, self.fmin - 1, -self.step):
            if p0 * self.p_ratio(f) <= cap:
                return self.t_ratio(f), self.p_ratio(f), True
        return self.t_ratio(self.fmin), self.p_ratio(self.fmin), False


def zeus_points(rows):
    """Per (gpu, workload, limit): median t/t0, P/P0 and P0 over the configurations."""
    base, groups = {}, defaultdict(list)
    for r in rows:
        if r["gpu"] not in ZEUS_GPU:
            continue
        cfg = (r["gpu"], r["dataset"], r["model"], r["batch_size"], r["optimizer"])
        pl, t, p = float(r["knob_value"]), float(r["time_per_epoch_s"]), float(r["average_power_w"])
        if cfg not in base or pl > base[cfg][0]:
            base[cfg] = (pl, t, p)
        groups[cfg].append((pl, t, p))
    agg = defaultdict(list)
    for cfg, pts in groups.items():
        pl0, t0, p0 = base[cfg]
        for pl, t, p in pts:
            agg[(cfg[0], f"{cfg[2]}/{cfg[1]}", pl)].append((t / t0, p / p0, p0, pl0))
    out = []
    for (gpu, wl, pl), v in sorted(agg.items()):
        out.append({"id": ZEUS_GPU[gpu], "set": "zeus-single-gpu", "workload": wl, "pl_w": pl,
                    "p0_w": statistics.median(x[2] for x in v),
                    "t_ratio": statistics.median(x[0] for x in v),
                    "p_ratio": statistics.median(x[1] for x in v), "e_ratio": None,
                    "n": len(v), "source": ZEUS.format(gpu=gpu.lower())})
    return out


def pp_points(rows, tdp):
    """Per (gpu, model, limit) of the ZeusGlobal sweeps: time and energy vs the max limit."""
    series = defaultdict(list)
    for r in rows:
        if not r["baseline"].startswith("ZeusGlobal") or r["gpu"] not in PP_GPU:
            continue
        pl = float(r["knob_value_per_stage"].split()[0])
        shape = f"dp{r['dp']} tp{r['tp']} pp{r['pp']}"
        series[(r["gpu"], f"{r['model']} {shape}")].append(
            (pl, float(r["iter_time_s"]), float(r["iter_energy_j"])))
    out = []
    for (gpu, wl), pts in sorted(series.items()):
        pl0, t0, e0 = max(pts)
        gid, folder = PP_GPU[gpu]
        for pl, t, e in sorted(pts):
            out.append({"id": gid, "set": "perseus-pipeline", "workload": wl, "pl_w": pl,
                        "p0_w": tdp[gid], "t_ratio": t / t0, "p_ratio": None,
                        "e_ratio": e / e0, "n": 1, "source": PERSEUS.format(gpu=folder)})
    return out


def report(points, models):
    """Print the model's relative errors per (gpu, set)."""
    by = defaultdict(list)
    for p in points:
        m = models[p["id"]]
        t, pr, ok = m.under_cap(p["p0_w"], p["pl_w"])
        p["t_model"], p["p_model"], p["in_range"] = t, pr, ok
        by[(p["id"], p["set"])].append(p)
    for (gid, st), pts in sorted(by.items()):
        for mild in (True, False):
            report_group(gid, st, models[gid], pts, mild)


def report_group(gid, st, m, pts, mild):
    """Mild limits (PL >= 0.75 P0, where the fit's clocks hold) or deep ones."""
    pts = [p for p in pts if (p["pl_w"] >= MILD * p["p0_w"]) == mild]
    if pts:
        inr = [p for p in pts if p["in_range"]]
        te = [p["t_model"] / p["t_ratio"] - 1 for p in inr]
        pe = [p["p_model"] / p["p_ratio"] - 1 for p in inr if p["p_ratio"]]

        def rms(v):
            return math.sqrt(sum(x * x for x in v) / len(v)) if v else float("nan")

        def mx(v):
            return max((abs(x) for x in v), default=float("nan"))

        def bias(v):
            return statistics.mean(v) if v else float("nan")

        print(f"{gid} ({m.basis}) {st}, {'mild' if mild else 'deep'} limits: {len(pts)} points, "
              f"{len(pts) - len(inr)} "
              f"below the model's clock range; time err rms {rms(te):.3f} max {mx(te):.3f} "
              f"mean {bias(te):+.3f}" +
              (f"; power err rms {rms(pe):.3f} max {mx(pe):.3f} mean {bias(pe):+.3f}"
               if pe else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", metavar="DIR", help=public_sources.DATA_HELP)
    a = ap.parse_args()
    need = ["energy/power_limit_traces.csv", "energy/pp_power_limit_sweeps.csv"]
    shared = public_sources.data_dir(a.data, need, "derive_powercap_check.py")
    models = {r["id"]: Model(r) for r in read_rows(os.path.join(ROOT, "topologies",
                                                                "gpu_freq.csv"))}
    tdp = {r["id"]: float(r["tdp_w"]) for r in read_rows(os.path.join(ROOT, "topologies",
                                                                       "gpus.csv"))}
    for gid in set(ZEUS_GPU.values()) | {v[0] for v in PP_GPU.values()}:
        if gid not in models or gid not in tdp:
            fail(f"GPU {gid} has no row in topologies/gpu_freq.csv or gpus.csv")
    points = zeus_points(read_rows(os.path.join(shared, need[0])))
    points += pp_points(read_rows(os.path.join(shared, need[1])), tdp)
    report(points, models)
    hdr = ["id", "set", "workload", "pl_w", "p0_w", "t_ratio", "p_ratio", "e_ratio", "n_configs",
           "t_model", "p_model", "in_model_range", "source"]
    with open(os.path.join(ROOT, "topologies", "gpu_powercap_points.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(hdr)
        for p in points:
            w.writerow([p["id"], p["set"], p["workload"], fmt(p["pl_w"], 1), fmt(p["p0_w"], 2),
                        fmt(p["t_ratio"]), "" if p["p_ratio"] is None else fmt(p["p_ratio"]),
                        "" if p["e_ratio"] is None else fmt(p["e_ratio"]), p["n"],
                        fmt(p["t_model"]), fmt(p["p_model"]), int(p["in_range"]), p["source"]])


if __name__ == "__main__":
    main()
