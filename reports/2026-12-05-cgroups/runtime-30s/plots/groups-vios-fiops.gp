set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'groups-vios-fiops.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'groups, fiops: FIOPS vios per task (run 20261205T081336Z-fiops+bfq+iocost-groups/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'groups-vios-fiops.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'a1 (278)', \
     NaN with points pt 7 lc 2 title 'a2 (279)', \
     NaN with points pt 7 lc 3 title 'a3 (280)', \
     NaN with points pt 7 lc 4 title 'a4 (282)', \
     NaN with points pt 7 lc 5 title 'b1 (283)', \
     NaN with points pt 7 lc 6 title 'b2 (284)', \
     NaN with points pt 7 lc 7 title 'c1 (285)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'groups-vios-fiops.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'a1 (278)', \
     NaN with points pt 7 lc 2 title 'a2 (279)', \
     NaN with points pt 7 lc 3 title 'a3 (280)', \
     NaN with points pt 7 lc 4 title 'a4 (282)', \
     NaN with points pt 7 lc 5 title 'b1 (283)', \
     NaN with points pt 7 lc 6 title 'b2 (284)', \
     NaN with points pt 7 lc 7 title 'c1 (285)'
unset multiplot
