set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'ioprio-vios-fiops_depth_32.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'ioprio (nvme, depth 32), fiops depth 32: FIOPS vios per task (run c12-20261207T004020Z-none+mq-deadline+bfq+kyber+fiops-ioprio/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'ioprio-vios-fiops_depth_32.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'be0 (714)', \
     NaN with points pt 7 lc 2 title 'be2 (715)', \
     NaN with points pt 7 lc 3 title 'be4 (716)', \
     NaN with points pt 7 lc 4 title 'be7 (717)', \
     NaN with points pt 7 lc 5 title 'idle (718)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'ioprio-vios-fiops_depth_32.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'be0 (714)', \
     NaN with points pt 7 lc 2 title 'be2 (715)', \
     NaN with points pt 7 lc 3 title 'be4 (716)', \
     NaN with points pt 7 lc 4 title 'be7 (717)', \
     NaN with points pt 7 lc 5 title 'idle (718)'
unset multiplot
