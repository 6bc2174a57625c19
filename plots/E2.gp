# E2 — exactness. Reads E2.csv (one row per instance, objective and memetic seed).
E = csv("E2")
# the (instance, objective) pairs in file order: "n4-s1:time n4-s1:energy ..."
KL = system(sprintf("awk -F, 'NR > 1 && !s[$1 \":\" $4]++ { printf \"%%s:%%s \", $1, $4 }' '%s'", E))
NK = words(KL)
xi(s) = sum [i = 1:NK] (word(KL, i) eq s ? i : 0)
set output fig("E2-hits")
set title "Memetic planner against the exact optimum (each point = one seed)"
set xlabel "instance (GPUs n, topology seed s; E = objective energy)"
set ylabel "memetic objective / exact optimum"
set key top left noenhanced
set xtics rotate by -45 noenhanced scale 0
set for [i = 1:NK] xtics add (system(sprintf("echo '%s' | sed 's/:time$//; s/:energy$/ E/'", word(KL, i))) i)
set xrange [0.3:NK + 0.7]
set yrange [0.998:*]
set offsets 0, 0, graph 0.08, 0
set arrow from graph 0, first 1 to graph 1, first 1 nohead lt 9 dt 2
key(o) = strcol("instance") . ":" . o
plot E using (xi(key("time")) + (column("seed") - 5.5) * 0.03):(strcol("objective") eq "time" && column("exact_value") > 0 ? column("memetic_value") / column("exact_value") : NaN) with points lt 1 pt 7 title "objective time", \
     E using (xi(key("energy")) + (column("seed") - 5.5) * 0.03):(strcol("objective") eq "energy" && column("exact_value") > 0 ? column("memetic_value") / column("exact_value") : NaN) with points lt 2 pt 5 title "objective energy"
