# E1 — DT-FM's five scenarios. Reads E1.csv (compare rows + case) and E1-speedup.csv.
E = csv("E1")
PL = "memetic dtfm dtfm-hybrid megatron-8x8 megatron megatron-random metis atlas greedy random"
NP = words(PL)

set output fig("E1-time")
set title "Iteration time per planner, DT-FM scenarios (64 V100, GPT3-XL, batch 1024)"
set xlabel "DT-FM case (1 on-demand DC, 2 spot, 3 two DCs, 4 regional, 5 world-wide)"
set ylabel "iteration time (s, log scale)"
set logscale y 10
set xrange [0.4:5.6]
set xtics 1
set boxwidth 0.085
set style fill solid 0.85 border -1
set key outside right top
set yrange [1:*]
plot for [i = 1:NP] E using (column("case") + (i - (NP + 1) / 2.0) * 0.09):(strcol("planner") eq word(PL, i) && column("feasible") == 1 ? column("iteration_time_s") : NaN) \
        with boxes lt i title word(PL, i), \
     for [i = 1:NP] E using (column("case") + (i - (NP + 1) / 2.0) * 0.09):(strcol("planner") eq word(PL, i) && column("feasible") == 1 ? column("iteration_time_s") : NaN):(column("iteration_time_s_min")):(column("iteration_time_s_max")) \
        with yerrorbars lt -1 pt -1 notitle

set output fig("E1-speedup")
S = csv("E1-speedup")
set title "DT-FM's speedup over Megatron and over random placements"
set xlabel "DT-FM case"
set ylabel "speedup (baseline time / DT-FM time)"
unset logscale y
set yrange [0:*]
set autoscale x
set key inside top left
set style data histogram
set style histogram clustered gap 1
set boxwidth 0.9 relative
set arrow 1 from graph 0, first 4.8 to graph 1, first 4.8 nohead lt 1 dt 3
set label 1 "published, case 5: 4.8x over Megatron" at graph 0.02, first 4.8 offset 0,0.7
set arrow 2 from graph 0, first 2.7 to graph 1, first 2.7 nohead lt 4 dt 3
set label 2 "published: up to 2.7x over random" at graph 0.02, first 2.7 offset 0,0.7
set arrow 3 from graph 0, first 1 to graph 1, first 1 nohead lt 9
plot S using 2:xtic(1) lt 1 title "vs Megatron 8x8, rank order (the paper's shape)", \
     '' using 3 lt 6 title "vs our Megatron (TP x PP x DP grid search)", \
     '' using 4 lt 2 title "vs Megatron grid on a random placement", \
     '' using 5 lt 4 title "vs random planner (best of 100)"
