# experiments/lib.sh — helpers for experiment definitions (POSIX sh + awk).
#
# Sourced by experiments/run.sh (the driver) and experiments/report.sh (the
# report generator) before a definition. A definition (experiments/defs/EN.sh,
# see experiments/README.md) sees these variables:
#
#   GT      absolute path of the geotrain binary       ROOT  repository root (the cwd)
#   EXP     the experiments/ folder                     OUT   this experiment's results folder
#   QUICK   1 for the quick (CI) variant, else 0        WORK  $OUT/work, scratch inputs
#
# and these functions. Everything a report prints is computed from the CSVs in
# $OUT by awk at report time; published numbers come from experiments/published.csv.

EXP=${EXP:-$ROOT/experiments}

# --- time -----------------------------------------------------------------
# Seconds since the epoch, with a fraction where date(1) supports %N.
now() {
    _t=$(date +%s.%N 2>/dev/null)
    case $_t in *N*|"") date +%s ;; *) echo "$_t" ;; esac
}
# Seconds between two now() values, 2 decimals.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# 75 -> 1m15s
hms() {
    awk -v s="$1" 'BEGIN { s = int(s + 0.5); if (s < 60) printf "%ds", s;
        else if (s < 3600) printf "%dm%02ds", s / 60, s % 60;
        else printf "%dh%02dm", s / 3600, (s % 3600) / 60 }'
}

# --- progress (drawn by the driver's step counter on fd 3) ------------------
# step LABEL: one unit of this experiment's work (of $STEPS) is about to start.
# On a terminal it redraws one line: a bar with the overall fraction, elapsed
# time and ETA. Otherwise (a log, a pipe, CI) it prints plain lines in the
# binary's style (cli/progress.c): "experiments: E4 [3/12] LABEL: 42% of the
# run, elapsed 1m05s, ETA 1m30s", at each experiment's first step (so that the
# log says which one is running) and then at most one every
# $GT_PROGRESS_EVERY_S seconds (default 10).
step() {
    P_K=$(( ${P_K:-0} + 1 ))
    [ -n "${P_T0:-}" ] || return 0
    _now=$(date +%s)
    awk -v k="$P_K" -v n="${STEPS:-1}" -v done="$P_DONE" -v cur="$P_CUR" -v tot="$P_TOTAL" \
        -v t0="$P_T0" -v now="$_now" -v id="$P_ID" -v lab="$1" -v tty="${P_TTY:-0}" \
        -v every="${GT_PROGRESS_EVERY_S:-10}" -v lastt="${P_LASTT:-0}" 'BEGIN {
        f = (k - 1) / n; if (f > 1) f = 1
        p = tot > 0 ? (done + cur * f) / tot : 0
        el = now - t0
        eta = (p > 0.02 && el > 5) ? el * (1 - p) / p : tot - done - cur * f
        if (eta < 0) eta = 0
        if (tty) {
            w = 30; h = int(p * w + 0.5); bar = ""
            for (i = 0; i < w; i++) bar = bar (i < h ? "#" : "-")
            printf "\r%-110.110s", sprintf("[%s] %3d%%  %s %d/%d %s  elapsed %s  ETA %s", bar,
                   int(100 * p), id, k, n, lab, t(el), t(eta)) > "/dev/stderr"
        } else if (k == 1 || now - lastt >= every) {
            printf "experiments: %s [%d/%d] %s: %d%% of the run, elapsed %s, ETA %s\n", id,
                   k, n, lab, int(100 * p), t(el), t(eta) > "/dev/stderr"
            lastt = now
        }
        print lastt
    }
    function t(s) { s = int(s + 0.5); if (s < 60) return s "s";
        if (s < 3600) return sprintf("%dm%02ds", s / 60, s % 60);
        return sprintf("%dh%02dm", s / 3600, (s % 3600) / 60) }' 2>&3 >"${P_STATE:-/dev/null}"
    [ -n "${P_STATE:-}" ] && [ -s "$P_STATE" ] && read -r P_LASTT <"$P_STATE"
    return 0
}

# --- geotrain ----------------------------------------------------------------
# have_cmd "plan" / "compare" / "study" / "topo gen": the subcommand is registered.
have_cmd() {
    # shellcheck disable=SC2086
    "$GT" $1 --help >/dev/null 2>&1
}
# have_planner NAME: `geotrain plan --help` or `compare --help` names the planner.
have_planner() {
    { "$GT" plan --help 2>/dev/null; "$GT" compare --help 2>/dev/null; } |
        tr ',;:()' '     ' | tr -s ' \t' '\n\n' | grep -qx "$1"
}
# simj OUT.json ARGS...: geotrain simulate ARGS --json OUT.json (table discarded).
simj() {
    _o=$1; shift
    "$GT" simulate "$@" --json "$_o" >/dev/null
}

# cmp_run OUT.csv "k1=v1,k2=v2" ARGS...: geotrain compare ARGS --json; one CSV
# row per planner appended to OUT.csv, columns k1,k2,... first, then the JSON
# rows' fields (CMP_COLS; null -> empty; error and note quoted). Header once.
CMP_COLS="planner baseline feasible runs runs_ok gpus_used stages pipelines iteration_time_s iteration_time_s_min iteration_time_s_max energy_j energy_j_min energy_j_max energy_j_per_token tokens_per_s carbon_g usd plan_time_s objective_value relative_to_best_baseline dtfm_cost_s error note"
cmp_run() {
    _o=$1 _kv=$2; shift 2
    "$GT" compare "$@" --json "$OUT/.cmp.json" >"$OUT/.cmp.log" 2>&1 ||
        { cat "$OUT/.cmp.log" >&2; return 1; }
    jflat "$OUT/.cmp.json" | awk -F'\t' -v kv="$_kv" -v cols="$CMP_COLS" \
        -v hdr="$([ -s "$_o" ] && echo 0 || echo 1)" '
        BEGIN { nc = split(cols, C, " "); n = split(kv, p, ",")
                for (i = 1; i <= n; i++) { split(p[i], q, "="); k = k q[1] ","; val = val q[2] "," } }
        $1 == "objective" { obj = $2 }
        $1 ~ /^rows\.[0-9]+\./ { split($1, a, "."); r = a[2] + 0; f = substr($1, length(a[1]) + length(a[2]) + 3)
                                 x[r, f] = $2; if (r + 1 > nr) nr = r + 1 }
        END {
          if (hdr) { h = k "objective"; for (i = 1; i <= nc; i++) h = h "," C[i]; print h }
          for (r = 0; r < nr; r++) {
            line = val obj
            for (i = 1; i <= nc; i++) {
              y = ((r, C[i]) in x) ? x[r, C[i]] : ""
              if (y == "null") y = ""
              if (C[i] == "feasible" || C[i] == "baseline") y = (y == "true") ? 1 : 0
              if (C[i] == "error" || C[i] == "note") { gsub(/"/, "\"\"", y); y = "\"" y "\"" }
              line = line "," y }
            print line } }' >>"$_o"
    rm -f "$OUT/.cmp.json" "$OUT/.cmp.log"
}
# timed OUTVAR CMD...: run CMD, store its wall-clock seconds in OUTVAR.
timed() {
    _v=$1; shift
    _t0=$(now); "$@"; _rc=$?; _t1=$(now)
    eval "$_v=\$(elapsed \"\$_t0\" \"\$_t1\")"
    return $_rc
}

# --- JSON and CSV --------------------------------------------------------------
# jflat FILE: "path<TAB>value" per scalar (experiments/json.awk).
jflat() { awk -f "$EXP/json.awk" "$1"; }
# jget FILE PATH [PATH...]: the values at the paths (a.b.0.c), one per line,
# in the order asked; "null" for a missing path.
jget() {
    _f=$1; shift
    awk -f "$EXP/json.awk" "$_f" | awk -F'\t' -v want="$*" '
        BEGIN { n = split(want, w, " ") }
        { val[$1] = $2 }
        END { for (i = 1; i <= n; i++) print ((w[i] in val) ? val[w[i]] : "null") }'
}
# csvq [-v NAME=VALUE]... 'AWK PROGRAM' FILE...: run an awk program with
# experiments/csv.awk (v("column"), FLD_[], NF_, fmt(x, "%.3f"), isnum(x)); each
# file's header line is read into the column names and skipped.
csvq() {
    _n=0
    while [ "${1:-}" = -v ]; do set -- "$@" "$1" "$2"; shift 2; _n=$((_n + 1)); done
    _p=$1; shift
    _m=$(( $# - 2 * _n ))
    while [ $_m -gt 0 ]; do set -- "$@" "$1"; shift; _m=$((_m - 1)); done
    _f=$(mktemp "${TMPDIR:-/tmp}/csvq.XXXXXX") || return 1
    printf '%s\n' "$_p" >"$_f"
    awk -v Q="${QUICK:-0}" -f "$EXP/csv.awk" -f "$_f" "$@"
    _rc=$?; rm -f "$_f"; return $_rc
}
# csv_rows FILE: data rows of a CSV (0 when absent).
csv_rows() { [ -f "$1" ] && awk 'NR > 1 && NF { n++ } END { print n + 0 }' "$1" || echo 0; }

# --- published numbers (experiments/published.csv) ------------------------------
# pub ID KEY: the published value; pubsrc ID KEY: its source; pubclaim ID KEY.
pub()      { _pub "$1" "$2" value; }
pubsrc()   { _pub "$1" "$2" source; }
pubclaim() { _pub "$1" "$2" claim; }
_pub() {
    csvq "v(\"id\") == \"$1\" && v(\"key\") == \"$2\" { print v(\"$3\"); exit }" \
        "$EXP/published.csv"
}

# --- cases not run -------------------------------------------------------------
# not_run WHAT "ALL" "RAN" [WHY]: in run(), record each item of ALL that is not
# in RAN (e.g. not_run case "1 2 3 4 5" "$E1_CASES" QUICK) as a line
# "WHAT ITEM (WHY)" of $OUT/not_run.txt. plots/render.sh prints the list on
# every figure of the experiment and fig() under it in the report, so that a
# figure with fewer cases says so instead of looking complete.
not_run() {
    for _x in $2; do
        case " $3 " in *" $_x "*) ;; *) echo "$1 $_x${4:+ ($4)}" >>"$OUT/not_run.txt" ;; esac
    done
}
# not_run_list: the recorded items, comma-separated ("" when all ran).
not_run_list() {
    [ -s "$OUT/not_run.txt" ] || return 0
    awk 'NF { s = s (n++ ? ", " : "") $0 } END { print s }' "$OUT/not_run.txt"
}

# --- report helpers (used by a definition's section and headline) ---------------
# fig NAME CAPTION: the PNG inline, the SVG as a link (figures/ beside REPORT.md),
# and the cases not run (not_run above) under it.
fig() {
    if [ -f "$RESULTS/figures/$1.png" ]; then
        printf '![%s](figures/%s.png)\n\n*%s* ([SVG](figures/%s.svg))\n\n' "$2" "$1" "$2" "$1"
    else
        printf '*(figure %s missing: plots/render.sh failed or the data is empty)*\n\n' "$1"
    fi
    _nr=$(not_run_list)
    [ -z "$_nr" ] || printf '*Not run, so not in the figure: %s.*\n\n' "$_nr"
}
# verdict WORD REASON: reproduced | better | worse | not comparable.
verdict() { printf '**Verdict: %s.** %s\n\n' "$1" "$2"; }
# mdtable FILE 'col|Header|printf-format;col|Header|fmt;...' [AWK-CONDITION]
# A markdown table of some columns of a CSV; format "s" prints the text as is.
mdtable() {
    csvq "
        BEGIN { n = split(\"$2\", S, \";\");
                for (i = 1; i <= n; i++) { split(S[i], p, \"|\"); c[i] = p[1]; h[i] = p[2]; f[i] = p[3] }
                line = \"|\"; sep = \"|\";
                for (i = 1; i <= n; i++) { line = line \" \" h[i] \" |\"; sep = sep \"---|\" }
                print line; print sep }
        ${3:-1} { line = \"|\";
          for (i = 1; i <= n; i++) { x = v(c[i]); line = line \" \" (f[i] == \"s\" ? x : fmt(x, f[i])) \" |\" }
          print line }" "$1"
    echo
}
