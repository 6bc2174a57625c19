#!/bin/sh
# tests/run.sh DIR [valgrind] — run every test binary in DIR, print one
# closing line "N passed, N failed" (counting cmocka test cases), and fail if
# any test failed. With "valgrind", each binary runs under memcheck and any
# error or leak fails it.
#
# The binaries run TEST_JOBS at a time (default: the number of CPUs), each
# into its own log; the logs are then read in name order, so what is printed
# does not depend on which binary finished first. Every test writes only into
# its own mkdtemp folder, which is what makes running them together safe.
#
# cmocka names a failing test twice (when it fails and again in its summary),
# so failures are counted as distinct test names, and each is listed once.
# one binary (run.sh --one BINARY, with MODE and LOGS in the environment):
# run it, under valgrind if asked, into LOGS/NAME.log, its exit code into
# LOGS/NAME.rc
if [ "${1:-}" = --one ]; then
    t=$2; n=$(basename "$t")
    if [ "$MODE" = valgrind ]; then
        valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
            "$t" >"$LOGS/$n.log" 2>&1
    else
        "$t" >"$LOGS/$n.log" 2>&1
    fi
    echo $? >"$LOGS/$n.rc"
    exit 0
fi

dir=$1
MODE=${2:-}
LOGS=$(mktemp -d)
export MODE LOGS
trap 'rm -rf "$LOGS"' EXIT INT TERM
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
for t in "$dir"/test_*; do [ -x "$t" ] && echo "$t"; done >"$LOGS/list"
# The longest binaries start first: with two CPUs, test_planner (over a minute)
# started last would add its whole time to the wall clock. Only the start order
# changes; the report below still reads the logs in name order.
heavy="test_planner test_memetic_niches test_dominance test_cli_runs test_study test_exact test_experiments_driver test_timeline"
for h in $heavy; do grep "/$h\$" "$LOGS/list"; done >"$LOGS/order"
grep -v -x -F -f "$LOGS/order" "$LOGS/list" >>"$LOGS/order"
xargs -P "$jobs" -n 1 sh "$0" --one <"$LOGS/order"

pass=0; fail=0; bad=""
while read -r t; do
    n=$(basename "$t"); log="$LOGS/$n.log"
    rc=$(cat "$LOGS/$n.rc" 2>/dev/null || echo 127)
    p=$(grep -c '^\[       OK \]' "$log")
    names=$(grep -E '^\[  FAILED  \] [A-Za-z_]' "$log" | grep -v 'test(s)' | sed 's/^\[  FAILED  \] //' | sort -u)
    f=$(printf '%s' "$names" | grep -c .)
    pass=$((pass + p)); fail=$((fail + f))
    if [ "$rc" -ne 0 ]; then
        # a binary that crashed or leaked without a failing case still counts once
        [ "$f" -eq 0 ] && fail=$((fail + 1))
        bad="$bad $n"
        echo "---- $n (exit $rc) ----"
        grep -v '^\[  FAILED  \]\|^\[==========\]\|^\[  PASSED  \]\|^\[ RUN      \]\|^\[       OK \]' "$log" | tail -n 30
        printf '%s\n' "$names" | grep . | sed 's/^/failed: /'
    fi
done <"$LOGS/list"
echo "$pass passed, $fail failed"
[ -z "$bad" ]
