#!/bin/sh
# tests/doc_test.sh [README] — run every command shown in the README's
# ```console blocks and check the output the README shows for it.
#
# In such a block a line "$ CMD" (continued by a trailing backslash) is a
# command; the lines after it, up to the next "$ " line, are what it prints.
# Each shown line must appear in the real output (stdout and stderr together,
# runs of blanks folded), except lines holding "..." (an abridged row). The
# commands run in a scratch folder that links the checkout's geotrain binary
# and data folders, so outputs such as -o p.json never land in the checkout.
# Exit 0 when every command exits 0 and shows what the README says.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
readme=${1:-$root/README.md}
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
for d in geotrain topologies traces tests validation; do ln -s "$root/$d" "$w/$d"; done

awk -v dir="$w" '
    /^```console/ { inblock = 1; next }
    /^```/ && inblock { inblock = 0; cont = 0; next }
    !inblock { next }
    cont { sub(/\\$/, "", $0); printf "%s", $0 > cmd; cont = /\\$/ ? 1 : 0
           if (!cont) printf "\n" > cmd; next }
    /^\$ / { n++; cmd = sprintf("%s/cmd%03d.sh", dir, n); ex = sprintf("%s/exp%03d.txt", dir, n)
             line = substr($0, 3); cont = (line ~ /\\$/); sub(/\\$/, "", line)
             printf "%s", line > cmd; if (!cont) printf "\n" > cmd
             printf "" > ex; next }
    n { print > ex }
' "$readme"

# The commands run at once, one per CPU (they write different files: the
# README's tour never reads what an earlier command wrote), each into its own
# out/rc files; they are then checked in the README's order.
jobs=$(nproc 2>/dev/null || echo 1)
ls "$w"/cmd*.sh 2>/dev/null | xargs -P "$jobs" -I{} sh -c \
    'c={}; (cd "$(dirname "$c")" && sh "$c") >"${c%.sh}.out" 2>&1; echo $? >"${c%.sh}.rc"'

fold() { sed 's/[[:space:]][[:space:]]*/ /g; s/^ //; s/ $//'; }
ran=0; bad=0
for c in "$w"/cmd*.sh; do
    [ -f "$c" ] || continue
    e=${c%.sh}; e=$(echo "$e" | sed 's/cmd\([0-9]*\)$/exp\1.txt/')
    ran=$((ran + 1))
    out=${c%.sh}.out; rc=$(cat "${c%.sh}.rc" 2>/dev/null || echo 127)
    fold <"$out" >"$w/out.f"
    if [ "$rc" -ne 0 ]; then
        echo "doc-test: exit $rc: $(cat "$c")"; tail -n 3 "$out"; bad=$((bad + 1)); continue
    fi
    while IFS= read -r want; do
        case "$want" in *...*|"") continue ;; esac
        f=$(printf '%s\n' "$want" | fold)
        grep -qxF -- "$f" "$w/out.f" || {
            echo "doc-test: $(cat "$c")"; echo "    README shows: $want"; bad=$((bad + 1)); }
    done <"$e"
done
[ $ran -gt 0 ] || { echo "doc-test: no \`\`\`console block in $readme"; exit 1; }
echo "doc-test: $ran README commands run, $bad mismatches"
[ $bad -eq 0 ]
