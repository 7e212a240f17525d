"""make overhead's numbers: IOPS and guest CPU per request of each point,
as ratios to none's at the same point, round and boot.

A boot folder (hwq<N>/) has overhead/plan ("name sched jobs qd runtime")
and per point overhead/<name>/ with fio.json, fio.rc and /proc/stat's
cpu line before and after (stat-before.txt, stat-after.txt).
"""

import os

import pandas as pd

from analysis import analyze
from analysis.report import mean_ci

USER_HZ = 100    # /proc/stat's tick, the same on every Linux architecture


def busy_ticks(path):
    """Ticks the CPUs spent not idle, from a /proc/stat cpu line."""
    with open(path) as f:
        fields = [int(x) for x in f.read().split()[1:]]
    idle, iowait = fields[3], fields[4]
    return sum(fields[:8]) - idle - iowait


def point(d):
    """{iops, ios, cpu_us} of a point folder, or None if it did not run."""
    try:
        with open(os.path.join(d, "fio.rc")) as f:
            if f.read().strip() != "0":
                return None
        job = analyze.read_json(os.path.join(d, "fio.json"))["jobs"][0]
        busy = busy_ticks(os.path.join(d, "stat-after.txt")) - \
            busy_ticks(os.path.join(d, "stat-before.txt"))
    except (OSError, ValueError, KeyError, IndexError):
        return None
    ios = job["read"]["total_ios"]
    return {"iops": job["read"]["iops"], "ios": ios,
            "cpu_us": busy * 1e6 / USER_HZ / ios if ios else float("nan")}


def table(top):
    """One row per point run: hwq, jobs, qd, round, scheduler, iops, cpu_us."""
    rows = []
    for boot in sorted(os.listdir(top)):
        plan = os.path.join(top, boot, "overhead", "plan")
        if not boot.startswith("hwq") or not os.path.exists(plan):
            continue
        with open(plan) as f:
            for line in f:
                name, sched, jobs, qd, _ = line.split()
                found = point(os.path.join(top, boot, "overhead", name))
                if found:
                    rnd = int(name.split("-")[2][1:])
                    rows.append(dict(found, hwq=int(boot[3:]), jobs=int(jobs), qd=int(qd),
                                     round=rnd, scheduler=sched))
    return pd.DataFrame(rows)


def ratios(runs):
    """Each run's iops and cpu_us over none's in the same boot, point and round."""
    key = ["hwq", "jobs", "qd", "round"]
    none = runs[runs["scheduler"] == "none"].set_index(key)[["iops", "cpu_us"]]
    out = runs.join(none, on=key, rsuffix="_none")
    out["iops_ratio"] = out["iops"] / out["iops_none"]
    out["cpu_ratio"] = out["cpu_us"] / out["cpu_us_none"]
    return out


def summary(runs):
    """Mean and 95% CI of the ratios per hwq, jobs, qd and scheduler."""
    rows = []
    for (hwq, jobs, qd, sched), g in ratios(runs).groupby(["hwq", "jobs", "qd", "scheduler"]):
        iops, iops_ci, n = mean_ci(g["iops_ratio"])
        cpu, cpu_ci, _ = mean_ci(g["cpu_ratio"])
        rows.append({"hwq": hwq, "jobs": jobs, "qd": qd, "scheduler": sched, "n": n,
                     "iops_ratio": iops, "iops_ci": iops_ci, "cpu_ratio": cpu, "cpu_ci": cpu_ci,
                     "iops_none": g["iops_none"].mean(), "cpu_us_none": g["cpu_us_none"].mean()})
    return pd.DataFrame(rows)


def cell(mean, half):
    return "%.2f" % mean + ("" if half != half else " ± %.2f" % half)


def report(top):
    """overhead.md's text: one table per hwq, none = 1.00."""
    runs = table(top)
    if runs.empty:
        return "No point ran; see the console logs under %s.\n" % top
    runs.to_csv(os.path.join(top, "points.csv"), index=False)
    s = summary(runs)
    s.to_csv(os.path.join(top, "ratios.csv"), index=False)
    lines = ["IOPS and guest CPU time per request over none's in the same boot, point and "
             "round (mean ± 95% CI over rounds; TCG, 2 vCPUs, null_blk irqmode=0).", ""]
    scheds = [x for x in ("none", "mq-deadline", "kyber", "bfq", "fiops")
              if x in set(s["scheduler"])]
    for hwq, g in s.groupby("hwq"):
        lines += ["## nr_hw_queues %d" % hwq, "",
                  "| jobs x QD | none IOPS | none CPU us/req | " +
                  " | ".join("%s IOPS | %s CPU" % (x, x) for x in scheds[1:]) + " |",
                  "|---|---:|---:|" + "---:|---:|" * (len(scheds) - 1)]
        for (jobs, qd), p in g.groupby(["jobs", "qd"]):
            by = p.set_index("scheduler")
            first = by.iloc[0]
            row = "| %d x %d | %.0f | %.1f |" % (jobs, qd, first["iops_none"],
                                                 first["cpu_us_none"])
            for x in scheds[1:]:
                if x in by.index:
                    r = by.loc[x]
                    row += " %s | %s |" % (cell(r["iops_ratio"], r["iops_ci"]),
                                           cell(r["cpu_ratio"], r["cpu_ci"]))
                else:
                    row += " - | - |"
            lines.append(row)
        lines.append("")
    return "\n".join(lines) + "\n"
