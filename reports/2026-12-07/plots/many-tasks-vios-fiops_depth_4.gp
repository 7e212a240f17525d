set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'many-tasks-vios-fiops_depth_4.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'many-tasks (nvme, depth 4), fiops depth 4: FIOPS vios per task (run c33-20261207T020056Z-mq-deadline+bfq+kyber+fiops+none-many-tasks/fiops)'
set grid ytics
set key outside right top
set key off
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'many-tasks-vios-fiops_depth_4.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 't.0 (853)', \
     NaN with points pt 7 lc 2 title 't.1 (854)', \
     NaN with points pt 7 lc 3 title 't.2 (855)', \
     NaN with points pt 7 lc 4 title 't.3 (856)', \
     NaN with points pt 7 lc 5 title 't.4 (857)', \
     NaN with points pt 7 lc 6 title 't.5 (858)', \
     NaN with points pt 7 lc 7 title 't.6 (859)', \
     NaN with points pt 7 lc 8 title 't.7 (860)', \
     NaN with points pt 7 lc 9 title 't.8 (861)', \
     NaN with points pt 7 lc 10 title 't.9 (862)', \
     NaN with points pt 7 lc 11 title 't.10 (863)', \
     NaN with points pt 7 lc 12 title 't.11 (864)', \
     NaN with points pt 7 lc 13 title 't.12 (865)', \
     NaN with points pt 7 lc 14 title 't.13 (866)', \
     NaN with points pt 7 lc 15 title 't.14 (868)', \
     NaN with points pt 7 lc 16 title 't.15 (869)', \
     NaN with points pt 7 lc 17 title 't.16 (870)', \
     NaN with points pt 7 lc 18 title 't.17 (871)', \
     NaN with points pt 7 lc 19 title 't.18 (872)', \
     NaN with points pt 7 lc 20 title 't.19 (873)', \
     NaN with points pt 7 lc 21 title 't.20 (874)', \
     NaN with points pt 7 lc 22 title 't.21 (875)', \
     NaN with points pt 7 lc 23 title 't.22 (876)', \
     NaN with points pt 7 lc 24 title 't.23 (877)', \
     NaN with points pt 7 lc 25 title 't.24 (878)', \
     NaN with points pt 7 lc 26 title 't.25 (879)', \
     NaN with points pt 7 lc 27 title 't.26 (880)', \
     NaN with points pt 7 lc 28 title 't.27 (881)', \
     NaN with points pt 7 lc 29 title 't.28 (882)', \
     NaN with points pt 7 lc 30 title 't.29 (883)', \
     NaN with points pt 7 lc 31 title 't.30 (884)', \
     NaN with points pt 7 lc 32 title 't.31 (885)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'many-tasks-vios-fiops_depth_4.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 't.0 (853)', \
     NaN with points pt 7 lc 2 title 't.1 (854)', \
     NaN with points pt 7 lc 3 title 't.2 (855)', \
     NaN with points pt 7 lc 4 title 't.3 (856)', \
     NaN with points pt 7 lc 5 title 't.4 (857)', \
     NaN with points pt 7 lc 6 title 't.5 (858)', \
     NaN with points pt 7 lc 7 title 't.6 (859)', \
     NaN with points pt 7 lc 8 title 't.7 (860)', \
     NaN with points pt 7 lc 9 title 't.8 (861)', \
     NaN with points pt 7 lc 10 title 't.9 (862)', \
     NaN with points pt 7 lc 11 title 't.10 (863)', \
     NaN with points pt 7 lc 12 title 't.11 (864)', \
     NaN with points pt 7 lc 13 title 't.12 (865)', \
     NaN with points pt 7 lc 14 title 't.13 (866)', \
     NaN with points pt 7 lc 15 title 't.14 (868)', \
     NaN with points pt 7 lc 16 title 't.15 (869)', \
     NaN with points pt 7 lc 17 title 't.16 (870)', \
     NaN with points pt 7 lc 18 title 't.17 (871)', \
     NaN with points pt 7 lc 19 title 't.18 (872)', \
     NaN with points pt 7 lc 20 title 't.19 (873)', \
     NaN with points pt 7 lc 21 title 't.20 (874)', \
     NaN with points pt 7 lc 22 title 't.21 (875)', \
     NaN with points pt 7 lc 23 title 't.22 (876)', \
     NaN with points pt 7 lc 24 title 't.23 (877)', \
     NaN with points pt 7 lc 25 title 't.24 (878)', \
     NaN with points pt 7 lc 26 title 't.25 (879)', \
     NaN with points pt 7 lc 27 title 't.26 (880)', \
     NaN with points pt 7 lc 28 title 't.27 (881)', \
     NaN with points pt 7 lc 29 title 't.28 (882)', \
     NaN with points pt 7 lc 30 title 't.29 (883)', \
     NaN with points pt 7 lc 31 title 't.30 (884)', \
     NaN with points pt 7 lc 32 title 't.31 (885)'
unset multiplot
