#!/bin/sh
# experiments/run.sh — run the experiments of experiments/README.md and write the
# report (`make experiments`). POSIX sh + awk + gnuplot.
#
#   sh experiments/run.sh                 every experiment whose results are stale
#   QUICK=1 sh experiments/run.sh         the quick variant (fewer seeds, smaller
#                                         sizes, same code paths; CI smoke test)
#   ONLY=E4,E9 sh experiments/run.sh      only these experiments (the report still
#                                         lists every experiment that has results)
#
# Environment (all optional):
#   GEOTRAIN=PATH      the binary (default ./geotrain)
#   GT_EXP_DEFS=DIR    definitions folder (default experiments/defs)
#   GT_RESULTS=DIR     results folder (default results, QUICK: results/quick;
#                      git-ignored)
#   GT_PLOTS_DIR=DIR   gnuplot scripts (default plots)
#   FORCE=1            rerun even when the results are up to date
#
# An experiment is up to date when its stamp ($GT_RESULTS/ID/.stamp: the mode
# and the checksums of its definition, the experiment library, its gnuplot
# script, its declared INPUTS and the geotrain binary) matches; then it is
# skipped. Each experiment runs in a scratch folder that replaces its results
# only when it succeeds: a failed run keeps the previous good results and puts
# its status and log beside them (last-failure, last-failure.log). The driver
# shows progress with an ETA (from the last measured runtime of each
# experiment, else its definition's estimate): a bar on a terminal, plain
# lines naming the running experiment otherwise (lib.sh, step),
# prints each experiment's runtime, renders its figures (plots/render.sh) and
# finally regenerates $GT_RESULTS/REPORT.md (experiments/report.sh), which is
# rewritten only when its content changes. Exit 1 if an experiment failed.
set -u

ROOT=$(pwd)
EXP=$ROOT/experiments
QUICK=${QUICK:-0}
[ "$QUICK" = 1 ] || QUICK=0
ONLY=${ONLY:-}
DEFS=${GT_EXP_DEFS:-$EXP/defs}
# the quick variant has its own folder, so that it never replaces a full run
if [ "$QUICK" = 1 ]; then RESULTS=${GT_RESULTS:-results/quick}; else RESULTS=${GT_RESULTS:-results}; fi
PLOTS=${GT_PLOTS_DIR:-plots}
case $DEFS in /*) ;; *) DEFS=$ROOT/$DEFS ;; esac
case $RESULTS in /*) ;; *) RESULTS=$ROOT/$RESULTS ;; esac
case $PLOTS in /*) ;; *) PLOTS=$ROOT/$PLOTS ;; esac
GT=${GEOTRAIN:-./geotrain}
case $GT in /*) ;; *) GT=$ROOT/$GT ;; esac
GT_RESULTS=$RESULTS
export ROOT EXP QUICK RESULTS GT GT_RESULTS GT_PLOTS_DIR=$PLOTS GT_EXP_DEFS=$DEFS

. "$EXP/lib.sh"

die() { echo "experiments: $*" >&2; exit 2; }
[ -x "$GT" ] || die "no geotrain binary at $GT (run make first)"
[ -d "$DEFS" ] || die "no definitions folder $DEFS"
command -v gnuplot >/dev/null 2>&1 || echo "experiments: gnuplot not found: figures will be missing" >&2
mkdir -p "$RESULTS/figures" || die "cannot create $RESULTS"

# Definitions in order of their number (E2 before E10), then by name.
list_defs() {
    for f in "$DEFS"/*.sh; do
        [ -f "$f" ] || continue
        b=$(basename "$f" .sh)
        n=$(echo "$b" | sed 's/^[^0-9]*//; s/[^0-9].*$//')
        printf '%s %s %s\n' "${n:-0}" "$b" "$f"
    done | sort -k1,1n -k2,2 | awk '{ print $3 }'
}

# meta DEF: ID<TAB>NEEDS<TAB>estimate seconds<TAB>INPUTS of a definition.
meta() {
    ( ID=""; NEEDS=""; INPUTS=""; EST_S=60; EST_S_QUICK=10
      . "$1" >/dev/null 2>&1
      [ "$QUICK" = 1 ] && EST_S=$EST_S_QUICK
      printf '%s\t%s\t%s\t%s\n' "${ID:-$(basename "$1" .sh)}" "$NEEDS" "$EST_S" "$INPUTS" )
}

sum_of() { cat "$@" 2>/dev/null | cksum | awk '{ print $1 "-" $2 }'; }

# stamp DEF ID INPUTS: what the results of ID depend on.
stamp_of() {
    echo "mode QUICK=$QUICK"
    echo "definition $(sum_of "$1")"
    echo "library $(sum_of "$EXP/lib.sh" "$EXP/json.awk" "$EXP/csv.awk" "$0")"
    echo "plots $(sum_of "$PLOTS/$2.gp" "$PLOTS/common.gp" "$ROOT/plots/common.gp" "$ROOT/plots/render.sh")"
    echo "binary $(sum_of "$GT")"
    for i in $3; do
        for f in $i; do
            case $f in /*) p=$f ;; *) p=$ROOT/$f ;; esac
            echo "input $f $(sum_of "$p")"
        done
    done
}

# keep_previous OUT NEW: a run that failed (or could not run) leaves the last
# good results in OUT untouched; its status and log go beside them as
# last-failure / last-failure.log (the report shows both), and the stamp is
# spoiled so that the next `make experiments` tries again. Without good results to
# keep, NEW (status and logs) becomes OUT.
keep_previous() {
    if [ -f "$1/status" ] && [ "$(cat "$1/status")" = ok ]; then
        { cat "$2/status"; date -u +%Y-%m-%dT%H:%M:%SZ; } >"$1/last-failure"
        cp "$2/run.log" "$1/last-failure.log" 2>/dev/null || : >"$1/last-failure.log"
        # a stamp that cannot match: rerun next time, yet still say the mode
        echo "last run failed" >>"$1/.stamp"
        rm -rf "$2"
    else
        rm -rf "$1"
        mv "$2" "$1"
    fi
}

# Which experiments to run.
sel=""
for d in $(list_defs); do
    id=$(meta "$d" | cut -f1)
    if [ -n "$ONLY" ]; then
        case ",$ONLY," in *",$id,"*) ;; *) continue ;; esac
    fi
    sel="$sel $d"
done
if [ -n "$ONLY" ]; then
    for o in $(echo "$ONLY" | tr ',' ' '); do
        found=0
        for d in $sel; do [ "$(meta "$d" | cut -f1)" = "$o" ] && found=1; done
        [ $found = 1 ] || die "ONLY: no experiment $o in $DEFS"
    done
fi
[ -n "$sel" ] || die "no experiment definitions in $DEFS"

# Plan: up to date or to run, and the time each should take.
total=0; todo=""
for d in $sel; do
    m=$(meta "$d"); id=$(echo "$m" | cut -f1); inputs=$(echo "$m" | cut -f4)
    est=$(echo "$m" | cut -f3)
    last=$(awk -v q="$QUICK" '$2 == "QUICK=" q { print $1 }' "$RESULTS/$id/.runtime" 2>/dev/null)
    [ -n "$last" ] && est=$last
    if [ "${FORCE:-0}" != 1 ] && [ -f "$RESULTS/$id/.stamp" ] &&
       stamp_of "$d" "$id" "$inputs" | cmp -s - "$RESULTS/$id/.stamp"; then
        continue
    fi
    todo="$todo $d:$est"
    total=$(awk -v a="$total" -v b="$est" 'BEGIN { print a + b }')
done

mode=full; [ "$QUICK" = 1 ] && mode=QUICK
exec 3>&2
# on an interrupt: drop the scratch folder of the running experiment
trap 'echo "experiments: interrupted" >&2; [ -n "${tmp:-}" ] && rm -rf "$tmp"; exit 130' INT TERM
P_TTY=0; [ -t 2 ] && P_TTY=1
P_T0=$(date +%s); P_DONE=0; P_TOTAL=$total; P_STATE=$RESULTS/.progress
export P_T0 P_TOTAL P_TTY P_STATE
echo "experiments ($mode): $(echo "$todo" | wc -w | tr -d ' ') to run, about $(hms "$total") on the last measurements; results in $RESULTS"
failed=""

for d in $sel; do
    m=$(meta "$d"); id=$(echo "$m" | cut -f1); needs=$(echo "$m" | cut -f2)
    inputs=$(echo "$m" | cut -f4)
    est=""
    for t in $todo; do [ "${t%:*}" = "$d" ] && est=${t##*:}; done
    if [ -z "$est" ]; then
        rt=$(awk -v q="$QUICK" '$2 == "QUICK=" q { print $1 }' "$RESULTS/$id/.runtime" 2>/dev/null)
        echo "$id: up to date (last run ${rt:-?} s); skipped"
        continue
    fi
    out=$RESULTS/$id; tmp=$RESULTS/.$id.new
    rm -rf "$tmp"; mkdir -p "$tmp/work"
    stamp_of "$d" "$id" "$inputs" >"$tmp/.stamp"
    miss=""
    for c in $needs; do
        c=$(echo "$c" | tr '_' ' ')
        have_cmd "$c" || miss="$miss${miss:+, }geotrain $c"
    done
    t0=$(now)
    if [ -n "$miss" ]; then
        echo "not run: $miss not available" >"$tmp/status"
        rc=0
        echo "$id: not run ($miss not available)"
    else
        echo "$id: running (estimate $(hms "$est"))"
        P_ID=$id P_CUR=$est P_DONE=$P_DONE
        export P_ID P_CUR P_DONE
        rm -f "$P_STATE"
        ( set -e
          OUT=$tmp WORK=$tmp/work P_K=0
          cd "$ROOT"
          . "$d"
          run ) >"$tmp/run.log" 2>&1
        rc=$?
        [ "$P_TTY" = 1 ] && printf '\r%-110s\r' "" >&3
        if [ $rc -eq 0 ]; then
            echo ok >"$tmp/status"
        else
            echo "failed (exit $rc): $(tail -n 3 "$tmp/run.log" | tr '\n' ' ' | cut -c1-300)" >"$tmp/status"
        fi
    fi
    t1=$(now); rt=$(elapsed "$t0" "$t1")
    # keep the runtime of the other mode
    { grep -v " QUICK=$QUICK " "$out/.runtime" 2>/dev/null
      echo "$rt QUICK=$QUICK $(date -u +%Y-%m-%dT%H:%M:%SZ)"; } >"$tmp/.runtime"
    if [ $rc -ne 0 ] || [ -n "$miss" ]; then
        keep_previous "$out" "$tmp"
    else
        rm -rf "$out.old"
        [ -d "$out" ] && mv "$out" "$out.old"
        mv "$tmp" "$out" && rm -rf "$out.old"
    fi
    tmp=""
    if [ $rc -eq 0 ] && [ -z "$miss" ]; then
        if ! sh "$ROOT/plots/render.sh" "$id" >"$out/plot.log" 2>&1; then
            echo "$id: figures failed after $rt s: $(tail -n 2 "$out/plot.log" | tr '\n' ' ')"
            echo "failed: figures ($(tail -n 1 "$out/plot.log"))" >"$out/status"
            rm -f "$out/.stamp"; failed="$failed $id"
        else
            echo "$id: done in $rt s"
        fi
    elif [ $rc -ne 0 ]; then
        [ -f "$out/last-failure" ] || rm -f "$out/.stamp"
        failed="$failed $id"
        log=$out/run.log; [ -f "$out/last-failure.log" ] && log=$out/last-failure.log
        echo "$id: FAILED after $rt s (see $log):"; tail -n 5 "$log" | sed 's/^/    /'
        [ -f "$out/last-failure" ] && echo "$id: the previous results in $out are kept"
    fi
    P_DONE=$(awk -v a="$P_DONE" -v b="$est" 'BEGIN { print a + b }')
done
rm -f "$P_STATE"

sh "$EXP/report.sh" || { echo "experiments: report generation failed" >&2; exit 1; }
echo "runtimes ($mode):"
for d in $sel; do
    id=$(meta "$d" | cut -f1)
    printf '  %-5s %-9s %s\n' "$id" \
        "$(awk -v q="$QUICK" '$2 == "QUICK=" q { print $1 " s" }' "$RESULTS/$id/.runtime" 2>/dev/null)" \
        "$(cat "$RESULTS/$id/status" 2>/dev/null)"
done
echo "total $(hms $(( $(date +%s) - P_T0 ))) this run; report: ${RESULTS#$ROOT/}/REPORT.md"
[ -z "$failed" ] || { echo "experiments failed:$failed" >&2; exit 1; }
