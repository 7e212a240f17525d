set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'groups-vios-fiops_depth_32.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'groups (nvme, depth 32), fiops depth 32: FIOPS vios per task (run c17-20261207T004551Z-none+mq-deadline+bfq+kyber+fiops-groups/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'groups-vios-fiops_depth_32.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'a1 (1381)', \
     NaN with points pt 7 lc 2 title 'a2 (1382)', \
     NaN with points pt 7 lc 3 title 'a3 (1383)', \
     NaN with points pt 7 lc 4 title 'a4 (1384)', \
     NaN with points pt 7 lc 5 title 'b1 (1385)', \
     NaN with points pt 7 lc 6 title 'b2 (1386)', \
     NaN with points pt 7 lc 7 title 'c1 (1387)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'groups-vios-fiops_depth_32.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'a1 (1381)', \
     NaN with points pt 7 lc 2 title 'a2 (1382)', \
     NaN with points pt 7 lc 3 title 'a3 (1383)', \
     NaN with points pt 7 lc 4 title 'a4 (1384)', \
     NaN with points pt 7 lc 5 title 'b1 (1385)', \
     NaN with points pt 7 lc 6 title 'b2 (1386)', \
     NaN with points pt 7 lc 7 title 'c1 (1387)'
unset multiplot
