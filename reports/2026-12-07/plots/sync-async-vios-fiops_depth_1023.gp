set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'sync-async-vios-fiops_depth_1023.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'sync-async (nvme, depth 1023), fiops depth 1023: FIOPS vios per task (run c25-20261207T005332Z-none+mq-deadline+bfq+kyber+fiops-sync-async/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'sync-async-vios-fiops_depth_1023.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'r1 (692)', \
     NaN with points pt 7 lc 2 title 'r2 (693)', \
     NaN with points pt 7 lc 3 title 'kworker/u4:0 (8)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'sync-async-vios-fiops_depth_1023.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'r1 (692)', \
     NaN with points pt 7 lc 2 title 'r2 (693)', \
     NaN with points pt 7 lc 3 title 'kworker/u4:0 (8)'
unset multiplot
