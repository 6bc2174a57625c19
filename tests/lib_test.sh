#!/bin/sh
# tests/lib_test.sh — the installed library as a user meets it (make test-lib):
#   1. `make install` into a temporary DESTDIR (shared library with its
#      versioned soname, geotrain.h, geotrain.pc, geotrain.1);
#   2. tests/lib/hello.c compiled with `pkg-config --cflags --libs geotrain`
#      and run: its iteration time must equal the binary's `simulate --json`;
#   3. python/geotrain.py against the binary (tests/lib/test_python.py), or a
#      skip message when python3 is absent.
set -u
MAKE=${MAKE:-make}
fail() { echo "lib_test: FAIL: $*"; exit 1; }
dest=$(mktemp -d /tmp/gt-install-XXXXXX)
trap 'rm -rf "$dest"' EXIT
prefix=/usr
$MAKE --no-print-directory -s install DESTDIR="$dest" PREFIX="$prefix" >"$dest/install.log" 2>&1 ||
    { tail -20 "$dest/install.log"; fail "make install"; }
lib=$dest$prefix/lib
so=$(readlink "$lib/libgeotrain.so") || fail "no libgeotrain.so link"
[ "$so" = libgeotrain.so.0 ] || fail "libgeotrain.so -> $so, expected libgeotrain.so.0"
real=$(readlink "$lib/libgeotrain.so.0") || fail "no libgeotrain.so.0 link"
case $real in libgeotrain.so.0.*) ;; *) fail "libgeotrain.so.0 -> $real";; esac
soname=$(objdump -p "$lib/$real" 2>/dev/null | awk '/SONAME/ {print $2}')
[ "$soname" = libgeotrain.so.0 ] || fail "soname '$soname', expected libgeotrain.so.0"
[ -f "$dest$prefix/include/geotrain.h" ] || fail "geotrain.h not installed"
[ -f "$dest$prefix/share/man/man1/geotrain.1" ] || fail "geotrain.1 not installed"
grep -q '^\.SS "geotrain simulate"' "$dest$prefix/share/man/man1/geotrain.1" ||
    fail "geotrain.1 has no simulate section"
echo "ok   installed: $real (soname $soname), geotrain.h, geotrain.pc, geotrain.1"

export PKG_CONFIG_PATH="$lib/pkgconfig"
flags=$(pkg-config --define-variable=prefix="$dest$prefix" --cflags --libs geotrain) ||
    fail "pkg-config geotrain"
${CC:-cc} -std=c17 -Wall -Wextra -Werror -o "$dest/hello" tests/lib/hello.c $flags ||
    fail "compiling tests/lib/hello.c with: $flags"
topo=topologies/yuan2022/case5.json plan=topologies/plans/case5-rank-order.plan.json
out=$(LD_LIBRARY_PATH="$lib" GEOTRAIN_DATA="$dest$prefix/share/geotrain/topologies" \
      "$dest/hello" "$topo" gpt3-xl "$plan") || { echo "$out"; fail "hello exited non-zero"; }
got=$(echo "$out" | awk '/^iteration_s/ {print $2}')
want=$(./geotrain simulate -t "$topo" -m gpt3-xl --batch 1024 -p "$plan" --json - |
       awk -F'[:,]' '/"iteration_time_s"/ {gsub(/ /, "", $2); print $2; exit}')
awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-8 * b) }' ||
    fail "library iteration time $got != binary's $want"
echo "ok   hello via pkg-config: iteration $got s (binary: $want s)"

if command -v python3 >/dev/null 2>&1; then
    GEOTRAIN_LIB="$lib/libgeotrain.so.0" GEOTRAIN_DATA="$dest$prefix/share/geotrain/topologies" \
        python3 tests/lib/test_python.py ./geotrain || fail "python module"
else
    echo "python3 not installed: skipping the python/geotrain.py test"
fi
echo "lib_test: all passed"
