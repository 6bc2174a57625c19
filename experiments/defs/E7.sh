# E7 — ablations of the memetic planner: each component removed in turn.
#
# Inputs: topologies/pools/world-hetero.json (56 mixed GPUs in 6 sites, where
# GPU selection and uneven layer cuts matter most); QUICK:
# topologies/real/aws-us-4.json. Job: GPT3-XL, batch 1024 x 2048 tokens, full
# recomputation, every run with the planners' default stopping rule (QUICK:
# batch 256): deterministic, and at equal generations the full planner,
# which runs the ablations' searches inside and keeps the best replay, is
# never behind one (a removal can tie, not win).
# Planners: memetic, memetic-nols (no local search), memetic-all-gpus (no GPU
# selection), memetic-uniform (uniform layer cuts), memetic-plainx (plain order
# crossover instead of the group-preserving one). Seeds: 2 (QUICK: 1).
# Measured: simulated iteration time (mean, min, max over seeds); each
# variant relative to the full planner's mean. Published: every removal hurts.
ID=E7
TITLE="Ablations of the memetic planner"
QUESTION="Does removing any component of the memetic planner (local search, GPU selection, non-uniform layer cuts, group-preserving crossover) make its plans slower?"
HEADLINE="ablations"
HEADLINE_PUB=trend
NEEDS="compare"
INPUTS="topologies/yuan2022/case5.json topologies/pools/world-hetero.json topologies/real/aws-us-4.json topologies/gpus.csv topologies/models.csv"
EST_S=200
EST_S_QUICK=80
E7_PLANNERS=memetic,memetic-nols,memetic-all-gpus,memetic-uniform,memetic-plainx
if [ "$QUICK" = 1 ]; then
    E7_TOPOS="real/aws-us-4"; E7_SEEDS=1; E7_JOB="-m gpt3-xl --batch 256 --recompute full"
else
    E7_TOPOS="pools/world-hetero"; E7_SEEDS=2; E7_JOB="-m gpt3-xl --batch 1024 --recompute full"
fi
STEPS=$(echo $E7_TOPOS | wc -w)

run() {
    for t in $E7_TOPOS; do
        n=$(basename "$t")
        step "$n ($E7_SEEDS seeds)"
        # shellcheck disable=SC2086
        cmp_run "$OUT/E7.csv" "topology=$n" -t "topologies/$t.json" $E7_JOB --planners $E7_PLANNERS \
            --seeds $E7_SEEDS --threads 2
    done
    csvq '
        { k = v("topology"); p = v("planner"); if (!(k in seen)) { seen[k] = 1; ko[++nk] = k }
          if (!((k, p) in ok)) po[k, ++np[k]] = p
          ok[k, p] = v("feasible"); t[k, p] = v("iteration_time_s"); lo[k, p] = v("iteration_time_s_min"); hi[k, p] = v("iteration_time_s_max") }
        END { print "topology,variant,feasible,time_mean_s,time_min_s,time_max_s,vs_full_pct,vs_full_min_pct,vs_full_max_pct"
              for (i = 1; i <= nk; i++) { k = ko[i]; m = t[k, "memetic"]
                for (j = 1; j <= np[k]; j++) { p = po[k, j]; c = (ok[k, p] == 1 && ok[k, "memetic"] == 1)
                  printf "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", k, p, ok[k, p], t[k, p], lo[k, p], hi[k, p],
                         c ? sprintf("%.2f", 100 * (t[k, p] / m - 1)) : "", c ? sprintf("%.2f", 100 * (lo[k, p] / m - 1)) : "",
                         c ? sprintf("%.2f", 100 * (hi[k, p] / m - 1)) : "" } } }' \
        "$OUT/E7.csv" >"$OUT/E7-ablations.csv"
}

section() {
    printf '**Setup.** `geotrain compare --planners %s --seeds %s` on %s (job: %s). ' \
        "$E7_PLANNERS" "$E7_SEEDS" "$(echo $E7_TOPOS | sed 's/[a-z0-9]*\///g; s/ /, /g')" "$(echo "$E7_JOB" | sed 's/--//g')"
    echo "Each variant removes one component: no local search (\`memetic-nols\`), no GPU selection"
    echo "(\`memetic-all-gpus\`: every GPU is used), uniform layer cuts (\`memetic-uniform\`), plain order"
    echo "crossover (\`memetic-plainx\`). Change = variant mean time / full planner mean time - 1"
    echo "(positive = the removal hurts); error bars: min and max over seeds against the same mean."
    echo
    fig E7-ablations "Iteration time of each ablation relative to the full memetic planner (min-max over seeds)"
    mdtable "$OUT/E7-ablations.csv" "topology|topology|s;variant|variant|s;feasible|feasible|%d;time_mean_s|mean time (s)|%.3f;time_min_s|min|%.3f;time_max_s|max|%.3f;vs_full_pct|vs full planner (%)|%+.1f"
    csvq '
        { k = v("topology"); if (!(k in seen)) { seen[k] = 1; ko[++nk] = k }
          p = v("variant"); vo[k, ++nv[k]] = p; ok[k, p] = v("feasible"); t[k, p] = v("time_mean_s") + 0 }
        END { for (i = 1; i <= nk; i++) { k = ko[i]; d = ""
                for (j = 1; j <= nv[k]; j++) { p = vo[k, j]; if (p == "memetic") continue
                  d = d (d ? ", " : "") p " " ((ok[k, p] == 1 && ok[k, "memetic"] == 1 && t[k, p] > 0) ? sprintf("%+.2f %%", 100 * (t[k, "memetic"] / t[k, p] - 1)) : "(no plan)") }
                printf "Memetic against each ablation on %s (memetic / ablation - 1, mean time over seeds; negative = memetic faster, +0.00 = tie): %s.\n\n", k, d } }' "$OUT/E7-ablations.csv"
    csvq '
        v("variant") != "memetic" { n++; x = v("vs_full_pct")
          if (v("feasible") != 1) { inf++; hurt++ }
          else if (x + 0 > 0.05) hurt++
          else desc = desc sprintf("%s%s on %s: %+.1f %%", desc ? "; " : "", v("variant"), v("topology"), x)
          if (x != "") { s[v("variant")] += x; c[v("variant")]++ } }
        END {
          printf "**Verdict: %s.** %d of %d (variant, topology) pairs are slower than the full planner or find no plan", hurt == n ? "reproduced" : "worse", hurt, n
          if (inf) printf " (%d without a feasible plan)", inf
          printf ". "
          if (desc != "") printf "Not hurting: %s. ", desc
          printf "Mean change per variant:"
          for (p in s) printf " %s %+.1f %%;", p, s[p] / c[p]
          if (Q == 1) printf " (QUICK run: one topology, one seed: not conclusive.)"
          printf "\n\n" }' "$OUT/E7-ablations.csv"
}
