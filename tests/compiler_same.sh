#!/bin/sh
# compiler_same.sh A B — the same plans from two builds of geotrain (make
# test-clang: the gcc binary and the clang one). The memetic planner draws
# many random numbers; where two draws sat in one argument list their order
# was the compiler's, and gcc and clang gave different plans for the same
# seed. A few seeded searches on shipped topologies, compared byte for byte
# apart from the wall-clock fields and the build's identity.
set -u
a=$1 b=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
strip() { sed -E -e 's/"(commit|version|build_flags)": "[^"]*"/"\1": ""/g' \
    -e 's/"(planner_time_s|plan_time_s)": [-0-9.e+]+/"\1": 0/g' -e 's/ in [0-9.]+ s/ in # s/g'; }
fail=0
for t in topologies/yuan2022/case1.json topologies/real/aws-us-4.json; do
    for bin in "$a" "$b"; do
        n=$(basename "$bin")
        "$bin" plan -t "$t" -m gpt3-xl --recompute full --generations 3 --threads 1 --seed 3 \
            -o "$dir/$n.json" >/dev/null 2>&1 || { echo "compiler_same: $bin plan failed on $t"; exit 1; }
        strip <"$dir/$n.json" | grep -v '"command":' >"$dir/$n.s"
    done
    if ! cmp -s "$dir/$(basename "$a").s" "$dir/$(basename "$b").s"; then
        echo "compiler_same: $a and $b give different memetic plans on $t:"
        diff "$dir/$(basename "$a").s" "$dir/$(basename "$b").s" | head -n 10
        fail=1
    fi
done
[ $fail = 0 ] && echo "gcc and clang builds: the same memetic plans"
exit $fail
