set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'ioprio-vios-fiops.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'ioprio, fiops: FIOPS vios per task (run 20261203T132831Z-none+mq-deadline+bfq+bfq_low_latency=0+kyber+fiops-ioprio/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'ioprio-vios-fiops.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'be0 (862)', \
     NaN with points pt 7 lc 2 title 'be2 (863)', \
     NaN with points pt 7 lc 3 title 'be4 (864)', \
     NaN with points pt 7 lc 4 title 'be7 (865)', \
     NaN with points pt 7 lc 5 title 'idle (866)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'ioprio-vios-fiops.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'be0 (862)', \
     NaN with points pt 7 lc 2 title 'be2 (863)', \
     NaN with points pt 7 lc 3 title 'be4 (864)', \
     NaN with points pt 7 lc 4 title 'be7 (865)', \
     NaN with points pt 7 lc 5 title 'idle (866)'
unset multiplot
