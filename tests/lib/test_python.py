"""tests/lib/test_python.py - python/geotrain.py against the command line.

Run by tests/lib_test.sh (make test-lib) as: python3 tests/lib/test_python.py GEOTRAIN
The oracle is the geotrain binary itself: the module goes through the shared
library, the binary through its own main(), and both must give the same figures.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import geotrain  # noqa: E402

BIN = sys.argv[1]
TOPO = "topologies/yuan2022/case5.json"
PLAN = "topologies/plans/case5-rank-order.plan.json"
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1


def cli_json(*args):
    out = subprocess.run([BIN, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


# simulate: same document as `geotrain simulate --json -`
r = geotrain.simulate(TOPO, "gpt3-xl", PLAN, batch=1024)
c = cli_json("simulate", "-t", TOPO, "-m", "gpt3-xl", "--batch", "1024", "-p", PLAN,
             "--json", "-")
check(isinstance(r, dict), "simulate returns a dict")
check(r["iteration_time_s"] == c["iteration_time_s"],
      "simulate iteration time %r == CLI %r" % (r["iteration_time_s"], c["iteration_time_s"]))
check(r["energy_j"] == c["energy_j"], "simulate energy equals the CLI's")
check(r["per_gpu"] == c["per_gpu"], "per-GPU rows equal the CLI's")
check(len(r["per_gpu"]) == r["gpus_used"] == 64, "64 GPUs reported")

# plan: the greedy baseline is deterministic; its plan replays as the CLI replays it
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "greedy.plan.json")
    p = geotrain.plan(TOPO, "gpt3-xl", planner="greedy", batch=1024, out=out)
    check(p["planner"] == "greedy" and isinstance(p["plan"], dict), "plan returns a dict")
    check(os.path.exists(out), "plan wrote the plan file")
    c = cli_json("simulate", "-t", TOPO, "-m", "gpt3-xl", "--batch", "1024", "-p", out,
                 "--json", "-")
    check(abs(p["iteration_s"] - c["iteration_time_s"]) <= 1e-9 * c["iteration_time_s"],
          "plan's replay %r == CLI replay of its file %r" % (p["iteration_s"],
                                                            c["iteration_time_s"]))
    check(p["gpus"] == c["gpus_used"], "plan's GPU count equals the replay's")

# errors come back as geotrain.Error with the library's message
try:
    geotrain.simulate(TOPO, "no-such-model", PLAN)
    check(False, "unknown model raises")
except geotrain.Error as e:
    check(e.status == 1 and "no-such-model" in str(e), "unknown model raises: %s" % e)
try:
    geotrain.plan(TOPO, "gpt3-xl", planner="nope")
    check(False, "unknown planner raises")
except geotrain.Error as e:
    check(e.status == 3 and "nope" in str(e), "unknown planner raises: %s" % e)
check(geotrain.version().count(".") == 2, "version " + geotrain.version())

print("python module: %d failure(s)" % failures)
sys.exit(1 if failures else 0)
