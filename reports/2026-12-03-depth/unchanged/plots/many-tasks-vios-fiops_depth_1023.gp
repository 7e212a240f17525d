set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'many-tasks-vios-fiops_depth_1023.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'many-tasks, fiops depth 1023: FIOPS vios per task (run 20261203T184333Z-none+fiops-many-tasks/fiops)'
set grid ytics
set key outside right top
set key off
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'many-tasks-vios-fiops_depth_1023.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 't.0 (358)', \
     NaN with points pt 7 lc 2 title 't.1 (359)', \
     NaN with points pt 7 lc 3 title 't.2 (360)', \
     NaN with points pt 7 lc 4 title 't.3 (361)', \
     NaN with points pt 7 lc 5 title 't.4 (362)', \
     NaN with points pt 7 lc 6 title 't.5 (363)', \
     NaN with points pt 7 lc 7 title 't.6 (364)', \
     NaN with points pt 7 lc 8 title 't.7 (365)', \
     NaN with points pt 7 lc 9 title 't.8 (366)', \
     NaN with points pt 7 lc 10 title 't.9 (367)', \
     NaN with points pt 7 lc 11 title 't.10 (368)', \
     NaN with points pt 7 lc 12 title 't.11 (369)', \
     NaN with points pt 7 lc 13 title 't.12 (370)', \
     NaN with points pt 7 lc 14 title 't.13 (371)', \
     NaN with points pt 7 lc 15 title 't.14 (372)', \
     NaN with points pt 7 lc 16 title 't.15 (373)', \
     NaN with points pt 7 lc 17 title 't.16 (374)', \
     NaN with points pt 7 lc 18 title 't.17 (375)', \
     NaN with points pt 7 lc 19 title 't.18 (376)', \
     NaN with points pt 7 lc 20 title 't.19 (377)', \
     NaN with points pt 7 lc 21 title 't.20 (378)', \
     NaN with points pt 7 lc 22 title 't.21 (379)', \
     NaN with points pt 7 lc 23 title 't.22 (380)', \
     NaN with points pt 7 lc 24 title 't.23 (381)', \
     NaN with points pt 7 lc 25 title 't.24 (382)', \
     NaN with points pt 7 lc 26 title 't.25 (383)', \
     NaN with points pt 7 lc 27 title 't.26 (384)', \
     NaN with points pt 7 lc 28 title 't.27 (385)', \
     NaN with points pt 7 lc 29 title 't.28 (386)', \
     NaN with points pt 7 lc 30 title 't.29 (387)', \
     NaN with points pt 7 lc 31 title 't.30 (388)', \
     NaN with points pt 7 lc 32 title 't.31 (389)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'many-tasks-vios-fiops_depth_1023.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 't.0 (358)', \
     NaN with points pt 7 lc 2 title 't.1 (359)', \
     NaN with points pt 7 lc 3 title 't.2 (360)', \
     NaN with points pt 7 lc 4 title 't.3 (361)', \
     NaN with points pt 7 lc 5 title 't.4 (362)', \
     NaN with points pt 7 lc 6 title 't.5 (363)', \
     NaN with points pt 7 lc 7 title 't.6 (364)', \
     NaN with points pt 7 lc 8 title 't.7 (365)', \
     NaN with points pt 7 lc 9 title 't.8 (366)', \
     NaN with points pt 7 lc 10 title 't.9 (367)', \
     NaN with points pt 7 lc 11 title 't.10 (368)', \
     NaN with points pt 7 lc 12 title 't.11 (369)', \
     NaN with points pt 7 lc 13 title 't.12 (370)', \
     NaN with points pt 7 lc 14 title 't.13 (371)', \
     NaN with points pt 7 lc 15 title 't.14 (372)', \
     NaN with points pt 7 lc 16 title 't.15 (373)', \
     NaN with points pt 7 lc 17 title 't.16 (374)', \
     NaN with points pt 7 lc 18 title 't.17 (375)', \
     NaN with points pt 7 lc 19 title 't.18 (376)', \
     NaN with points pt 7 lc 20 title 't.19 (377)', \
     NaN with points pt 7 lc 21 title 't.20 (378)', \
     NaN with points pt 7 lc 22 title 't.21 (379)', \
     NaN with points pt 7 lc 23 title 't.22 (380)', \
     NaN with points pt 7 lc 24 title 't.23 (381)', \
     NaN with points pt 7 lc 25 title 't.24 (382)', \
     NaN with points pt 7 lc 26 title 't.25 (383)', \
     NaN with points pt 7 lc 27 title 't.26 (384)', \
     NaN with points pt 7 lc 28 title 't.27 (385)', \
     NaN with points pt 7 lc 29 title 't.28 (386)', \
     NaN with points pt 7 lc 30 title 't.29 (387)', \
     NaN with points pt 7 lc 31 title 't.30 (388)', \
     NaN with points pt 7 lc 32 title 't.31 (389)'
unset multiplot
