set terminal pngcairo size 900,500 noenhanced font ",10"
set output 'size-mix-shares.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'size-mix (nvme, depth 4, 32, 1023): mean share of IOPS per scheduler; dashes: expected'
set grid ytics
set key outside right top
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6
set xtics rotate by 30 right
set yrange [0:1.05]
set ylabel 'share of IOPS among the jobs'
plot for [i=2:4] 'size-mix-shares.dat' using i:xtic(1) title columnheader(i), \
     'size-mix-shares-expected.dat' using ($1-0.4):2:(0.8):(0) with vectors nohead dt 2 lw 2 lc rgb 'black' title 'expected'
