# E11 — simulator validation. Reads E11-pipeline.csv and E11-ring.csv.
P = csv("E11-pipeline")
R = csv("E11-ring")

# 1. bubble fraction vs microbatches: DES points, (S-1)/(m+S-1) lines
set output fig("E11-bubble")
set title "Pipeline bubble: DES vs (S-1)/(m+S-1)"
set xlabel "microbatches per iteration m"
set ylabel "bubble fraction of the pipeline phase"
set logscale x 2
set yrange [0:1]
set key top right
th(S, m) = (S - 1.0) / (m + S - 1.0)
sel(s, S) = (strcol(1) eq s && $2 == S)
plot for [S in "2 4 8"] th(S + 0, x) with lines lt (S == 2 ? 1 : S == 4 ? 2 : 3) dt 1 title sprintf("(S-1)/(m+S-1), S=%s", S), \
     for [S in "2 4 8"] P using (sel("gpipe", S + 0) ? $3 : NaN):10 with points lt (S == 2 ? 1 : S == 4 ? 2 : 3) pt 7 title sprintf("DES GPipe, S=%s", S), \
     for [S in "2 4 8"] P using (sel("1f1b", S + 0) ? $3 : NaN):10 with points lt (S == 2 ? 1 : S == 4 ? 2 : 3) pt 6 ps 1.8 title sprintf("DES 1F1B, S=%s", S)

# 2. agreement: DES vs closed form (left), 1F1B residual (right)
set output fig("E11-agreement")
unset title
set multiplot layout 1,2 title "DES against the closed forms (docs/models.md formulas, computed in awk)"
set logscale xy 10
set autoscale
set xlabel "closed form (s)"
set ylabel "DES iteration time (s)"
set key bottom right
set size ratio -1
plot x with lines lt 9 title "y = x", \
     P using (strcol(1) eq "gpipe" ? $6 : NaN):4 with points lt 1 pt 7 title "GPipe (flow-shop form)", \
     P using (strcol(1) eq "1f1b" ? $6 : NaN):4 with points lt 2 pt 6 ps 1.5 title "1F1B (textbook form)", \
     R using 4:2 with points lt 3 pt 5 title "ring all-reduce"
set size noratio
unset logscale y
set logscale x 2
set xlabel "microbatches per iteration m"
set ylabel "DES / closed form - 1 (%)"
set key top left
set yrange [*:*]
plot for [S in "2 4 8"] P using (sel("1f1b", S + 0) ? $3 : NaN):(100 * $9) with linespoints lt (S == 2 ? 1 : S == 4 ? 2 : 3) title sprintf("1F1B, S=%s", S), \
     for [S in "2 4 8"] P using (sel("gpipe", S + 0) ? $3 : NaN):(100 * $9) with points lt (S == 2 ? 1 : S == 4 ? 2 : 3) pt 4 title sprintf("GPipe, S=%s", S)
unset multiplot
