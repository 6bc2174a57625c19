# E12 — compute-model fidelity: simulated vs published measured iteration times.
#
# Inputs: validation/runs.csv (derived by validation/derive_validation.py from
# 593 published measured training runs: Korthikanti et al. 2022, Narayanan et
# al. SC'21, Megatron-LM README tables 2020 / 2024, NVIDIA NeMo / NeMo-Launcher
# / Megatron-Bridge performance tables, MosaicML llm-foundry benchmarks; the
# source of every row is kept in the file) and the GPU catalog.
# Run: `geotrain validate --fit` replays every representable row (one-site
# topology of the row's nodes, Megatron rank-order plan with all data-parallel
# replicas and the framework's options: FSDP / ZeRO sharding, overlapped
# bucketed gradient sync, gradient dtype, accumulation steps, TP communication
# overlap where the source names it) and fits the compute model's one free
# parameter, k_sat per architecture, on the role=fit rows only.
# Measured: per row measured vs simulated iteration time and relative error;
# mean / median / max |error| on the fitting rows, the held-out rows and in a
# leave-one-source-out cross-validation. Seeds: none (deterministic).
# Also: peak memory per GPU against published measured peaks
# (validation/memory_runs.csv; the allocator reserve fitted on the role=fit rows
# only) and iteration times of published runs outside the validation set
# (validation/external_runs.csv, `validate --external`, never used for fitting).
# Published: the accuracy other simulators report (SimAI 1.9 %, Proteus 3.0 %,
# Lumos 3.3 %, Calculon 3.65 % mean error); GeoTrain's goal is <= 5 % mean and
# <= 15 % max on held-out rows.
ID=E12
TITLE="Compute-model fidelity: simulated vs measured iteration times"
QUESTION="How close are simulated iteration times to published measured training runs the model was not fitted on?"
HEADLINE="held-out mean |error| vs measured runs"
HEADLINE_PUB=sim_error_goal
NEEDS="validate"
INPUTS="validation/runs.csv validation/memory_runs.csv validation/external_runs.csv topologies/gpus.csv topologies/gpu_freq.csv"
EST_S=200
EST_S_QUICK=200
STEPS=3

run() {
    step "validate --fit"
    "$GT" validate --fit --quiet --csv "$OUT/E12-rows.csv" --json "$OUT/E12.json" \
        >"$OUT/E12-report.txt"
    step "summary"
    # one row per statistic: name,rows,mean,median,max,mean_signed
    jflat "$OUT/E12.json" | awk -F'\t' '
        function put(k, f, val) { if (!(k in seen)) { seen[k] = 1; order[++n] = k } s[k, f] = val }
        $1 ~ /^(fit_rows|holdout_rows|overall)\./ { split($1, a, "."); put(a[1], a[2], $2) }
        $1 ~ /^fit\.(holdout_with_fitted|fit_rows_with_fitted|leave_one_source_out)\./ { split($1, a, "."); put(a[2], a[3], $2) }
        $1 ~ /^by_gpu\./ { split($1, a, "."); put("gpu " a[2], a[3], $2) }
        $1 ~ /^by_source\./ { split($1, a, "."); put("source " a[2], a[3], $2) }
        END { print "set,rows,mean_rel_error,median_rel_error,max_rel_error,mean_signed_rel_error"
              for (i = 1; i <= n; i++) { k = order[i]
                  printf "%s,%d,%.6f,%.6f,%.6f,%.6f\n", k, s[k, "rows"], s[k, "mean_rel_error"],
                         s[k, "median_rel_error"], s[k, "max_rel_error"], s[k, "mean_signed_rel_error"] } }' \
        >"$OUT/E12-summary.csv"
    jflat "$OUT/E12.json" | awk -F'\t' '
        BEGIN { print "architecture,k_sat,fit_rows" }
        $1 ~ /^fit\.k_sat\.[a-z0-9]+\.k_sat$/ { split($1, a, "."); k[a[3]] = $2; o[++n] = a[3] }
        $1 ~ /^fit\.k_sat\.[a-z0-9]+\.fit_rows$/ { split($1, a, "."); r[a[3]] = $2 }
        END { for (i = 1; i <= n; i++) printf "%s,%g,%d\n", o[i], k[o[i]], r[o[i]] }' \
        >"$OUT/E12-fit.csv"
    # measured vs simulated peak memory, one row per replayed row
    jflat "$OUT/E12.json" | awk -F'\t' '
        $1 ~ /^memory\.rows\.[0-9]+\./ { split($1, a, "."); r = a[3] + 0; v[r, a[4]] = $2; if (r + 1 > n) n = r + 1 }
        $1 ~ /^memory\.(fit_rows|holdout_rows|holdout_rows_no_reserve|overall)\./ { split($1, a, "."); s[a[2], a[3]] = $2 }
        $1 == "memory.reserve" { res = $2 }
        END { print "id,role,measured_gib,allocated_gib,simulated_gib,rel_error" >"'"$OUT/E12-memory.csv"'"
              for (i = 0; i < n; i++) printf "%s,%s,%.2f,%.2f,%.2f,%.6f\n", v[i, "id"], v[i, "role"],
                  v[i, "measured_gib"], v[i, "allocated_gib"], v[i, "simulated_gib"], v[i, "rel_error"] >"'"$OUT/E12-memory.csv"'"
              print "set,rows,mean_rel_error,median_rel_error,max_rel_error,mean_signed_rel_error,reserve"
              split("fit_rows holdout_rows holdout_rows_no_reserve overall", k, " ")
              for (i = 1; i <= 4; i++) printf "%s,%d,%.6f,%.6f,%.6f,%.6f,%g\n", k[i], s[k[i], "rows"],
                  s[k[i], "mean_rel_error"], s[k[i], "median_rel_error"], s[k[i], "max_rel_error"],
                  s[k[i], "mean_signed_rel_error"], res }' >"$OUT/E12-memory-summary.csv"
    rm -f "$OUT/E12.json"
    step "validate --external"
    "$GT" validate --external --quiet --csv "$OUT/E12-external.csv" --json "$OUT/E12-ext.json" \
        >"$OUT/E12-external.txt"
    jflat "$OUT/E12-ext.json" | awk -F'\t' '
        BEGIN { print "set,rows,mean_rel_error,median_rel_error,max_rel_error,mean_signed_rel_error" }
        $1 ~ /^(overall|by_gpu\.[a-z0-9_]+)\./ { k = $1; sub(/\.[a-z_]+$/, "", k); f = substr($1, length(k) + 2)
            if (!(k in seen)) { seen[k] = 1; o[++n] = k } s[k, f] = $2 }
        END { for (i = 1; i <= n; i++) { k = o[i]; printf "%s,%d,%.6f,%.6f,%.6f,%.6f\n", k, s[k, "rows"],
                  s[k, "mean_rel_error"], s[k, "median_rel_error"], s[k, "max_rel_error"], s[k, "mean_signed_rel_error"] } }' \
        >"$OUT/E12-external-summary.csv"
    rm -f "$OUT/E12-ext.json"
}

section() {
    S=$OUT/E12-summary.csv
    cat <<EOF
**Setup.** \`geotrain validate --fit\` on \`validation/runs.csv\`: published measured runs of
decoder-only Transformers (Korthikanti et al. 2022; Narayanan et al. SC'21; Megatron-LM README
tables 2020 and 2024; NVIDIA NeMo, NeMo-Launcher and Megatron-Bridge tables; MosaicML
llm-foundry), $(csv_rows "$OUT/E12-rows.csv") of them representable (the others are listed by
\`geotrain validate\` with the reason: duplicate metric of a replayed configuration, incomplete
configuration, context parallelism, DiLoCo, power). Each row is replayed by the simulator on
a one-site topology of its nodes with a Megatron rank-order plan and the data-parallel options
of the framework that measured it (docs/validation.md; the \`options\` column of E12-rows.csv):
FSDP / ZeRO-2 sharding for llm-foundry and Megatron-FSDP rows, the distributed optimizer
(ZeRO-1 traffic) for Megatron-Core / NeMo rows, gradient sync overlapped with the backward in
the framework's buckets (one block under FSDP, 40M parameters under Megatron-Core), gradients in
the dtype the source states, one accumulation step per microbatch without pipelining, and TP
communication overlap where the source names \`--tp-comm-overlap\` (Megatron-Core H100 rows).
Rows without TP/PP above 64 replicas run as 64 replicas with rescaled NIC rate and latency
(bounded at 0.5 %, tests/test_validate.c).
**What was fitted:** only \`k_sat\` (GEMM saturation) per architecture, on a grid, on the
role=fit rows: the Megatron-LM / NeMo sources KOR, NAR, MEG20, NEMO2407, NEMOL. Everything
else is from datasheets and public measurements (catalog \`kernel_source\`). **Held out:** the
llm-foundry (LLMF), Megatron-Core H100 (MH100) and Megatron-Bridge (MB2511) rows, plus a
leave-one-source-out cross-validation of the fitting procedure over all sources.

EOF
    fig E12-scatter "Simulated vs measured iteration time (log-log), y = x and +/-10 % band; fitting rows and held-out rows"
    echo "Fitted k_sat per architecture (fitting rows: 0 = no such rows, the catalog prior is kept):"
    echo
    mdtable "$OUT/E12-fit.csv" "architecture|architecture|s;k_sat|k_sat|%g;fit_rows|fitting rows|%d"
    echo "|relative error| of the iteration time:"
    echo
    mdtable "$S" "set|rows|s;rows|n|%d;mean_rel_error|mean|%.3f;median_rel_error|median|%.3f;max_rel_error|max|%.3f;mean_signed_rel_error|mean signed|%+.3f"
    echo "Step by step (docs/validation.md has the tables): the replay with the frameworks'"
    echo "data-parallel options and TP overlap had a held-out mean |error| of 15.0 % (max 47.3 %),"
    echo "leave-one-source-out 14.4 %, llm-foundry -14 % too fast and worse with the sequence (-36 %"
    echo "at 65k tokens). Pricing fused attention from published FlashAttention benchmark rates (and"
    echo "llm-foundry's rows with the Triton FlashAttention kernel their benchmark ran) took the"
    echo "held-out mean to 7.0 %; fp8 GEMMs at their measured share of the fp8 peak to 6.9 %; the"
    echo "k_sat refit on the fitting rows (ampere 768, hopper 2560, shipped) to 7.8 % (the old values"
    echo "score better on the held-out rows, which is not a reason to keep them). Architectures"
    echo "without fitting rows (Blackwell, Ada, Turing) then took the per-tile overhead time of the"
    echo "nearest fitted architecture instead of a fixed prior of 128 K-steps (Blackwell 5030 from"
    echo "Hopper): held-out 7.4 %, Megatron-Bridge Blackwell rows -20 % .. -33 % -> -17 % .. +7 %."
    echo "Reading llm-foundry's table against its repository's history corrected two derived fields"
    echo "(MPT has biases and learned positional embeddings; the large-scale H100 section ran"
    echo "FlashAttention-2 for four of its six models) and added the costs they bring from the"
    echo "frameworks' code (bias gradients; the flash path's unpadding): fitting rows 5.9 % -> 5.7 %,"
    echo "held-out 7.2 % -> 7.1 %, leave-one-source-out 7.1 % -> 7.0 %, k_sat unchanged."
    echo "Within llm-foundry's H100 rows the error follows the compute per microbatch: too fast below"
    echo "8k tokens per microbatch (-8 % signed), too slow from 32k (+9 %), where FSDP's per-pass"
    echo "traffic is large, respectively small, against the compute. Under ZeRO-2 / ZeRO-3 / FSDP every"
    echo "pass runs beside its own all-gathers and reduce-scatter (Composer reduce-scatters on every"
    echo "microbatch under FSDP), and those NCCL kernels slow the compute they overlap; charging the"
    echo "published average (18.9 %, Lee et al., arXiv:2507.03114) on the overlapped part of each pass"
    echo "(nothing fitted) moves the held-out mean 7.1 % -> 6.8 % (max 35.5 % -> 33.0 %, 13 rows beyond"
    echo "15 % instead of 15), leave-one-source-out 7.0 % -> 6.8 %, the fitting rows not at all."
    echo "llm-foundry's Triton attention kernel implements FlashAttention-1 and its header puts it at"
    echo "about FlashAttention-1's speed on A100; priced there at FlashAttention-1's measured A100 rate"
    echo "per head dimension and sequence length (the FA2 release's side-by-side benchmark) instead of"
    echo "FlashAttention-2 / 1.9 at every shape, the held-out mean goes 6.8 % -> 6.0 % (max 32.3 %,"
    echo "11 rows beyond 15 %), leave-one-source-out 6.8 % -> 6.1 %; other architectures keep 1.9"
    echo "(carried to H100 the A100 relation put those rows 13 % too slow: reported, not shipped)."
    echo "Where the model is still off, and why: FSDP runs with little compute per GPU are still too"
    echo "fast (up to -32 %); the layouts of the worst rows (70B on 64 A100-40GB, 30B at 8k tokens on"
    echo "8 A100-80GB) are the source's, and no mechanism in its code explains them (the A100-80GB 70B"
    echo "rows of the same sweep are within 8 %). llm-foundry's long-sequence H100 rows are"
    echo "9-14 % too slow (the Triton kernel's Hopper rate is FlashAttention-2's / 1.9: no Hopper"
    echo "measurement of that kernel's build);"
    echo "The A100-40GB rows are llm-foundry's 2023 torch 1.13 stack, which measured 5-7 % slower with"
    echo "activation checkpointing than the later stack on identical A100-80GB configurations (not"
    echo "modelled); the large-scale H100 rows lose 2.5-11 % per GPU from 128 to 512 GPUs, the replay none."
    echo "Blackwell (B200, GB200, GB300) has no fitting rows and no measured fp8 GEMM efficiency"
    echo "(its k_sat is carried over from Hopper, above). The TP overlap hides a collective fully when its GEMM"
    echo "is longer (no chunking cost): an upper bound on the hiding."
    echo
    echo "**Peak memory** (\`validation/memory_runs.csv\`: measured peak reserved memory per GPU of"
    echo "published torchtitan runs, Llama 3.1 8B / 70B on H100 and H200, FSDP and FSDP + TP; each row's"
    echo "layout, recomputation policy and loss implementation from the source and the framework's config"
    echo "at the run's commit). The memory model gives the bytes allocated on the fullest GPU; the only"
    echo "fitted parameter is the caching allocator's reserved-over-allocated share, fitted on the three"
    echo "Table-1 rows (role=fit) and applied unchanged to the held-out rows:"
    echo
    mdtable "$OUT/E12-memory.csv" "id|row|s;role|role|s;measured_gib|measured GiB|%.2f;allocated_gib|allocated GiB|%.2f;simulated_gib|simulated GiB|%.2f;rel_error|error|%+.3f"
    mdtable "$OUT/E12-memory-summary.csv" "set|rows|s;rows|n|%d;mean_rel_error|mean|%.3f;median_rel_error|median|%.3f;max_rel_error|max|%.3f;mean_signed_rel_error|mean signed|%+.3f;reserve|reserve|%g"
    echo "Where memory is still off: Table 4's 70B FSDP + TP row comes out about 14 % low (its AsyncTP"
    echo "twin 8 %): the model counts allocations at their peak, while the measured figure is the"
    echo "allocator's reserve, and there the saved block inputs sit between each block's multi-GB"
    echo "transient buffers, so the 8 GB loss buffers cannot reuse the holes (fragmentation). The terms"
    echo "added for those rows (the head's all-gathered input, FSDP2's gathered root module, DTensor loss"
    echo "parallelism's 16 bytes per logit) come from the frameworks' code and were found after seeing"
    echo "their errors (docs/validation.md). torch.compile is not modelled (Table 1: compile saves 5 GiB;"
    echo "the fitted reserve absorbs part of that, so the eager rows are 7 % low)."
    echo
    echo "**External checks** (\`geotrain validate --external\`, \`validation/external_runs.csv\`): $(csv_rows "$OUT/E12-external.csv")"
    echo "published torchtitan runs (Llama 2 / 3.1, 8B-405B, A100 / H100 / H200, FSDP and FSDP + TP, with and"
    echo "without Float8, torch.compile and async TP), from sources that are not in the validation set and"
    echo "were never used for fitting:"
    echo
    mdtable "$OUT/E12-external-summary.csv" "set|set|s;rows|n|%d;mean_rel_error|mean|%.3f;median_rel_error|median|%.3f;max_rel_error|max|%.3f;mean_signed_rel_error|mean signed|%+.3f"
    echo "The model is too fast on every one of them. torchtitan's per-op selective checkpointing is"
    echo "replayed as what it redoes (every second GEMM and the pointwise ops); the measured H100s are"
    echo "replayed as the source describes them: Grand Teton's 96 GB HBM2e parts (2.4 TB/s) at their"
    echo "default 500 W power limit, which the frequency model reads as an SM clock of 1710 of 1980 MHz"
    echo "(H100 rows -29 % -> -18 % signed); the compute slowdown beside FSDP's collectives (above)"
    echo "moves the 28 rows from 19.1 % to 18.0 % mean; the eight rows that ran without torch.compile (their"
    echo "commits' configs) are priced with eager PyTorch's unfused kernels (RMSNorm in fp32 where the config"
    echo "says rmsnorm, RoPE, repeat_kv, SwiGLU), which takes them from 20.1 % to 12.5 % and the 28 rows to"
    echo "15.8 %. What is left: the FSDP rows are compute bound in the simulator (exposed communication"
    echo "under 2 % of the step), so the gap is compute the kernel model does not see, on the compiled rows"
    echo "too (the eager fp32 loss, small-kernel overheads); async TP is priced as full overlap."
    echo

    csvq '
        v("set") == "holdout_rows" { hm = v("mean_rel_error"); hx = v("max_rel_error"); hn = v("rows") }
        v("set") == "leave_one_source_out" { lm = v("mean_rel_error") }
        v("set") == "fit_rows" { fm = v("mean_rel_error") }
        END {
          ok = (hm <= 0.05 && hx <= 0.15)
          printf "**Verdict: %s.** ", ok ? "reproduced" : "worse"
          printf "On the %d held-out rows the mean |error| is %.1f %% (max %.1f %%) against the goal of 5 %% / 15 %% ", hn, 100 * hm, 100 * hx
          printf "(published simulators: 1.9-3.7 %%); %.1f %% on the fitting rows and %.1f %% in leave-one-source-out cross-validation.\n\n", 100 * fm, 100 * lm }' "$S"
}

headline() {
    csvq '
        v("set") == "holdout_rows" { printf "| Compute-model fidelity vs published measured runs | %d held-out rows (LLMF, MH100, MB2511) | mean %.1f %%, max %.1f %% |error| | goal <= 5 %% mean (SimAI 1.9, Calculon 3.65 %%) | E12-summary.csv |\n", v("rows"), 100 * v("mean_rel_error"), 100 * v("max_rel_error") }' \
        "$OUT/E12-summary.csv"
}
