#!/usr/bin/env python3
"""derive_topologies.py - build GeoTrain's topology files from the shared measurements.

Reads (from --data DIR, the reference-data folder of docs/data-sources.md):
  yuan2022_sites.csv, yuan2022_links.csv   the five network scenarios of Yuan et al. 2022
  wan_latency.csv                          skyplane-2022-04 ping mean RTT (+ Erben et al.
                                           same-region pings for the LAN latency)
  wan_bandwidth.csv                        skyplane-2022-11 iperf3 64-connection throughput
  regions.csv                              grid carbon intensity per region
and topologies/gpus.csv (written by derive_catalogs.py) to check the GPU ids.

Writes (docs/formats.md format, strict keys):
  topologies/yuan2022/case1.json .. case5.json
  topologies/real/aws-world-10.json, topologies/real/aws-us-4.json
  topologies/pools/world-hetero.json, us-hetero.json, euasia-hetero.json

Every site and link carries a `source` string naming the dataset row and statistic each
number comes from. The project's loader keeps at most 159 characters of such a string, so
they cite tags like [E] or [L]; the file's top-level `sources` list (unbounded) defines each
tag it uses. Choices are explained in topologies/README.md. After writing, every file is read
back and checked (JSON parses, only known keys, GPU ids exist in the catalog, every pair of
sites has exactly one link, positive numbers) and a summary is printed.

Usage:  python3 topologies/derive/derive_topologies.py --data DIR
        A relative DIR is taken relative to the repository root. Standard library only;
        output is deterministic (fixed ordering and rounding).
"""
import argparse
import csv
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "topologies", "derive"))
import public_sources  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPO = os.path.join(ROOT, "topologies")

GPU_P3 = "v100_sxm2_16gb"

# ---------------------------------------------------------------------------------------
# Facts that are not in <refdata> (each with its source; see README "Sources")
# ---------------------------------------------------------------------------------------

# Power usage effectiveness per operator.
PUE = {
    "aws": (1.15, "pue 1.15 = AWS global PUE for 2023 (first disclosed at re:Invent 2024; "
                  "datacenterdynamics.com 'AWS global data centers achieved PUE of 1.15 in "
                  "2023'; AWS sustainability page repeats 1.15 for 2024)"),
    "gcp": (1.10, "pue 1.10 = Google fleet-wide average PUE (~1.1 as reported by Google; quoted "
                  "in the same datacenterdynamics.com article)"),
    "colo": (1.5, "pue 1.5 = ASSUMPTION for a self-hosted/colocated room (upper end of the "
                  "project's 1.1-1.5 range; IDC estimates 1.63 for on-premises enterprise data "
                  "centres as quoted on AWS's sustainability page)"),
}

# Approximate coordinates of the place named by regions.csv (city column); providers do
# not publish data-centre locations. Rounded to 0.1 degree.
GEO = {
    "aws:us-east-1": (39.0, -77.5, "Ashburn (N. Virginia)"),
    "aws:us-east-2": (40.0, -83.0, "Columbus (Ohio)"),
    "aws:us-west-1": (37.3, -121.9, "San Jose (N. California)"),
    "aws:us-west-2": (45.8, -119.7, "Boardman (Oregon)"),
    "aws:eu-west-1": (53.3, -6.3, "Dublin (Ireland)"),
    "aws:eu-west-2": (51.5, -0.1, "London"),
    "aws:eu-central-1": (50.1, 8.7, "Frankfurt"),
    "aws:ap-northeast-1": (35.7, 139.7, "Tokyo"),
    "aws:ap-northeast-2": (37.6, 127.0, "Seoul"),
    "aws:ap-southeast-1": (1.3, 103.8, "Singapore"),
    "aws:ap-south-1": (19.1, 72.9, "Mumbai"),
    "aws:ap-southeast-2": (-33.9, 151.2, "Sydney"),
    "aws:sa-east-1": (-23.5, -46.6, "Sao Paulo"),
    "gcp:us-central1": (41.3, -95.9, "Council Bluffs (Iowa)"),
    "gcp:europe-west4": (53.4, 6.8, "Eemshaven (Netherlands)"),
    "gcp:asia-southeast1": (1.3, 103.7, "Singapore (Jurong West)"),
}

# Machine shapes: gpu id, GPUs per node, NIC Gbps, source of the NIC figure.
MACHINES = {
    "p3.16xlarge": (GPU_P3, 8, 25, "AWS p3.16xlarge (8 x V100 SXM2 16GB; NVLink): 25 Gbps "
                    "between instances per yuan2022_links.csv case 1 (paper 25 Gbps; code 3.125 GB/s)"),
    "p3.8xlarge": (GPU_P3, 4, 10, "AWS p3.8xlarge (4 x V100): 10 Gbps between instances per "
                   "yuan2022_links.csv case 2 (paper 10 Gbps; code 1.25 GB/s)"),
    "p3.2xlarge": (GPU_P3, 1, 10, "AWS p3.2xlarge (1 x V100): 10 Gbps as for the p3 instances of "
                   "yuan2022_links.csv case 2 (AWS lists 'up to 10 Gigabit')"),
    "p5.48xlarge": ("h100_sxm", 8, 3200, "AWS p5.48xlarge (8 x H100 SXM): 3200 Gbps EFA (AWS EC2 "
                    "P5 documentation; not in <refdata>)"),
    "a2-ultragpu-8g": ("a100_sxm_80gb", 8, 100, "GCP a2-ultragpu-8g (8 x A100 80GB): 100 Gbps "
                       "maximum egress (GCP accelerator-optimized machine documentation; not in "
                       "<refdata>)"),
    "g2-standard-48": ("l4", 4, 50, "GCP g2-standard-48 (4 x L4): 50 Gbps default maximum egress "
                       "(GCP G2 documentation; not in <refdata>)"),
    "g4dn.12xlarge": ("t4", 4, 50, "AWS g4dn.12xlarge (4 x T4): 50 Gbps (AWS EC2 G4dn "
                      "documentation; not in <refdata>)"),
    "g6.12xlarge": ("l4", 4, 40, "AWS g6.12xlarge (4 x L4): 40 Gbps (AWS EC2 G6 documentation; "
                    "not in <refdata>)"),
    "self-hosted-4x4090": ("rtx_4090", 4, 10, "self-hosted 4 x RTX 4090 server (no hyperscaler "
                           "offers GeForce cards): 10 GbE NIC ASSUMED"),
}

TCP = {"window_mb": 3, "connections": 16}

# The loader (sim/inputs/topology.h) keeps at most 159 characters of a site's or link's `source`.
# Those strings are therefore short and cite tags like [E]; each file's top-level `sources`
# list (no length limit) defines every tag it uses.
SOURCE_MAX = 159

YUAN_SRC = ("<refdata>/yuan2022_scenarios.md; yuan2022_sites.csv; yuan2022_links.csv = "
            "Yuan et al. 'Decentralized Training of Foundation Models in Heterogeneous "
            "Environments' NeurIPS 2022 (arXiv:2206.01288) and github.com/DS3Lab/DT-FM commit "
            "69f05e50. 'paper' = *_paper columns; 'code' = *_code columns")

TAGS = {
    "Y": YUAN_SRC,
    "D": ("Yuan WAN links: latency_ms = the DT-FM 'delay' itself (DT-FM's tc/netem puts "
          "'netem delay <d>ms rate <b>Gbit' on every sender's egress per destination; so one way "
          "takes d and a round trip 2d); gbps = the code's bandwidth value (the authors' "
          "realistically obtainable NCCL / UDP-hole-punching rate between AWS regions); "
          "sharing per_pair because tc shapes each destination separately"),
    "C": ("carbon_g_per_kwh = <refdata>/regions.csv grid_carbon_gco2_per_kwh of the site's "
          "region (aws:* rows: Cloud Carbon Footprint coefficients github.com/cloud-carbon-"
          "footprint/cloud-carbon-coefficients from EPA eGRID / EEA / carbonfootprint.com / EMA; "
          "gcp:* rows: github.com/GoogleCloudPlatform/region-carbon-info data/yearly/2024.csv "
          "location-based); the exact row source is in regions.csv carbon_source"),
    "P": "pue AWS: " + PUE["aws"][1],
    "PG": "pue GCP: " + PUE["gcp"][1],
    "PC": "pue self-hosted: " + PUE["colo"][1],
    "G": ("lat/lon = approximate coordinates (0.1 degree) of the city that <refdata>/"
          "regions.csv names for the region (US states: a representative town - Ashburn; "
          "Columbus; San Jose; Boardman; Council Bluffs); general geographic knowledge; not "
          "data-centre locations"),
    "$": "no price_kwh: electricity prices were not collected (<refdata>/README.md gaps)",
    "A": "instance-type availability in the region was not verified (what-if topology)",
    "L": ("WAN latency_ms = (RTT a->b + RTT b->a) / 4 from <refdata>/wan_latency.csv "
          "source_dataset skyplane-2022-04 (Skyplane latency grid; github.com/skyplane-project/"
          "skyplane profiles/latency.csv blob 9fe874bf; ICMP ping mean RTT between AWS m5.large "
          "/ GCP n2-standard-4 VMs)"),
    "B": ("WAN a_to_b_gbps / b_to_a_gbps = <refdata>/wan_bandwidth.csv source_dataset "
          "skyplane-2022-11 per direction (Skyplane throughput grid 2022-11-28; blob 962dc4de; "
          "iperf3 receiver throughput with 64 TCP connections for 5 s between one VM pair: AWS "
          "m5.8xlarge / GCP n2-standard-32); these are per-VM egress caps of the measuring VMs; "
          "sharing 'shared' = all flows between the two sites share one VM's measured cap"),
    "T": ("tcp: window 3 MB (docs/formats.md example; Erben et al. single-stream iperf rates x RTT in "
          "<refdata>/wan_bandwidth.csv imply 2.4-2.7 MB) x 16 connections (NCCL opens "
          "several sockets per peer; the link values are already achievable rates); see "
          "topologies/README.md"),
}

TAG_ORDER = ["Y", "D", "N", "E", "C", "P", "PG", "PC", "G", "$", "A", "L", "B"]

GEN_NOTE = ("generated from <refdata> by topologies/derive/derive_topologies.py; see "
            "topologies/README.md; do not edit by hand")


# ---------------------------------------------------------------------------------------
# Shared data
# ---------------------------------------------------------------------------------------


def read_csv(shared, name):
    with open(os.path.join(shared, name), newline="") as fp:
        return list(csv.DictReader(fp))


def num(s):
    v = float(s)
    return int(v) if v == int(v) else v


def fmt(x):
    s = "%.4f" % x
    return s.rstrip("0").rstrip(".")


class Data:
    def __init__(self, shared):
        self.regions = {r["region_id"]: r for r in read_csv(shared, "regions.csv")}
        self.ysites = read_csv(shared, "yuan2022_sites.csv")
        self.ylinks = read_csv(shared, "yuan2022_links.csv")
        self.rtt, self.lan_rtt = {}, {}
        for r in read_csv(shared, "wan_latency.csv"):
            ds = r["source_dataset"]
            if ds == "skyplane-2022-04":
                key = (r["src_region_id"], r["dst_region_id"])
                assert key not in self.rtt, key
                self.rtt[key] = float(r["rtt_ms"])
            elif ds.startswith("erben") and r["src_region_id"] == r["dst_region_id"]:
                self.lan_rtt.setdefault(r["src_region_id"], []).append(
                    (float(r["rtt_ms"]), r["statistic"], ds))
        self.bw = {}
        for r in read_csv(shared, "wan_bandwidth.csv"):
            if r["source_dataset"] == "skyplane-2022-11":
                key = (r["src_region_id"], r["dst_region_id"])
                assert key not in self.bw, key
                self.bw[key] = (float(r["bandwidth_gbps"]), r["tcp_streams"], r["method"])

    def carbon(self, region):
        r = self.regions[region]
        v = r["grid_carbon_gco2_per_kwh"].strip()
        if not v:
            return None, "no carbon value for %s in regions.csv" % region
        return num(v), "regions.csv %s grid_carbon_gco2_per_kwh (%s)" % (region,
                                                                         r["carbon_source"])

    def lan_latency(self, region):
        """One-way LAN latency (ms) and its source, from Erben et al. same-region pings."""
        prov = region.split(":")[0]
        if region in self.lan_rtt:
            rtt, stat, ds = self.lan_rtt[region][0]
            return round(rtt / 2, 3), ("%s ms = half of the %s ms same-region ping RTT "
                                       "(wan_latency.csv %s %s; %s)"
                                       % (fmt(rtt / 2), fmt(rtt), ds, region, stat))
        same = sorted((k, v[0]) for k, v in self.lan_rtt.items() if k.startswith(prov + ":"))
        assert same, region
        if prov == "aws":
            k, (rtt, stat, ds) = same[0]
            return round(rtt / 2, 3), ("%s ms = half of the %s ms same-region ping RTT measured "
                                       "in %s (wan_latency.csv %s; %s); assumed to hold in every "
                                       "AWS region" % (fmt(rtt / 2), fmt(rtt), k, ds, stat))
        vals = [v[0] for _, v in same]
        mean = sum(vals) / len(vals)
        return round(mean / 2, 3), ("%s ms = half of the mean (%s ms) of the %d same-zone/"
                                    "region %s pings in wan_latency.csv (erben-vldb24: %s)"
                                    % (fmt(mean / 2), fmt(mean), len(vals), prov.upper(),
                                       "; ".join(k for k, _ in same)))



class Notes:
    """Collects the tags a topology uses and renders their definitions."""

    def __init__(self, data):
        self.data = data
        self.used = {}

    def tag(self, t, text=None):
        self.used.setdefault(t, text if text is not None else TAGS[t])
        return "[%s]" % t

    def lan_tag(self, regions, label=None):
        """[E]: LAN latency; `label` names the site(s) when it differs from the region."""
        self.used.setdefault("E", {})
        for r in regions:
            self.used["E"][label or r] = r
        return "[E]"

    def _lan_text(self, entries):
        groups = {}
        for label, r in entries.items():
            groups.setdefault(self.data.lan_latency(r)[1], []).append(label)
        return "LAN latency_ms (one-way): " + " | ".join(
            "%s: %s" % ("; ".join(sorted(ls)), why)
            for why, ls in sorted(groups.items(), key=lambda x: sorted(x[1])))

    def nic_tag(self, machines):
        self.used.setdefault("N", set())
        self.used["N"] |= set(machines)
        return "[N]"

    def sources(self):
        out = []
        for t in sorted(self.used, key=TAG_ORDER.index):
            v = self.used[t]
            if t == "E":
                v = self._lan_text(v)
            if t == "N":
                v = "node NICs: " + " | ".join(MACHINES[m][3] for m in sorted(v))
            out.append("[%s] %s" % (t, v))
        out.append("[T] " + TAGS["T"])
        out.append("GPU ids: topologies/gpus.csv (derived from <refdata>/gpus.csv by "
                   "topologies/derive/derive_catalogs.py)")
        out.append(GEN_NOTE)
        return out


def short(text):
    assert len(text) <= SOURCE_MAX, (len(text), text)
    return text


def site(data, notes, sid, region, nodes, lan, lead, pue_key="aws", lan_region=None):
    """A site; `lead` is the site-specific start of its (short) source string."""
    s = {"id": sid}
    parts = [lead]
    if region:
        s["region"] = region
        s["lat"], s["lon"] = GEO[region][0], GEO[region][1]
        c, _ = data.carbon(region)
        assert c is not None, region
        s["carbon_g_per_kwh"] = c
    s["pue"] = PUE[pue_key][0]
    tail = []
    if region:
        tail.append("carbon " + notes.tag("C"))
    tail.append("pue " + notes.tag({"aws": "P", "gcp": "PG", "colo": "PC"}[pue_key]))
    if region:
        tail.append("lat/lon " + notes.tag("G"))
    tail.append("no price " + notes.tag("$"))
    s["source"] = short("; ".join(parts + tail))
    s["nodes"] = nodes
    s["lan"] = lan
    return s


def node(machine, repeat=1):
    gpu, count, nic, _ = MACHINES[machine]
    n = {"gpu": gpu, "count": count, "nic_gbps": nic}
    if repeat != 1:
        n["repeat"] = repeat
    return n


def topology(name, description, notes, sites, links, tcp=TCP):
    assert len(description) < 512 and len(name) < 128
    return {"name": name, "description": description, "sources": notes.sources(),
            "sites": sites, "links": links, "tcp": dict(tcp)}


def yuan_case_sites(data, case):
    return [r for r in data.ysites if r["case"] == str(case)]


def yuan_links(data, notes, case, ids):
    out = []
    for r in data.ylinks:
        if r["case"] != str(case):
            continue
        a, b = r["site_a"].lower(), r["site_b"].lower()
        assert a in ids and b in ids, (case, a, b)
        paper = ("paper %s ms / %s Gbps" % (r["delay_ms_paper"], r["bw_gbps_paper"])
                 if r["delay_ms_paper"] else "no paper value")
        out.append({
            "a": a, "b": b, "gbps": num(r["bw_code_value"]), "latency_ms": num(r["delay_ms_code"]),
            "sharing": "per_pair",
            "source": short("yuan2022_links.csv case %s %s-%s: code delay %s ms as one-way "
                            "latency; code bw %s Gbps; %s %s%s"
                            % (case, r["site_a"], r["site_b"], r["delay_ms_code"],
                               r["bw_code_value"], paper, notes.tag("Y"), notes.tag("D"))),
        })
    return out


def build_yuan(data):
    out = {}
    aws_lat, _ = data.lan_latency("aws:us-west-2")

    # Case 1: 8 x p3.16xlarge in one (unnamed) AWS region.
    notes = Notes(data)
    rows = yuan_case_sites(data, 1)
    assert len(rows) == 8 and all(r["n_gpus"] == "8" for r in rows)
    lk = [r for r in data.ylinks if r["case"] == "1"][0]
    s = site(data, notes, "aws-dc", None, [node("p3.16xlarge", repeat=8)],
             {"gbps": num(lk["bw_gbps_paper"]), "latency_ms": aws_lat},
             "Yuan case 1 %s: 8 x p3.16xlarge %s; LAN %s Gbps (paper; code %s GB/s) latency %s; "
             "region not stated: no carbon/lat/lon"
             % (notes.tag("Y"), notes.nic_tag(["p3.16xlarge"]), lk["bw_gbps_paper"],
                lk["bw_code_value"], notes.lan_tag(["aws:us-west-2"], "aws-dc (region not stated)")))
    out["case1"] = topology("yuan2022-case1", "Yuan et al. 2022 Case 1 (data center on demand): "
                            "8 x p3.16xlarge = 64 V100 in one AWS data centre; NVLink inside a "
                            "node; 25 Gbps between nodes.", notes, [s], [])

    # Case 2: code/run script: 8 x p3.8xlarge + 32 x p3.2xlarge (paper text says 4 x).
    notes = Notes(data)
    rows = yuan_case_sites(data, 2)
    n4 = sum(1 for r in rows if r["gpus_per_instance"] == "4")
    n1 = sum(int(r["n_gpus"]) for r in rows if r["gpus_per_instance"] == "1")
    assert n4 * 4 + n1 == 64, (n4, n1)
    lk = [r for r in data.ylinks if r["case"] == "2"][0]
    s = site(data, notes, "aws-dc", None,
             [node("p3.8xlarge", repeat=n4), node("p3.2xlarge", repeat=n1)],
             {"gbps": num(lk["bw_gbps_paper"]), "latency_ms": aws_lat},
             "Yuan case 2 %s: %d x p3.8xlarge + %d x p3.2xlarge as in code (paper: 4 x) %s; LAN "
             "%s Gbps (paper) latency %s; no region/carbon"
             % (notes.tag("Y"), n4, n1, notes.nic_tag(["p3.8xlarge", "p3.2xlarge"]),
                lk["bw_gbps_paper"], notes.lan_tag(["aws:us-west-2"], "aws-dc (region not stated)")))
    out["case2"] = topology("yuan2022-case2", "Yuan et al. 2022 Case 2 (data center spot "
                            "instances): 8 x p3.8xlarge + 32 x p3.2xlarge = 64 V100 in one AWS "
                            "data centre; 10 Gbps between instances.", notes, [s], [])

    # Case 3: Ohio 32 + Virginia 32; per-GPU nodes (the emulation's matrices are per rank).
    notes = Notes(data)
    sites, ids = [], []
    for r in yuan_case_sites(data, 3):
        sid, region = r["site"].lower(), "aws:" + r["aws_region"]
        sites.append(site(data, notes, sid, region, [node("p3.2xlarge", repeat=int(r["n_gpus"]))],
                          {"gbps": num(r["intra_site_bw_gbps_paper"]),
                           "latency_ms": num(r["intra_site_delay_ms_code"])},
                          "Yuan case 3 %s: %s %s GPUs (ranks %s) as 1-GPU p3 nodes %s; LAN %s "
                          "Gbps (paper) / %s ms (code)"
                          % (notes.tag("Y"), r["site"], r["n_gpus"], r["gpu_rank_range"],
                             notes.nic_tag(["p3.2xlarge"]), r["intra_site_bw_gbps_paper"],
                             r["intra_site_delay_ms_code"])))
        ids.append(sid)
    out["case3"] = topology("yuan2022-case3", "Yuan et al. 2022 Case 3 (multiple data centers): "
                            "32 V100 in Ohio + 32 in Virginia; 10 Gbps inside a site; 11 ms / "
                            "1.12 Gbps between the sites.", notes, sites,
                            yuan_links(data, notes, 3, ids))

    # Cases 4 and 5: individual GPUs per region; intra-region 5 ms / 2 Gbps (paper+scheduler).
    for case, desc in ((4, "Yuan et al. 2022 Case 4 (regional geo-distributed): 16 V100 each in "
                           "Virginia, Oregon, California and Ohio as individual GPUs; 5 ms / 2 "
                           "Gbps inside a region; 11-67 ms / 1.02-1.25 Gbps between regions."),
                       (5, "Yuan et al. 2022 Case 5 (world-wide geo-distributed): 8 V100 each in "
                           "Oregon, Virginia, Ohio, Tokyo, Seoul, London, Frankfurt and Ireland "
                           "as individual GPUs; 5 ms / 2 Gbps inside a region; 11-238 ms / "
                           "0.335-1.16 Gbps between regions.")):
        notes = Notes(data)
        sites, ids = [], []
        for r in yuan_case_sites(data, case):
            sid, region = r["site"].lower(), "aws:" + r["aws_region"]
            sites.append(site(data, notes, sid, region,
                              [node("p3.2xlarge", repeat=int(r["n_gpus"]))],
                              {"gbps": num(r["intra_site_bw_gbps_paper"]),
                               "latency_ms": num(r["intra_site_delay_ms_paper"])},
                              "Yuan case %d %s: %s %s GPUs (ranks %s) as 1-GPU p3 nodes %s; LAN "
                              "%s ms/%s Gbps (paper; tc 10 ms)"
                              % (case, notes.tag("Y"), r["site"], r["n_gpus"],
                                 r["gpu_rank_range"], notes.nic_tag(["p3.2xlarge"]),
                                 r["intra_site_delay_ms_paper"], r["intra_site_bw_gbps_paper"])))
            ids.append(sid)
        out["case%d" % case] = topology("yuan2022-case%d" % case, desc, notes, sites,
                                        yuan_links(data, notes, case, ids))
    return out


def wan_link(data, notes, a, b, ra, rb):
    """Link between sites a (region ra) and b (region rb) from the Skyplane grids."""
    rab, rba = data.rtt[(ra, rb)], data.rtt[(rb, ra)]
    lat = round((rab + rba) / 4.0, 3)
    (bab, _, _), (bba, _, _) = data.bw[(ra, rb)], data.bw[(rb, ra)]
    return {
        "a": a, "b": b, "a_to_b_gbps": bab, "b_to_a_gbps": bba, "latency_ms": lat,
        "sharing": "shared",
        "source": short("%s->%s (and back): skyplane-2022-04 mean RTT %s/%s ms %s; "
                        "skyplane-2022-11 64-conn iperf3 %s/%s Gbps %s"
                        % (ra, rb, fmt(rab), fmt(rba), notes.tag("L"), fmt(bab), fmt(bba),
                           notes.tag("B"))),
    }


def full_mesh(data, notes, sites):
    links = []
    for i in range(len(sites)):
        for j in range(i + 1, len(sites)):
            a, b = sites[i], sites[j]
            links.append(wan_link(data, notes, a["id"], b["id"], a["region"], b["region"]))
    return links


def build_real(data):
    out = {}
    world = [("virginia", "aws:us-east-1"), ("oregon", "aws:us-west-2"),
             ("ireland", "aws:eu-west-1"), ("frankfurt", "aws:eu-central-1"),
             ("tokyo", "aws:ap-northeast-1"), ("seoul", "aws:ap-northeast-2"),
             ("singapore", "aws:ap-southeast-1"), ("mumbai", "aws:ap-south-1"),
             ("sydney", "aws:ap-southeast-2"), ("sao-paulo", "aws:sa-east-1")]
    us = [("virginia", "aws:us-east-1"), ("ohio", "aws:us-east-2"),
          ("california", "aws:us-west-1"), ("oregon", "aws:us-west-2")]
    for fname, regs, desc in (
            ("aws-world-10", world,
             "Ten AWS regions (US 2; Europe 2; Asia 4; Oceania 1; South America 1), one "
             "p3.16xlarge (8 x V100 16GB) each; WAN from the Skyplane grids (2022-04 latency; "
             "2022-11 bandwidth)."),
            ("aws-us-4", us,
             "Four US AWS regions, one p3.16xlarge (8 x V100 16GB) each; WAN from the Skyplane "
             "grids (2022-04 latency; 2022-11 bandwidth).")):
        notes = Notes(data)
        sites = []
        for sid, region in regs:
            lat, _ = data.lan_latency(region)
            nic = MACHINES["p3.16xlarge"][2]
            sites.append(site(data, notes, sid, region, [node("p3.16xlarge")],
                              {"gbps": nic, "latency_ms": lat},
                              "%s: 1 x p3.16xlarge %s%s; LAN %d Gbps = NIC; latency %s"
                              % (region, notes.nic_tag(["p3.16xlarge"]), notes.tag("A"), nic,
                                 notes.lan_tag([region]))))
        out[fname] = topology(fname, desc, notes, sites, full_mesh(data, notes, sites))
    return out


def build_pools(data):
    out = {}
    specs = {
        "world-hetero": (
            "World-wide heterogeneous pool: 56 GPUs (8 H100; 8 A100 80GB; 16 V100; 8 L4; 8 T4; "
            "8 RTX 4090) in six sites of different sizes on four continents; AWS and GCP "
            "regions; WAN from the Skyplane grids.",
            [("aws-virginia", "aws:us-east-1", [("p5.48xlarge", 1)], "aws"),
             ("gcp-iowa", "gcp:us-central1", [("a2-ultragpu-8g", 1)], "gcp"),
             ("aws-ireland", "aws:eu-west-1", [("p3.16xlarge", 2)], "aws"),
             ("gcp-netherlands", "gcp:europe-west4", [("g2-standard-48", 2)], "gcp"),
             ("aws-tokyo", "aws:ap-northeast-1", [("g4dn.12xlarge", 2)], "aws"),
             ("sydney-4090", "aws:ap-southeast-2", [("self-hosted-4x4090", 2)], "colo")]),
        "us-hetero": (
            "US heterogeneous pool: 32 GPUs (8 H100; 8 A100 80GB; 8 V100; 4 L4; 4 T4) in four "
            "AWS/GCP regions; WAN from the Skyplane grids.",
            [("aws-virginia", "aws:us-east-1", [("p5.48xlarge", 1)], "aws"),
             ("gcp-iowa", "gcp:us-central1", [("a2-ultragpu-8g", 1)], "gcp"),
             ("aws-oregon", "aws:us-west-2", [("p3.16xlarge", 1)], "aws"),
             ("aws-california", "aws:us-west-1", [("g6.12xlarge", 1), ("g4dn.12xlarge", 1)],
              "aws")]),
        "euasia-hetero": (
            "Europe + Asia heterogeneous pool: 32 GPUs (8 A100 80GB; 8 V100; 8 H100; 8 L4) in "
            "two European and two Asian AWS/GCP regions; WAN from the Skyplane grids.",
            [("gcp-netherlands", "gcp:europe-west4", [("a2-ultragpu-8g", 1)], "gcp"),
             ("aws-london", "aws:eu-west-2", [("p3.16xlarge", 1)], "aws"),
             ("aws-tokyo", "aws:ap-northeast-1", [("p5.48xlarge", 1)], "aws"),
             ("gcp-singapore", "gcp:asia-southeast1", [("g2-standard-48", 2)], "gcp")]),
    }
    for fname, (desc, rows) in specs.items():
        notes = Notes(data)
        sites = []
        for sid, region, ms, op in rows:
            nodes = [node(m, k) for m, k in ms]
            nic = max(MACHINES[m][2] for m, _ in ms)
            lat, _ = data.lan_latency(region if op != "colo" else "aws:us-west-2")
            what = " + ".join("%d x %s" % (k, m) for m, k in ms)
            if op == "colo":
                lead = ("HYPOTHETICAL %s %s; WAN+carbon of %s; LAN %s Gbps; latency %s "
                        "assumed" % (what, notes.nic_tag([m for m, _ in ms]), region, fmt(nic),
                                     notes.lan_tag(["aws:us-west-2"], sid + " (assumed)")))
            else:
                lead = ("%s: %s %s%s; LAN %s Gbps = largest NIC; latency %s"
                        % (region, what, notes.nic_tag([m for m, _ in ms]), notes.tag("A"),
                           fmt(nic), notes.lan_tag([region])))
            sites.append(site(data, notes, sid, region, nodes,
                              {"gbps": nic, "latency_ms": lat}, lead, pue_key=op))
        out[fname] = topology(fname, desc, notes, sites, full_mesh(data, notes, sites))
    return out


# ---------------------------------------------------------------------------------------
# Output and checks
# ---------------------------------------------------------------------------------------

TOP_KEYS = {"name", "sources", "sites", "links", "default_wan", "tcp", "description"}
SITE_KEYS = {"id", "region", "lat", "lon", "carbon_g_per_kwh", "pue", "price_kwh", "source",
             "nodes", "lan"}
NODE_KEYS = {"gpu", "count", "nic_gbps", "repeat"}
LINK_KEYS = {"a", "b", "gbps", "a_to_b_gbps", "b_to_a_gbps", "latency_ms", "sharing", "policy",
             "source"}


def dumps(obj, indent=0, width=100):
    """JSON with 2-space indentation; small objects and arrays stay on one line."""
    flat = json.dumps(obj, ensure_ascii=True, separators=(", ", ": "))
    if not isinstance(obj, (dict, list)) or (indent + len(flat) <= width and indent > 0):
        return flat
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(obj, list):
        if not obj:
            return "[]"
        return "[\n" + ",\n".join(inner + dumps(v, indent + 2, width) for v in obj) + "\n" + pad + "]"
    return "{\n" + ",\n".join("%s%s: %s" % (inner, json.dumps(k), dumps(v, indent + 2, width))
                               for k, v in obj.items()) + "\n" + pad + "}"


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = dumps(obj) + "\n"
    assert json.loads(text) == obj
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w") as fp:
        fp.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def positive(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def check(path, gpu_ids):
    """Re-read a written topology and check it; return (errors, summary)."""
    errs = []
    with open(path) as fp:
        d = json.load(fp)
    errs += ["unknown top-level key %s" % k for k in set(d) - TOP_KEYS]
    ids = []
    ngpu = 0
    for s in d["sites"]:
        errs += ["site %s: unknown key %s" % (s.get("id"), k) for k in set(s) - SITE_KEYS]
        ids.append(s["id"])
        if not s.get("nodes"):
            errs.append("site %s: no nodes" % s["id"])
        for n in s["nodes"]:
            errs += ["site %s node: unknown key %s" % (s["id"], k) for k in set(n) - NODE_KEYS]
            if n["gpu"] not in gpu_ids:
                errs.append("site %s: unknown gpu %s" % (s["id"], n["gpu"]))
            if not (isinstance(n["count"], int) and n["count"] > 0):
                errs.append("site %s: bad count" % s["id"])
            ngpu += n["count"] * n.get("repeat", 1)
        if set(s["lan"]) != {"gbps", "latency_ms"} or not all(map(positive, s["lan"].values())):
            errs.append("site %s: bad lan %r" % (s["id"], s["lan"]))
        for k in ("pue", "carbon_g_per_kwh"):
            if k in s and not positive(s[k]):
                errs.append("site %s: bad %s" % (s["id"], k))
        if "pue" in s and not 1.0 <= s["pue"] <= 1.5:
            errs.append("site %s: pue out of 1.0..1.5" % s["id"])
    if len(set(ids)) != len(ids):
        errs.append("duplicate site ids")
    pairs = set()
    for l in d["links"]:
        errs += ["link %s-%s: unknown key %s" % (l["a"], l["b"], k) for k in set(l) - LINK_KEYS]
        if l["a"] not in ids or l["b"] not in ids or l["a"] == l["b"]:
            errs.append("link %s-%s: bad endpoints" % (l["a"], l["b"]))
        p = frozenset((l["a"], l["b"]))
        if p in pairs:
            errs.append("duplicate link %s-%s" % (l["a"], l["b"]))
        pairs.add(p)
        bw = [l[k] for k in ("gbps", "a_to_b_gbps", "b_to_a_gbps") if k in l]
        if not (("gbps" in l) ^ ("a_to_b_gbps" in l and "b_to_a_gbps" in l)):
            errs.append("link %s-%s: give gbps or both directional rates" % (l["a"], l["b"]))
        if not all(map(positive, bw)) or not positive(l["latency_ms"]):
            errs.append("link %s-%s: non-positive number" % (l["a"], l["b"]))
        if l.get("sharing", "shared") not in ("shared", "per_pair"):
            errs.append("link %s-%s: bad sharing" % (l["a"], l["b"]))
        if not l.get("source"):
            errs.append("link %s-%s: no source" % (l["a"], l["b"]))
    if "default_wan" not in d:
        for i in range(len(ids)):
            for j in range(i + 1, len(ids)):
                if frozenset((ids[i], ids[j])) not in pairs:
                    errs.append("missing link %s-%s" % (ids[i], ids[j]))
    return errs, "%d sites; %d GPUs; %d links" % (len(ids), ngpu, len(d["links"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", metavar="DIR", help=public_sources.DATA_HELP)
    args = ap.parse_args()
    need = ['regions.csv', 'yuan2022_sites.csv', 'yuan2022_links.csv', 'wan_latency.csv', 'wan_bandwidth.csv']
    shared = public_sources.data_dir(args.data, need, 'derive_topologies.py')
    data = Data(os.path.normpath(shared))

    with open(os.path.join(TOPO, "gpus.csv"), newline="") as fp:
        gpu_ids = {r["id"] for r in csv.DictReader(fp)}

    files = {}
    for k, v in build_yuan(data).items():
        files[os.path.join("yuan2022", k + ".json")] = v
    for k, v in build_real(data).items():
        files[os.path.join("real", k + ".json")] = v
    for k, v in build_pools(data).items():
        files[os.path.join("pools", k + ".json")] = v

    bad = 0
    for rel in sorted(files):
        path = os.path.join(TOPO, rel)
        write_json(path, files[rel])
        errs, summary = check(path, gpu_ids)
        print("topologies/%-28s %s%s" % (rel, summary, "" if not errs else "  ERRORS:"))
        for e in errs:
            print("    " + e)
        bad += len(errs)
    public_sources.scrub_tree()
    if bad:
        print("%d errors" % bad)
        return 1
    print("all %d topology files parse; keys known; every site pair has one link" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
