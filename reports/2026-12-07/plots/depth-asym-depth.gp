set terminal pngcairo size 1700,750 noenhanced font ",10"
set output 'depth-asym-depth.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'depth-asym (nvme, depth 4, 32, 1023): share of the jobs'' IOPS and work conservation against device depth (mean, 95% CI)'
set grid ytics
set key outside right top
set multiplot layout 2,5 title 'depth-asym (nvme, depth 4, 32, 1023): share of the jobs'' IOPS and work conservation against device depth (mean, 95% CI)'
set logscale x 2
set xtics (4, 32, 1023)
set xrange [2.66667:1534.5]
set xlabel 'device depth (nvme.io_queue_depth)'
set key inside top right
set yrange [0:1.05]
set ylabel 'share of the jobs'' IOPS'
set title 'none'
plot for [i=0:2] 'depth-asym-depth-p1.dat' using 1:(column(2+2*i)):(column(3+2*i)) with yerrorlines pt 7 lc (i+1) title columnheader(2+2*i)
unset key
set title 'mq-deadline'
plot for [i=0:2] 'depth-asym-depth-p2.dat' using 1:(column(2+2*i)):(column(3+2*i)) with yerrorlines pt 7 lc (i+1) title columnheader(2+2*i)
unset key
set title 'kyber'
plot for [i=0:2] 'depth-asym-depth-p3.dat' using 1:(column(2+2*i)):(column(3+2*i)) with yerrorlines pt 7 lc (i+1) title columnheader(2+2*i)
unset key
set title 'bfq'
plot for [i=0:2] 'depth-asym-depth-p4.dat' using 1:(column(2+2*i)):(column(3+2*i)) with yerrorlines pt 7 lc (i+1) title columnheader(2+2*i)
unset key
set title 'fiops'
plot for [i=0:2] 'depth-asym-depth-p5.dat' using 1:(column(2+2*i)):(column(3+2*i)) with yerrorlines pt 7 lc (i+1) title columnheader(2+2*i)
unset key
set yrange [0:1.2<*]
set ylabel 'work conservation'
set title 'none: work conservation'
plot 'depth-asym-depth-wc.dat' using 1:2:3 with yerrorlines pt 7 lc rgb 'black' notitle
set title 'mq-deadline: work conservation'
plot 'depth-asym-depth-wc.dat' using 1:4:5 with yerrorlines pt 7 lc rgb 'black' notitle
set title 'kyber: work conservation'
plot 'depth-asym-depth-wc.dat' using 1:6:7 with yerrorlines pt 7 lc rgb 'black' notitle
set title 'bfq: work conservation'
plot 'depth-asym-depth-wc.dat' using 1:8:9 with yerrorlines pt 7 lc rgb 'black' notitle
set title 'fiops: work conservation'
plot 'depth-asym-depth-wc.dat' using 1:10:11 with yerrorlines pt 7 lc rgb 'black' notitle
unset multiplot
