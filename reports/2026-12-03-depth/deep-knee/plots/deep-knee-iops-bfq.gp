set terminal pngcairo size 900,500 noenhanced font ",10"
set output 'deep-knee-iops-bfq.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'deep-knee, bfq: IOPS per second (run 20261203T184524Z-none+mq-deadline+bfq+kyber+fiops-deep-knee/bfq)'
set grid ytics
set key outside right top
set xlabel 'second of the measured window'
set ylabel 'IOPS'
set yrange [0:*]
plot for [i=2:4] 'deep-knee-iops-bfq.dat' using 1:i with linespoints pt 7 ps 0.4 title columnheader(i)
