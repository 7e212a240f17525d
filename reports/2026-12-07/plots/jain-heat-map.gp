set terminal pngcairo size 1150,560 noenhanced font ",10"
set output 'jain-heat-map.png'
set datafile separator "\t"
set datafile missing "NaN"
set title 'Jain index, common expect line (verdict.csv jain_index); dN: device depth N; nvme, deep-knee on nvme-null 4000 us'
set grid ytics
set key outside right top
set palette defined (0 'red', 0.6 'yellow', 1 'forest-green')
set cbrange [0.3:1]
set cblabel 'Jain index'
unset grid
set tics scale 0
set xtics ('none d4' 0, 'none d32' 1, 'none d1023' 2, 'mq-deadline d4' 3, 'mq-deadline d32' 4, 'mq-deadline d1023' 5, 'kyber d4' 6, 'kyber d32' 7, 'kyber d1023' 8, 'bfq d4' 9, 'bfq d32' 10, 'bfq d1023' 11, 'fiops d4' 12, 'fiops d32' 13, 'fiops d1023' 14) rotate by -45
set ytics ('equal-readers' 0, 'readers-writers' 1, 'ioprio' 2, 'size-mix' 3, 'depth-asym' 4, 'many-tasks' 5, 'sync-async' 6, 'groups' 7, 'deep-knee' 8)
set xrange [-0.5:14.5]
set yrange [8.5:-0.5]
set style fill solid 1.0 noborder
plot 'jain-heat-map.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fc palette notitle, \
     '' using 1:2:4 with labels font ',8' notitle
