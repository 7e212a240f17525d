#!/usr/bin/env python3
"""make compare: the scheduler x workload x device-depth matrix, repeated.

Every scheduler of one (workload, depth, repetition) runs in the same boot
(bench.py with SCHED naming them all), so that their ratios come from one
run; the order rotates with each repetition so that no scheduler always
goes first.  Everything lands in results/compare-<UTC>/, one boot folder
per cell, and each run folder is analysed from its blktrace.
"""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import params as params_mod  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ("equal-readers", "readers-writers", "ioprio", "size-mix", "depth-asym",
             "many-tasks", "sync-async")
# Device depths: 3 tags, where requests wait in the scheduler; 31; and 1022,
# where every request of a workload fits the device and waits in the throttle.
DEPTHS = "4 32 1023"
# Unless DEPTHS is given, only these run at the depths after the first, so
# that the default matrix keeps the bound below: the workloads whose tasks
# keep different depths, which the depth axis is about (deep-knee only when
# WORKLOADS names it: it is meant for DEVICE=nvme-null).
DEEP_WORKLOADS = ("depth-asym", "deep-knee")
# The default matrix must fit in 40 minutes on 2 cores.  Measured
# (2026-12-03, RUNTIME=10): its 21 boots at DEPTH=4 alone (7 workloads x 3
# repetitions, 5 schedulers a boot) took 35 min, 100 s a boot, of which
# fio ran 5 x 14 s (CAL_RUNTIME 2 + RAMP 1, then RUNTIME 10 + RAMP 1) and
# 30 s went to booting, switching schedulers and analysing.  depth-asym at
# DEPTH=32 and 1023 adds 2 x 3 = 6 boots: 27 x 100 s = 45 min, too long.
# At RUNTIME=7 a boot is 100 - 5 x 3 = 85 s: 27 x 85 s = 2295 s = 38 min.
# 7 s at the 1000 IOPS throttle is 7000 I/Os a run.
SHORT = {"RUNTIME": "7", "RAMP": "1", "CAL_RUNTIME": "2"}


def matrix(env):
    # Variants too ("bfq bfq:low_latency=0"): bench.py gets them back as SCHED.
    scheds = [v["entry"] for v in
              params_mod.parse_scheds(env.get("SCHEDS") or " ".join(params_mod.SCHEDULERS), [])]
    workloads = (env.get("WORKLOADS") or " ".join(WORKLOADS)).split()
    depths = [params_mod.parse_int("DEPTH", d) for d in (env.get("DEPTHS") or DEPTHS).split()]
    repeat = int(env.get("REPEAT") or 3)
    cells = []
    for rep in range(repeat):
        for depth in depths:
            for w in workloads:
                if not at_depth(env, w, depth, depths[0]):
                    continue
                shift = rep % len(scheds)
                cells.append({"workload": w, "depth": depth, "repetition": rep + 1,
                              "scheds": scheds[shift:] + scheds[:shift]})
    # Each cell's parameters as its bench.py will read them, so that a bad
    # one (a verifying workload on DEVICE=nvme-null) stops the matrix
    # before the first boot rather than failing its cells one by one.
    for cell in cells:
        params_mod.load(cell_env(env, cell))
    return cells


def at_depth(env, workload, depth, first):
    """Whether the matrix runs workload at depth: at every depth DEPTHS
    gives; by default at the first for all, the deeper for DEEP_WORKLOADS."""
    return bool(env.get("DEPTHS")) or depth == first or workload in DEEP_WORKLOADS


def cell_env(env, cell):
    """bench.py's environment for one cell: the cell's schedulers, workload
    and depth, and SHORT's run lengths unless env sets them."""
    full = dict(env, SCHED=" ".join(cell["scheds"]), WORKLOAD=cell["workload"],
                DEPTH=str(cell["depth"]))
    for k, v in SHORT.items():
        full[k] = env.get(k) or v
    return full


# The signal that stopped the matrix, and the bench.py running meanwhile.
stopped = []
running = []


def on_signal(signum, frame):
    """Pass SIGINT or SIGTERM on to the running bench.py, which kills its
    guest and marks its runs failed; the matrix stops after it."""
    if not stopped:
        stopped.append(signal.Signals(signum).name)
    for proc in running:
        proc.send_signal(signal.SIGTERM)


def run_cell(cell, out_dir, env):
    """One boot; returns (exit code, boot folder or None, bench's last stderr line)."""
    full = dict(cell_env(env, cell), RESULTS=out_dir)
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "bench.py")], env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    running.append(proc)
    try:
        stdout, stderr = proc.communicate()
    finally:
        running.remove(proc)
    with open(os.path.join(out_dir, "bench.log"), "a") as f:
        f.write(stdout + stderr)
    lines = stdout.strip().splitlines()
    boot = lines[-1][len("run: "):] if lines and lines[-1].startswith("run: ") else None
    return proc.returncode, boot, stderr.strip().splitlines()[-1:] or [""]


def eta(started, done, total):
    if not done:
        return "?"
    left = (time.monotonic() - started) / done * (total - done)
    return "%dm%02ds" % divmod(int(left), 60)


def main():
    env = dict(os.environ)
    try:
        cells = matrix(env)
    except (params_mod.ParamError, ValueError) as e:
        print("compare: %s" % e, file=sys.stderr)
        return 1
    out_dir = bench.make_run_dir("compare", "", bench.utc_now())
    record = {"cells": cells, "env": {k: env[k] for k in params_mod.DEFAULTS if env.get(k)}}
    bench.write_json(os.path.join(out_dir, "compare.json"), record)
    started, worst = time.monotonic(), 0
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    for i, cell in enumerate(cells):
        if stopped:
            break
        t0 = time.monotonic()
        code, boot, last = run_cell(cell, out_dir, env)
        cell.update(exit=code, boot=os.path.basename(boot) if boot else None)
        worst = max(worst, code)
        print("compare: [%d/%d] %s DEPTH=%d rep %d (%s): %s in %ds, elapsed %ds, ETA %s"
              % (i + 1, len(cells), cell["workload"], cell["depth"], cell["repetition"],
                 " ".join(cell["scheds"]), {0: "ok", 2: "INVALID"}.get(code, "FAILED"),
                 time.monotonic() - t0, time.monotonic() - started,
                 eta(started, i + 1, len(cells))), flush=True)
        if code:
            print("compare:   " + last[0], flush=True)
        bench.write_json(os.path.join(out_dir, "compare.json"), record)
    if stopped:
        record["interrupted"] = stopped[0]
        bench.write_json(os.path.join(out_dir, "compare.json"), record)
        print("compare: stopped by %s; the cells without an exit code did not run"
              % stopped[0], file=sys.stderr)
    print("run: " + out_dir)
    return bench.INTERRUPTED_EXIT if stopped else worst


if __name__ == "__main__":
    sys.exit(main())
