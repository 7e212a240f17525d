set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'depth-asym-vios-fiops_depth_4.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'depth-asym (nvme, depth 4), fiops depth 4: FIOPS vios per task (run c32-20261207T010116Z-mq-deadline+bfq+kyber+fiops+none-depth-asym/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'depth-asym-vios-fiops_depth_4.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'qd1 (603)', \
     NaN with points pt 7 lc 2 title 'qd4 (604)', \
     NaN with points pt 7 lc 3 title 'qd32 (605)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'depth-asym-vios-fiops_depth_4.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'qd1 (603)', \
     NaN with points pt 7 lc 2 title 'qd4 (604)', \
     NaN with points pt 7 lc 3 title 'qd32 (605)'
unset multiplot
