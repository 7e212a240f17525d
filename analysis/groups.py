"""Group shares: the IOPS of the cgroups a workload puts its jobs in.

A workload names its cgroups with "# group: PATH WEIGHT" lines, which the
guest makes, and puts jobs in them with fio's cgroup= option.  Among
siblings, a group's expected share of its parent's IOPS is its weight over
the sum of theirs; its expected share of the device is the product of
those fractions down its path.  Groups without jobs below them take no
share.  The tasks inside a group should get equal IOPS: spread is the
largest task's IOPS over the smallest's.
"""

import re

from analysis import metrics

GROUP = re.compile(r"^[ \t]*#[ \t]*group:[ \t]*(\S+)[ \t]+(\d+)[ \t]*$", re.M)


def weights(text):
    """{path: weight} of the workload's group lines."""
    return {path: int(weight) for path, weight in GROUP.findall(text)}


def _busy(path, used):
    return any(u == path or u.startswith(path + "/") for u in used)


def expected_shares(group_weights, used):
    """{path: expected share of the jobs' IOPS} for each group in used."""
    busy = [p for p in group_weights if _busy(p, used)]
    shares = {}
    for path in busy:
        share, parts = 1.0, path.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            parent = prefix.rpartition("/")[0]
            siblings = [p for p in busy if p.rpartition("/")[0] == parent]
            share *= group_weights[prefix] / sum(group_weights[s] for s in siblings)
        shares[path] = share
    return {p: s for p, s in shares.items() if p in used}


def table(tasks, text):
    """One row per group holding jobs: tasks, iops, share, expected and
    spread; [] when the workload has no groups.  tasks has the task table's
    name, iops and cgroup columns."""
    group_weights = weights(text)
    placed = tasks[tasks["cgroup"].notna()]
    if not group_weights or placed.empty:
        return []
    expected = expected_shares(group_weights, set(placed["cgroup"]))
    total = placed["iops"].sum()
    rows = []
    for path, members in placed.groupby("cgroup", sort=False):
        iops = members["iops"]
        rows.append({"group": path, "weight": group_weights.get(path),
                     "tasks": len(members), "iops": round(float(iops.sum()), 2),
                     "share": round(float(iops.sum() / total), 4) if total else None,
                     "expected": round(expected.get(path, 0.0), 4),
                     "spread": round(float(iops.max() / iops.min()), 3)
                     if iops.min() > 0 else None})
    return rows


def jain(rows):
    """Jain's index of the groups' shares over their expected shares."""
    ratios = [r["share"] / r["expected"] for r in rows if r["share"] is not None and r["expected"]]
    return metrics.jain(ratios) if ratios else None
