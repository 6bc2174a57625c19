# E4 — real-world topologies: the memetic planner against every baseline, in
# iteration time and in energy (GeoTrain's headline claim).
#
# Inputs: topologies/real/aws-us-4.json (4 US AWS regions x 8 V100),
# aws-world-10.json (10 AWS regions x 8 V100; Skyplane's measured WAN),
# topologies/pools/us-hetero.json, world-hetero.json, euasia-hetero.json
# (heterogeneous GPU pools: H100, A100, V100, L4, T4, RTX 4090 on real region
# pairs). Job: GPT3-XL, batch 1024 x 2048 tokens, microbatch 1, full
# recomputation (as E1). Planners: memetic, dtfm, dtfm-hybrid, megatron,
# megatron-random, metis, atlas, greedy, random with objective time; memetic
# again with objective energy-within:0.1 (least energy among plans at most 10 %
# slower than the fastest it finds; pure energy minimisation degenerates to one
# or two GPUs and iterations minutes long). Seeds: 2 for objective time, 1 for
# energy-within. The memetic planner's ablations (memetic-nols, memetic-all-gpus,
# memetic-uniform, memetic-plainx) run too, objective time, to show the full
# planner is never behind them. Every run is deterministic: each planner's
# default stopping rule, no time budget (the full planner runs the
# ablations' searches inside, so it dominates them at equal generations, not
# at equal wall-clock budgets). QUICK: 1 seed, aws-us-4 and us-hetero only. Measured:
# simulated iteration time and joules of each plan (mean, min, max over
# seeds). Published: up to -61.4 % iteration time and -11.7 % energy against
# the best baseline (GeoTrain, Hoang/He/Goudarzi).
ID=E4
TITLE="Real-world topologies: memetic planner vs the baselines"
QUESTION="On measured real-world topologies and heterogeneous GPU pools, how much iteration time and energy does the memetic planner save against the best baseline?"
HEADLINE="memetic vs best baseline (time, energy)"
HEADLINE_PUB=time_gain
NEEDS="compare"
INPUTS="topologies/real/*.json topologies/pools/*.json topologies/gpus.csv topologies/models.csv"
EST_S=900
EST_S_QUICK=300
E4_BASE=dtfm,dtfm-hybrid,megatron,megatron-random,metis,atlas,greedy,random
E4_ABL=memetic-nols,memetic-all-gpus,memetic-uniform,memetic-plainx
E4_ALL="real/aws-us-4 real/aws-world-10 pools/us-hetero pools/world-hetero pools/euasia-hetero"
if [ "$QUICK" = 1 ]; then
    E4_TOPOS="real/aws-us-4 pools/us-hetero"; E4_SEEDS=1; E4_ESEEDS=1; E4_EXTRA=""
else
    E4_TOPOS=$E4_ALL
    E4_SEEDS=2; E4_ESEEDS=1; E4_EXTRA=""
fi
E4_EOBJ=energy-within:0.1
E4_JOB="-m gpt3-xl --batch 1024 --recompute full"
STEPS=$(( 2 * $(echo $E4_TOPOS | wc -w) ))

run() {
    not_run topology "$E4_ALL" "$E4_TOPOS" QUICK
    for t in $E4_TOPOS; do
        n=$(basename "$t")
        step "$n: all planners, objective time"
        # shellcheck disable=SC2086
        cmp_run "$OUT/E4.csv" "topology=$n,run=time" -t "topologies/$t.json" $E4_JOB \
            --planners "memetic,$E4_ABL" --seeds $E4_SEEDS --threads 2 $E4_EXTRA
        # the baselines in their own run: E4_EXTRA is for the memetic planners only
        # shellcheck disable=SC2086
        cmp_run "$OUT/E4.csv" "topology=$n,run=time" -t "topologies/$t.json" $E4_JOB \
            --planners "$E4_BASE" --seeds $E4_SEEDS --threads 2
        step "$n: memetic, objective $E4_EOBJ"
        # shellcheck disable=SC2086
        cmp_run "$OUT/E4.csv" "topology=$n,run=energy" -t "topologies/$t.json" $E4_JOB \
            --planners memetic --objective $E4_EOBJ --seeds $E4_ESEEDS --threads 2 $E4_EXTRA
    done
    # per topology: memetic against the best baseline (means over seeds)
    csvq -v base="$E4_BASE" -v abl="$E4_ABL" '
        BEGIN { nb = split(base, B, ","); na = split(abl, A, ",") }
        v("feasible") == 1 { k = v("topology"); tp[k] = 1
          if (v("run") == "time") { t[k, v("planner")] = v("iteration_time_s") + 0; e[k, v("planner")] = v("energy_j") + 0
              sh[k, v("planner")] = v("gpus_used") " GPUs (" v("stages") "x" v("pipelines") ")" }
          else if (v("planner") == "memetic") { et[k] = v("iteration_time_s") + 0; ee[k] = v("energy_j") + 0 } }
        END {
          print "topology,best_time_baseline,best_baseline_time_s,memetic_time_s,time_gain_pct,best_energy_baseline,best_baseline_energy_j,memetic_energy_obj_energy_j,energy_gain_pct,memetic_time_obj_energy_j,energy_gain_time_obj_pct,memetic_energy_obj_time_s,best_baseline_shape,memetic_shape,best_ablation,best_ablation_time_s,vs_best_ablation_pct"
          for (k in tp) {
            bt = ""; be = ""; ba = ""
            for (i = 1; i <= nb; i++) { p = B[i]
              if ((k, p) in t && (bt == "" || t[k, p] < t[k, bt])) bt = p
              if ((k, p) in e && (be == "" || e[k, p] < e[k, be])) be = p }
            for (i = 1; i <= na; i++) { p = A[i]
              if ((k, p) in t && (ba == "" || t[k, p] < t[k, ba])) ba = p }
            mt = ((k, "memetic") in t) ? t[k, "memetic"] : ""
            me = ((k, "memetic") in e) ? e[k, "memetic"] : ""
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", k, bt, bt == "" ? "" : t[k, bt], mt,
                   (bt != "" && mt != "") ? sprintf("%.2f", 100 * (mt / t[k, bt] - 1)) : "",
                   be, be == "" ? "" : e[k, be], (k in ee) ? ee[k] : "",
                   (be != "" && (k in ee)) ? sprintf("%.2f", 100 * (ee[k] / e[k, be] - 1)) : "",
                   me, (be != "" && me != "") ? sprintf("%.2f", 100 * (me / e[k, be] - 1)) : "",
                   (k in et) ? et[k] : "", bt == "" ? "" : sh[k, bt], sh[k, "memetic"],
                   ba, ba == "" ? "" : t[k, ba],
                   (ba != "" && mt != "") ? sprintf("%.2f", 100 * (mt / t[k, ba] - 1)) : "" } }' "$OUT/E4.csv" | { read -r h; echo "$h"; sort; } >"$OUT/E4-summary.csv"
}

section() {
    cat <<EOF
**Setup.** Topologies: $(echo $E4_TOPOS | sed 's/[a-z]*\///g; s/ /, /g') (\`topologies/real/\`,
\`topologies/pools/\`; WAN from Skyplane's AWS measurements, see \`topologies/README.md\`).
Job: GPT3-XL, batch 1024 x 2048 tokens, microbatch 1, full recomputation. \`geotrain compare\`
with the memetic planner, its ablations $(echo $E4_ABL | sed 's/,/, /g') and the baselines
$(echo $E4_BASE | sed 's/,/, /g') (objective time, $E4_SEEDS seeds; the baselines with their own
defaults), and the memetic planner with objective \`$E4_EOBJ\` ($E4_ESEEDS seeds: the least
energy among plans at most 10 % slower than the fastest it finds)${E4_EXTRA:+; $E4_EXTRA per memetic run}. Gains are
relative to the best baseline of each topology (the fastest for time, the least-energy one for
energy), mean over seeds; negative = the memetic planner is better.

EOF
    fig E4-time "Iteration time per planner and topology (log scale; min-max over seeds)"
    fig E4-energy "Energy per iteration per planner and topology; 'memetic (energy)' = objective energy-within:0.1"
    echo "Memetic planner against the best baseline (negative = memetic better):"
    echo
    mdtable "$OUT/E4-summary.csv" "topology|topology|s;best_time_baseline|fastest baseline|s;best_baseline_shape|its plan (S x D)|s;memetic_shape|memetic plan|s;best_baseline_time_s|its time (s)|%.3f;memetic_time_s|memetic (s)|%.3f;time_gain_pct|time change (%)|%+.1f;best_energy_baseline|least-energy baseline|s;best_baseline_energy_j|its energy (J)|%.0f;memetic_energy_obj_energy_j|memetic, energy-within:0.1 (J)|%.0f;energy_gain_pct|energy change (%)|%+.1f;energy_gain_time_obj_pct|energy change, time-optimal plan (%)|%+.1f"
    echo "Memetic planner against its best ablation ($(echo $E4_ABL | sed 's/,/, /g'); objective time, same generations; negative or zero = memetic at least as good):"
    echo
    mdtable "$OUT/E4-summary.csv" "topology|topology|s;best_ablation|best ablation|s;best_ablation_time_s|its time (s)|%.3f;memetic_time_s|memetic (s)|%.3f;vs_best_ablation_pct|memetic vs it (%)|%+.2f"
    echo "Per topology, the memetic planner's margin against the best baseline and against each ablation (objective time, mean over seeds; change = memetic / other - 1, negative = memetic faster, +0.00 = tie):"
    echo
    csvq -v base="$E4_BASE" -v abl="$E4_ABL" '
        BEGIN { nb = split(base, B, ","); na = split(abl, A, ",") }
        v("run") == "time" && v("feasible") == 1 { k = v("topology"); if (!(k in ks)) { ks[k] = 1; ko[++nk] = k }
          t[k, v("planner")] = v("iteration_time_s") + 0 }
        END { h = "| topology | memetic (s) | best baseline | vs it (%) |"; sp = "|---|---|---|---|"
              for (i = 1; i <= na; i++) { h = h " vs " A[i] " (%) |"; sp = sp "---|" }
              print h; print sp
              for (j = 1; j <= nk; j++) { k = ko[j]; m = ((k, "memetic") in t) ? t[k, "memetic"] : ""
                bt = ""; for (i = 1; i <= nb; i++) if ((k, B[i]) in t && (bt == "" || t[k, B[i]] < t[k, bt])) bt = B[i]
                r = "| " k " | " (m == "" ? "-" : sprintf("%.3f", m)) " | " (bt == "" ? "none feasible" : bt) " | " \
                    ((bt == "" || m == "") ? "-" : sprintf("%+.2f", 100 * (m / t[k, bt] - 1))) " |"
                for (i = 1; i <= na; i++) r = r " " (((k, A[i]) in t && m != "") ? sprintf("%+.2f", 100 * (m / t[k, A[i]] - 1)) : "-") " |"
                print r } }' "$OUT/E4.csv"
    echo
    csvq '{ n++; g = v("vs_best_ablation_pct"); if (g != "") { m++; if (g + 0 <= 1e-9) ok++ } }
        END { printf "The memetic planner is at least as fast as every ablation on %d of %d topologies (it runs their searches inside and keeps the best replay).\n\n", ok, m }' "$OUT/E4-summary.csv"
    echo "All planners (objective time; mean iteration time in s / energy in kJ; min-max over seeds in \`E4.csv\`):"
    echo
    csvq '
        v("run") == "time" { p = v("planner"); k = v("topology"); if (!(p in seen)) { seen[p] = 1; order[++np] = p }
          if (!(k in ks)) { ks[k] = 1; ko[++nk] = k }
          c[k, p] = (v("feasible") == 1) ? sprintf("%.2f / %.0f", v("iteration_time_s"), v("energy_j") / 1000) : "infeasible" }
        END { h = "| planner |"; s = "|---|"; for (j = 1; j <= nk; j++) { h = h " " ko[j] " |"; s = s "---|" }
              print h; print s
              for (i = 1; i <= np; i++) { r = "| " order[i] " |"; for (j = 1; j <= nk; j++) r = r " " c[ko[j], order[i]] " |"; print r } }' \
        "$OUT/E4.csv"
    echo
    csvq -v pt="$(pub E4 time_gain)" -v pe="$(pub E4 energy_gain)" '
        { n++; g = v("time_gain_pct"); h = v("energy_gain_pct")
          if (g != "") { ng++; if (g + 0 <= 0.01) wt++; if (-g > bt) { bt = -g; btk = v("topology") } if (g + 0 > worst) { worst = g + 0; wk = v("topology") } }
          if (h != "") { nh++; if (h + 0 <= 0.01) we++; if (-h > be) { be = -h; bek = v("topology") } } }
        END {
          vt = (ng && wt == ng) ? (bt >= pt * 1.34 ? "better" : (bt >= pt * 0.66 ? "reproduced" : "worse")) : "worse"
          ve = (nh && we == nh) ? (be >= pe * 1.34 ? "better" : (be >= pe * 0.66 ? "reproduced" : "worse")) : "worse"
          vd = (vt == ve) ? vt : ((vt == "worse" || ve == "worse") ? "worse" : "reproduced")
          printf "**Verdict: %s.** Time: the memetic planner is at least as fast as the best baseline on %d of %d topologies", vd, wt, ng
          if (bt > 0) printf "; its largest saving is %.1f %% (%s) against the published up to %s %%", bt, btk, pt
          else printf " and saves nothing anywhere, against the published up to %s %%", pt
          if (worst > 0.01) printf "; it is up to %.1f %% slower than the best baseline (%s)", worst, wk
          printf ". Energy (objective energy-within:0.1): at most the least-energy baseline'"'"'s energy on %d of %d topologies", we, nh
          if (be > 0) printf ", largest saving %.1f %% (%s)", be, bek
          printf ", against the published up to %s %%. ", pe
          if (wt < ng) printf "The plans in the table show why: where a baseline wins it is usually with fewer, faster GPUs kept inside one node (e.g. data parallelism over the 8 H100s of a pool), a plan the memetic planner did not find in these runs (see its shape beside it)."
          if (Q == 1) printf " (QUICK run: two topologies, one seed.)"
          printf "\n\n" }' "$OUT/E4-summary.csv"
}

headline() {
    csvq -v pt="$(pub E4 time_gain)" -v pe="$(pub E4 energy_gain)" '
        { printf "| memetic vs best baseline, iteration time | %s (best baseline: %s) | %s %% | up to -%s %% | E4-summary.csv |\n", v("topology"), v("best_time_baseline"), fmt(v("time_gain_pct"), "%+.1f"), pt
          printf "| memetic vs best baseline, energy | %s (least-energy baseline: %s) | %s %% | up to -%s %% | E4-summary.csv |\n", v("topology"), v("best_energy_baseline"), fmt(v("energy_gain_pct"), "%+.1f"), pe }' \
        "$OUT/E4-summary.csv"
}
