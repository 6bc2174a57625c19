# E9 — Atlas. Reads E9-sweep.csv, E9-speedup.csv, E9-dcsel.csv.
S = csv("E9-sweep")
P = csv("E9-speedup")
D = csv("E9-dcsel")

# 1. iteration time vs TCP connections at 40 ms
set output fig("E9-tcp")
set title "Iteration time vs TCP connections per WAN transfer (4 DCs x 8 A100, GPT3-XL, 10 Gbps, 40 ms one-way)"
set xlabel "TCP connections per transfer K"
set ylabel "iteration time (s)"
set logscale x 2
set logscale y 10
set key top right
is(lay, pol) = (strcol(1) eq "40" && strcol(2) eq lay && strcol(4) eq pol)
plot S using (is("pp", "fair") ? $3 : NaN):5 with linespoints lt 2 title "pp layout, fair sharing", \
     S using (is("pp", "temporal") ? $3 : NaN):5 with linespoints lt 1 title "pp layout, temporal sharing (Atlas)", \
     S using (is("dp", "fair") ? $3 : NaN):5 with linespoints lt 4 title "dp layout, fair sharing", \
     S using (is("dp", "temporal") ? $3 : NaN):5 with linespoints lt 3 dt 2 title "dp layout, temporal sharing"

# 2. speedup vs latency
set output fig("E9-latency")
set title "Atlas speedup over the baseline designs vs WAN latency"
set xlabel "one-way WAN latency (ms)"
set ylabel "speedup (baseline time / Atlas time)"
set logscale x 2
set logscale y 2
set key top left
plot P using 1:9 with linespoints lt 4 title "Atlas vs dp design (K=1, fair)", \
     P using 1:8 with linespoints lt 1 title "Atlas vs pp design (K=1, fair)", \
     P using 1:10 with linespoints lt 3 dt 2 title "more TCP connections only (pp, fair)", \
     17 with lines lt 9 dt 3 title "published: up to 17x"

# 3. DC selection (E9-dcsel-wide.csv: latency, then one column per number of DCs)
W = csv("E9-dcsel-wide")
set output fig("E9-dcsel")
set title "DC selection: pipeline over the j largest DCs (16, 8, 8, 4 A100), K max, temporal"
unset logscale x
set logscale y 10
set xlabel "one-way WAN latency (ms)"
set ylabel "iteration time (s)"
set key top left
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set yrange [1:*]
plot for [j = 2:5] W using j:xtic(1) lt (j - 1) title columnhead
