set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'deep-knee-vios-fiops_depth_4.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'deep-knee (nvme-null 4000 us, depth 4), fiops depth 4: FIOPS vios per task (run c36-20261207T010609Z-mq-deadline+bfq+kyber+fiops+none-deep-knee/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'deep-knee-vios-fiops_depth_4.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'qd8 (608)', \
     NaN with points pt 7 lc 2 title 'qd16 (609)', \
     NaN with points pt 7 lc 3 title 'qd64 (610)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'deep-knee-vios-fiops_depth_4.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'qd8 (608)', \
     NaN with points pt 7 lc 2 title 'qd16 (609)', \
     NaN with points pt 7 lc 3 title 'qd64 (610)'
unset multiplot
