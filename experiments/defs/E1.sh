# E1 — DT-FM's five network scenarios (Yuan et al., NeurIPS 2022): 64 V100,
# GPT3-XL, every planner.
#
# Inputs: topologies/yuan2022/case1..5.json (64 x V100-16GB: one data center
# on demand, spot instances, two data centers, regional, world-wide). Job:
# GPT3-XL, global batch 1024 x 2048 tokens, microbatch 1 (the DT-FM run
# script's values), activation recomputation on (DT-FM schedules GPipe; without
# recomputation 64-128 microbatches in flight do not fit a 16 GB V100 in our
# memory model). Planners: memetic, dtfm, dtfm-hybrid, megatron (default rank
# placement), megatron-random (random placement), metis, atlas, greedy, random.
# Seeds: 2 (QUICK: 1, cases 1 and 5 only, a 3 s budget per planner run); deterministic planners give the same
# plan for every seed. Measured: simulated iteration time (mean, min, max over
# seeds), energy, DT-FM's own cost of grid plans. Compared with: DT-FM 4.8x
# faster than Megatron world-wide (case 5), up to 2.7x over random placement,
# 1.2-2.5x over Megatron in the other cases (yuan2022_scenarios.md).
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
STEPS=$(echo $E1_CASES | wc -w)

run() {
    for c in $E1_CASES; do
        step "case $c ($E1_SEEDS seeds)"
        cmp_run "$OUT/E1.csv" "case=$c" -t "topologies/yuan2022/case$c.json" -m gpt3-xl \
            --batch 1024 --recompute full --planners $E1_PLANNERS --seeds $E1_SEEDS --threads 2 \
            --dtfm-cost $E1_EXTRA
    done
    # speedups per case (mean iteration times)
    csvq '
        v("feasible") == 1 { t[v("case"), v("planner")] = v("iteration_time_s") + 0; cs[v("case")] = 1 }
        END {
          print "case,dtfm_vs_megatron,dtfm_vs_megatron_random,dtfm_vs_random,memetic_vs_dtfm,memetic_vs_best_baseline,best_baseline"
          for (c in cs) {
            bb = ""; bt = 0
            split("dtfm dtfm-hybrid megatron megatron-random metis atlas greedy random", B, " ")
            for (i = 1; i <= 8; i++) if ((c, B[i]) in t && (bb == "" || t[c, B[i]] < bt)) { bb = B[i]; bt = t[c, B[i]] }
            printf "%s,%s,%s,%s,%s,%s,%s\n", c, r(c, "megatron", "dtfm"), r(c, "megatron-random", "dtfm"), r(c, "random", "dtfm"),
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
    echo "Speedups (ratio of mean iteration times) beside the published ones:"
    echo
    csvq -v p5="$(pub E1 dtfm_vs_megatron_case5)" -v pr="$(pub E1 dtfm_vs_random_max)" \
         -v lo="$(pub E1 dtfm_vs_megatron_other_lo)" -v hi="$(pub E1 dtfm_vs_megatron_other_hi)" '
        BEGIN { print "| case | DT-FM vs Megatron | published | DT-FM vs Megatron on a random placement | DT-FM vs random planner | published (vs random) | memetic vs DT-FM | memetic vs best baseline (which) |"
                print "|---|---|---|---|---|---|---|---|" }
        { c = v("case"); printf "| %s | %s | %s | %s | %s | %s | %s | %s (%s) |\n", c, x(v("dtfm_vs_megatron")),
              c == 5 ? p5 "x" : lo "-" hi "x", x(v("dtfm_vs_megatron_random")), x(v("dtfm_vs_random")), "up to " pr "x",
              x(v("memetic_vs_dtfm")), x(v("memetic_vs_best_baseline")), v("best_baseline") }
        function x(s) { return s == "" ? "-" : sprintf("%.2fx", s) }' "$OUT/E1-speedup.csv"
    echo
    csvq -v p5="$(pub E1 dtfm_vs_megatron_case5)" -v pr="$(pub E1 dtfm_vs_random_max)" '
        { c = v("case") + 0; m = v("dtfm_vs_megatron"); r = v("dtfm_vs_megatron_random"); q = v("dtfm_vs_random")
          if (m != "") { n++; if (m + 0 > 1) beat++; if (m + 0 > best) { best = m + 0; bc = c } sp[c] = m + 0 }
          if (r != "") { nr++; if (r + 0 > 1) beatr++; if (r + 0 > mr) mr = r + 0 }
          if (q != "" && q + 0 > mq) mq = q + 0
          mm = v("memetic_vs_best_baseline"); if (mm != "") { nm++; if (mm + 0 >= 0.9999) mwin++ } }
        END {
          geo = (bc >= 4)
          vd = (n > 0 && beat == n && beatr == nr && geo) ? "reproduced" : (n > 0 && beat > 0 ? "worse" : "not comparable")
          printf "**Verdict: %s.** DT-FM beats the Megatron default placement in %d of %d cases and Megatron on a random placement in %d of %d; ", vd, beat, n, beatr, nr
          printf "its largest gain over Megatron is %.2fx, in case %d", best, bc
          if (5 in sp) printf " (world-wide: %.2fx against the published %sx)", sp[5], p5
          printf "; over random placements it reaches %.2fx (Megatron grid on a random placement) and %.2fx (our random planner, best of 100 valid random plans), against the published up to %sx. ", mr, mq, pr
          if (nm) printf "The memetic planner is at least as fast as the best baseline in %d of %d cases.", mwin, nm
          if (Q == 1) printf " (QUICK run: cases 1 and 5, one seed, a 3 s budget per planner run.)"
          printf "\n\n" }' "$OUT/E1-speedup.csv"
}

headline() {
    csvq -v p5="$(pub E1 dtfm_vs_megatron_case5)" '
        v("case") == 5 { printf "| DT-FM over Megatron, world-wide | Yuan case 5, 64 V100, GPT3-XL | %.2fx (memetic vs DT-FM: %.2fx) | %sx | E1-speedup.csv |\n", v("dtfm_vs_megatron"), v("memetic_vs_dtfm"), p5 }' \
        "$OUT/E1-speedup.csv"
}
