set terminal pngcairo size 900,750 noenhanced font ",10"
set output 'depth-asym-depth.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'depth-asym: share of the jobs'' IOPS and work conservation against device depth (mean, 95% CI)'
set grid ytics
set key outside right top
set multiplot layout 2,2 title 'depth-asym: share of the jobs'' IOPS and work conservation against device depth (mean, 95% CI)'
set logscale x 2
set xtics (4, 1023)
set xrange [2.66667:1534.5]
set xlabel 'device depth (nvme.io_queue_depth)'
set key inside top right
set yrange [0:1.05]
set ylabel 'share of the jobs'' IOPS'
set title 'none'
plot for [i=0:2] 'depth-asym-depth-p1.dat' using 1:(column(2+2*i)):(column(3+2*i)) with yerrorlines pt 7 lc (i+1) title columnheader(2+2*i)
unset key
set title 'fiops'
plot for [i=0:2] 'depth-asym-depth-p2.dat' using 1:(column(2+2*i)):(column(3+2*i)) with yerrorlines pt 7 lc (i+1) title columnheader(2+2*i)
unset key
set yrange [0:1.2<*]
set ylabel 'work conservation'
set title 'none: work conservation'
plot 'depth-asym-depth-wc.dat' using 1:2:3 with yerrorlines pt 7 lc rgb 'black' notitle
set title 'fiops: work conservation'
plot 'depth-asym-depth-wc.dat' using 1:4:5 with yerrorlines pt 7 lc rgb 'black' notitle
unset multiplot
