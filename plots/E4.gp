# E4 — real-world topologies. Reads E4.csv (compare rows + topology, run).
E = csv("E4")
PL = "memetic dtfm dtfm-hybrid megatron megatron-random metis atlas greedy random"
NP = words(PL)
TL = "aws-us-4 aws-world-10 us-hetero world-hetero euasia-hetero"
NT = words(TL)
tix(s) = sum [i = 1:NT] (word(TL, i) eq s ? i : 0)
set xtics ("aws-us-4" 1, "aws-world-10" 2, "us-hetero" 3, "world-hetero" 4, "euasia-hetero" 5) noenhanced
set xrange [0.4:NT + 0.6]
set style fill solid 0.85 border -1
set key outside right top noenhanced
W = 0.08
set boxwidth W
ok(p, r) = (strcol("planner") eq p && strcol("run") eq r && column("feasible") == 1)
xpos(i, n) = tix(strcol("topology")) + (i - (n + 1) / 2.0) * (W + 0.005)

set output fig("E4-time")
set title "Iteration time per planner on real-world topologies (GPT3-XL, batch 1024, objective time)"
set xlabel "topology"
set ylabel "iteration time (s, log scale)"
set logscale y 10
plot for [i = 1:NP] E using (xpos(i, NP)):(ok(word(PL, i), "time") ? column("iteration_time_s") : NaN) with boxes lt i title word(PL, i), \
     for [i = 1:NP] E using (xpos(i, NP)):(ok(word(PL, i), "time") ? column("iteration_time_s") : NaN):(column("iteration_time_s_min")):(column("iteration_time_s_max")) with yerrorbars lt -1 pt -1 notitle

set output fig("E4-energy")
set title "Energy per iteration per planner (objective time; 'memetic (energy)' = energy-within:0.1)"
set ylabel "energy per iteration (kJ, log scale)"
N2 = NP + 1
plot for [i = 1:NP] E using (xpos(i, N2)):(ok(word(PL, i), "time") ? column("energy_j") / 1000 : NaN) with boxes lt i title word(PL, i), \
     E using (xpos(N2, N2)):(ok("memetic", "energy") ? column("energy_j") / 1000 : NaN) with boxes lt 1 fs pattern 4 title "memetic (energy)", \
     for [i = 1:NP] E using (xpos(i, N2)):(ok(word(PL, i), "time") ? column("energy_j") / 1000 : NaN):(column("energy_j_min") / 1000):(column("energy_j_max") / 1000) with yerrorbars lt -1 pt -1 notitle, \
     E using (xpos(N2, N2)):(ok("memetic", "energy") ? column("energy_j") / 1000 : NaN):(column("energy_j_min") / 1000):(column("energy_j_max") / 1000) with yerrorbars lt -1 pt -1 notitle
