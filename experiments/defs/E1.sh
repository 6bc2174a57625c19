# E1 — DT-FM's five network scenarios (Yuan et al., NeurIPS 2022): 64 V100,
# GPT3-XL, every planner.
#
# Inputs: topologies/yuan2022/case1..5.json (64 x V100-16GB: one data center
# on demand, spot instances, two data centers, regional, world-wide). Job:
# GPT3-XL, global batch 1024 x 2048 tokens, microbatch 1 (the DT-FM run
# script's values), activation recomputation on (DT-FM schedules GPipe; without
# recomputation 64-128 microbatches in flight do not fit a 16 GB V100 in our
# memory model). Planners: memetic, dtfm, dtfm-hybrid, megatron (rank
# placement, grid search over TP x PP x DP), megatron-random (the same grid on a
# random placement), metis, atlas, greedy, random; plus "megatron-8x8", the
# fixed shape DT-FM compared against (generated here, replayed by `simulate`):
# GPUs in rank (file) order, 8 stages x 8 pipelines, 3 layers per stage, 1F1B,
# ring all-reduce.
# Seeds: 2 (QUICK: 1, cases 1 and 5 only, a 3 s budget per planner run); deterministic planners give the same
# plan for every seed. Measured: simulated iteration time (mean, min, max over
# seeds), energy, DT-FM's own cost of grid plans. Compared with: DT-FM 4.8x
# faster than Megatron world-wide (case 5), up to 2.7x over random placement,
# 1.2-2.5x over Megatron in the other cases (yuan2022_scenarios.md).
# A planner (or the 8x8 plan) without a feasible plan keeps its row with
# feasible 0 and the reason in `error`; a speedup involving it is left empty
# and the report says which side is infeasible and why, never a ratio.
ID=E1
TITLE="DT-FM's five network scenarios: all planners"
QUESTION="On the five network scenarios of DT-FM (64 V100, GPT3-XL), does DT-FM's scheduler beat random and default (Megatron) placement, with the largest gains world-wide, and where does the memetic planner stand?"
HEADLINE="DT-FM over Megatron, world-wide (case 5)"
HEADLINE_PUB=dtfm_vs_megatron_case5
NEEDS="compare"
INPUTS="topologies/yuan2022/*.json topologies/gpus.csv topologies/models.csv"
EST_S=320
EST_S_QUICK=60
E1_PLANNERS=memetic,dtfm,dtfm-hybrid,megatron,megatron-random,metis,atlas,greedy,random
if [ "$QUICK" = 1 ]; then
    E1_CASES="1 5"; E1_SEEDS=1; E1_EXTRA="--budget-s 3"
else
    E1_CASES="1 2 3 4 5"; E1_SEEDS=2; E1_EXTRA=""
fi
STEPS=$(( 2 * $(echo $E1_CASES | wc -w) ))

# awk rules for `csvq ... "$OUT/E1.csv" OTHER.csv`: E1.csv's rows fill
# bad[case, planner] with why that planner has no feasible plan in that case
# (the first clause of its error, without the planner's name in front or "|"
# for markdown tables); then
# ratio(s, case, a, a_name, b, b_name, long) prints the speedup s = t(a) / t(b)
# or, when it is empty, which side is infeasible (with why when long).
E1_BAD_AWK='
    FILENAME ~ /E1\.csv$/ { if (v("feasible") != 1) bad[v("case"), v("planner")] = e1why(v("error"), v("planner")); next }
    function e1why(e, p) {
        if (index(e, p ": ") == 1) e = substr(e, length(p) + 3)
        sub(/; .*/, "", e); gsub(/\|/, "/", e)
        if (length(e) > 120) e = substr(e, 1, 117) "..."
        return e == "" ? "no plan" : e }
    function ratio(s, c, a, an, b, bn, long) {
        if (s != "") return sprintf("%.2fx", s)
        if ((c, b) in bad) return bn " infeasible" (long ? " (" bad[c, b] ")" : "")
        if (a != "" && (c, a) in bad) return an " infeasible" (long ? " (" bad[c, a] ")" : "")
        return "-" }
'

# e1_rank_plan TOPO: 8 x 8 rank-order plan (GPUs in file order, 3 layers a stage)
e1_rank_plan() {
    jflat "$1" | awk -F'\t' '
        $1 ~ /^sites\.[0-9]+\.id$/ { split($1, p, "."); sid[p[2]] = $2; if (p[2] + 1 > ns) ns = p[2] + 1 }
        $1 ~ /^sites\.[0-9]+\.nodes\.[0-9]+\.(count|repeat)$/ { split($1, p, "."); v[p[2], p[4], p[5]] = $2
            if (p[4] + 1 > nn[p[2]]) nn[p[2]] = p[4] + 1 }
        END {
          k = 0
          for (s = 0; s < ns; s++) { node = 0
            for (j = 0; j < nn[s]; j++) { r = ((s, j, "repeat") in v) ? v[s, j, "repeat"] : 1
              for (q = 0; q < r; q++) { for (g = 0; g < v[s, j, "count"]; g++) id[k++] = sid[s] "/" node "/" g; node++ } } }
          printf "{\"planner\": \"megatron-8x8\", \"schedule\": \"1f1b\", \"dp_sync\": \"ring\", \"microbatch_size\": 1, \"pipelines\": ["
          for (pp = 0; pp < 8; pp++) {
            printf "%s\n {\"microbatches\": 128, \"stages\": [", pp ? "," : ""
            for (st = 0; st < 8; st++) printf "%s{\"gpus\": [\"%s\"], \"layers\": [%d, %d]}", st ? ", " : "", id[8 * pp + st], 3 * st, 3 * st + 2
            printf "]}" }
          print " ] }" }'
}

# e1_m8_row CASE: the compare-columns row (CMP_COLS) of the 8x8 plan in
# $WORK/m8.json, replayed; when `simulate` refuses it (e.g. a stage does not
# fit a 16 GB V100) a row with feasible 0 and simulate's reason instead.
E1_M8_NOTE="rank order, PP 8 x DP 8, uniform layers, 1F1B, ring sync"
e1_m8_row() {
    rm -f "$WORK/s.json"
    if simj "$WORK/s.json" -t "topologies/yuan2022/case$1.json" -m gpt3-xl --batch 1024 \
           --recompute full -p "$WORK/m8.json" 2>"$WORK/s.err"; then
        set -- "$1" $(jget "$WORK/s.json" iteration_time_s energy_j energy_j_per_token tokens_per_s carbon_g usd gpus_used)
        echo "$1,time,megatron-8x8,1,1,1,1,$8,8,8,$2,$2,$2,$3,$3,$3,$4,$5,$6,$7,0,$2,,,\"\",\"$E1_M8_NOTE\""
    else
        # the reason without "error: " and the scratch path of the plan file
        _why=$(sed -n 's/^error: //p' "$WORK/s.err" | head -n 1 | sed 's|^[^ ]*m8\.json: ||; s/"/""/g')
        printf '%s,time,megatron-8x8,1,0,1,0,,,,,,,,,,,,,,0,,,,"%s","%s"\n' "$1" \
            "${_why:-simulate failed}" "$E1_M8_NOTE"
    fi
}

run() {
    not_run case "1 2 3 4 5" "$E1_CASES" QUICK
    for c in $E1_CASES; do
        step "case $c ($E1_SEEDS seeds)"
        cmp_run "$OUT/E1.csv" "case=$c" -t "topologies/yuan2022/case$c.json" -m gpt3-xl \
            --batch 1024 --recompute full --planners $E1_PLANNERS --seeds $E1_SEEDS --threads 2 \
            --dtfm-cost $E1_EXTRA
    done
    # megatron-8x8: DT-FM's Megatron baseline shape, in rank order
    for c in $E1_CASES; do
        step "case $c: megatron-8x8"
        e1_rank_plan "topologies/yuan2022/case$c.json" >"$WORK/m8.json"
        e1_m8_row "$c" >>"$OUT/E1.csv"
    done
    # speedups per case (mean iteration times); a ratio only between two
    # feasible rows with a positive time, else empty (never a division by a
    # missing value); every case gets a line
    csvq '
        { cs[v("case")] = 1 }
        v("feasible") == 1 && isnum(v("iteration_time_s")) && v("iteration_time_s") + 0 > 0 {
            t[v("case"), v("planner")] = v("iteration_time_s") + 0 }
        END {
          print "case,dtfm_vs_megatron8x8,dtfm_vs_megatron,dtfm_vs_megatron_random,dtfm_vs_random,memetic_vs_dtfm,memetic_vs_best_baseline,best_baseline"
          for (c in cs) {
            bb = ""; bt = 0
            split("dtfm dtfm-hybrid megatron megatron-random metis atlas greedy random megatron-8x8", B, " ")
            for (i = 1; i <= 9; i++) if ((c, B[i]) in t && (bb == "" || t[c, B[i]] < bt)) { bb = B[i]; bt = t[c, B[i]] }
            printf "%s,%s,%s,%s,%s,%s,%s,%s\n", c, r(c, "megatron-8x8", "dtfm"), r(c, "megatron", "dtfm"), r(c, "megatron-random", "dtfm"), r(c, "random", "dtfm"),
                   r(c, "dtfm", "memetic"), (bb != "" && (c, "memetic") in t) ? sprintf("%.4f", bt / t[c, "memetic"]) : "", bb } }
        function r(c, a, b) { return ((c, a) in t && (c, b) in t) ? sprintf("%.4f", t[c, a] / t[c, b]) : "" }' \
        "$OUT/E1.csv" | { read -r h; echo "$h"; sort -n; } >"$OUT/E1-speedup.csv"
}

section() {
    cat <<EOF
**Setup.** \`topologies/yuan2022/case1..5.json\` (64 x V100-16GB; DT-FM's delays and bandwidths,
see \`topologies/README.md\`), GPT3-XL, batch 1024 x 2048 tokens, microbatch 1, full activation
recomputation (DT-FM's GPipe schedule does not fit 16 GB otherwise in our memory model).
\`geotrain compare --planners $E1_PLANNERS --seeds $E1_SEEDS --dtfm-cost\` per case; every plan
is replayed by the simulator. Cases run: $E1_CASES${E1_EXTRA:+ ($E1_EXTRA per planner run)}. Error bars: min-max over seeds.

EOF
    fig E1-time "Iteration time per planner in DT-FM's five scenarios (log scale; min-max over seeds)"
    fig E1-speedup "DT-FM's speedup over Megatron (default placement) and over random placement, per case"
    echo "Iteration time (s, mean over seeds) per case and planner:"
    echo
    csvq '
        { p = v("planner"); c = v("case"); if (!(p in seen)) { seen[p] = 1; order[++np] = p }
          if (!(c in cs)) { cs[c] = 1; co[++nc] = c }
          t[c, p] = (v("feasible") == 1) ? sprintf("%.2f", v("iteration_time_s")) : "infeasible" }
        END { h = "| planner |"; s = "|---|"; for (j = 1; j <= nc; j++) { h = h " case " co[j] " |"; s = s "---|" }
              print h; print s
              for (i = 1; i <= np; i++) { r = "| " order[i] " |"; for (j = 1; j <= nc; j++) r = r " " t[co[j], order[i]] " |"; print r } }' \
        "$OUT/E1.csv"
    echo
    echo "Speedups (ratio of mean iteration times) beside the published ones. *Megatron 8x8* is the"
    echo "fixed PP 8 x DP 8 rank-order shape DT-FM compared against; *megatron* is our baseline with"
    echo "a grid search over TP x PP x DP, a stronger opponent than the paper's:"
    echo
    csvq -v p5="$(pub E1 dtfm_vs_megatron_case5)" -v pr="$(pub E1 dtfm_vs_random_max)" \
         -v lo="$(pub E1 dtfm_vs_megatron_other_lo)" -v hi="$(pub E1 dtfm_vs_megatron_other_hi)" "$E1_BAD_AWK"'
        BEGIN { print "| case | DT-FM vs Megatron 8x8 | published | DT-FM vs megatron (grid) | DT-FM vs megatron-random | DT-FM vs random planner | published (vs random) | memetic vs DT-FM | memetic vs best other (which) |"
                print "|---|---|---|---|---|---|---|---|---|" }
        { c = v("case"); printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) |\n", c,
              ratio(v("dtfm_vs_megatron8x8"), c, "megatron-8x8", "Megatron 8x8", "dtfm", "DT-FM", 0),
              c == 5 ? p5 "x" : lo "-" hi "x",
              ratio(v("dtfm_vs_megatron"), c, "megatron", "megatron", "dtfm", "DT-FM", 0),
              ratio(v("dtfm_vs_megatron_random"), c, "megatron-random", "megatron-random", "dtfm", "DT-FM", 0),
              ratio(v("dtfm_vs_random"), c, "random", "random", "dtfm", "DT-FM", 0), "up to " pr "x",
              ratio(v("memetic_vs_dtfm"), c, "dtfm", "DT-FM", "memetic", "memetic", 0),
              ratio(v("memetic_vs_best_baseline"), c, "", "", "memetic", "memetic", 0), v("best_baseline") }' \
        "$OUT/E1.csv" "$OUT/E1-speedup.csv"
    echo
    _bad=$(csvq "$E1_BAD_AWK"'END { for (k in bad) { split(k, q, SUBSEP); printf "* case %s, %s: %s\n", q[1], q[2], bad[k] } }' \
        "$OUT/E1.csv" | sort)
    [ -z "$_bad" ] || printf 'Without a feasible plan (no speedup is computed against them):\n\n%s\n\n' "$_bad"
    csvq -v p5="$(pub E1 dtfm_vs_megatron_case5)" -v pr="$(pub E1 dtfm_vs_random_max)" \
         -v lo="$(pub E1 dtfm_vs_megatron_other_lo)" -v hi="$(pub E1 dtfm_vs_megatron_other_hi)" '
        { c = v("case") + 0; m = v("dtfm_vs_megatron8x8"); g = v("dtfm_vs_megatron"); r = v("dtfm_vs_megatron_random"); q = v("dtfm_vs_random")
          if (m != "") { n++; if (m + 0 > 1.0001) beat++; else lose = lose (lose ? ", " : "") c; if (m + 0 > best) { best = m + 0; bc = c } sp[c] = m + 0
                         if (c != 5) { if (m + 0 < mlo || mlo == "") mlo = m + 0; if (m + 0 > mhi) mhi = m + 0 } }
          if (g != "") { ng++; if (g + 0 > 1.0001) beatg++; gs[c] = g + 0 }
          if (r != "") { nr++; if (r + 0 > 1.0001) beatr++; if (r + 0 > mr) mr = r + 0 }
          if (q != "") { nq++; if (q + 0 > mq) mq = q + 0 }
          mm = v("memetic_vs_best_baseline"); if (mm != "") { nm++; if (mm + 0 >= 0.9999) mwin++ } }
        # every figure below is printed only when there are rows to compute it from
        END {
          geo = (bc >= 4)
          vd = (n > 0 && beat == n && beatr == nr && geo) ? "reproduced" : (n > 0 && geo && beat > 0 ? "worse" : "not comparable")
          printf "**Verdict: %s.** ", vd
          if (n) {
            printf "Against Megatron in DT-FM'"'"'s PP 8 x DP 8 rank-order shape, DT-FM is faster in %d of %d cases", beat, n
            if (lose != "") printf " (not in case %s)", lose
            printf "; its gain is largest in case %d", bc
            if (5 in sp) printf " (world-wide: %.2fx against the published %sx)", sp[5], p5
            if (mhi > 0) printf " and %.2fx-%.2fx in the other cases against the published %s-%sx", mlo, mhi, lo, hi
            printf ". "
          } else printf "No case has feasible plans of both DT-FM and Megatron in DT-FM'"'"'s PP 8 x DP 8 rank-order shape, so the published comparison cannot be made (see above). "
          if (nr) {
            printf "Random placements lose to DT-FM in %d of %d cases (up to %.2fx for the Megatron grid on a random placement", beatr, nr, mr
            if (nq) printf ", %.2fx for our random planner", mq
            printf ", against the published up to %sx). ", pr
          } else if (nq) printf "Our random planner is up to %.2fx slower than DT-FM (published: up to %sx over random placement). ", mq, pr
          if (ng) {
            printf "Our grid-searched Megatron is a stronger opponent: DT-FM beats it in %d of %d cases", beatg, ng
            if (5 in gs) printf " (%.2fx world-wide)", gs[5]
            printf "; in one data center it can use tensor parallelism inside the 8-GPU nodes, which DT-FM'"'"'s fixed 8 x 8 GPipe grid cannot. "
          }
          if (nm) printf "The memetic planner is at least as fast as every other planner in %d of %d cases.", mwin, nm
          if (Q == 1) printf " (QUICK run: cases 1 and 5, one seed, a 3 s budget per planner run.)"
          printf "\n\n" }' "$OUT/E1-speedup.csv"
}

# The headline cell names what is infeasible (and why) instead of a ratio.
headline() {
    csvq -v p5="$(pub E1 dtfm_vs_megatron_case5)" "$E1_BAD_AWK"'
        v("case") == 5 {
          if ((5, "dtfm") in bad) cell = "DT-FM infeasible (" bad[5, "dtfm"] "): no speedup"
          else cell = over(v("dtfm_vs_megatron8x8"), "megatron-8x8", "Megatron 8x8") ", " \
                      over(v("dtfm_vs_megatron"), "megatron", "our grid-searched Megatron") \
                      " (memetic vs DT-FM: " ratio(v("memetic_vs_dtfm"), 5, "dtfm", "DT-FM", "memetic", "memetic", 1) ")"
          printf "| DT-FM over Megatron, world-wide | Yuan case 5, 64 V100, GPT3-XL | %s | %sx | E1-speedup.csv |\n", cell, p5 }
        function over(s, p, name) {
          if (s != "") return sprintf("%.2fx over %s", s, name)
          return ((5, p) in bad) ? name " infeasible (" bad[5, p] ")" : "no " name " result" }' \
        "$OUT/E1.csv" "$OUT/E1-speedup.csv"
}
