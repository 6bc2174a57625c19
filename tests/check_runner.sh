#!/bin/sh
# tests/check_runner.sh — checks tests/run.sh itself on a fake cmocka binary
# whose answer is known: 1 passing case, 2 failing cases (each named twice in
# cmocka's output, as cmocka does), exit status non-zero. run.sh must say
# "1 passed, 2 failed", list each failing case once and fail.
set -u
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
cat >"$w/test_fake" <<'FAKE'
#!/bin/sh
echo "[==========] tests: Running 3 test(s)."
echo "[ RUN      ] case_a"; echo "[       OK ] case_a"
echo "[ RUN      ] case_b"; echo "[  FAILED  ] case_b"
echo "[ RUN      ] case_c"; echo "[  FAILED  ] case_c"
echo "[  PASSED  ] 1 test(s)."
echo "[  FAILED  ] 2 test(s), listed below:"
echo "[  FAILED  ] case_b"; echo "[  FAILED  ] case_c"
exit 2
FAKE
chmod +x "$w/test_fake"
out=$(sh "$(dirname "$0")/run.sh" "$w"); rc=$?
ok=1
[ $rc -ne 0 ] || { echo "check_runner: run.sh exited 0 on a failing binary"; ok=0; }
echo "$out" | tail -n 1 | grep -qx '1 passed, 2 failed' ||
    { echo "check_runner: closing line '$(echo "$out" | tail -n 1)', expected '1 passed, 2 failed'"; ok=0; }
[ "$(echo "$out" | grep -c '^failed: case_b$')" -eq 1 ] ||
    { echo "check_runner: case_b not listed exactly once"; ok=0; }
[ $ok -eq 1 ] && echo "tests/run.sh counts each failing case once: ok"
[ $ok -eq 1 ]
