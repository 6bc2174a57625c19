# E2 — exactness. Reads E2.csv (one row per instance, objective and memetic seed).
E = csv("E2")
set output fig("E2-hits")
set title "Memetic planner against the exact optimum (each point = one seed)"
set xlabel "instance (GPUs n, topology seed s)"
set ylabel "memetic objective / exact optimum"
set key top right noenhanced
set xtics rotate by -45 noenhanced scale 0
set yrange [0.998:*]
set offsets 0.5, 0.5, graph 0.08, 0
# x: running index of (instance, objective) pairs in file order
last = ""; k = -1
xi(s) = (s eq last ? k : (k = k + 1, last = s, k))
set arrow from graph 0, first 1 to graph 1, first 1 nohead lt 9 dt 2
plot E using (xi(strcol("instance") . strcol("objective")) + (column("seed") - 5.5) * 0.03):(strcol("objective") eq "time" && column("exact_value") > 0 ? column("memetic_value") / column("exact_value") : NaN):xtic(column("seed") == 1 ? strcol("instance") : "") with points lt 1 pt 7 title "objective time", \
     E using (xi(strcol("instance") . strcol("objective")) + (column("seed") - 5.5) * 0.03):(strcol("objective") eq "energy" && column("exact_value") > 0 ? column("memetic_value") / column("exact_value") : NaN) with points lt 2 pt 5 title "objective energy"
