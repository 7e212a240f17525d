"""How long each task of a run had nothing queued in the scheduler.

Usage: python3 reports/2026-12-03-depth/resubmit_gaps.py <run folder>...

For every task in the run's guest/main/pids.txt, the time from the
dispatch (D) that left it with no request inserted and undispatched to
its next insert (I), from the run's blktrace (blkparse).  Under tag_share
with 6 scheduler tags a task keeps one request queued, so a gap longer
than the time between two dispatches (2 ms at 500 IOPS) hands its turn
to another task.  Prints the median, p90, p99 gap per task and the
run's unthrottled ceiling (summary.json ceiling_iops).
"""
import json
import os
import subprocess
import sys

import numpy as np


def events(run):
    trace = os.path.join(run, "guest", "main")
    out = subprocess.run(["blkparse", "-q", "-i", "nvme0n1", "-D", trace,
                          "-f", "%T.%9t %p %a %S\n"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in ("I", "D"):
            yield float(parts[0]), parts[1], parts[2], parts[3]


def gaps(run):
    owner, queued, empty_since, found = {}, {}, {}, {}
    for t, pid, action, sector in events(run):
        if action == "I":
            owner[sector] = pid
            queued[pid] = queued.get(pid, 0) + 1
            if queued[pid] == 1 and pid in empty_since:
                found.setdefault(pid, []).append(t - empty_since.pop(pid))
        elif sector in owner:
            task = owner[sector]
            queued[task] -= 1
            if queued[task] == 0:
                empty_since[task] = t
    return found


def main(runs):
    for run in runs:
        with open(os.path.join(run, "summary.json")) as f:
            ceiling = json.load(f).get("ceiling_iops")
        with open(os.path.join(run, "guest", "main", "pids.txt")) as f:
            pids = f.read().split()
        print(f"{run}: ceiling {ceiling} IOPS")
        found = gaps(run)
        for pid in pids:
            ms = np.array(found.get(pid, [])) * 1e3
            if len(ms):
                p50, p90, p99 = np.percentile(ms, [50, 90, 99])
                print(f"  pid {pid}: {len(ms)} gaps, median {p50:.2f} ms, "
                      f"p90 {p90:.2f} ms, p99 {p99:.2f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
