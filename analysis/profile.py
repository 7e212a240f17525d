"""make overhead PROFILE=1: where each scheduler's time goes.

Each point folder of a profiled boot has perf.data, recorded in the guest
with `perf record -a -F <Hz>` around fio.  The guest kernel has no
kallsyms, so kernel addresses are named here from the build's
System.map, which overhead.py copies into the boot folder (the bench
kernel is built without KASLR); user-space samples keep the name perf
gives them, prefixed "user:".  A symbol's cost is its samples per 1000
requests, so schedulers that completed different numbers of requests in
the same time compare directly: under the icount clock a sample is a
fixed number of instructions.
"""

import bisect
import collections
import os
import subprocess

import pandas as pd

from analysis import overhead

KERNEL_START = 0xffffffff80000000
TOP_SYMBOLS = 25


class SystemMap:
    """Names kernel text addresses from a System.map."""

    def __init__(self, path):
        entries = []
        with open(path) as f:
            for line in f:
                addr, kind, name = line.split()[:3]
                if kind in "tTwW":
                    entries.append((int(addr, 16), name))
        entries.sort()
        self.addrs = [a for a, _ in entries]
        self.names = [n for _, n in entries]

    def name(self, ip):
        i = bisect.bisect_right(self.addrs, ip) - 1
        return self.names[i] if i >= 0 else "kernel:?"


def samples(perf_data, system_map):
    """Counter of symbol -> samples in one perf.data."""
    out = subprocess.run(["perf", "script", "-i", perf_data, "-F", "ip,sym"],
                         capture_output=True, text=True, errors="replace", check=True)
    counts = collections.Counter()
    for line in out.stdout.splitlines():
        words = line.split(None, 1)
        try:
            ip = int(words[0], 16)
        except (IndexError, ValueError):
            continue
        if ip >= KERNEL_START:
            counts[system_map.name(ip)] += 1
        else:
            counts["user:" + (words[1].strip() if len(words) > 1 else "?")] += 1
    return counts


def boot_costs(boot_dir):
    """One row per point run and symbol: jobs, qd, round, scheduler,
    symbol, per_kreq (samples per 1000 requests)."""
    system_map = SystemMap(os.path.join(boot_dir, "System.map"))
    rows = []
    with open(os.path.join(boot_dir, "overhead", "plan")) as f:
        for line in f:
            name, sched, jobs, qd, _ = line.split()
            d = os.path.join(boot_dir, "overhead", name)
            found = overhead.point(d)
            if not found or not found["ios"] or not os.path.exists(os.path.join(d, "perf.data")):
                continue
            rnd = int(name.split("-")[2][1:])
            for sym, n in samples(os.path.join(d, "perf.data"), system_map).items():
                rows.append({"jobs": int(jobs), "qd": int(qd), "round": rnd, "scheduler": sched,
                             "symbol": sym, "per_kreq": 1000.0 * n / found["ios"]})
    return pd.DataFrame(rows)


def point_table(g, scheds):
    """Markdown rows for one jobs x QD point: the total, then the symbols
    that cost some scheduler most over none (or over the first scheduler
    when none did not run), mean over rounds."""
    rounds = g.groupby("scheduler")["round"].nunique()
    cost = g.groupby(["symbol", "scheduler"])["per_kreq"].sum().unstack(fill_value=0.0)
    cost = cost.div(rounds, axis=1)
    cost = cost[[x for x in scheds if x in cost.columns]]
    base = cost.iloc[:, 0]
    excess = cost.sub(base, axis=0).max(axis=1)
    lines = ["| symbol | " + " | ".join(cost.columns) + " |",
             "|---|" + "---:|" * len(cost.columns),
             "| all | " + " | ".join("%.1f" % v for v in cost.sum()) + " |"]
    for sym in excess.sort_values(ascending=False).index[:TOP_SYMBOLS]:
        lines.append("| %s | " % sym + " | ".join("%.2f" % v for v in cost.loc[sym]) + " |")
    return lines


def report(top):
    """profile.md's text, or None if no boot under top was profiled."""
    lines = ["Samples per 1000 requests, by symbol (mean over rounds): the whole "
             "guest, then the %d symbols that cost a scheduler most over the first "
             "column.  perf's own sampling slows every point; these runs are for "
             "the profile, not for the ratios." % TOP_SYMBOLS, ""]
    found = False
    for boot in sorted(os.listdir(top)):
        name = overhead.BOOT.match(boot)
        if not name or not os.path.exists(os.path.join(top, boot, "System.map")):
            continue
        costs = boot_costs(os.path.join(top, boot))
        if costs.empty:
            continue
        found = True
        scheds = [x for x in overhead.SCHEDULERS if x in set(costs["scheduler"])]
        for (jobs, qd), g in costs.groupby(["jobs", "qd"]):
            lines += ["## %s, %d jobs x QD %d" % (boot, jobs, qd), ""]
            lines += point_table(g, scheds) + [""]
    if not found:
        return None
    return "\n".join(lines) + "\n"
