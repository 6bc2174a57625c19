#!/bin/sh
# tools/man.sh GEOTRAIN — write the geotrain(1) man page to stdout, built from
# the binary's own help texts: `geotrain --help` for the synopsis and the
# command list, then `geotrain COMMAND --help` for each command listed. So the
# page cannot drift from the program (make build/geotrain.1 runs this).
set -eu
bin=${1:?usage: tools/man.sh path/to/geotrain}
[ -x "$bin" ] || { echo "tools/man.sh: $bin is not an executable" >&2; exit 1; }

# roff-safe text: backslashes, and lines starting with . or '
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

top=$("$bin" --help)
# "  NAME<pad to 14> summary": the names, one per line (may hold a space)
names=$(printf '%s\n' "$top" | awk '/^commands:/ {on = 1; next}
    on && /^  [a-z]/ {n = substr($0, 3, 14); sub(/ +$/, "", n); print n}')

cat <<'HEAD'
.TH GEOTRAIN 1 "" "GeoTrain" "User Commands"
.SH NAME
geotrain \- plan and simulate training of foundation models on heterogeneous, geo-distributed GPUs
.SH SYNOPSIS
.B geotrain
.I COMMAND
[\fIoptions\fR]
.SH DESCRIPTION
HEAD
printf '%s\n' "$top" | sed -n '3,/^commands:/p' | sed '$d' | esc
echo '.SH COMMANDS'
echo '.nf'
printf '%s\n' "$top" | sed -n '/^commands:/,$p' | sed 1d | esc
echo '.fi'
printf '%s\n' "$names" | while IFS= read -r name; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086  # two-word commands are two arguments
    help=$("$bin" $name --help) || { echo "tools/man.sh: '$name --help' failed" >&2; exit 1; }
    printf '.SS "geotrain %s"\n.nf\n' "$name"
    printf '%s\n' "$help" | esc
    echo '.fi'
done
cat <<'TAIL'
.SH ENVIRONMENT
.TP
.B GEOTRAIN_DATA
folder holding the catalogs gpus.csv and models.csv (default: the installed
share/geotrain/topologies, or ./topologies)
.SH EXIT STATUS
0 success, 1 invalid input or infeasible job, 2 usage error.
.SH SEE ALSO
The documentation in the source tree: README.md and docs/.
TAIL
