#!/usr/bin/env python3
"""make overhead: what a scheduler costs per request, on null_blk.

One boot per nr_hw_queues (HWQS, default "1 2"), each running every
scheduler (SCHEDS) at every jobs x queue depth point (JOBS, QDS) REPEAT
times, the schedulers in a rotated order at each round and point, on a
memory-less null_blk device completing in the submitting context
(irqmode=0): nothing but the guest's CPU limits the IOPS.  Each point's
folder gets fio's JSON and /proc/stat around it; analysis/overhead.py
turns them into IOPS and CPU per request as ratios to none in the same
boot.  Writes results/<UTC time>-overhead/hwq<N>/ and overhead.md.

This is the first part of issue 10: the measure.  The emulator makes the
absolute numbers meaningless; only ratios within a boot are reported.
"""

import os
import shutil
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from analysis import overhead as overhead_mod  # noqa: E402
import bench  # noqa: E402
import qemu  # noqa: E402

JOBFILE = os.path.join(bench.TOP, "workloads", "overhead", "peak.fio")
SCHEDS = ("none", "mq-deadline", "kyber", "bfq", "fiops")
DEFAULTS = {"SCHEDS": " ".join(SCHEDS), "JOBS": "1 4 16", "QDS": "1 8 64", "HWQS": "1 2",
            "REPEAT": "3", "RUNTIME": "3"}


def settings(env):
    """The matrix from the environment; raises ValueError on bad input."""
    s = {k: (env.get(k) or v).split() for k, v in DEFAULTS.items()}
    for key in ("JOBS", "QDS", "HWQS", "REPEAT", "RUNTIME"):
        for v in s[key]:
            if not v.isdigit() or int(v) < 1:
                raise ValueError("%s=%s: positive integers only" % (key, " ".join(s[key])))
    unknown = [x for x in s["SCHEDS"] if x not in SCHEDS]
    if unknown:
        raise ValueError("SCHEDS: no scheduler %s; known: %s" % (" ".join(unknown),
                                                                 " ".join(SCHEDS)))
    s["REPEAT"], s["RUNTIME"] = int(s["REPEAT"][0]), int(s["RUNTIME"][0])
    return s


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


def boot(boot_dir, s, hwq):
    d = os.path.join(boot_dir, "overhead")
    os.makedirs(d)
    shutil.copy(JOBFILE, d)
    points = plan(s)
    with open(os.path.join(d, "plan"), "w") as f:
        for name, sched, jobs, qd in points:
            f.write("%s %s %s %s %d\n" % (name, sched, jobs, qd, s["RUNTIME"]))
    console = os.path.join(boot_dir, "console.log")
    cmd = qemu.command(bench.KERNEL, bench.INITRD, "tcg", 2, 1024, cmdline(hwq), console,
                       boot_dir, [])
    timeout = 120 + len(points) * (s["RUNTIME"] + 10)
    bench.write_json(os.path.join(boot_dir, "meta.json"),
                     {"status": "running", "hwq": hwq, "settings": s, "qemu_cmdline": cmd,
                      "timeout": timeout, "harness_revision": bench.harness_revision()})
    bench.say("hwq %d: %d points, timeout %ds; console: %s" % (hwq, len(points), timeout,
                                                               console))
    rc, _, timed_out = qemu.run(cmd, timeout, os.path.join(boot_dir, "qemu.log"), console,
                                      progress=lambda line: bench.say("  " + line))
    return bench.guest_error(boot_dir, rc, timed_out, timeout)


def main():
    try:
        s = settings(os.environ)
    except ValueError as e:
        print("overhead: %s" % e, file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, bench.on_signal)
    signal.signal(signal.SIGTERM, bench.on_signal)
    top = bench.make_run_dir("overhead", "", bench.utc_now())
    failed = []
    for hwq in s["HWQS"]:
        boot_dir = os.path.join(top, "hwq%s" % hwq)
        os.makedirs(boot_dir)
        try:
            error = boot(boot_dir, s, int(hwq))
        except bench.Interrupted as e:
            error = str(e)
        meta = bench.read_json(os.path.join(boot_dir, "meta.json"))
        meta.update(status="failed" if error else "ok", reason=error)
        bench.write_json(os.path.join(boot_dir, "meta.json"), meta)
        if error:
            failed.append(error)
            print("overhead: hwq %s: %s" % (hwq, error), file=sys.stderr)
        if bench.interrupted:
            break
    text = overhead_mod.report(top)
    with open(os.path.join(top, "overhead.md"), "w") as f:
        f.write(text)
    print(text, end="")
    print("run: " + top)
    if bench.interrupted:
        return bench.INTERRUPTED_EXIT
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
