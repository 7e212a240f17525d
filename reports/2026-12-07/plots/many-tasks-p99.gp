set terminal pngcairo size 2400,500 noenhanced font ",10"
set output 'many-tasks-p99.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'many-tasks (nvme, depth 4, 32, 1023): p99 Q2C latency per task'
set grid ytics
set key outside right top
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set ylabel 'p99 Q2C latency (ms)'
set yrange [0:*]
set xtics rotate by -45
plot for [k=0:14] 'many-tasks-p99.dat' using (column(2+2*k)):(column(3+2*k)):xtic(1) title columnheader(2+2*k)
