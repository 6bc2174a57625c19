#!/bin/sh
# same_outputs.sh — byte-for-byte regression of the simulator, the planners
# and compare on the shipped examples, for changes that must not move any
# figure (issue 18: the network solver, event heap and estimator rewrites).
#
#   tools/same_outputs.sh save DIR    write the reference outputs into DIR
#   tools/same_outputs.sh check DIR   regenerate and diff against DIR
#
# Covers: simulate --json of every example plan (recompute none / full, fair
# and temporal WAN policy, 3 jittered iterations); plan -o with greedy,
# megatron and memetic (fixed generations, one thread) on every shipped
# topology; compare --json of deterministic planners; E11's validation
# inputs (pipelines on one node, rings over D sites). Timing fields that
# measure wall clock (planning time) are removed before the diff.
set -u
mode=${1:-}
ref=${2:-}
if [ "$mode" != save ] && [ "$mode" != check ] || [ -z "$ref" ]; then
    echo "usage: tools/same_outputs.sh save|check DIR" >&2
    exit 2
fi
bin=${GEOTRAIN_BIN:-./geotrain}
[ -x "$bin" ] || { echo "same_outputs: $bin not built (run make)" >&2; exit 2; }
out=$ref
[ "$mode" = check ] && out=$(mktemp -d)
mkdir -p "$out"

# drop wall-clock figures (planning times, the memetic note's seconds) and
# the build's identity in the provenance block (commit, version)
strip() { sed -E -e 's/"(commit|version)": "[^"]*"/"\1": ""/g' -e 's/ in [0-9.]+ s/ in # s/g; s/search [0-9.]+ s/search # s/g' -e 's/"(plan_time_s|plan_time_s_min|plan_time_s_max|planning_s|wall_s|elapsed_s|time_used_s|budget_used_s)": [-0-9.e+]+/"\1": 0/g'; }

sim() { # name topo plan batch extra...
    name=$1 t=$2 p=$3 b=$4
    shift 4
    "$bin" simulate -t "$t" -m gpt3-xl --batch "$b" -p "$p" --json - "$@" 2>&1 | strip >"$out/sim-$name.json"
}
for rc in none full; do
    sim case1-$rc topologies/yuan2022/case1.json topologies/plans/case1-rank-order.plan.json 1024 --recompute $rc
    sim case5-$rc topologies/yuan2022/case5.json topologies/plans/case5-rank-order.plan.json 1024 --recompute $rc
    sim aws10-$rc topologies/real/aws-world-10.json topologies/plans/aws-world-10-rank-order.plan.json 1000 --recompute $rc
    sim whet-$rc topologies/pools/world-hetero.json topologies/plans/world-hetero-rank-order.plan.json 1022 --recompute $rc
done
sim aws10-temporal topologies/real/aws-world-10.json topologies/plans/aws-world-10-rank-order.plan.json 1000 --wan-policy temporal
sim case5-jitter topologies/yuan2022/case5.json topologies/plans/case5-rank-order.plan.json 1024 --iterations 3 --jitter 0.1 --seed 7

for t in topologies/yuan2022/case*.json topologies/real/*.json topologies/pools/*.json; do
    n=$(basename "$t" .json)
    for pl in greedy megatron; do
        "$bin" plan -t "$t" -m gpt3-xl --recompute full --planner $pl -o "$out/plan-$n-$pl.json" \
            >/dev/null 2>"$out/plan-$n-$pl.err"
        [ -f "$out/plan-$n-$pl.json" ] && strip <"$out/plan-$n-$pl.json" >"$out/p.tmp" &&
            mv "$out/p.tmp" "$out/plan-$n-$pl.json"
    done
    "$bin" plan -t "$t" -m gpt3-xl --recompute full --generations 3 --threads 1 --seed 3 \
        -o "$out/plan-$n-memetic.json" >/dev/null 2>"$out/plan-$n-memetic.err"
    [ -f "$out/plan-$n-memetic.json" ] && strip <"$out/plan-$n-memetic.json" >"$out/p.tmp" &&
        mv "$out/p.tmp" "$out/plan-$n-memetic.json"
done
for t in topologies/yuan2022/case3.json topologies/real/aws-us-4.json; do
    n=$(basename "$t" .json)
    "$bin" compare -t "$t" -m gpt3-xl --recompute full --planners greedy,megatron,metis,atlas \
        --threads 1 --json - 2>&1 | strip >"$out/compare-$n.json"
done

# E11's simulator validation inputs (experiments/defs/E11.sh builds them):
# one 8-GPU node, S-stage GPipe/1F1B pipelines, D-site rings.
WORK=$(mktemp -d)
ROOT=$(pwd) # E11.sh reads the catalogs from $ROOT
QUICK=1
. experiments/defs/E11.sh
e11_inputs
for S in 1 2 4 8; do
    for m in 1 4 16 64; do
        for sch in gpipe 1f1b; do
            e11_pipe_plan $S $m $sch >"$WORK/p.json"
            "$bin" simulate -t "$WORK/one-node.json" -m "$WORK/model.json" --batch $m \
                -p "$WORK/p.json" --json - 2>&1 | strip >"$out/e11-$S-$m-$sch.json"
        done
    done
done
for D in 2 4 8 16; do
    e11_ring_inputs $D
    "$bin" simulate -t "$WORK/ring$D.json" -m "$WORK/model.json" --batch $((D * E11_MICRO)) \
        -p "$WORK/ring$D.plan.json" --json - 2>&1 | strip >"$out/e11-ring$D.json"
done
rm -rf "$WORK"

# paths that differ between runs (the output folder in provenance commands,
# mktemp folders of E11's inputs), in every file; the memetic progress lines
# are printed on a wall-clock timer (how many, and their rates), so they go,
# and compare's progress lines lose their elapsed time and ETA
for f in "$out"/*; do
    sed -E -i -e "s|$out/|OUT/|g" -e 's|/tmp/tmp\.[A-Za-z0-9]+|WORK|g' \
        -e '/^memetic: +gen .* eval\/s /d' -e 's/elapsed [0-9.#]+ s, ETA [^ ]+$/elapsed # s, ETA #/' "$f"
done

[ "$mode" = save ] && { echo "same_outputs: reference in $ref ($(ls "$ref" | wc -l) files)"; exit 0; }
if diff -r "$ref" "$out" >"$out.diff"; then
    echo "same_outputs: identical ($(ls "$ref" | wc -l) files)"
    rm -rf "$out" "$out.diff"
    exit 0
fi
echo "same_outputs: DIFFERENT, see $out.diff" >&2
head -20 "$out.diff" >&2
exit 1
