set terminal pngcairo size 900,500 noenhanced font ",10"
set output 'groups-iops-fiops.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'groups, fiops: IOPS per second (run 20261205T081336Z-fiops+bfq+iocost-groups/fiops)'
set grid ytics
set key outside right top
set xlabel 'second of the measured window'
set ylabel 'IOPS'
set yrange [0:*]
plot for [i=2:8] 'groups-iops-fiops.dat' using 1:i with linespoints pt 7 ps 0.4 title columnheader(i)
