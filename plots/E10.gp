# E10 — BubbleTea. Reads E10.csv.
E = csv("E10")

# 1. utilisation before / after per scenario (conversation mix)
set output fig("E10-util")
set title "GPU utilisation without and with BubbleTea prefill (conversation mix, guard 1 ms)"
set ylabel "GPU utilisation (compute time / GPU time)"
unset xlabel
set bmargin 4
set yrange [0:1.12]
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set key top center horizontal
set xtics noenhanced
set arrow from graph 0, first 0.94 to graph 1, first 0.94 nohead lt 9 dt 3
set label 1 "published: up to 94 %" at graph 0.99, first 0.92 right
plot rows(E, '$1 == "scenario" && $4 == "conv"') using 10:xtic(sprintf("%s\n(%s)", strcol(2), strcol(3))) lt 2 title "training only", \
     '' using 11 lt 1 title "with prefill"
unset arrow
unset label 1

# 2. sweeps on atlas-4dc
set output fig("E10-sweeps")
set style data linespoints
set multiplot layout 1,2 title "BubbleTea on the Atlas layout (4 DCs x 8 A100, Llama-3-8B prefill)"
unset title
set yrange [0:1.05]
set xlabel "guard band at each end of an idle stretch (ms)"
set ylabel "GPU utilisation with prefill"
set key bottom left
plot rows(E, '$1 == "guard"') using 0:11:xtic(5) with linespoints lt 1 title "utilisation with prefill", \
     '' using 0:10 with linespoints lt 2 title "training only"
set xlabel "largest prefill chunk (tokens)"
set logscale x 2
set xtics auto
plot rows(E, '$1 == "chunk"') using 6:11 with linespoints lt 1 title "utilisation with prefill", \
     '' using 6:10 with linespoints lt 2 title "training only"
unset multiplot
