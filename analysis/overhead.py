"""make overhead's numbers: IOPS, guest CPU and context switches per
request of each point, as ratios to none's at the same point, round and
boot.

A boot folder (boot_name(): hwq<N>/ for the wall clock, icount-hwq<N>/
for QEMU's instruction counting) has overhead/plan ("name sched jobs qd
runtime")
and per point overhead/<name>/ with fio.json, fio.rc and /proc/stat's
cpu and ctxt lines before and after (stat-before.txt, stat-after.txt).
"""

import os
import re

import pandas as pd

from analysis import analyze
from analysis.report import mean_ci

USER_HZ = 100    # /proc/stat's tick, the same on every Linux architecture
SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq", "fiops")     # the tables' order
BOOT = re.compile(r"^(?:(icount)-)?hwq(\d+)$")
MEASURES = {
    "wall": "2 vCPUs, real time: contention as on hardware, the host's noise in every number",
    "icount": "1 vCPU, QEMU -icount: guest time counts instructions (CPU us/req is "
              "instructions x 2**ICOUNT_SHIFT ns), the same in every round",
}


def boot_name(clock, hwq):
    return "hwq%d" % hwq if clock == "wall" else "%s-hwq%d" % (clock, hwq)


def proc_stat(path):
    """{line name: its numbers} of saved /proc/stat lines."""
    with open(path) as f:
        return {w[0]: [int(x) for x in w[1:]] for w in map(str.split, f) if w}


def busy_ticks(stat):
    """Ticks the CPUs spent not idle, from /proc/stat's cpu line."""
    fields = stat["cpu"]
    idle, iowait = fields[3], fields[4]
    return sum(fields[:8]) - idle - iowait


LIFTED = re.compile(r"^depth=.* lifted=(\d+)$", re.M)


def lifted(d):
    """1 if FIOPS's depth limit was lifted at the end of the point (the
    debugfs depth line in sched_debugfs.txt), 0 if not; NaN for other
    schedulers, kernels without the lift and folders from before the
    file was written."""
    try:
        with open(os.path.join(d, "sched_debugfs.txt")) as f:
            found = LIFTED.search(f.read())
    except OSError:
        return float("nan")
    return int(found.group(1)) if found else float("nan")


def point(d):
    """{iops, ios, cpu_us, switches, lifted} of a point folder, or None if
    it did not run.  switches, context switches per request, is NaN for
    folders from before ctxt was recorded; lifted, see lifted()."""
    try:
        with open(os.path.join(d, "fio.rc")) as f:
            if f.read().strip() != "0":
                return None
        job = analyze.read_json(os.path.join(d, "fio.json"))["jobs"][0]
        before, after = (proc_stat(os.path.join(d, "stat-%s.txt" % s))
                         for s in ("before", "after"))
        busy = busy_ticks(after) - busy_ticks(before)
    except (OSError, ValueError, KeyError, IndexError):
        return None
    ios = job["read"]["total_ios"] or float("nan")
    switches = after["ctxt"][0] - before["ctxt"][0] if "ctxt" in before else float("nan")
    return {"iops": job["read"]["iops"], "ios": job["read"]["total_ios"],
            "cpu_us": busy * 1e6 / USER_HZ / ios, "switches": switches / ios,
            "lifted": lifted(d)}


def table(top):
    """One row per point run: clock, hwq, jobs, qd, round, scheduler, iops,
    cpu_us, switches."""
    rows = []
    for boot in sorted(os.listdir(top)):
        plan = os.path.join(top, boot, "overhead", "plan")
        found = BOOT.match(boot)
        if not found or not os.path.exists(plan):
            continue
        clock, hwq = found.group(1) or "wall", int(found.group(2))
        with open(plan) as f:
            for line in f:
                name, sched, jobs, qd, _ = line.split()
                found = point(os.path.join(top, boot, "overhead", name))
                if found:
                    rnd = int(name.split("-")[2][1:])
                    rows.append(dict(found, clock=clock, hwq=hwq, jobs=int(jobs),
                                     qd=int(qd), round=rnd, scheduler=sched))
    return pd.DataFrame(rows)


def ratios(runs, ref="none"):
    """Each run's iops and cpu_us over ref's in the same boot, point and
    round (columns iops_none and cpu_us_none hold ref's)."""
    key = ["clock", "hwq", "jobs", "qd", "round"]
    base = runs[runs["scheduler"] == ref].set_index(key)[["iops", "cpu_us"]]
    out = runs.join(base, on=key, rsuffix="_none")
    out["iops_ratio"] = out["iops"] / out["iops_none"]
    out["cpu_ratio"] = out["cpu_us"] / out["cpu_us_none"]
    return out


def summary(runs, ref="none"):
    """Mean and 95% CI of the ratios to ref per clock, hwq, jobs, qd and
    scheduler, with the mean context switches per request."""
    rows = []
    key = ["clock", "hwq", "jobs", "qd", "scheduler"]
    for (clock, hwq, jobs, qd, sched), g in ratios(runs, ref).groupby(key):
        iops, iops_ci, n = mean_ci(g["iops_ratio"])
        cpu, cpu_ci, _ = mean_ci(g["cpu_ratio"])
        rows.append({"clock": clock, "hwq": hwq, "jobs": jobs, "qd": qd, "scheduler": sched,
                     "n": n, "switches": g["switches"].mean(), "lifted": g["lifted"].mean(),
                     "iops_ratio": iops, "iops_ci": iops_ci, "cpu_ratio": cpu, "cpu_ci": cpu_ci,
                     "iops_none": g["iops_none"].mean(), "cpu_us_none": g["cpu_us_none"].mean()})
    return pd.DataFrame(rows)


def cell(mean, half):
    return "%.2f" % mean + ("" if half != half else " ± %.2f" % half)


def ratio_table(g, scheds):
    """Markdown rows: none's IOPS and CPU, then each scheduler's ratios."""
    lines = ["| jobs x QD | none IOPS | none CPU us/req | " +
             " | ".join("%s IOPS | %s CPU" % (x, x) for x in scheds[1:]) + " |",
             "|---|---:|---:|" + "---:|---:|" * (len(scheds) - 1)]
    for (jobs, qd), p in g.groupby(["jobs", "qd"]):
        by = p.set_index("scheduler")
        first = by.iloc[0]
        row = "| %d x %d | %.0f | %.1f |" % (jobs, qd, first["iops_none"], first["cpu_us_none"])
        for x in scheds[1:]:
            if x in by.index:
                r = by.loc[x]
                row += " %s | %s |" % (cell(r["iops_ratio"], r["iops_ci"]),
                                       cell(r["cpu_ratio"], r["cpu_ci"]))
            else:
                row += " - | - |"
        lines.append(row)
    return lines


def switch_table(g, scheds):
    """Markdown rows: context switches per request, every scheduler."""
    lines = ["| jobs x QD | " + " | ".join(scheds) + " |",
             "|---|" + "---:|" * len(scheds)]
    for (jobs, qd), p in g.groupby(["jobs", "qd"]):
        by = p.set_index("scheduler")["switches"]
        # "-": not run, or run before ctxt was recorded.
        lines.append("| %d x %d | " % (jobs, qd) + " | ".join(
            "%.2f" % by[x] if x in by.index and by[x] == by[x] else "-" for x in scheds) + " |")
    return lines


def lifted_lines(g):
    """A sentence on the fiops points whose depth limit was lifted at
    their end, or nothing if no point recorded it."""
    f = g[(g["scheduler"] == "fiops") & g["lifted"].notna()]
    if f.empty:
        return []
    points = ["%d x %d: %.0f%%" % (jobs, qd, 100 * p["lifted"].iloc[0])
              for (jobs, qd), p in f.groupby(["jobs", "qd"])]
    return ["FIOPS's depth limit lifted at the end of the point (debugfs depth, "
            "share of rounds): " + ", ".join(points) + ".", ""]


def fiops_table(runs, g, scheds):
    """Markdown rows: fiops's IOPS and CPU per request over each other
    scheduler's, round by round, at the points of g (one clock and hwq)."""
    others = [x for x in scheds if x not in ("none", "fiops")]
    clock, hwq = g["clock"].iloc[0], g["hwq"].iloc[0]
    mine = runs[(runs["clock"] == clock) & (runs["hwq"] == hwq)]
    by = {x: summary(mine, ref=x).set_index(["jobs", "qd", "scheduler"]) for x in others}
    lines = ["| jobs x QD | " + " | ".join("over %s IOPS | CPU" % x for x in others) + " |",
             "|---|" + "---:|---:|" * len(others)]
    for jobs, qd in g[["jobs", "qd"]].drop_duplicates().itertuples(index=False):
        row = "| %d x %d |" % (jobs, qd)
        for x in others:
            if (jobs, qd, "fiops") in by[x].index:
                r = by[x].loc[(jobs, qd, "fiops")]
                row += " %s | %s |" % (cell(r["iops_ratio"], r["iops_ci"]),
                                       cell(r["cpu_ratio"], r["cpu_ci"]))
            else:
                row += " - | - |"
        lines.append(row)
    return lines


def report(top):
    """overhead.md's text: per clock and hwq, the ratios to none (none =
    1.00) and the context switches per request."""
    runs = table(top)
    if runs.empty:
        return "No point ran; see the console logs under %s.\n" % top
    runs.to_csv(os.path.join(top, "points.csv"), index=False)
    s = summary(runs)
    s.to_csv(os.path.join(top, "ratios.csv"), index=False)
    lines = ["IOPS and guest CPU time per request over none's in the same boot, point and "
             "round (mean ± 95% CI over rounds; QEMU TCG, null_blk irqmode=0), and context "
             "switches per request (mean).", ""]
    scheds = [x for x in SCHEDULERS if x in set(s["scheduler"])]
    for (clock, hwq), g in s.groupby(["clock", "hwq"], sort=False):
        lines += ["## %s clock, nr_hw_queues %d" % (clock, hwq), "",
                  "%s; folder %s/." % (MEASURES[clock], boot_name(clock, hwq)), ""]
        lines += ratio_table(g, scheds) + ["", "Context switches per request:", ""]
        lines += switch_table(g, scheds) + [""] + lifted_lines(g)
        if "fiops" in scheds and len(set(scheds) - {"none", "fiops"}):
            lines += ["fiops over the others, round by round:", ""]
            lines += fiops_table(runs, g, scheds) + [""]
    return "\n".join(lines) + "\n"
