"""FIOPS's dispatch messages in the blktrace: what it charged, and checks.

The FIOPS kernel logs one blktrace message (blk_add_trace_msg) per request
it dispatches from its service tree:

    fiops dispatch pid=215 be/4 cost=1024 vios=52224 min=51200 q=7 123456+8 cg=1

pid is the FIOPS task (the process that created the task's io_cq, i.e.
the one that issued the I/O), be/4 its class and the request's level, cost
the vios charged for this request, vios the task's vios after the charge,
min the minimum of that class's service tree after the charge (min_vios
here), q the task's requests still queued (queued), and 123456+8 the
dispatched request's sector and size in sectors (sector, nr_sectors), and
cg the id of the task's cgroup (kernels before cgroup support omit it).  The
kernel keeps the message short: blktrace cuts messages at 128 bytes.  Passthrough, at-head and
uncharged requests log nothing, or a message with cost=0; both are counted.

Two checks follow from the messages alone:

* every message has the D (issue) event of the same sector and size after
  it, and D events of data requests without a message are counted;
* per task, in time order, vios after = previous vios after + cost, unless
  the previous dispatch left the task with nothing queued: it then left
  the tree and re-entered it at the tree's min_vios, a jump forward, never
  backwards.  vios are u64 in the kernel: the arithmetic here wraps the
  same way and reads differences as signed.
"""

import numpy as np
import pandas as pd

# Fields in the order the kernel prints them, and the message's layout.
FIELDS = ["pid", "class", "level", "cost", "vios", "min_vios", "queued", "sector", "nr_sectors"]
DISPATCH = (r"^fiops\s+dispatch\s+pid=(?P<pid>\d+)\s+(?P<class>rt|be|idle)/(?P<level>[0-7])"
            r"\s+cost=(?P<cost>\d+)\s+vios=(?P<vios>\d+)\s+min=(?P<min_vios>\d+)"
            r"\s+q=(?P<queued>\d+)\s+(?P<sector>\d+)\+(?P<nr_sectors>\d+)(?:\s+cg=\d+)?\s*$")
COLUMNS = ["time"] + FIELDS
U64 = ("cost", "vios", "min_vios", "sector")
EXAMPLES = 5      # violations kept in summary.json to look at


def extract(messages, layout, head, optional=()):
    """The messages that match the regex layout, as a DataFrame of its named
    groups (text; NaN for an optional group that did not take part) and
    their time, in time order; and how many messages start with the regex
    head but do not match.  Every FIOPS message type is read here, so that
    each counts its malformed lines the same way."""
    text = messages["text"].astype(str)
    fields = text.str.extract(layout)
    ok = fields.drop(columns=list(optional)).notna().all(axis=1)
    malformed = int((text.str.match(head) & ~ok).sum())
    rows = fields[ok].assign(time=messages.loc[ok, "time"].astype(float))
    return rows.sort_values("time", kind="stable").reset_index(drop=True), malformed


def parse(messages):
    """trace.parse_messages() rows -> (dispatches DataFrame in COLUMNS, number
    of "fiops dispatch" messages that did not parse)."""
    rows, malformed = extract(messages, DISPATCH, r"fiops\s+dispatch\b")
    rows = rows[COLUMNS]
    for name in FIELDS:
        if name != "class":
            rows[name] = rows[name].astype(np.uint64 if name in U64 else np.int64)
    return rows, malformed


def match_issues(dispatches, events):
    """(matched, issues_without_message): per message whether a D event of
    the same sector and size follows it, paired one to one and oldest first,
    and how many D events of data requests no message paired with (a
    requeued request is dispatched again without the scheduler)."""
    issues = events[(events["action"] == "D") & (events["sectors"] > 0)]
    both = pd.concat([
        pd.DataFrame({"sector": dispatches["sector"].astype(np.uint64),
                      "sectors": dispatches["nr_sectors"], "time": dispatches["time"],
                      "is_issue": False, "row": dispatches.index}),
        pd.DataFrame({"sector": issues["sector"].astype(np.uint64),
                      "sectors": issues["sectors"], "time": issues["time"],
                      "is_issue": True, "row": -1})])
    # Messages sort before a D of the same time: the kernel logs first.
    both = both.sort_values(["sector", "sectors", "time", "is_issue"], kind="stable")
    matched = np.zeros(len(dispatches), dtype=bool)
    orphans, key, pending = 0, None, []
    for sector, sectors, is_issue, row in zip(both["sector"], both["sectors"],
                                              both["is_issue"], both["row"]):
        if (sector, sectors) != key:
            key, pending = (sector, sectors), []
        if not is_issue:
            pending.append(row)
        elif pending:
            matched[pending.pop(0)] = True
        else:
            orphans += 1
    return matched, orphans


def charge_check(dispatches):
    """(violations DataFrame, re-entries) of the per-task vios chain."""
    d = dispatches.sort_values(["pid", "time"], kind="stable")
    vios = d["vios"].to_numpy(np.uint64)
    cost = d["cost"].to_numpy(np.uint64)
    queued = d["queued"].to_numpy()
    same = d["pid"].to_numpy()[1:] == d["pid"].to_numpy()[:-1]
    expected = vios[:-1] + cost[1:]
    gap = (vios[1:] - expected).view(np.int64)
    left = queued[:-1] == 0
    reentry = same & left & (gap > 0)
    bad = same & (gap != 0) & ~reentry
    after = d.iloc[1:][bad]
    violations = pd.DataFrame({
        "time": after["time"].round(9), "pid": after["pid"],
        "previous_vios": vios[:-1][bad], "previous_queued": queued[:-1][bad],
        "cost": after["cost"], "vios": after["vios"], "gap": gap[bad]})
    return violations, int(reentry.sum())


def summarize(dispatches, malformed, events):
    """summary.json's fiops_trace: counts and both checks; None without messages."""
    if dispatches.empty and not malformed:
        return None
    matched, orphans = match_issues(dispatches, events)
    violations, reentries = charge_check(dispatches)
    # blktrace stops while writeback may still be dispatching: a message
    # logged after the trace's last issue (D) event lost its D to the end
    # of the trace, not to the scheduler.
    issues = events.loc[events["action"] == "D", "time"]
    cut = ~matched & (dispatches["time"] > (issues.max() if len(issues) else -1.0)).to_numpy()
    unmatched = int(len(dispatches) - matched.sum() - cut.sum())
    return {
        "messages": len(dispatches),
        "uncharged": int((dispatches["cost"] == 0).sum()),
        "malformed": malformed,
        "tasks": int(dispatches["pid"].nunique()),
        "matched_issues": int(matched.sum()),
        "unmatched_messages": unmatched,
        "cut_at_trace_end": int(cut.sum()),
        "issues_without_message": orphans,
        "reentries": reentries,
        "charge_violations": len(violations),
        "violation_examples": violations.head(EXAMPLES).to_dict("records"),
        "charges_consistent": not len(violations) and not unmatched and not malformed,
    }


def task_columns(dispatches, table, other):
    """(fiops_dispatches, fiops_cost) per row of the task table: the
    messages of the task's pid inside its window; pids no job has are the
    other row.  NaN for every row when there are no messages."""
    if dispatches.empty:
        return [np.nan] * len(table), [np.nan] * len(table)
    jobs = table[table["task"] != other]
    owner = dispatches["pid"].map(dict(zip(jobs["pid"].dropna().astype(int), jobs["task"])))
    owner = owner.fillna(other)
    counts, costs = [], []
    for row in table.itertuples():
        mine = dispatches[(owner == row.task) & (dispatches["time"] >= row.window_start)
                          & (dispatches["time"] < row.window_start + row.window_s)]
        counts.append(len(mine))
        costs.append(int(mine["cost"].sum()))
    return counts, costs


def labels(pids, tasks, events):
    """A legend label per pid: the fio job it is, else the command name the
    trace shows for it, with the pid."""
    job = dict(zip(tasks["pid"].dropna().astype(int), tasks["task"]))
    queued = events[events["action"] == "Q"]
    comm = queued.groupby("pid")["comm"].agg(lambda c: c.value_counts().index[0])
    return {pid: "%s (%d)" % (job.get(pid) or comm.get(pid) or "pid", pid) for pid in pids}


def vios_table(dispatches, tasks, events):
    """The vios plot's data: one row per message, with a series number and
    label per pid (jobs first, in the task table's order), and lead, the
    task's vios over its class's min_vios (signed, as the kernel reads it)."""
    order = [p for p in tasks["pid"].dropna().astype(int) if p in set(dispatches["pid"])]
    order += sorted(set(dispatches["pid"]) - set(order))
    series = {pid: i for i, pid in enumerate(order)}
    names = labels(order, tasks, events)
    lead = (dispatches["vios"].to_numpy(np.uint64)
            - dispatches["min_vios"].to_numpy(np.uint64)).view(np.int64)
    return pd.DataFrame({
        "time": dispatches["time"], "series": dispatches["pid"].map(series),
        "label": dispatches["pid"].map(names), "pid": dispatches["pid"],
        "class": dispatches["class"], "level": dispatches["level"],
        "cost": dispatches["cost"], "vios": dispatches["vios"],
        "min_vios": dispatches["min_vios"], "lead": lead, "queued": dispatches["queued"]})
