set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'groups-nested-vios-fiops.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'groups-nested, fiops: FIOPS vios per task (run 20261205T081600Z-fiops+bfq+iocost-groups-nested/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'groups-nested-vios-fiops.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'c1 (305)', \
     NaN with points pt 7 lc 2 title 'c2 (306)', \
     NaN with points pt 7 lc 3 title 's (307)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'groups-nested-vios-fiops.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'c1 (305)', \
     NaN with points pt 7 lc 2 title 'c2 (306)', \
     NaN with points pt 7 lc 3 title 's (307)'
unset multiplot
