#!/bin/sh
# tests/run.sh DIR [valgrind] — run every test binary in DIR, print one
# closing line "N passed, N failed" (counting cmocka test cases), and fail if
# any test failed. With "valgrind", each binary runs under memcheck and any
# error or leak fails it.
#
# cmocka names a failing test twice (when it fails and again in its summary),
# so failures are counted as distinct test names, and each is listed once.
dir=$1; mode=${2:-}
pass=0; fail=0; bad=""
for t in "$dir"/test_*; do
    [ -x "$t" ] || continue
    log=$(mktemp)
    if [ "$mode" = valgrind ]; then
        valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
            "$t" >"$log" 2>&1
    else
        "$t" >"$log" 2>&1
    fi
    rc=$?
    p=$(grep -c '^\[       OK \]' "$log")
    names=$(grep -E '^\[  FAILED  \] [A-Za-z_]' "$log" | grep -v 'test(s)' | sed 's/^\[  FAILED  \] //' | sort -u)
    f=$(printf '%s' "$names" | grep -c .)
    pass=$((pass + p)); fail=$((fail + f))
    if [ $rc -ne 0 ]; then
        # a binary that crashed or leaked without a failing case still counts once
        [ "$f" -eq 0 ] && fail=$((fail + 1))
        bad="$bad $(basename "$t")"
        echo "---- $(basename "$t") (exit $rc) ----"
        grep -v '^\[  FAILED  \]\|^\[==========\]\|^\[  PASSED  \]\|^\[ RUN      \]\|^\[       OK \]' "$log" | tail -n 30
        printf '%s\n' "$names" | grep . | sed 's/^/failed: /'
    fi
    rm -f "$log"
done
echo "$pass passed, $fail failed"
[ -z "$bad" ]
