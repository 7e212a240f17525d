set terminal pngcairo size 900,500 noenhanced font ",10"
set output 'sync-async-iops-fiops_depth_1023.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'sync-async (nvme, depth 1023), fiops depth 1023: IOPS per second'
set grid ytics
set key outside right top
set xlabel 'second of the measured window'
set ylabel 'IOPS'
set yrange [0:*]
plot for [i=2:5] 'sync-async-iops-fiops_depth_1023.dat' using 1:i with linespoints pt 7 ps 0.4 title columnheader(i)
