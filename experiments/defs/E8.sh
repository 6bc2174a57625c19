# E8 — model size sweep: where memory becomes the binding constraint.
#
# Inputs: topologies/real/aws-us-4.json (4 US AWS regions x 8 V100-16GB, 512 GB
# of GPU memory in all). Models: GPT-3 1.3B, 2.7B, 6.7B, 13B (QUICK: 1.3B and
# 6.7B), batch 256 x 2048 tokens, microbatch 1, no activation recomputation
# (so activations count). Planners: memetic, memetic-uniform (uniform layer
# cuts), megatron (uniform layers, rank order), dtfm (uniform layers, GPipe),
# metis (balanced layers), atlas, greedy; seed 1 (QUICK: a 3 s budget per
# run). The memetic planners, megatron, metis and atlas may use tensor
# parallelism inside a node; dtfm and greedy never do. Measured: feasible or not (and why), iteration time, GPUs and stages
# chosen; the training state from `geotrain model show`. Published: memory
# binds as models grow; uniform splits run out of memory.
ID=E8
TITLE="Model size sweep: memory binds"
QUESTION="As the model grows on memory-poor GPUs, does memory become the binding constraint, and do planners restricted to uniform layer splits run out of memory first?"
HEADLINE="model size sweep"
HEADLINE_PUB=trend
NEEDS="compare"
INPUTS="topologies/real/aws-us-4.json topologies/gpus.csv topologies/models.csv"
EST_S=250
EST_S_QUICK=20
E8_PLANNERS=memetic,memetic-uniform,megatron,dtfm,metis,atlas,greedy
E8_TOPO=real/aws-us-4
E8_ALL="gpt3_1.3b gpt3_2.7b gpt3_6.7b gpt3_13b"
if [ "$QUICK" = 1 ]; then
    E8_MODELS="gpt3_1.3b gpt3_6.7b"; E8_EXTRA="--budget-s 3"
else
    E8_MODELS=$E8_ALL; E8_EXTRA=""
fi
STEPS=$(echo $E8_MODELS | wc -w)

run() {
    not_run model "$E8_ALL" "$E8_MODELS" QUICK
    for m in $E8_MODELS; do
        step "$m"
        st=$("$GT" model show "$m" --batch 256 --json >"$WORK/m.json" && jget "$WORK/m.json" training_state_bytes params | tr '\n' ' ')
        set -- $st
        # shellcheck disable=SC2086
        cmp_run "$OUT/E8.csv" "model=$m,params=$2,training_state_gib=$(awk -v b="$1" 'BEGIN { printf "%.1f", b / 1073741824 }')" \
            -t "topologies/$E8_TOPO.json" -m "$m" --batch 256 --recompute none --planners $E8_PLANNERS \
            --threads 2 $E8_EXTRA
    done
    rm -rf "$WORK"
}

section() {
    printf '**Setup.** `%s` (32 x V100-16GB, 512 GiB in all); models %s; batch 256 x 2048 tokens, microbatch 1,\n' \
        "topologies/$E8_TOPO.json" "$(echo $E8_MODELS | sed 's/ /, /g')"
    printf 'no recomputation; `geotrain compare --planners %s`%s. A planner without a feasible plan\n' \
        "$E8_PLANNERS" "${E8_EXTRA:+ ($E8_EXTRA)}"
    echo "reports why (the GPU that overflows, or no grid that fits)."
    echo
    fig E8-models "Iteration time per planner vs model size; missing bars = no feasible plan (out of memory)"
    echo "Iteration time (s) per model and planner, or why there is no plan:"
    echo
    csvq '
        { m = v("model"); p = v("planner"); if (!(m in seen)) { seen[m] = 1; mo[++nm] = m; st[m] = v("training_state_gib") }
          if (!(p in sp)) { sp[p] = 1; po[++np] = p }
          if (v("feasible") == 1) c[m, p] = sprintf("%.2f (%s GPUs, %s stages)", v("iteration_time_s"), v("gpus_used"), v("stages"))
          else { e = v("error"); sub(/^[^:]*: /, "", e); if (length(e) > 90) e = substr(e, 1, 87) "..."; c[m, p] = "no plan: " e } }
        END { h = "| planner |"; s = "|---|"; for (j = 1; j <= nm; j++) { h = h " " mo[j] " (state " st[mo[j]] " GiB) |"; s = s "---|" }
              print h; print s
              for (i = 1; i <= np; i++) { r = "| " po[i] " |"; for (j = 1; j <= nm; j++) r = r " " c[mo[j], po[i]] " |"; print r } }' \
        "$OUT/E8.csv"
    echo
    csvq '
        { m = v("model"); p = v("planner"); if (!(m in seen)) { seen[m] = 1; mo[++nm] = m }
          if (!(p in sp)) { sp[p] = 1; po[++np] = p }
          f[m, p] = v("feasible") + 0; s[m, p] = v("stages") + 0; if (f[m, p]) ok[m]++
          if (f[m, p] && v("stages") * v("pipelines") > 0 && v("gpus_used") + 0 > v("stages") * v("pipelines")) { tpu[p] = 1; tp[m] = tp[m] (tp[m] ? ", " : "") p } }
        END {
          for (i = 1; i <= np; i++) { p = po[i]; ff[p] = 0; for (j = 1; j <= nm; j++) if (!f[mo[j], p]) { ff[p] = j; break } }
          # among the planners that never use tensor parallelism here: uniform splits
          # (dtfm) against uneven ones (greedy); the others add TP inside a node
          nu = split("dtfm", U, " "); nn = split("greedy", N, " ")
          fu = nm + 1; for (i = 1; i <= nu; i++) if (U[i] in ff && ff[U[i]] && ff[U[i]] < fu) fu = ff[U[i]]
          fn = nm + 1; for (i = 1; i <= nn; i++) if (N[i] in ff && ff[N[i]] && ff[N[i]] < fn) fn = ff[N[i]]
          binds = (ok[mo[nm]] < ok[mo[1]])
          good = binds && fu <= fn && f[mo[nm], "memetic"]
          printf "**Verdict: %s.** Memory binds: %d of %d planners find a plan for %s, %d for %s. ", good ? "reproduced" : "worse", ok[mo[1]], np, mo[1], ok[mo[nm]], mo[nm]
          printf "First model without a plan, per planner:"
          for (i = 1; i <= np; i++) { p = po[i]; printf " %s %s;", p, ff[p] ? mo[ff[p]] : "none" }
          printf " Without tensor parallelism, DT-FM'"'"'s uniform split fails %s the uneven split of greedy", fu < fn ? "before" : (fu == fn ? "together with" : "after")
          tl = ""; for (i = 1; i <= np; i++) if (po[i] in tpu) tl = tl (tl ? ", " : "") po[i]
          if (tl != "") printf "; the planners that put tensor parallelism inside a node on some size (%s) split a stage'"'"'s memory over its GPUs", tl
          printf ". "
          if (tp[mo[nm]] != "") printf "At %s the feasible plans with tensor parallelism are: %s. ", mo[nm], tp[mo[nm]]
          if (!f[mo[nm], "memetic"]) printf "The memetic planner finds no plan for the largest model. "
          printf "\n\n" }
        function idx(m,   j) { for (j = 1; j <= nm; j++) if (mo[j] == m) return j; return 0 }' "$OUT/E8.csv"
}
