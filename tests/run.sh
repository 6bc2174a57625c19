#!/bin/sh
# tests/run.sh DIR [valgrind] — run every test binary in DIR, print one
# closing line "N passed, N failed" (counting cmocka test cases), and fail if
# any test failed. With "valgrind", each binary runs under memcheck and any
# error or leak fails it.
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
    f=$(grep -c '^\[  FAILED  \]' "$log")
    # the summary line repeats failures as "[  FAILED  ] N test(s)": count test names only
    f=$(grep -E '^\[  FAILED  \] [a-z_]' "$log" | grep -vc 'test(s)')
    pass=$((pass + p)); fail=$((fail + f))
    if [ $rc -ne 0 ]; then
        [ "$f" -eq 0 ] && fail=$((fail + 1))
        bad="$bad $(basename "$t")"
        echo "---- $(basename "$t") (exit $rc) ----"; tail -n 30 "$log"
    fi
    rm -f "$log"
done
echo "$pass passed, $fail failed"
[ -z "$bad" ]
