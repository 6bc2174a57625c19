"""public_sources.py - what the derivation scripts share: where their input comes from, and
the rule that the files they write name only original public sources.

The derivation scripts (derive_catalogs.py, derive_topologies.py, derive_generator_tables.py,
traces/derive/derive_traces.py) read a folder of reference tables collected from public
material (vendor datasheets, papers, the Skyplane/Erben/Yuan measurement sets, the Oobleck
and Azure traces; docs/data-sources.md lists them). That folder is not part of the
repository, so

* data_dir() insists on being told where it is (--data DIR or $GEOTRAIN_REFDATA) and stops
  with one line naming the files it needs when they are absent;
* the scripts write `<refdata>/NAME` where a text names one of the collection's tables, and
  scrub_tree() rewrites every generated file so that its `source` texts cite the original
  datasets, never the collection's file names, and refuses to leave one it cannot rewrite.

Python 3 standard library only.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DATA_HELP = ("the reference-data folder (public tables collected from the sources that "
             "docs/data-sources.md lists); or set GEOTRAIN_REFDATA")

# What each reference table is, by its original sources (docs/data-sources.md).
TABLES = {
    "gpus": "vendor datasheets and architecture whitepapers",
    "models": "the models' papers and Hugging Face configs",
    "regions": "the region table (Google region-carbon-info 2024; Cloud Carbon Footprint "
               "coefficients)",
    "wan_latency": "the WAN latency measurements (Skyplane 2022; Azure P95; IBM Cloud; Yuan et "
                   "al. 2022; Erben et al. VLDB 2024)",
    "wan_bandwidth": "the WAN bandwidth measurements (Skyplane 2022 grids; Yuan et al. 2022; "
                     "Erben et al. VLDB 2024)",
    "yuan2022_scenarios": "Yuan et al. NeurIPS 2022 scenario definitions",
}

# Ordered rewrites: the specific phrases first, then the generic table reference.
REWRITES = [
    (r" as quoted in (?:the )?<refdata>/README\.md", ""),
    (r"; copied in <refdata>/[A-Za-z0-9_.\-]+", ""),
    (r" as sampled in <refdata>/azure_llm_inference_2023_(\w+)_sample\.csv",
     r" as sampled from the \1 trace"),
    (r"\(derived from <refdata>/gpus\.csv by", "(derived from vendor datasheets by"),
    (r"generated from <refdata> by", "generated from the public measurements named "
     "above by"),
    (r" \(<refdata>/README\.md gaps\)", ""),
    (r"\(DESIGN 3\.2 example; ", "("),
    (r"single-stream iperf rates x RTT in <refdata>/wan_bandwidth\.csv imply",
     "(VLDB 2024) single-stream iperf rates x RTT imply"),
    (r"of the city that <refdata>/regions\.csv names for the region",
     "of the region's city as its provider names it"),
    (r"<refdata>/regions\.csv grid_carbon_gco2_per_kwh of the site's region",
     "grid carbon intensity of the site's region"),
    (r"\(blank in <refdata>/regions\.csv: ", "(no published factor: "),
    (r"<refdata>/regions\.csv: ", ""),
    (r"<refdata>/yuan2022_scenarios\.md; yuan2022_sites\.csv; yuan2022_links\.csv = ",
     ""),
    (r"from <refdata>/wan_latency\.csv source_dataset ", "from measurement set "),
    (r"= <refdata>/wan_bandwidth\.csv source_dataset ", "= measurement set "),
    (r"<refdata>/wan_bandwidth\.csv (skyplane-\d{4}-\d\d)", r"measurement set \1"),
    (r"; not in <refdata>", ""),
    (r"not in <refdata>; ", ""),
    (r"\(see <refdata>/README\.md for the dataset tags\)",
     "(dataset tags: docs/data-sources.md)"),
    (r"per <refdata>/README\.md and yuan2022_scenarios\.md",
     "used by Yuan et al. (NeurIPS 2022; arXiv:2206.01288)"),
    (r"<refdata>/(\w+)\.csv", lambda m: TABLES.get(m.group(1), m.group(0))),
    (r"not in shared gpus\.csv: copied from its (\w+) row",
     r"no datasheet row of its own: copied from \1"),
    (r"shared gpus\.csv row ([\w.\-]+):", r"datasheet values of \1:"),
    (r"not in shared gpus\.csv: from its", "from its"),
    (r"from the shared row \(datasheet\)", "from the datasheet"),
    (r"the shared GPU table", "the datasheet table"),
    (r"shared models\.csv row ([\w.\-]+):", r"published configuration of \1:"),
    (r"no idle figure in shared gpus\.csv", "no published idle figure"),
    (r"\(shared gpus\.csv note\)", "(datasheet note)"),
    (r"shared idle_power_w", "published idle"),
    (r"(\w+) shared idle", r"\1 published idle"),
    (r"Shared row source:", "Source:"),
    (r"\(shared README: ", "("),
    (r"shared note: ", "note: "),
    (r"\(shared table d_head ", "(d_head would be "),
    (r"of the shared file", "of the published trace"),
]

# The design brief's sections now live in the project's docs/.
DOC_OF_SECTION = {"1": "docs/architecture.md", "2": "docs/formats.md", "3": "docs/formats.md",
                  "4": "docs/models.md", "5": "docs/models.md", "6": "docs/models.md",
                  "7": "docs/models.md", "8": "docs/planner.md", "9": "experiments/README.md",
                  "10": "docs/architecture.md", "11": "docs/cli.md"}
REWRITES.append((r"DESIGN(?: section)? (\d+)(?:\.\d+)?",
                 lambda m: DOC_OF_SECTION.get(m.group(1), m.group(0))))

LEFTOVER = re.compile(r"\.\./shared|<refdata>|DESIGN|shared (?:gpus|models)\.csv|shared README|shared row|shared table")


def data_dir(given, needed, script):
    """The reference-data folder: --data DIR, else $GEOTRAIN_REFDATA. Exits with one line
    naming what is needed when it is not given or lacks a file."""
    path = given or os.environ.get("GEOTRAIN_REFDATA")
    what = "a reference-data folder holding %s (see docs/data-sources.md)" % ", ".join(needed)
    if not path:
        sys.exit("%s: needs --data DIR (or GEOTRAIN_REFDATA): %s" % (script, what))
    path = path if os.path.isabs(path) else os.path.join(ROOT, path)
    missing = [n for n in needed if not os.path.isfile(os.path.join(path, n))]
    if missing:
        sys.exit("%s: %s lacks %s: needs %s" % (script, path, ", ".join(missing), what))
    return os.path.normpath(path)


def scrub_text(text, where):
    for pattern, repl in REWRITES:
        text = re.sub(pattern, repl, text)
    m = LEFTOVER.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        sys.exit("public_sources: %s:%d still cites the reference collection (%r); add a "
                 "rewrite naming the original source" % (where, line, m.group(0)))
    return text


GENERATED = [("topologies", (".csv",)), ("topologies/yuan2022", (".json",)),
             ("topologies/real", (".json",)), ("topologies/pools", (".json",)),
             ("traces/wan", (".csv",)), ("traces/avail", (".csv",)),
             ("traces/prefill", (".csv",)), ("traces/profiles", (".csv",))]


def scrub_tree():
    """Rewrite every generated file in place (idempotent: a clean file is left as it is)."""
    for folder, exts in GENERATED:
        d = os.path.join(ROOT, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if not name.endswith(exts) or not os.path.isfile(path):
                continue
            with open(path, newline="") as fp:
                old = fp.read()
            new = scrub_text(old, os.path.relpath(path, ROOT))
            if new != old:
                with open(path, "w", newline="") as fp:
                    fp.write(new)
