# make stress, in the guest: sourced by init, which provides say(),
# dev_by_serial() and set_sched().  Each line of /out/stress/cases is
# "case serial arg": run_stress runs it into /out/stress/<case>/, which
# gets a result file (iterations=, errors=, and what the host checks)
# and the kernel messages printed while the case ran (dmesg.txt).
# Errors are counted here; dmesg findings are judged by the host.

S=/out/stress

# result DIR KEY VALUE: one line of the case's result file.
result() {
	echo "$2=$3" >> "$1/result"
}

# error DIR MESSAGE: count an error and say what it was.
error() {
	echo "$2" >> "$1/errors.txt"
}

# drained DEV: the device has no request in flight within 10 seconds.
drained() {
	for _ in $(seq 20); do
		read -r reads writes < "/sys/block/$1/inflight"
		[ "$reads" = 0 ] && [ "$writes" = 0 ] && return 0
		sleep 0.5
	done
	return 1
}

# wait_fio DIR PID LIMIT: wait for fio, killing it after LIMIT seconds;
# the fio exit status goes to the result, a hang to the errors.
wait_fio() {
	local end rc
	end=$(( $(date +%s) + $3 ))
	while kill -0 "$2" 2>/dev/null; do
		if [ "$(date +%s)" -gt "$end" ]; then
			error "$1" "fio did not finish within $3 s: killed"
			kill -9 "$2"
			break
		fi
		sleep 1
	done
	wait "$2"
	rc=$?
	result "$1" fio_rc "$rc"
	return "$rc"
}

# start_fio DIR DEV RUNTIME JOBFILE [NAME [FAIL]]: fio in the background,
# its JSON in DIR/NAME.json; sets fio_pid.  FAIL=1 makes fio a task whose
# allocations failslab may fail (its make-it-fail, which children inherit).
# FIO_CGROUP, if set, is the cgroup fio starts in.
start_fio() {
	(
		[ -n "${FIO_CGROUP:-}" ] && echo 0 > "$FIO_CGROUP/cgroup.procs"
		[ "${6:-0}" = 1 ] && echo 1 > /proc/self/make-it-fail
		FIO_DEV=/dev/$2 FIO_RUNTIME=$3 exec fio --output-format=json \
			--output="$1/${5:-fio}.json" "$4"
	) > "$1/${5:-fio}.log" 2>&1 &
	fio_pid=$!
}

# fiops_stat DEV NAME: a counter from the fiops debugfs directory.
fiops_stat() {
	cat "/sys/kernel/debug/block/$1/sched/$2" 2>/dev/null || echo 0
}

# Switch the scheduler every half second while fio writes and verifies.
case_switch() {
	local dir=$1 dev=$2 secs=$3 q sched switches
	q=/sys/block/$dev/queue
	set_sched "$dev" fiops 0 || error "$dir" "cannot select fiops"
	start_fio "$dir" "$dev" "$secs" $S/verify.fio
	switches=0
	while kill -0 "$fio_pid" 2>/dev/null &&
	      [ "$switches" -lt $(( secs * 2 + 20 )) ]; do
		for sched in none mq-deadline bfq kyber fiops; do
			if ! echo "$sched" > "$q/scheduler" ||
			   ! grep -q "\[$sched\]" "$q/scheduler"; then
				error "$dir" "switch to $sched failed"
			fi
			switches=$((switches + 1))
			sleep 0.5
		done
	done
	result "$dir" iterations "$switches"
	wait_fio "$dir" "$fio_pid" 120 || error "$dir" "fio failed: see fio.log"
	drained "$dev" || error "$dir" "requests still in flight after fio"
}

# churn_task DEV N: one short-lived reader; even N read buffered through
# a 16 MiB readahead, odd N read with O_DIRECT.
churn_task() {
	local off
	off=$(( ($2 * 37) % 60 ))
	if [ $(($2 % 2)) = 0 ]; then
		exec dd if="/dev/$1" of=/dev/null bs=16M count=1 skip="$off" 2>/dev/null
	fi
	exec dd if="/dev/$1" of=/dev/null bs=4k count=64 iflag=direct \
		skip=$((off * 4096)) 2>/dev/null
}

# Start and kill short-lived tasks under fiops: half of each batch is
# killed with its I/O queued, and the rest get new I/O priorities.
case_churn() {
	local dir=$1 dev=$2 total=$3 q started killed pids n pid rc
	q=/sys/block/$dev/queue
	set_sched "$dev" fiops 64 || error "$dir" "cannot select fiops"
	echo 16384 > "$q/read_ahead_kb"
	# Small requests, so that a readahead is many of them.
	echo 64 > "$q/max_sectors_kb"
	started=0 killed=0
	while [ "$started" -lt "$total" ]; do
		pids=""
		for n in 0 1 2 3 4 5 6 7 8 9; do
			( churn_task "$dev" $((started + n)) ) &
			pids="$pids $!"
		done
		started=$((started + 10))
		sleep 0.1
		n=0
		for pid in $pids; do
			if [ $((n % 2)) = 0 ]; then
				kill -9 "$pid" 2>/dev/null && killed=$((killed + 1))
			else
				ionice -c $((n % 3 + 1)) -n $((n % 8)) -p "$pid" 2>/dev/null
			fi
			n=$((n + 1))
		done
		n=0
		for pid in $pids; do
			wait "$pid"
			rc=$?
			[ $((n % 2)) = 1 ] && [ "$rc" != 0 ] &&
				error "$dir" "task $n of a batch exited $rc"
			n=$((n + 1))
		done
		blockdev --flushbufs "/dev/$dev"
	done
	result "$dir" iterations "$started"
	result "$dir" killed "$killed"
	drained "$dev" || error "$dir" "requests still in flight after the tasks"
}

# hostile_write FILE VALUEFILE: the write must fail with EINVAL and leave
# the value as it was.
hostile_write() {
	local before msg rc after
	# read is a shell builtin: a fork fewer per value on a slow kernel.
	read -r before < "$1"
	msg=$(cat "$2" 2>&1 > "$1")
	rc=$?
	read -r after < "$1"
	case "$msg" in *"Invalid argument"*) ;; *)
		echo "$(basename "$1") <- $(basename "$2"): exit $rc, not EINVAL: $msg"
	esac
	[ "$before" = "$after" ] ||
		echo "$(basename "$1") <- $(basename "$2"): changed $before -> $after"
}

# Every fiops tunable, and the queue's scheduler and nr_requests, get each
# bad value the host wrote under $S/bad-values/<file>/.
case_hostile() {
	local dir=$1 dev=$2 q writes f table name v
	q=/sys/block/$dev/queue
	set_sched "$dev" fiops 64 || error "$dir" "cannot select fiops"
	writes=0
	for f in "$q"/iosched/*; do
		[ -d "$S/bad-values/$(basename "$f")" ] ||
			error "$dir" "$(basename "$f") has no table of bad values"
	done
	for table in "$S"/bad-values/*; do
		name=$(basename "$table")
		f=$q/iosched/$name
		[ "$name" = scheduler ] || [ "$name" = nr_requests ] && f=$q/$name
		[ -e "$f" ] || { error "$dir" "$f does not exist"; continue; }
		for v in "$table"/*; do
			hostile_write "$f" "$v" >> "$dir/errors.txt"
			writes=$((writes + 1))
		done
	done
	# 0 is not refused: blk-mq raises it to BLKDEV_MIN_RQ (4).
	echo 0 > "$q/nr_requests" || error "$dir" "nr_requests 0 refused"
	result "$dir" nr_requests_after_0 "$(cat "$q/nr_requests")"
	writes=$((writes + 1))
	# fiops still serves I/O with 4 tags, then with its old depth.
	dd if="/dev/$dev" of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null ||
		error "$dir" "reading with nr_requests 4 failed"
	echo 64 > "$q/nr_requests"
	result "$dir" iterations "$writes"
}

# io_cq allocations fail: requests without an io_cq are charged to the
# fallback owner (a new reader against one that has its io_cq: their
# IOPS go to the host), and a verifying load with task churn completes.
# failslab fails only the allocations that cannot sleep (the io_cq's is
# GFP_ATOMIC) of the tasks marked make-it-fail.
case_faults() {
	local dir=$1 dev=$2 secs=$3 fs=/sys/kernel/debug/failslab fallback owner tasks
	if [ ! -d "$fs" ] || [ ! -e /proc/self/make-it-fail ]; then
		error "$dir" "no failslab (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)"
		return
	fi
	set_sched "$dev" fiops 64 || error "$dir" "cannot select fiops"
	echo Y > $fs/task-filter
	echo Y > $fs/ignore-gfp-wait
	echo 0 > $fs/verbose
	echo 1 > $fs/interval
	echo -1 > $fs/times
	fallback=$(fiops_stat "$dev" fallback)

	start_fio "$dir" "$dev" "$secs" $S/owner.fio owner
	owner=$fio_pid
	sleep 1
	echo 100 > $fs/probability
	start_fio "$dir" "$dev" "$secs" $S/fallback.fio fallback 1
	wait_fio "$dir" "$fio_pid" $((secs + 60)) || error "$dir" "fallback reader failed"
	wait_fio "$dir" "$owner" 60 || error "$dir" "owner reader failed"
	result "$dir" fallback_after_pair $(( $(fiops_stat "$dev" fallback) - fallback ))

	echo 50 > $fs/probability
	start_fio "$dir" "$dev" "$secs" $S/verify.fio fio 1
	tasks=0
	while kill -0 "$fio_pid" 2>/dev/null; do
		(
			echo 1 > /proc/self/make-it-fail
			churn_task "$dev" $((tasks * 2 + 1))
		) || error "$dir" "a reader failed"
		tasks=$((tasks + 1))
	done
	wait_fio "$dir" "$fio_pid" 120 || error "$dir" "verifying fio failed"
	echo 0 > $fs/probability
	result "$dir" iterations "$tasks"
	result "$dir" fallback $(( $(fiops_stat "$dev" fallback) - fallback ))
	drained "$dev" || error "$dir" "requests still in flight after the load"
}

# Unplug the device under fiops and load: the host's QMP device_del does
# it when the console says "unplug <serial>".
case_unplug() {
	local dir=$1 dev=$2 serial=$3 gone
	set_sched "$dev" fiops 64 || error "$dir" "cannot select fiops"
	start_fio "$dir" "$dev" 60 $S/unplug.fio
	sleep 3
	say "unplug $serial"
	gone=0
	for _ in $(seq 60); do
		[ -e "/sys/block/$dev" ] || { gone=1; break; }
		sleep 0.5
	done
	[ "$gone" = 1 ] || error "$dir" "/sys/block/$dev still there 30 s after device_del"
	result "$dir" removed "$gone"
	result "$dir" iterations 1
	# fio is expected to fail with I/O errors; not to hang.
	wait_fio "$dir" "$fio_pid" 60
}

# Classes inside groups: an RT reader in cgroup a and a BE reader in b, at
# the same weight, share the device (the host checks the BE share); then a
# BE reader at depth 1 beside an RT reader in one cgroup is served within
# the aging bound (the host checks its slowest read).
case_classes() {
	local dir=$1 dev=$2 secs=$3 g=$CGROUP/classes rt
	set_sched "$dev" fiops 64 || error "$dir" "cannot select fiops"
	if ! mount_cgroup || ! mkdir -p "$g/a" "$g/b" ||
	   ! echo +io > "$g/cgroup.subtree_control"; then
		error "$dir" "no cgroup2 with the io controller"
		return
	fi
	FIO_CGROUP=$g/a start_fio "$dir" "$dev" "$secs" $S/rt-reader.fio rt
	rt=$fio_pid
	FIO_CGROUP=$g/b start_fio "$dir" "$dev" "$secs" $S/be-reader.fio be
	wait_fio "$dir" "$rt" $((secs + 60)) || error "$dir" "rt reader failed: see rt.log"
	wait_fio "$dir" "$fio_pid" 60 || error "$dir" "be reader failed: see be.log"
	FIO_CGROUP=$g/a start_fio "$dir" "$dev" "$secs" $S/rt-reader.fio flood
	rt=$fio_pid
	FIO_CGROUP=$g/a start_fio "$dir" "$dev" "$secs" $S/be-probe.fio probe
	wait_fio "$dir" "$rt" $((secs + 60)) || error "$dir" "rt flood failed: see flood.log"
	wait_fio "$dir" "$fio_pid" 60 || error "$dir" "probe failed: see probe.log"
	result "$dir" iterations 2
	drained "$dev" || error "$dir" "requests still in flight after the load"
	rmdir "$g/a" "$g/b" "$g" || error "$dir" "cannot remove $g"
}

# io_uring reads completed by polling beside an interrupt-driven reader;
# the polled task is stopped, so it stops reaping, for the middle third
# of the run: the other reader must go on (the host compares the device's
# reads then with those of the first third, both tasks reading),
# and both finish.
case_polled() {
	local dir=$1 dev=$2 secs=$3 polled jobs start before after third
	set_sched "$dev" fiops 64 || error "$dir" "cannot select fiops"
	if [ "$(cat "/sys/block/$dev/queue/io_poll")" != 1 ]; then
		error "$dir" "$dev has no poll queues (nvme.poll_queues)"
		return
	fi
	third=$((secs / 3))
	start_fio "$dir" "$dev" "$secs" $S/polled.fio polled
	polled=$fio_pid
	start_fio "$dir" "$dev" "$secs" $S/be-reader.fio irq
	sleep 1
	read -r start _ < "/sys/block/$dev/stat"
	sleep $((third - 1))
	jobs=$(children_of "$polled")
	# shellcheck disable=SC2086  # a list of pids
	kill -STOP $jobs
	read -r before _ < "/sys/block/$dev/stat"
	sleep "$third"
	read -r after _ < "/sys/block/$dev/stat"
	# shellcheck disable=SC2086
	kill -CONT $jobs
	result "$dir" both_seconds "$((third - 1))"
	result "$dir" both_reads "$((before - start))"
	result "$dir" stopped_seconds "$third"
	result "$dir" stopped_reads "$((after - before))"
	wait_fio "$dir" "$polled" $((secs + 60)) || error "$dir" "polled reader failed: see polled.log"
	wait_fio "$dir" "$fio_pid" 60 || error "$dir" "irq reader failed: see irq.log"
	result "$dir" iterations 1
	drained "$dev" || error "$dir" "requests still in flight after the load"
}

# RWF_NOWAIT reads deeper than a task's share of the tags beside a reader
# at depth 16: the host checks that reads over the share failed with
# EAGAIN and that the other reader kept its share.
case_nowait() {
	local dir=$1 dev=$2 secs=$3 nowait start before after
	set_sched "$dev" fiops 64 || error "$dir" "cannot select fiops"
	start_fio "$dir" "$dev" "$secs" $S/nowait.fio nowait
	nowait=$fio_pid
	start_fio "$dir" "$dev" "$secs" $S/be-reader.fio be
	# fio counts a failed read as done: the device's count is the total.
	sleep 2
	start=$(date +%s)
	read -r before _ < "/sys/block/$dev/stat"
	sleep "$secs"
	read -r after _ < "/sys/block/$dev/stat"
	result "$dir" device_seconds "$(( $(date +%s) - start ))"
	result "$dir" device_reads "$((after - before))"
	wait_fio "$dir" "$nowait" 60 || error "$dir" "nowait reader failed: see nowait.log"
	result "$dir" iterations 1
	drained "$dev" || error "$dir" "requests still in flight after the load"
}

# children_of PID: the pids whose parent is PID.
children_of() {
	local s pid ppid
	for s in /proc/[0-9]*/stat; do
		read -r pid _ _ ppid _ 2>/dev/null < "$s" || continue
		[ "$ppid" = "$1" ] && echo "$pid"
	done
}

# move_tasks GROUP PID...: into GROUP's cgroup.procs; a task that has just
# exited is no error.
move_tasks() {
	local group=$1 pid
	shift
	for pid in "$@"; do
		echo "$pid" > "$group/cgroup.procs" 2>/dev/null ||
			[ ! -e "/proc/$pid" ] || return 1
	done
}

# cgroup_hostile DIR FILE MAJ:MIN: io.fiops.weight refuses bad lines with
# EINVAL and keeps its value; good ones set and clear a device's weight.
cgroup_hostile() {
	local dir=$1 f=$2 devno=$3 v n=0
	for v in " " 0 10001 -1 abc default "default 0" "default 10001" \
		 "default abc" "1 2" "100 default" "$devno" "$devno 0" \
		 "$devno 10001" "$devno abc" "$devno -5" "$devno 100 200" \
		 "$devno default 100" "default $devno"; do
		printf '%s' "$v" > /tmp/bad-weight
		hostile_write "$f" /tmp/bad-weight | sed "s|bad-weight|'$v'|" >> "$dir/errors.txt"
		n=$((n + 1))
	done
	echo "$devno 250" > "$f" && grep -qx "$devno 250" "$f" ||
		error "$dir" "$devno 250 did not set the device's weight"
	echo "$devno default" > "$f" && ! grep -q "^$devno " "$f" ||
		error "$dir" "$devno default did not clear the device's weight"
	echo "default 300" > "$f" && grep -qx "default 300" "$f" ||
		error "$dir" "default 300 did not set the default weight"
	result "$dir" bad_weights "$n"
}

# A verifying load moves between two weighted cgroups while it writes;
# buffered readers in a third are killed with their readahead queued and
# their cgroup removed at once; every fourth round switches the scheduler
# away and back while the groups exist.  Each round makes new cgroups.
case_cgroups() {
	local dir=$1 dev=$2 secs=$3 q end rounds busy=0 g readers n fio_tasks
	q=/sys/block/$dev/queue
	set_sched "$dev" fiops 64 || error "$dir" "cannot select fiops"
	if ! mount_cgroup; then
		error "$dir" "no cgroup2 with the io controller"
		return
	fi
	echo 16384 > "$q/read_ahead_kb"
	echo 64 > "$q/max_sectors_kb"
	start_fio "$dir" "$dev" "$secs" $S/verify.fio
	sleep 1
	rounds=0
	end=$(( $(date +%s) + secs ))
	while [ "$(date +%s)" -lt "$end" ] && kill -0 "$fio_pid" 2>/dev/null; do
		g=$CGROUP/stress$rounds
		if ! mkdir -p "$g/a" "$g/b" "$g/r" ||
		   ! echo +io > "$g/cgroup.subtree_control"; then
			error "$dir" "cannot make $g"
			break
		fi
		[ "$rounds" = 0 ] &&
			cgroup_hostile "$dir" "$g/a/io.fiops.weight" "$(cat /sys/block/$dev/dev)"
		echo "default $(( rounds % 9 * 100 + 50 ))" > "$g/a/io.fiops.weight"
		echo "default 400" > "$g/b/io.fiops.weight"
		fio_tasks="$fio_pid $(children_of "$fio_pid")"
		# shellcheck disable=SC2086  # a list of pids
		move_tasks "$g/a" $fio_tasks || error "$dir" "cannot move fio into $g/a"
		readers=""
		for n in 0 2 4 6; do
			( echo 0 > "$g/r/cgroup.procs" && churn_task "$dev" $((rounds * 8 + n)) ) &
			readers="$readers $!"
		done
		sleep 0.2
		# shellcheck disable=SC2086
		move_tasks "$g/b" $fio_tasks || error "$dir" "cannot move fio into $g/b"
		if [ $((rounds % 4)) = 3 ]; then
			set_sched "$dev" mq-deadline 0 || error "$dir" "cannot switch to mq-deadline"
			set_sched "$dev" fiops 64 || error "$dir" "cannot switch back to fiops"
		fi
		# shellcheck disable=SC2086
		kill -9 $readers 2>/dev/null
		# shellcheck disable=SC2086
		wait $readers 2>/dev/null
		# Rounds where a group still had requests queued at the rmdir.
		grep -q group "/sys/kernel/debug/block/$dev/sched/service_tree" 2>/dev/null &&
			busy=$((busy + 1))
		rmdir "$g/r" || error "$dir" "cannot remove $g/r with its readahead queued"
		# shellcheck disable=SC2086
		move_tasks "$CGROUP" $fio_tasks || error "$dir" "cannot move fio out of $g"
		rmdir "$g/a" "$g/b" "$g" || error "$dir" "cannot remove $g"
		rounds=$((rounds + 1))
	done
	result "$dir" iterations "$rounds"
	result "$dir" busy_at_rmdir "$busy"
	wait_fio "$dir" "$fio_pid" 120 || error "$dir" "fio failed: see fio.log"
	drained "$dev" || error "$dir" "requests still in flight after the load"
	n=$(dying_cgroups)
	result "$dir" dying_cgroups "$n"
	[ "$n" = 0 ] || error "$dir" "$n removed cgroups never freed: a group reference leaked"
}

# The removed cgroups not yet freed, once the queue is idle: a blkg
# reference FIOPS failed to put keeps its cgroup dying forever (only the
# io controller is on, so no page cache pins them).  Freeing goes through
# RCU and workqueues: wait up to 20 s for the count to reach 0.
dying_cgroups() {
	local n
	for _ in $(seq 40); do
		n=$(sed -n 's/^nr_dying_descendants //p' $CGROUP/cgroup.stat)
		[ "$n" = 0 ] && break
		sleep 0.5
	done
	echo "$n"
}

run_stress() {
	dmesg -c > $S/boot-dmesg.txt
	while read -r name serial arg; do
		case "$name" in ''|'#'*) continue ;; esac
		dir=$S/$name
		mkdir -p "$dir"
		: > "$dir/errors.txt"
		dev=$(dev_by_serial "$serial")
		if [ -z "$dev" ]; then
			error "$dir" "no NVMe device with serial $serial"
			continue
		fi
		say "stress $name on $dev ($arg)"
		start=$(date +%s)
		"case_$name" "$dir" "$dev" "$arg"
		result "$dir" seconds $(( $(date +%s) - start ))
		result "$dir" errors "$(grep -c . "$dir/errors.txt")"
		dmesg -c > "$dir/dmesg.txt"
		say "stress $name: $(grep -c . "$dir/errors.txt") errors"
	done < $S/cases
}
