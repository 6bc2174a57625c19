#!/usr/bin/env python3
"""derive_generator_tables.py - the region list and WAN measurement table of `geotrain topo gen`.

Reads (from --data DIR, the reference-data folder of docs/data-sources.md):
  regions.csv        region ids, provider, city, country, continent, grid carbon intensity
  wan_latency.csv    round-trip times (skyplane-2022-04 ping means, azure-docs-p95-2026-07,
                     erben-vldb24 same-region pings for the LAN latency)
  wan_bandwidth.csv  skyplane-2022-11 / skyplane-2022-01 iperf3 64-connection throughput

Writes:
  topologies/regions.csv       the 43 AWS/GCP/Azure regions the generator picks from, with
                               coordinates, carbon intensity and LAN latency (each sourced)
  topologies/wan_measured.csv  one row per unordered region pair with a measurement:
                               one-way latency (RTT / 2) and bandwidth per direction

Choices (explained in topologies/GENERATOR.md):
  * latency: skyplane-2022-04 mean ping RTT (the method the shipped real topologies use),
    mean of both directions / 2; where Skyplane has neither direction, the Azure P95 RTT of
    the Microsoft table (Azure-Azure pairs only). Sources are never mixed within a pair.
  * bandwidth: per direction, skyplane-2022-11, else skyplane-2022-01 (one method: iperf3 with
    64 TCP connections between one VM pair, i.e. the per-VM egress caps). DT-FM and Erben rows
    use other methods (NCCL, single stream) and are left out.
  * coordinates: approximate coordinates of the city named by regions.csv, 0.1 degree
    (providers do not publish data-centre locations). Not in <refdata>.
  * carbon: regions.csv grid_carbon_gco2_per_kwh; blank there -> ESTIMATE = mean of the
    other providers' regions in the same country (named in carbon_source).
  * LAN latency: half of the Erben et al. same-zone/same-region ping of the same provider
    (AWS 0.15 ms; GCP mean of five regions; Azure 1.56 ms in the paper's "us-south-2").

Usage:  python3 topologies/derive/derive_generator_tables.py --data DIR
        Standard library only; deterministic output (fixed order and rounding).
        Prints the number of measured pairs and directions.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "topologies", "derive"))
import public_sources  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPO = os.path.join(ROOT, "topologies")

PROVIDERS = ("aws", "gcp", "azure")

# Approximate coordinates (0.1 degree) of the place regions.csv names; the 16 that the
# shipped real topologies use are the same as in derive_topologies.py.
GEO = {
    "aws:us-east-1": (39.0, -77.5, "Ashburn; N. Virginia"),
    "aws:us-east-2": (40.0, -83.0, "Columbus; Ohio"),
    "aws:us-west-1": (37.3, -121.9, "San Jose; N. California"),
    "aws:us-west-2": (45.8, -119.7, "Boardman; Oregon"),
    "aws:eu-central-1": (50.1, 8.7, "Frankfurt"),
    "aws:eu-west-1": (53.3, -6.3, "Dublin"),
    "aws:eu-west-2": (51.5, -0.1, "London"),
    "aws:ap-northeast-1": (35.7, 139.7, "Tokyo"),
    "aws:ap-northeast-2": (37.6, 127.0, "Seoul"),
    "aws:ap-southeast-1": (1.3, 103.8, "Singapore"),
    "aws:ap-south-1": (19.1, 72.9, "Mumbai"),
    "aws:ap-southeast-2": (-33.9, 151.2, "Sydney"),
    "aws:sa-east-1": (-23.5, -46.6, "Sao Paulo"),
    "gcp:us-east1": (33.2, -80.0, "Moncks Corner; South Carolina"),
    "gcp:us-east4": (39.0, -77.5, "Ashburn; Northern Virginia"),
    "gcp:us-central1": (41.3, -95.9, "Council Bluffs; Iowa"),
    "gcp:us-west1": (45.6, -121.2, "The Dalles; Oregon"),
    "gcp:europe-west1": (50.5, 3.8, "St. Ghislain; Belgium"),
    "gcp:europe-west2": (51.5, -0.1, "London"),
    "gcp:europe-west3": (50.1, 8.7, "Frankfurt"),
    "gcp:europe-west4": (53.4, 6.8, "Eemshaven; Netherlands"),
    "gcp:asia-northeast1": (35.7, 139.7, "Tokyo"),
    "gcp:asia-northeast3": (37.6, 127.0, "Seoul"),
    "gcp:asia-southeast1": (1.3, 103.7, "Jurong West; Singapore"),
    "gcp:asia-south1": (19.1, 72.9, "Mumbai"),
    "gcp:asia-east1": (24.1, 120.5, "Changhua County; Taiwan"),
    "gcp:australia-southeast1": (-33.9, 151.2, "Sydney"),
    "gcp:southamerica-east1": (-23.5, -46.8, "Osasco; Sao Paulo"),
    "azure:eastus": (37.4, -79.8, "Virginia"),
    "azure:eastus2": (36.7, -78.4, "Boydton; Virginia"),
    "azure:centralus": (41.6, -93.6, "Des Moines; Iowa"),
    "azure:westus": (37.8, -122.4, "San Francisco; California"),
    "azure:westus2": (47.2, -119.9, "Quincy; Washington"),
    "azure:northeurope": (53.3, -6.3, "Dublin"),
    "azure:westeurope": (52.4, 4.9, "Amsterdam"),
    "azure:uksouth": (51.5, -0.1, "London"),
    "azure:germanywestcentral": (50.1, 8.7, "Frankfurt"),
    "azure:japaneast": (35.7, 139.8, "Tokyo"),
    "azure:koreacentral": (37.6, 127.0, "Seoul"),
    "azure:southeastasia": (1.3, 103.8, "Singapore"),
    "azure:centralindia": (18.6, 73.9, "Pune"),
    "azure:australiaeast": (-33.9, 151.2, "Sydney"),
    "azure:brazilsouth": (-23.6, -46.6, "Sao Paulo"),
}

# Erben et al. same-zone / same-region pings used for the LAN latency, per provider.
LAN_PING = {
    "aws": ["aws:us-west-2"],
    "gcp": ["gcp:us-central1", "gcp:europe-west1", "gcp:asia-east1",
            "gcp:australia-southeast1", "gcp:us-west1"],
    "azure": ["azure:us-south-2"],
}

REGIONS_HEADER = [
    "# source: derived by topologies/derive/derive_generator_tables.py from <refdata>/"
    "regions.csv (ids; city; country; continent; grid_carbon_gco2_per_kwh and its "
    "carbon_source) and <refdata>/wan_latency.csv (erben-vldb24 same-region pings -> "
    "lan_latency_ms = RTT / 2)",
    "# source: lat/lon = approximate coordinates of the named city (0.1 degree); not in "
    "<refdata>; providers do not publish data-centre locations",
    "# source: carbon ESTIMATE rows (blank in <refdata>/regions.csv) = mean of the "
    "same-country regions of other providers; each row names its source",
]

WAN_HEADER = [
    "# source: derived by topologies/derive/derive_generator_tables.py from <refdata>/"
    "wan_latency.csv and <refdata>/wan_bandwidth.csv (see <refdata>/README.md for "
    "the dataset tags)",
    "# source: skyplane-2022-04 = Skyplane latency grid (github.com/skyplane-project/skyplane "
    "profiles/latency.csv blob 9fe874bf; ping mean RTT between VMs); azure-docs-p95-2026-07 = "
    "Microsoft Learn Azure network round-trip latency statistics (P95 of 1-minute probes)",
    "# source: skyplane-2022-11 / skyplane-2022-01 = Skyplane throughput grids (blobs "
    "962dc4de / 3485f5ca): iperf3 receiver throughput with 64 TCP connections for 5 s between "
    "one VM pair (AWS m5.8xlarge / GCP n2-standard-32 / Azure Standard_D32_v5)",
    "# latency_ms is one-way = mean of the measured directions' RTT / 2 (latency_source "
    "keeps both RTTs); a_to_b_gbps / b_to_a_gbps are per direction; *_dataset names the "
    "dataset of each value; empty = not measured (the generator then uses the other "
    "direction or the distance fit of topologies/GENERATOR.md)",
]


def read_csv(shared, name):
    with open(os.path.join(shared, name), newline="") as fp:
        return list(csv.DictReader(fp))


def fmt(x, nd=3):
    s = "%.*f" % (nd, x)
    return s.rstrip("0").rstrip(".") if "." in s else s


def clean(s):
    """Our CSVs never hold a comma or a double quote inside a field."""
    return s.replace(",", ";").replace('"', "'")


def region_rows(shared):
    regs = [r for r in read_csv(shared, "regions.csv")
            if r["provider"] in PROVIDERS and r["region_id"] in GEO]
    missing = sorted(set(GEO) - {r["region_id"] for r in regs})
    if missing:
        sys.exit("regions missing from the shared regions.csv: %s" % missing)
    return regs


def lan_latency(lat_rows):
    """Per provider: (one-way ms, source) from Erben et al. same-region pings."""
    same = {}
    for r in lat_rows:
        if r["src_region_id"] == r["dst_region_id"] and r["source_dataset"].startswith("erben"):
            same[r["src_region_id"]] = float(r["rtt_ms"])
    out = {}
    for prov, regs in LAN_PING.items():
        vals = [same[g] for g in regs]
        mean = sum(vals) / len(vals)
        out[prov] = (round(mean / 2, 3),
                     "half of the mean same-region ping RTT %s ms of %s (wan_latency.csv "
                     "erben-vldb24; Erben et al. VLDB 2024)"
                     % (fmt(mean), "; ".join("%s %s" % (g, fmt(same[g])) for g in regs)))
    return out


def carbon(r, regs):
    v = r["grid_carbon_gco2_per_kwh"].strip()
    if v:
        src = r["carbon_source"]
        short = src.split(" (")[0]
        tag = src[src.find("[row source:"):] if "[row source:" in src else ""
        cfe = src[src.find("Google CFE"):] if "Google CFE" in src else ""
        return v, clean("<refdata>/regions.csv: %s %s%s" % (short, tag, cfe)).strip()
    same = [(o["region_id"], float(o["grid_carbon_gco2_per_kwh"])) for o in regs
            if o["country"] == r["country"] and o["grid_carbon_gco2_per_kwh"].strip()]
    if not same:
        sys.exit("no carbon value for %s nor its country" % r["region_id"])
    mean = sum(v for _, v in same) / len(same)
    return fmt(mean, 2), clean("ESTIMATE: mean of the same-country regions %s (blank in "
                               "<refdata>/regions.csv: %s)"
                               % ("; ".join("%s %s" % (k, fmt(v, 2)) for k, v in same),
                                  r["notes"] or "no value"))


def write_regions(shared, regs, lan):
    path = os.path.join(TOPO, "regions.csv")
    cols = ["region_id", "provider", "city", "country", "continent", "lat", "lon",
            "carbon_g_per_kwh", "lan_latency_ms", "carbon_source", "geo_source", "lan_source"]
    with open(path, "w", newline="") as fp:
        for line in REGIONS_HEADER:
            fp.write(line + "\n")
        fp.write(",".join(cols) + "\n")
        for r in regs:
            rid = r["region_id"]
            lat, lon, place = GEO[rid]
            c, csrc = carbon(r, regs)
            ms, lsrc = lan[r["provider"]]
            row = [rid, r["provider"], clean(r["city"]), r["country"],
                   r["continent"].lower().replace(" ", "-"), fmt(lat, 1), fmt(lon, 1), c,
                   fmt(ms), csrc, clean("approximate coordinates of %s (0.1 degree)" % place),
                   clean(lsrc)]
            fp.write(",".join(row) + "\n")
    return path


def pick_latency(lat_rows, ids):
    """(a, b) sorted -> (one-way ms, source) with one dataset per pair."""
    by = {}
    for r in lat_rows:
        a, b = r["src_region_id"], r["dst_region_id"]
        if a in ids and b in ids and a != b:
            by.setdefault((a, b), {})[r["source_dataset"]] = float(r["rtt_ms"])
    out = {}
    for a in ids:
        for b in ids:
            if a >= b:
                continue
            for ds, what in (("skyplane-2022-04", "mean ping RTT"),
                             ("azure-docs-p95-2026-07", "P95 RTT")):
                ab, ba = by.get((a, b), {}).get(ds), by.get((b, a), {}).get(ds)
                vals = [v for v in (ab, ba) if v is not None]
                if not vals:
                    continue
                ms = round(sum(vals) / len(vals) / 2, 3)
                src = "%s %s a->b %s b->a %s ms; one-way = mean / 2" % (
                    ds, what, fmt(ab) if ab is not None else "n/a",
                    fmt(ba) if ba is not None else "n/a")
                out[(a, b)] = (ms, src, ds)
                break
    return out


def pick_bandwidth(bw_rows, ids):
    """(src, dst) -> (gbps, dataset)."""
    by = {}
    for r in bw_rows:
        a, b = r["src_region_id"], r["dst_region_id"]
        if a in ids and b in ids and a != b:
            by.setdefault((a, b), {})[r["source_dataset"]] = float(r["bandwidth_gbps"])
    out = {}
    for k, m in by.items():
        for ds in ("skyplane-2022-11", "skyplane-2022-01"):
            if ds in m:
                out[k] = (m[ds], ds)
                break
    return out


def write_wan(lat, bw, ids):
    path = os.path.join(TOPO, "wan_measured.csv")
    cols = ["a", "b", "latency_ms", "latency_dataset", "a_to_b_gbps", "a_to_b_dataset",
            "b_to_a_gbps", "b_to_a_dataset", "latency_source"]
    rows = 0
    with open(path, "w", newline="") as fp:
        for line in WAN_HEADER:
            fp.write(line + "\n")
        fp.write(",".join(cols) + "\n")
        for a in ids:
            for b in ids:
                if a >= b:
                    continue
                l, ab, ba = lat.get((a, b)), bw.get((a, b)), bw.get((b, a))
                if not (l or ab or ba):
                    continue
                row = [a, b, fmt(l[0]) if l else "", l[2] if l else "",
                       fmt(ab[0]) if ab else "", ab[1] if ab else "",
                       fmt(ba[0]) if ba else "", ba[1] if ba else "",
                       l[1] if l else "not measured"]
                fp.write(",".join(clean(x) for x in row) + "\n")
                rows += 1
    return path, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", metavar="DIR", help=public_sources.DATA_HELP)
    args = ap.parse_args()
    need = ['regions.csv', 'wan_latency.csv', 'wan_bandwidth.csv']
    shared = public_sources.data_dir(args.data, need, 'derive_generator_tables.py')
    regs = region_rows(shared)
    lat_rows = read_csv(shared, "wan_latency.csv")
    bw_rows = read_csv(shared, "wan_bandwidth.csv")
    ids = sorted(r["region_id"] for r in regs)
    p1 = write_regions(shared, regs, lan_latency(lat_rows))
    lat, bw = pick_latency(lat_rows, ids), pick_bandwidth(bw_rows, ids)
    p2, rows = write_wan(lat, bw, ids)
    public_sources.scrub_tree()
    n = len(ids)
    print("%s: %d regions" % (os.path.relpath(p1, ROOT), n))
    print("%s: %d rows; latency for %d of %d pairs; bandwidth for %d of %d directions"
          % (os.path.relpath(p2, ROOT), rows, len(lat), n * (n - 1) // 2, len(bw), n * (n - 1)))


if __name__ == "__main__":
    main()
