set terminal pngcairo size 900,800 noenhanced font ",10"
set output 'qd4-qd512-vios-fiops_depth_1023.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'qd4-qd512, fiops depth 1023: FIOPS vios per task (run 20261203T180716Z-fiops+none-qd4-qd512/fiops)'
set grid ytics
set key outside right top
set multiplot layout 2,1
set xlabel 'trace time (s)'
set ylabel 'vios after the charge'
set format y '%.1s%c'
plot 'qd4-qd512-vios-fiops_depth_1023.dat' using 1:8:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'qd4 (183)', \
     NaN with points pt 7 lc 2 title 'qd512 (184)'
set title 'lead: vios - min_vios of its class, after the charge'
set ylabel 'lead'
set format y '%g'
plot 'qd4-qd512-vios-fiops_depth_1023.dat' using 1:10:($2+1) with points pt 7 ps 0.3 lc variable notitle, \
     NaN with points pt 7 lc 1 title 'qd4 (183)', \
     NaN with points pt 7 lc 2 title 'qd512 (184)'
unset multiplot
