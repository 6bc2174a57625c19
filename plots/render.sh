#!/bin/sh
# plots/render.sh [ID...] — render the figures of experiments from their CSVs
# (`make plots`; the driver experiments/run.sh calls it after each experiment).
#
# For each ID, plots/ID.gp reads $GT_RESULTS/ID/*.csv and writes PNG and SVG
# figures named ID*.png / ID*.svg into $GT_RESULTS/figures (git-ignored).
# Figures are drawn in a scratch folder and moved in only when gnuplot succeeds.
# Cases listed in $GT_RESULTS/ID/not_run.txt are printed on each figure.
# Without arguments: every experiment that has a results folder and a script.
#   GT_RESULTS     results folder (default results; with QUICK=1 results/quick)
#   GT_PLOTS_DIR   folder of the .gp scripts (default plots; common.gp is taken
#                  from there, else from beside this script)
set -u
if [ "${QUICK:-0}" = 1 ]; then RESULTS=${GT_RESULTS:-results/quick}; else RESULTS=${GT_RESULTS:-results}; fi
PLOTS=${GT_PLOTS_DIR:-plots}
COMMON=$PLOTS/common.gp
[ -f "$COMMON" ] || COMMON=$(dirname "$0")/common.gp
command -v gnuplot >/dev/null 2>&1 || { echo "render: gnuplot not found" >&2; exit 1; }
ids="$*"
if [ -z "$ids" ]; then
    for g in "$PLOTS"/*.gp; do
        id=$(basename "$g" .gp)
        [ "$id" = common ] && continue
        [ -f "$RESULTS/$id/status" ] && [ "$(cat "$RESULTS/$id/status")" = ok ] && ids="$ids $id"
    done
fi
mkdir -p "$RESULTS/figures"
rc=0
for id in $ids; do
    g=$PLOTS/$id.gp
    [ -f "$g" ] || { echo "render: no $g" >&2; rc=1; continue; }
    # cases the run left out (experiments/lib.sh not_run): common.gp marks them
    notrun=""
    [ -s "$RESULTS/$id/not_run.txt" ] &&
        notrun=$(tr -d "'\\\"" <"$RESULTS/$id/not_run.txt" | awk 'NF { s = s (n++ ? ", " : "") $0 } END { print s }')
    for ext in png svg; do
        tmp=$RESULTS/figures/.$id.$ext.tmp
        rm -rf "$tmp"; mkdir -p "$tmp"
        if gnuplot -e "data='$RESULTS/$id'; out='$tmp'; ext='$ext'; notrun='$notrun'" \
               "$COMMON" "$g" 2>"$tmp/log"; then
            grep -i "warning" "$tmp/log" | grep -v "no valid points" | sed "s|^|render: $id ($ext): |" >&2
            for f in "$tmp"/*."$ext"; do
                [ -f "$f" ] && mv "$f" "$RESULTS/figures/"
            done
        else
            echo "render: $g ($ext) failed:" >&2; tail -n 5 "$tmp/log" >&2
            rc=1
        fi
        rm -rf "$tmp"
    done
done
exit $rc
