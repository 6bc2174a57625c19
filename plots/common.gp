# plots/common.gp — terminal and style shared by every figure (loaded first by
# plots/render.sh). render.sh sets: data (the experiment's results folder),
# out (the figures folder), ext ("png" or "svg") and notrun (cases the run
# left out, "" when none: printed in the top right corner as label 99, so a
# script's `unset label N` must name its own labels).
if (ext eq "svg") {
    set terminal svg size 960,600 dynamic enhanced font "sans,12" background rgb "white"
} else {
    set terminal pngcairo size 960,600 enhanced font "sans,11" background rgb "white"
}
fig(name) = out . "/" . name . "." . ext
csv(name) = data . "/" . name . ".csv"
set datafile separator ","
set datafile missing NaN   # filtered-out points (NaN) do not break lines
set key autotitle columnhead
set grid lc rgb "#dddddd"
set border 3
set tics nomirror
set key box opaque
set style fill solid 0.85 border -1
set linetype 1 lc rgb "#1b6ca8" lw 2 pt 7 ps 1.1
set linetype 2 lc rgb "#d1495b" lw 2 pt 5 ps 1.1
set linetype 3 lc rgb "#66a182" lw 2 pt 9 ps 1.2
set linetype 4 lc rgb "#edae49" lw 2 pt 11 ps 1.2
set linetype 5 lc rgb "#8e6c8a" lw 2 pt 13 ps 1.2
set linetype 6 lc rgb "#2e4057" lw 2 pt 3 ps 1.1
set linetype 7 lc rgb "#00798c" lw 2 pt 1 ps 1.1
set linetype 8 lc rgb "#9c6644" lw 2 pt 2 ps 1.1
set linetype 9 lc rgb "#999999" lw 2 pt 4 ps 1.1
set linetype 10 lc rgb "#c3a995" lw 2 pt 6 ps 1.1
set linetype cycle 10
# rows(file, cond): the header and the rows of a CSV for which the awk
# condition holds (e.g. rows(csv("E10"), "$1 == \"guard\"")).
rows(file, cond) = sprintf("< awk -F, 'NR == 1 || (%s)' '%s'", cond, file)
if (exists("notrun") && strlen(notrun) > 0) {
    set label 99 "not run: ".notrun at screen 0.99, screen 0.975 right front \
        font ",9" textcolor rgb "#d1495b"
}
