# E3 — planner run time against the number of GPUs: exact, memetic, memetic
# without local search, DT-FM.
#
# Inputs: topologies from `geotrain topo gen --gpus n --seed 1` (4 sites up to
# 16 GPUs, 8 sites beyond; the default GPU mix H100/A100/V100/T4, 8 GPUs per
# node); GPT3-XL, batch 128 x 2048 tokens, full recomputation. Planners and
# effort: exact (its default: prove the optimum), memetic and memetic-nols with
# a fixed 20 generations (their default stops on stagnation, which would mix
# convergence with cost), dtfm with its default 4,900 trials. Sizes: exact
# 4..12 GPUs, the others 8..1024 (QUICK: 4..6 and 8..32). Each run is capped
# (full 45 s, QUICK 15 s, by timeout(1)); after a planner hits the cap its
# larger sizes are skipped. Measured: wall-clock and CPU seconds of
# `geotrain plan`, the plan's objective (estimated iteration time). Seed 1.
# Published: the exact method's run time explodes, the memetic planner scales.
ID=E3
TITLE="Planner run time vs number of GPUs"
QUESTION="How does planning time grow with the number of GPUs for the exact solver, the memetic planner (with and without local search) and DT-FM's scheduler?"
HEADLINE="planner scaling"
HEADLINE_PUB=trend
NEEDS="plan topo_gen"
INPUTS="topologies/gpus.csv topologies/models.csv topologies/regions.csv topologies/wan_measured.csv"
EST_S=260
EST_S_QUICK=25
E3_JOB="-m gpt3-xl --batch 128 --recompute full"
if [ "$QUICK" = 1 ]; then
    E3_EXACT="4 6"; E3_SIZES="8 16 32"; E3_CAP=15
else
    E3_EXACT="4 6 8 10 12"; E3_SIZES="8 16 32 64 128 256 512 1024"; E3_CAP=45
fi
E3_PLANNERS="memetic memetic-nols dtfm"
STEPS=$(( $(echo $E3_EXACT | wc -w) + 3 * $(echo $E3_SIZES | wc -w) ))

# e3_times FILE: the POSIX `times` of this shell (children's user and system
# CPU on the second line); e3_cpu A B: CPU seconds of the children between two
e3_times() { times >"$1"; }
e3_cpu() {
    awk 'FNR == 2 { split($1, a, "m"); split($2, b, "m"); s = a[1] * 60 + a[2] + b[1] * 60 + b[2]
                    if (FILENAME == ARGV[1]) x = s; else y = s }
         END { printf "%.3f\n", y - x }' "$1" "$2"
}

# e3_one PLANNER N EXTRA...: one capped plan run, one CSV row; returns 1 on timeout
e3_one() {
    p=$1 n=$2; shift 2
    sites=4; [ "$n" -gt 16 ] && sites=8
    topo=$WORK/g$n.json
    [ -f "$topo" ] || "$GT" topo gen --sites $sites --gpus "$n" --seed 1 -o "$topo" >/dev/null
    rm -f "$WORK/p.json"
    to=""; command -v timeout >/dev/null 2>&1 && to="timeout $E3_CAP"
    e3_times "$WORK/.t0"; t0=$(now)
    rc=0
    $to "$GT" plan -t "$topo" $E3_JOB --planner "$p" --seed 1 --threads 1 "$@" -o "$WORK/p.json" \
        >/dev/null 2>"$WORK/p.err" || rc=$?
    t1=$(now); e3_times "$WORK/.t1"
    st=ok; obj=""
    if [ $rc -eq 124 ]; then st=timeout
    elif [ $rc -ne 0 ]; then st="failed: $(head -n 1 "$WORK/p.err" | tr -d '",' | cut -c1-120)"
    else obj=$(jget "$WORK/p.json" objective_value); fi
    echo "$p,$n,$sites,$st,$(elapsed "$t0" "$t1"),$(e3_cpu "$WORK/.t0" "$WORK/.t1"),$obj,$E3_CAP" \
        >>"$OUT/E3.csv"
    [ "$st" != timeout ]
}

run() {
    echo "planner,gpus,sites,status,wall_s,cpu_s,objective_value,cap_s" >"$OUT/E3.csv"
    for n in $E3_EXACT; do
        step "exact, $n GPUs"
        e3_one exact "$n" || break
    done
    for p in $E3_PLANNERS; do
        extra=""
        case $p in memetic*) extra="--generations 20" ;; esac
        for n in $E3_SIZES; do
            step "$p, $n GPUs"
            # shellcheck disable=SC2086
            e3_one "$p" "$n" $extra || break
        done
    done
    # growth exponents: slope of log(wall time) over log(GPUs) between the two
    # largest completed sizes of each planner
    csvq '
        v("status") == "ok" { p = v("planner"); n = v("gpus") + 0; t = v("wall_s") + 0; if (t < 0.01) t = 0.01
            if (n > n1[p]) { n2[p] = n1[p]; t2[p] = t1[p]; n1[p] = n; t1[p] = t } else if (n > n2[p]) { n2[p] = n; t2[p] = t } }
        v("status") == "timeout" { to[v("planner")] = v("gpus") }
        END { print "planner,largest_gpus,largest_wall_s,previous_gpus,previous_wall_s,timeout_at_gpus,slope"
              for (p in n1) printf "%s,%d,%.3f,%s,%s,%s,%s\n", p, n1[p], t1[p], n2[p] ? n2[p] : "", n2[p] ? t2[p] : "",
                  (p in to) ? to[p] : "", (n2[p] > 0) ? sprintf("%.2f", log(t1[p] / t2[p]) / log(n1[p] / n2[p])) : "" }' \
        "$OUT/E3.csv" | { read -r h; echo "$h"; sort; } >"$OUT/E3-summary.csv"
    rm -rf "$WORK"
}

section() {
    cat <<EOF
**Setup.** \`geotrain topo gen --sites 4|8 --gpus n --seed 1\` (default mix of H100, A100, V100, T4;
8 GPUs per node), GPT3-XL, batch 128 x 2048 tokens, full recomputation; \`geotrain plan --threads 1\`
with exact (default), memetic and memetic-nols (20 generations each, a fixed effort: their
default stops on stagnation), dtfm (default 4,900 trials). Exact on {$E3_EXACT} GPUs, the others on
{$E3_SIZES}; every run capped at $E3_CAP s; after a planner hits the cap its larger sizes are not
run. The figure shows CPU seconds (one thread; robust to other load on this 2-core machine), the
cap is on wall-clock time.

EOF
    fig E3-scaling "Planner run time vs GPUs (log-log); crosses = runs stopped at the cap"
    mdtable "$OUT/E3.csv" "planner|planner|s;gpus|GPUs|%d;status|status|s;wall_s|wall (s)|%.2f;cpu_s|CPU (s)|%.2f;objective_value|plan's objective (s)|%.3f"
    echo "Growth: slope of log(time) over log(GPUs) between the two largest sizes each planner finished:"
    echo
    mdtable "$OUT/E3-summary.csv" "planner|planner|s;previous_gpus|GPUs|s;previous_wall_s|time (s)|%.2f;largest_gpus|largest GPUs planned|%d;largest_wall_s|its time (s)|%.2f;timeout_at_gpus|stopped at the cap at|s;slope|slope|%s"
    csvq '
        { p = v("planner"); big[p] = v("largest_gpus"); tm[p] = v("largest_wall_s"); to[p] = v("timeout_at_gpus"); sl[p] = v("slope")
          pg[p] = v("previous_gpus"); pt[p] = v("previous_wall_s") }
        END {
          xs = ("exact" in big) ? big["exact"] + 0 : 0; ms = ("memetic" in big) ? big["memetic"] + 0 : 0
          ok = (xs > 0 && ms > xs && to["exact"] != "")
          printf "**Verdict: %s.** ", ok ? "reproduced" : "worse"
          if (to["exact"] != "") printf "The exact solver hits the %s s cap at %s GPUs; it solved %d GPUs in %.1f s", cap, to["exact"], xs, tm["exact"]
          else printf "The exact solver finished every size up to %d GPUs (%.1f s)", xs, tm["exact"]
          if (pt["exact"] != "" && pt["exact"] > 0) printf ", %.0fx the time of %s GPUs", tm["exact"] / pt["exact"], pg["exact"]
          printf ". The memetic planner (20 generations) planned up to %d GPUs (%.1f s, log-log slope %s)", ms, tm["memetic"], sl["memetic"]
          if (to["memetic"] != "") printf " and hit the cap at %s GPUs", to["memetic"]
          printf "; without local search up to %d GPUs (%.1f s, slope %s); DT-FM up to %d GPUs (%.1f s, slope %s). ", big["memetic-nols"], tm["memetic-nols"], sl["memetic-nols"], big["dtfm"], tm["dtfm"], sl["dtfm"]
          if (to["memetic"] != "") printf "The memetic planner grows polynomially and scales far past the exact solver, but its local search makes it the costliest heuristic per generation at scale."
          printf "\n\n" }' cap="$E3_CAP" "$OUT/E3-summary.csv"
}

headline() {
    csvq '
        { p = v("planner"); big[p] = v("largest_gpus"); tm[p] = v("largest_wall_s"); to[p] = v("timeout_at_gpus") }
        END { printf "| planner scaling (GPUs planned within the cap) | topo gen, GPT3-XL, cap %s s per run | exact: %d GPUs (%.1f s)%s; memetic (20 gen.): %d GPUs (%.1f s)%s | exact explodes, memetic scales | E3-summary.csv |\n",
                cap, big["exact"], tm["exact"], to["exact"] != "" ? ", cap hit at " to["exact"] : "", big["memetic"], tm["memetic"], to["memetic"] != "" ? ", cap hit at " to["memetic"] : "" }' \
        cap="$E3_CAP" "$OUT/E3-summary.csv"
}
