#!/bin/sh
# tests/mpi_test.sh — the MPI build (docs/architecture.md), run by hand or by CI when MPI
# is wanted; `make test` does not run it.
#
#   sh tests/mpi_test.sh            builds build-mpi/ with `make MPI=1` (which
#                                   installs Open MPI through tools/deps.sh)
#
# Checks, each with `mpirun -n 2 --oversubscribe`:
#   1. the island model (toy islands of tests/test_study.c) gives the same
#      answer on 1 and 2 ranks;
#   2. `geotrain study` on 2 ranks writes the same CSV as one process (the
#      last column, plan_time_s, is wall clock and is cut off), and a file
#      truncated mid-row resumes on 2 ranks to that same CSV;
#   3. `geotrain plan --islands 2` on 2 ranks writes the same plan as one
#      process with 2 islands.
# As root, Open MPI's mpirun refuses to start without --allow-run-as-root;
# the script passes it (and the matching environment variables) then.
set -u
cd "$(dirname "$0")/.." || exit 1
B=build-mpi
GT=$B/geotrain
TS=$B/tests/test_study
make -s MPI=1 BUILD=$B BIN=$GT $GT $TS >/dev/null || { echo "mpi_test: make MPI=1 failed"; exit 1; }
command -v mpirun >/dev/null 2>&1 || { echo "mpi_test: mpirun not found"; exit 1; }

MPIRUN="mpirun -n 2 --oversubscribe"
if [ "$(id -u)" = 0 ]; then
    MPIRUN="$MPIRUN --allow-run-as-root"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
notime() { sed 's/,[^,]*$//' "$1"; }

# 1. islands
"$TS" --islands-demo >"$T/isl1" 2>/dev/null || bad "islands demo, one process"
timeout 300 $MPIRUN "$TS" --islands-demo >"$T/isl2" 2>"$T/isl2.err" || { cat "$T/isl2.err"; bad "islands demo under mpirun"; }
if [ -s "$T/isl1" ] && cmp -s "$T/isl1" "$T/isl2"; then ok "islands: 1 rank = 2 ranks: $(cat "$T/isl1")"
else bad "islands: 1 rank '$(cat "$T/isl1")' != 2 ranks '$(cat "$T/isl2")'"; fi

# 2. study
planners=megatron,greedy
"$GT" study --help | grep -q ' memetic' && planners=memetic,$planners
STUDY="study --topologies 3 --sites 3 --gpus 12 --planners $planners --seeds 2 -m gpt3-xl --batch 32 --generations 20 --no-progress"
"$GT" $STUDY -o "$T/one.csv" >/dev/null || bad "study, one process"
timeout 600 $MPIRUN "$GT" $STUDY -o "$T/two.csv" >"$T/two.out" 2>&1 || { cat "$T/two.out"; bad "study under mpirun"; }
rows=$(($(wc -l <"$T/one.csv") - 1))
if [ "$rows" -gt 0 ] && [ "$(notime "$T/one.csv")" = "$(notime "$T/two.csv")" ]; then
    ok "study: 2 ranks wrote the same $rows rows as one process ($planners)"
else bad "study: the CSVs differ"; diff "$T/one.csv" "$T/two.csv" | head -5; fi
size=$(wc -c <"$T/one.csv")
head -c $((size / 2 + 7)) "$T/one.csv" >"$T/cut.csv"
timeout 600 $MPIRUN "$GT" $STUDY -o "$T/cut.csv" >"$T/cut.out" 2>&1 || { cat "$T/cut.out"; bad "resume under mpirun"; }
if [ "$(notime "$T/one.csv")" = "$(notime "$T/cut.csv")" ]; then ok "study: truncated mid-row, resumed on 2 ranks: same CSV"
else bad "study: resumed CSV differs"; diff "$T/one.csv" "$T/cut.csv" | head -5; fi

# 3. plan --islands
if "$GT" plan --help 2>/dev/null | grep -q -- '--islands'; then
    "$GT" topo gen --sites 3 --gpus 12 --seed 5 -o "$T/t.json" >/dev/null
    PLAN="plan -t $T/t.json -m gpt3-xl --batch 32 --generations 30 --islands 2"
    "$GT" $PLAN -o "$T/p1.json" >/dev/null 2>&1 || bad "plan --islands 2, one process"
    timeout 600 $MPIRUN "$GT" $PLAN -o "$T/p2.json" >"$T/p2.out" 2>&1 || { cat "$T/p2.out"; bad "plan --islands under mpirun"; }
    strip() { grep -v -e '"plan_time_s"' -e '"note"' "$1"; }
    if [ -s "$T/p1.json" ] && [ "$(strip "$T/p1.json")" = "$(strip "$T/p2.json")" ]; then
        ok "plan --islands 2: 2 ranks = one process"
    else bad "plan --islands: the plans differ"; fi
else
    echo "skip plan --islands: \`geotrain plan\` has no --islands yet (see planner/islands.h)"
fi

[ "$fails" -eq 0 ] && echo "mpi_test: all passed" || echo "mpi_test: $fails failed"
[ "$fails" -eq 0 ]
