# E13 — time-energy fronts over SM clocks. Reads E13-front.csv
# (scenario, point, iteration_time_s, energy_j, slowdown_pct, energy_saved_pct).
F = csv("E13-front")
SL = "us-hetero world-hetero euasia-hetero case1 case3 case5 case1-rank-order case5-rank-order"
NS = words(SL)
set output fig("E13-front")
set title "Time-energy fronts over per-stage SM clocks (GPT3-XL, batch 1024; estimated)"
set xlabel "slowdown against maximum clocks (%)"
set ylabel "energy saved against maximum clocks (%)"
set key outside right top noenhanced
set xrange [-0.5:*]
set yrange [0:*]
set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb "#888888"
set label "1 %" at 1.2, graph 0.95 tc rgb "#888888"
plot for [i = 1:NS] F using (strcol("scenario") eq word(SL, i) ? column("slowdown_pct") : NaN):(column("energy_saved_pct")) with linespoints lt i title word(SL, i)
