# E12 — simulated vs measured iteration time. Reads E12-rows.csv
# (id,source,gpu,role,measured_s,simulated_s,rel_error,options).
R = csv("E12-rows")
set output fig("E12-scatter")
set title "Simulated vs measured iteration time (published runs)"
set xlabel "measured iteration time (s)"
set ylabel "simulated iteration time (s)"
set logscale xy 10
set size ratio -1
set key top left
plot x with lines lt 9 dt 1 title "y = x", \
     1.1 * x with lines lt 9 dt 2 title "+10 %", \
     0.9 * x with lines lt 9 dt 2 title "-10 %", \
     R using (strcol(4) eq "fit" ? $5 : NaN):6 with points lt 1 pt 7 title "fitting rows (KOR, NAR, MEG20, NeMo)", \
     R using (strcol(4) eq "holdout" ? $5 : NaN):6 with points lt 2 pt 6 title "held-out rows (LLMF, MH100, MB2511)"
