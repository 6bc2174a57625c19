# E8 — model size sweep. Reads E8.csv (compare rows + model, params, training_state_gib).
E = csv("E8")
ML = system(sprintf("awk -F, 'NR > 1 && !s[$1]++ { printf \"%%s \", $1 }' '%s'", E))
NM = words(ML)
PL = "memetic memetic-uniform megatron dtfm metis atlas greedy"
NP = words(PL)
mi(s) = sum [i = 1:NM] (word(ML, i) eq s ? i : 0)
set output fig("E8-models")
set title "Model size sweep on 32 x V100-16GB (batch 256, no recomputation)"
set xlabel "model (training state at 16 bytes/parameter)" offset 0, -1
set bmargin 5
set ylabel "iteration time (s, log scale)"
set logscale y 10
set style fill solid 0.85 border -1
W = 0.8 / NP
set boxwidth W
set xrange [0.4:NM + 0.6]
set key outside right top noenhanced
set xtics () noenhanced
set for [i = 1:NM] xtics add (sprintf("%s\n(%s GiB)", word(ML, i), system(sprintf("awk -F, '$1 == \"%s\" { print $3; exit }' '%s'", word(ML, i), E))) i)
# infeasible runs: a cross at the bottom of the plot
set yrange [*:*]
plot for [j = 1:NP] keyentry with boxes lt j title word(PL, j), \
     for [j = 1:NP] E using (mi(strcol("model")) + (j - (NP + 1) / 2.0) * W):(strcol("planner") eq word(PL, j) && column("feasible") == 1 ? column("iteration_time_s") : NaN) with boxes lt j notitle, \
     for [j = 1:NP] E using (mi(strcol("model")) + (j - (NP + 1) / 2.0) * W):(strcol("planner") eq word(PL, j) && column("feasible") != 1 ? 1 : NaN) with points lt j pt 2 ps 2 notitle, \
     keyentry with points lt -1 pt 2 ps 2 title "no feasible plan"
