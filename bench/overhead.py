#!/usr/bin/env python3
"""make overhead: what a scheduler costs per request, on null_blk.

Every scheduler (SCHEDS) at every jobs x queue depth point (JOBS, QDS),
REPEAT times, the schedulers in a rotated order at each round and point,
on a memory-less null_blk device completing in the submitting context
(irqmode=0): nothing but the guest's CPU limits the IOPS.  Each point's
folder gets fio's JSON and /proc/stat around it; analysis/overhead.py
turns them into IOPS, CPU and context switches per request as ratios to
none in the same boot.  Writes results/<UTC time>-overhead/<boot>/ and
overhead.md.

Two clocks (CLOCKS, default "wall icount"), one boot per clock and
nr_hw_queues (HWQS, default "1 2"):

- wall: 2 vCPUs on QEMU's multi-threaded TCG, the guest's clock real
  time.  The vCPUs run in parallel, so locks are contended as on
  hardware, but the host's speed varies from second to second and so do
  the numbers (none's IOPS by up to 2x between rounds, measured).
- icount: QEMU's -icount shift=ICOUNT_SHIFT (default 1): the guest's
  clock advances 2**shift ns per instruction executed, so IOPS and CPU
  per request count instructions, the same in every round (within 1%,
  measured), whatever the host does.  One vCPU only: QEMU 7.2 hangs
  bringing up the second one under icount (tried with shift 0 and 1,
  thread=single), and so with one hardware queue only.  It shows the
  path length of each scheduler, not its lock contention.  Its points run
  ICOUNT_RUNTIME seconds of guest time (default 1: the numbers do not
  vary, and a guest second takes about 3 s on these machines).

PROFILE=1 also samples the guest with perf at PROFILE_HZ into each
point's perf.data (initramfs-perf.cpio, built by make overhead
PROFILE=1), and analysis/profile.py writes profile.md: samples per 1000
requests by symbol.  perf slows every point, so a profiled run is for
the profile, not for the ratios.
"""

import os
import shutil
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from analysis import overhead as overhead_mod  # noqa: E402
from analysis import profile  # noqa: E402
import bench  # noqa: E402
import qemu  # noqa: E402

JOBFILE = os.path.join(bench.TOP, "workloads", "overhead", "peak.fio")
SCHEDS = overhead_mod.SCHEDULERS
PROFILE_HZ = 4999     # prime, so as not to sample in step with the tick
CLOCKS = {"wall": 2, "icount": 1}     # clock: vCPUs, see above
DEFAULTS = {"SCHEDS": " ".join(SCHEDS), "JOBS": "1 4 16", "QDS": "1 8 64", "HWQS": "1 2",
            "REPEAT": "3", "RUNTIME": "3", "CLOCKS": " ".join(CLOCKS), "ICOUNT_SHIFT": "1",
            "ICOUNT_RUNTIME": "1"}


def settings(env):
    """The matrix from the environment; raises ValueError on bad input."""
    s = {k: (env.get(k) or v).split() for k, v in DEFAULTS.items()}
    for key in ("JOBS", "QDS", "HWQS", "REPEAT", "RUNTIME", "ICOUNT_RUNTIME"):
        for v in s[key]:
            if not v.isdigit() or int(v) < 1:
                raise ValueError("%s=%s: positive integers only" % (key, " ".join(s[key])))
    shift = s["ICOUNT_SHIFT"]
    if len(shift) != 1 or not shift[0].isdigit() or int(shift[0]) > 10:
        raise ValueError("ICOUNT_SHIFT=%s: one integer from 0 to 10" % " ".join(shift))
    s["ICOUNT_SHIFT"] = int(shift[0])
    unknown = [x for x in s["CLOCKS"] if x not in CLOCKS]
    if unknown or not s["CLOCKS"]:
        raise ValueError("CLOCKS=%s: known clocks are %s" % (" ".join(s["CLOCKS"]),
                                                              " ".join(CLOCKS)))
    unknown = [x for x in s["SCHEDS"] if x not in SCHEDS]
    if unknown:
        raise ValueError("SCHEDS: no scheduler %s; known: %s" % (" ".join(unknown),
                                                                 " ".join(SCHEDS)))
    for key in ("REPEAT", "RUNTIME", "ICOUNT_RUNTIME"):
        s[key] = int(s[key][0])
    if env.get("PROFILE", "") not in ("", "0", "1"):
        raise ValueError("PROFILE=%s: 1 to profile, 0 or unset not to" % env["PROFILE"])
    s["PROFILE"] = env.get("PROFILE") == "1"
    return s


def initrd(s):
    """The initramfs to boot; raises ValueError if the profiling one is
    asked for and missing."""
    if not s["PROFILE"]:
        return bench.INITRD
    path = os.path.join(bench.BUILD, "initramfs-perf.cpio")
    if not os.path.exists(path):
        raise ValueError("PROFILE=1: no %s; make overhead PROFILE=1 builds it" % path)
    return path


def plan(s):
    """(name, sched, jobs, qd) for one boot: each round and point runs
    every scheduler, starting one further along the list each time."""
    points, turn = [], 0
    for rep in range(1, s["REPEAT"] + 1):
        for jobs in s["JOBS"]:
            for qd in s["QDS"]:
                order = s["SCHEDS"][turn % len(s["SCHEDS"]):] + \
                    s["SCHEDS"][:turn % len(s["SCHEDS"])]
                turn += 1
                for sched in order:
                    points.append(("j%s-qd%s-r%d-%s" % (jobs, qd, rep, sched), sched, jobs, qd))
    return points


def cmdline(hwq):
    """null_blk without memory, completing inline, hwq submission queues."""
    return ("console=ttyS0 panic=-1 null_blk.nr_devices=1 null_blk.queue_mode=2 "
            "null_blk.irqmode=0 null_blk.memory_backed=0 null_blk.gb=1 "
            "null_blk.hw_queue_depth=64 null_blk.submit_queues=%d" % hwq)


def boots(s):
    """(clock, hwq) of each boot: icount has one vCPU, so one queue."""
    return [(clock, int(hwq)) for clock in s["CLOCKS"]
            for hwq in (s["HWQS"] if clock == "wall" else ["1"])]


def boot(boot_dir, s, clock, hwq):
    d = os.path.join(boot_dir, "overhead")
    os.makedirs(d)
    shutil.copy(JOBFILE, d)
    if s["PROFILE"]:
        with open(os.path.join(d, "profile"), "w") as f:
            f.write("%d\n" % PROFILE_HZ)
        # The names of the kernel's addresses, for analysis/profile.py.
        shutil.copy(os.path.join(bench.BUILD, "linux", "System.map"), boot_dir)
    points = plan(s)
    runtime = s["RUNTIME"] if clock == "wall" else s["ICOUNT_RUNTIME"]
    with open(os.path.join(d, "plan"), "w") as f:
        for name, sched, jobs, qd in points:
            f.write("%s %s %s %s %d\n" % (name, sched, jobs, qd, runtime))
    console = os.path.join(boot_dir, "console.log")
    cmd = qemu.command(bench.KERNEL, initrd(s), "tcg", CLOCKS[clock], 1024, cmdline(hwq),
                       console, boot_dir, [],
                       icount=s["ICOUNT_SHIFT"] if clock == "icount" else None)
    # A guest second under icount took 2.5-3.5 s here; leave room for 4.
    timeout = 120 + len(points) * (runtime * (1 if clock == "wall" else 4) + 10)
    bench.write_json(os.path.join(boot_dir, "meta.json"),
                     {"status": "running", "clock": clock, "vcpus": CLOCKS[clock], "hwq": hwq,
                      "settings": s, "qemu_cmdline": cmd,
                      "timeout": timeout, "harness_revision": bench.harness_revision()})
    bench.say("%s, hwq %d: %d points, timeout %ds; console: %s"
              % (clock, hwq, len(points), timeout, console))
    rc, _, timed_out = qemu.run(cmd, timeout, os.path.join(boot_dir, "qemu.log"), console,
                                      progress=lambda line: bench.say("  " + line))
    return bench.guest_error(boot_dir, rc, timed_out, timeout)


def main():
    try:
        s = settings(os.environ)
        initrd(s)
    except ValueError as e:
        print("overhead: %s" % e, file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, bench.on_signal)
    signal.signal(signal.SIGTERM, bench.on_signal)
    top = bench.make_run_dir("overhead", "", bench.utc_now())
    failed = []
    for clock, hwq in boots(s):
        boot_dir = os.path.join(top, overhead_mod.boot_name(clock, hwq))
        os.makedirs(boot_dir)
        try:
            error = boot(boot_dir, s, clock, hwq)
        except bench.Interrupted as e:
            error = str(e)
        meta = bench.read_json(os.path.join(boot_dir, "meta.json"))
        meta.update(status="failed" if error else "ok", reason=error)
        bench.write_json(os.path.join(boot_dir, "meta.json"), meta)
        if error:
            failed.append(error)
            print("overhead: %s: %s" % (os.path.basename(boot_dir), error), file=sys.stderr)
        if bench.interrupted:
            break
    text = overhead_mod.report(top)
    with open(os.path.join(top, "overhead.md"), "w") as f:
        f.write(text)
    print(text, end="")
    profiled = profile.report(top) if s["PROFILE"] else None
    if profiled:
        with open(os.path.join(top, "profile.md"), "w") as f:
            f.write(profiled)
        print("profile: " + os.path.join(top, "profile.md"))
    print("run: " + top)
    if bench.interrupted:
        return bench.INTERRUPTED_EXIT
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
