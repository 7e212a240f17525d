set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'ioprio-vios-fiops_depth_1023.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'ioprio (nvme, depth 1023), fiops depth 1023: FIOPS vios per task (run c21-20261207T004940Z-none+mq-deadline+bfq+kyber+fiops-ioprio/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'ioprio-vios-fiops_depth_1023.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'be0 (708)', \
     NaN with points pt 7 lc 2 title 'be2 (709)', \
     NaN with points pt 7 lc 3 title 'be4 (710)', \
     NaN with points pt 7 lc 4 title 'be7 (711)', \
     NaN with points pt 7 lc 5 title 'idle (712)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'ioprio-vios-fiops_depth_1023.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'be0 (708)', \
     NaN with points pt 7 lc 2 title 'be2 (709)', \
     NaN with points pt 7 lc 3 title 'be4 (710)', \
     NaN with points pt 7 lc 4 title 'be7 (711)', \
     NaN with points pt 7 lc 5 title 'idle (712)'
unset multiplot
