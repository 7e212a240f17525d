# make overhead, in the guest: sourced by init, which provides say().
# Each line of /out/overhead/plan is "name sched jobs qd runtime": run
# workloads/overhead/peak.fio on /dev/nullb0 under that scheduler into
# /out/overhead/<name>/ with the guest's CPU time and context switches
# around it (/proc/stat's cpu and ctxt lines before and after), and the
# scheduler's debugfs files after it (sched_debugfs.txt).  When
# /out/overhead/profile exists (make overhead PROFILE=1), perf samples
# every CPU during fio into <name>/perf.data; its first line is the
# sampling frequency.

O=/out/overhead

run_point() {
	local name=$1 sched=$2 jobs=$3 qd=$4 runtime=$5 dir=$O/$1 q=/sys/block/nullb0/queue
	mkdir -p "$dir"
	if ! echo "$sched" > $q/scheduler || ! grep -q "\[$sched\]" $q/scheduler; then
		echo "cannot select $sched" > "$dir/error"
		return
	fi
	cat $q/scheduler $q/nr_requests > "$dir/queue.txt"
	grep -E '^(cpu|ctxt) ' /proc/stat > "$dir/stat-before.txt"
	JOBS=$jobs QD=$qd FIO_DEV=/dev/nullb0 FIO_RUNTIME=$runtime $(profiler "$dir") fio \
		--output-format=json --output="$dir/fio.json" $O/peak.fio > "$dir/fio.log" 2>&1
	echo $? > "$dir/fio.rc"
	grep -E '^(cpu|ctxt) ' /proc/stat > "$dir/stat-after.txt"
	# FIOPS's depth control as the point left it (lifted or not).
	sched_debugfs nullb0 > "$dir/sched_debugfs.txt" 2>&1
}

# The command line that runs fio under perf, or nothing.  perf's own
# exit status is fio's.
profiler() {
	[ -f $O/profile ] || return 0
	echo "perf record -q -a -F $(head -n 1 $O/profile) -o $1/perf.data"
}

run_overhead() {
	[ -b /dev/nullb0 ] || { say "no /dev/nullb0"; return; }
	while read -r name sched jobs qd runtime; do
		case "$name" in ''|'#'*) continue ;; esac
		say "overhead $name"
		run_point "$name" "$sched" "$jobs" "$qd" "$runtime"
	done < $O/plan
}
