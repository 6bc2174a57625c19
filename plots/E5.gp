# E5 — gains vs heterogeneity. Reads E5-gains.csv.
G = csv("E5-gains")
set output fig("E5-gains")
set multiplot layout 2,2 title "Memetic planner's gain over the best baseline (generated 16-GPU topologies)"
set ylabel "gain (%), positive = memetic faster"
set key off
set xtics noenhanced
set offsets 0.3, 0.3, 0, 0
set style fill solid 0.6 border -1
set boxwidth 0.5
AX = "mix sites bw latency"
TI = "GPU mix|number of sites (regions)|WAN bandwidth scale|region spread (latency)"
tt(i) = i == 1 ? "GPU mix (types)" : i == 2 ? "number of sites (regions)" : i == 3 ? "WAN bandwidth (x measured)" : "region spread (latency)"
do for [i = 1:4] {
    set title tt(i)
    set xlabel ""
    set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lt 9
    n = int(system(sprintf("awk -F, '$1 == \"%s\"' '%s' | wc -l", word(AX, i), G)))
    if (n == 0) {
        set label 1 "not run (QUICK)" at graph 0.5, graph 0.5 center
        unset xtics
        plot [0:1] [0:1] NaN notitle
        unset label 1
        set xtics
    } else {
    R = rows(G, sprintf('$1 == "%s"', word(AX, i)))
    plot R using (column("level")):(column("gain_mean_pct")):xtic(strcol("label")) with boxes lt i, \
         R using (column("level")):(column("gain_mean_pct")):(column("gain_min_pct")):(column("gain_max_pct")) with yerrorbars lt -1 pt 7 ps 0.6
    }
}
unset multiplot
