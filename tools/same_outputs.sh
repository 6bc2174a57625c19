#!/bin/sh
# same_outputs.sh — record or check that the command line gives the same
# outputs byte for byte: `simulate --json`, `plan -o` and `compare --json` on
# the example topologies (topologies/plans/*.plan.json with their topologies,
# -m gpt3-xl and the batch the plan adds up to). Wall-clock fields (plan_time_s, search time in a
# plan's note, "version"/"command"/"inputs" provenance) are blanked before the
# comparison, so a refactoring can be checked against its starting point.
#
#   tools/same_outputs.sh record DIR   write the outputs of ./geotrain to DIR
#   tools/same_outputs.sh check DIR    run again and diff against DIR
set -eu
mode=${1:?usage: same_outputs.sh record|check DIR}
ref=${2:?usage: same_outputs.sh record|check DIR}
bin=${GEOTRAIN:-./geotrain}
case $mode in
    record) out=$ref ;;
    check) out=$(mktemp -d) ;;
    *) echo "same_outputs.sh: mode must be record or check" >&2; exit 2 ;;
esac
mkdir -p "$out"
# plan file -> its topology and the batch its microbatches add up to
topo_of() {
    case $1 in
        aws-world-10) echo topologies/real/aws-world-10.json 1000 ;;
        case1) echo topologies/yuan2022/case1.json 1024 ;;
        case5) echo topologies/yuan2022/case5.json 1024 ;;
        world-hetero) echo topologies/pools/world-hetero.json 1022 ;;
        *) echo "same_outputs.sh: no topology known for $1" >&2; exit 2 ;;
    esac
}
# drop the fields that measure the machine, not the model, and the
# "provenance" block (version, commit, command line, input checksums)
scrub() {
    python3 -c '
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r",\n  \"provenance\": \{.*?\n  \}", "", s, flags=re.S)
s = re.sub(r"\"plan_time_s\": *[-0-9.e+]*", "\"plan_time_s\": T", s)
s = re.sub(r"search [0-9.]* s, ", "", s)
s = re.sub(r" replayed in [0-9.]* s", " replayed", s)
sys.stdout.write(s)' "$1"
}
for p in topologies/plans/*.plan.json; do
    name=$(basename "$p" -rank-order.plan.json)
    set -- $(topo_of "$name")
    t=$1 job="-m gpt3-xl --batch $2"
    # shellcheck disable=SC2086
    $bin simulate -t "$t" $job -p "$p" --json "$out/$name.sim.json" >/dev/null
    # shellcheck disable=SC2086
    $bin plan -t "$t" $job --generations 3 --threads 1 -o "$out/$name.plan.json" \
        >/dev/null 2>&1
    # shellcheck disable=SC2086
    $bin compare -t "$t" $job --planners greedy,megatron,atlas --threads 1 \
        --json "$out/$name.compare.json" >/dev/null 2>&1
done
[ "$mode" = record ] && { echo "recorded in $ref"; exit 0; }
bad=0
for f in "$ref"/*.json; do
    g=$out/$(basename "$f")
    if ! scrub "$f" | cmp -s - "$(scrub "$g" >"$g.s"; echo "$g.s")"; then
        echo "DIFFERS: $(basename "$f")"; scrub "$f" | diff - "$g.s" | head -20; bad=1
    fi
done
rm -rf "$out"
[ $bad = 0 ] && echo "same outputs: $(ls "$ref"/*.json | wc -l) files identical"
exit $bad
