# E6 — time-energy trade-off. Reads E6.csv.
E = csv("E6")
TL = system(sprintf("awk -F, 'NR > 1 && !s[$1]++ { printf \"%%s \", $1 }' '%s'", E))
NT = words(TL)
# labels: points at the same place joined by "/" (baselines by planner, weights by W)
wlabels(T) = sprintf("< awk -F, 'BEGIN { print \"t,e,w\" } $1 == \"%s\" && $2 == \"weighted\" { k = sprintf(\"%%.4g,%%.4g\", $4, $5); if (k in n) n[k] = n[k] \"/\" $3; else n[k] = \"W=\" $3 } END { for (k in n) print k \",\" n[k] }' '%s'", T, E)
blabels(T) = sprintf("< awk -F, 'BEGIN { print \"t,e,planners\" } $1 == \"%s\" && $2 == \"baseline\" { k = sprintf(\"%%.4g,%%.4g\", $4, $5); if (k in n) n[k] = n[k] \"/\" $3; else n[k] = $3 } END { for (k in n) print k \",\" n[k] }' '%s'", T, E)
set output fig("E6-front")
set multiplot layout 1, NT title "Time-energy trade-off (GPT3-XL, batch 256): memetic front, weight sweep, baselines"
set xlabel "iteration time (s, log scale)"
set ylabel "energy per iteration (kJ)"
set logscale x 10
set key below horizontal maxrows 2 noenhanced font ",9"
set bmargin 7
do for [i = 1:NT] {
    T = word(TL, i)
    set title T noenhanced
    plot rows(E, sprintf('$1 == "%s" && $2 == "pareto"', T)) using 4:($5 / 1000) smooth unique with linespoints lt 1 pt 7 title "Pareto front (memetic)", \
         rows(E, sprintf('$1 == "%s" && $2 == "weighted"', T)) using 4:($5 / 1000) with points lt 2 pt 5 ps 1.3 title "weighted:W", \
         wlabels(T) using 1:($2 / 1000):3 with labels offset 1.5, 0.8 font ",9" tc lt 2 notitle, \
         rows(E, sprintf('$1 == "%s" && $2 == "baseline"', T)) using 4:($5 / 1000) with points lt 4 pt 9 ps 1.5 title "baselines", \
         blabels(T) using 1:($2 / 1000):3 with labels offset 0, -1 font ",9" tc lt 4 noenhanced notitle
}
unset multiplot
