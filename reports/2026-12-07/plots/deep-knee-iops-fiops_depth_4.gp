set terminal pngcairo size 900,500 noenhanced font ",10"
set output 'deep-knee-iops-fiops_depth_4.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'deep-knee (nvme-null 4000 us, depth 4), fiops depth 4: IOPS per second'
set grid ytics
set key outside right top
set xlabel 'second of the measured window'
set ylabel 'IOPS'
set yrange [0:*]
plot for [i=2:4] 'deep-knee-iops-fiops_depth_4.dat' using 1:i with linespoints pt 7 ps 0.4 title columnheader(i)
