# E3 — planner scaling. Reads E3.csv.
E = csv("E3")
set output fig("E3-scaling")
set title "Planner run time vs number of GPUs (GPT3-XL, batch 128; one seed)"
set xlabel "GPUs in the topology"
set ylabel "planner CPU time (s, one thread)"
set logscale x 2
set logscale y 10
set key bottom right
PL = "exact memetic memetic-nols dtfm"
title(i) = i == 1 ? "exact (proves the optimum)" : i == 2 ? "memetic (20 generations)" : i == 3 ? "memetic, no local search (20 gen.)" : "DT-FM (4,900 trials)"
plot for [i = 1:4] E using (strcol("planner") eq word(PL, i) && strcol("status") eq "ok" ? column("gpus") : NaN):(column("cpu_s") > 0.01 ? column("cpu_s") : 0.01) with linespoints lt i title title(i), \
     for [i = 1:4] E using (strcol("planner") eq word(PL, i) && strcol("status") eq "timeout" ? column("gpus") : NaN):(column("cpu_s")) with points lt i pt 2 ps 2.5 notitle, \
     keyentry with points lt -1 pt 2 ps 2 title "stopped at the wall-clock cap"
