set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'many-tasks-vios-fiops_depth_1023.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'many-tasks (nvme, depth 1023), fiops depth 1023: FIOPS vios per task (run c24-20261207T015909Z-none+mq-deadline+bfq+kyber+fiops-many-tasks/fiops)'
set grid ytics
set key outside right top
set key off
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'many-tasks-vios-fiops_depth_1023.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 't.0 (1002)', \
     NaN with points pt 7 lc 2 title 't.1 (1003)', \
     NaN with points pt 7 lc 3 title 't.2 (1004)', \
     NaN with points pt 7 lc 4 title 't.3 (1005)', \
     NaN with points pt 7 lc 5 title 't.4 (1006)', \
     NaN with points pt 7 lc 6 title 't.5 (1007)', \
     NaN with points pt 7 lc 7 title 't.6 (1008)', \
     NaN with points pt 7 lc 8 title 't.7 (1009)', \
     NaN with points pt 7 lc 9 title 't.8 (1010)', \
     NaN with points pt 7 lc 10 title 't.9 (1011)', \
     NaN with points pt 7 lc 11 title 't.10 (1012)', \
     NaN with points pt 7 lc 12 title 't.11 (1013)', \
     NaN with points pt 7 lc 13 title 't.12 (1014)', \
     NaN with points pt 7 lc 14 title 't.13 (1015)', \
     NaN with points pt 7 lc 15 title 't.14 (1016)', \
     NaN with points pt 7 lc 16 title 't.15 (1018)', \
     NaN with points pt 7 lc 17 title 't.16 (1019)', \
     NaN with points pt 7 lc 18 title 't.17 (1020)', \
     NaN with points pt 7 lc 19 title 't.18 (1021)', \
     NaN with points pt 7 lc 20 title 't.19 (1022)', \
     NaN with points pt 7 lc 21 title 't.20 (1023)', \
     NaN with points pt 7 lc 22 title 't.21 (1024)', \
     NaN with points pt 7 lc 23 title 't.22 (1025)', \
     NaN with points pt 7 lc 24 title 't.23 (1026)', \
     NaN with points pt 7 lc 25 title 't.24 (1027)', \
     NaN with points pt 7 lc 26 title 't.25 (1028)', \
     NaN with points pt 7 lc 27 title 't.26 (1029)', \
     NaN with points pt 7 lc 28 title 't.27 (1030)', \
     NaN with points pt 7 lc 29 title 't.28 (1031)', \
     NaN with points pt 7 lc 30 title 't.29 (1032)', \
     NaN with points pt 7 lc 31 title 't.30 (1033)', \
     NaN with points pt 7 lc 32 title 't.31 (1034)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'many-tasks-vios-fiops_depth_1023.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 't.0 (1002)', \
     NaN with points pt 7 lc 2 title 't.1 (1003)', \
     NaN with points pt 7 lc 3 title 't.2 (1004)', \
     NaN with points pt 7 lc 4 title 't.3 (1005)', \
     NaN with points pt 7 lc 5 title 't.4 (1006)', \
     NaN with points pt 7 lc 6 title 't.5 (1007)', \
     NaN with points pt 7 lc 7 title 't.6 (1008)', \
     NaN with points pt 7 lc 8 title 't.7 (1009)', \
     NaN with points pt 7 lc 9 title 't.8 (1010)', \
     NaN with points pt 7 lc 10 title 't.9 (1011)', \
     NaN with points pt 7 lc 11 title 't.10 (1012)', \
     NaN with points pt 7 lc 12 title 't.11 (1013)', \
     NaN with points pt 7 lc 13 title 't.12 (1014)', \
     NaN with points pt 7 lc 14 title 't.13 (1015)', \
     NaN with points pt 7 lc 15 title 't.14 (1016)', \
     NaN with points pt 7 lc 16 title 't.15 (1018)', \
     NaN with points pt 7 lc 17 title 't.16 (1019)', \
     NaN with points pt 7 lc 18 title 't.17 (1020)', \
     NaN with points pt 7 lc 19 title 't.18 (1021)', \
     NaN with points pt 7 lc 20 title 't.19 (1022)', \
     NaN with points pt 7 lc 21 title 't.20 (1023)', \
     NaN with points pt 7 lc 22 title 't.21 (1024)', \
     NaN with points pt 7 lc 23 title 't.22 (1025)', \
     NaN with points pt 7 lc 24 title 't.23 (1026)', \
     NaN with points pt 7 lc 25 title 't.24 (1027)', \
     NaN with points pt 7 lc 26 title 't.25 (1028)', \
     NaN with points pt 7 lc 27 title 't.26 (1029)', \
     NaN with points pt 7 lc 28 title 't.27 (1030)', \
     NaN with points pt 7 lc 29 title 't.28 (1031)', \
     NaN with points pt 7 lc 30 title 't.29 (1032)', \
     NaN with points pt 7 lc 31 title 't.30 (1033)', \
     NaN with points pt 7 lc 32 title 't.31 (1034)'
unset multiplot
