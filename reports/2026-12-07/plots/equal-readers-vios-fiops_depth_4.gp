set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'equal-readers-vios-fiops_depth_4.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'equal-readers (nvme, depth 4), fiops depth 4: FIOPS vios per task (run c1-20261207T002849Z-none+mq-deadline+bfq+kyber+fiops-equal-readers/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'equal-readers-vios-fiops_depth_4.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'r1 (692)', \
     NaN with points pt 7 lc 2 title 'r2 (693)', \
     NaN with points pt 7 lc 3 title 'r3 (694)', \
     NaN with points pt 7 lc 4 title 'r4 (695)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'equal-readers-vios-fiops_depth_4.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'r1 (692)', \
     NaN with points pt 7 lc 2 title 'r2 (693)', \
     NaN with points pt 7 lc 3 title 'r3 (694)', \
     NaN with points pt 7 lc 4 title 'r4 (695)'
unset multiplot
