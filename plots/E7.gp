# E7 — ablations. Reads E7-ablations.csv.
A = csv("E7-ablations")
TL = system(sprintf("awk -F, 'NR > 1 && !s[$1]++ { printf \"%%s \", $1 }' '%s'", A))
NT = words(TL)
VL = "memetic-nols memetic-all-gpus memetic-uniform memetic-plainx"
set output fig("E7-ablations")
set title "Ablations: iteration time relative to the full memetic planner"
set ylabel "change vs full planner (%), > 0 = the removal hurts"
set xlabel "component removed"
set style fill solid 0.85 border -1
set boxwidth 0.8 / NT
set xtics ("local search" 1, "GPU selection" 2, "non-uniform layers" 3, "group-preserving crossover" 4) noenhanced
set xrange [0.4:4.6]
set key top right noenhanced
set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lt 9
vi(s) = sum [i = 1:4] (word(VL, i) eq s ? i : 0)
xp(j) = vi(strcol("variant")) + (j - (NT + 1) / 2.0) * 0.8 / NT
sel(j) = (strcol("topology") eq word(TL, j) && vi(strcol("variant")) > 0 && strcol("vs_full_pct") ne "")
plot for [j = 1:NT] A using (xp(j)):(sel(j) ? column("vs_full_pct") : NaN) with boxes lt j title word(TL, j), \
     for [j = 1:NT] A using (xp(j)):(sel(j) ? column("vs_full_pct") : NaN):(column("vs_full_min_pct")):(column("vs_full_max_pct")) with yerrorbars lt -1 pt -1 notitle
