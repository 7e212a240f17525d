"""Per-task and per-run fairness numbers from attributed bios.

The policy a workload tests is its "# expect: name=weight ..." line: a
job's expected share of IOPS is its weight over the sum of the weights of
all jobs.  A name's weight applies to every fio job of that name, so a
section with numjobs=N gives N jobs of that weight.

A scheduler may document another policy for a workload (mq-deadline tells
the I/O priority classes apart but not the levels within one), written
"# expect[sched1,sched2]: name=weight ...", or none at all, written
"# expect[sched]: none".  Every run is judged against the common line
(expected, deviation, jain_index) and against its scheduler's own line
(the same names with "_policy"), which is the common one where the
jobfile says nothing else.

A scheduler's line may hold only under some of its tunables, named in
the brackets after the schedulers as they read in queue/iosched/:
"# expect[fiops write_scale=3]: r1=3 r2=3 w1=1 w2=1" judges the fiops
runs made with TUNE=write_scale=3.  Of a scheduler's lines whose
tunables all hold, the one that names most is its own line; where none
holds, the common line is.

A line may name what it shares after the brackets: "# expect[fiops]
requests: r1=5 r2=5 other=2" (or "# expect requests: ...").  The default,
"iops", is shares of the fio jobs' IOPS among all the jobs.  "requests" is
shares of device requests (the task table's requests column) among
exactly the rows the line names, fio jobs by name and "other" for the
I/O no job queued (a kernel flusher's writeback): a scheduler that
promises shares of its own requests, writeback included, is judged there.
judged_share (judged_share_policy) is the share each line judges.

Everything is measured over one window, the part of the run fio measures:
it opens ramp seconds after the first bio any fio job queued (fio's
ramp_time starts with its jobs) and lasts fio's runtime.  A bio belongs to
the window when it was queued inside it, as fio counts an I/O when it is
issued after the ramp.
"""

import math
import re

import numpy as np
import pandas as pd

from analysis import devcost

OTHER = "other"
# "# expect: ...", "# expect[s1,s2]: ..." or either with a measure before
# the colon, "# expect[s1] requests: ..."; groups: the bracket's inside,
# what comes before the colon (the measure), the weights.
EXPECT = re.compile(r"^[ \t]*#[ \t]*(expect(?:\[([^\]\n]*)\])?((?:[ \t][^:\n]*)?):(.*))$", re.M)
NO_POLICY = "none"
IOPS, REQUESTS = "iops", "requests"
MEASURES = (IOPS, REQUESTS)
# Below this window_overlap the jobs' shares are not comparable.
COMPARABLE_OVERLAP = 0.9
SECTOR = 512


def parse_weights(body):
    """{name: weight} from the name=weight items of an expect line."""
    weights = {}
    for item in body.split():
        name, sep, value = item.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = -1.0
        if not sep or not name or not weight >= 0 or math.isinf(weight):
            raise ValueError("expect: %r is not name=weight (weight >= 0)" % item)
        if name in weights:
            raise ValueError("expect: %s is named twice" % name)
        weights[name] = weight
    return weights


def bracket(inside, line):
    """(schedulers, tunables) of what an expect line's brackets hold: the
    comma-separated scheduler names and the name=value tunables."""
    words = inside.split()
    tunables = {}
    for word in (w for w in words if "=" in w):
        name, _, value = word.partition("=")
        if not name or not value or name in tunables:
            raise ValueError("%s: %r is no tunable=value, or names one twice" % (line, word))
        tunables[name] = value
    names = [n.strip() for n in " ".join(w for w in words if "=" not in w).split(",")]
    if not all(names):
        raise ValueError("%s: an empty scheduler name in the brackets" % line)
    return names, tunables


def expect_lines(text):
    """[(schedulers, measure, body, line)] of a jobfile's expect lines;
    schedulers is None for the common line, else the names in the brackets
    (the tunables there are line_tunables()'s);
    measure is one of MEASURES, IOPS where the line names none.  A comment
    that reads "# expect" and words before a colon, without brackets, is
    prose, not an expect line."""
    lines = []
    for m in EXPECT.finditer(text):
        line, names, measure, body = m.group(1).strip(), m.group(2), m.group(3), m.group(4)
        words = measure.split()
        if names is None and len(words) > 1:
            continue
        if names is not None:
            names = bracket(names, line)[0]
        if words and (len(words) > 1 or words[0] not in MEASURES):
            raise ValueError("%s: %r is no measure (%s)" % (line, measure.strip(),
                                                             " or ".join(MEASURES)))
        lines.append((names, words[0] if words else IOPS, body, line))
    return lines


def common_lines(text):
    """The common expect line's (measure, body, line), None without one."""
    common = [(measure, body, line) for names, measure, body, line in expect_lines(text)
              if names is None]
    if len(common) > 1:
        raise ValueError("expect: the jobfile has %d common expect lines" % len(common))
    return common[0] if common else None


def parse_expect(text):
    """{job name: weight} from a jobfile's "# expect:" line; {} without one."""
    common = common_lines(text)
    return parse_weights(common[1]) if common else {}


def expect_measure(text):
    """The measure of the common expect line (IOPS or REQUESTS), None without one."""
    common = common_lines(text)
    return common[0] if common else None


def measure_of(line):
    """The measure of an expect line as policy() gives it, None for no line."""
    return None if line is None else expect_lines("# " + line)[0][1]


def line_tunables(line):
    """{tunable: value} an expect line holds under; {} for most."""
    inside = line[line.index("[") + 1:line.index("]")] if line.startswith("expect[") else ""
    return bracket(inside, line)[1] if inside else {}


def parse_policies(text):
    """{scheduler: [(tunables, weights, line)]} of the "# expect[...]:"
    lines; weights is None where the line says the scheduler documents no
    policy, tunables what the line holds under ({} for always)."""
    policies = {}
    for names, _, body, line in expect_lines(text):
        if names is None:
            continue
        weights = None if body.strip() == NO_POLICY else parse_weights(body)
        tunables = line_tunables(line)
        for name in names:
            if any(t == tunables for t, _, _ in policies.get(name, [])):
                raise ValueError("expect[%s]: %s has two expect lines" % (name, name))
            policies.setdefault(name, []).append((tunables, weights, line))
    return policies


def policy(text, scheduler, tunables=None):
    """(weights, source) of what scheduler documents for this workload
    with tunables ({name: value} as queue/iosched/ reads): its own
    expect[...] line that holds and names most tunables, else the common
    line.  weights is None when it documents no policy; source is the line
    (None without any)."""
    tunables = tunables or {}
    holding = [(len(t), weights, line) for t, weights, line in
               parse_policies(text).get(scheduler, [])
               if all(str(tunables.get(k)) == v for k, v in t.items())]
    if holding:
        _, weights, line = max(holding, key=lambda h: h[0])
        return weights, line
    common = common_lines(text)
    return parse_expect(text), (common[2] if common else None)


def expected_shares(names, weights):
    """Expected share per job (in names' order); NaN for a job with no weight."""
    w = pd.Series([weights.get(n, np.nan) for n in names], dtype=float)
    total = w.sum()
    return (w / total).tolist() if total > 0 else [np.nan] * len(names)


def owners(bios, tasks):
    """The task of each bio, from the pid that queued it.

    Bios of pids no fio job has are OTHER (kernel flushers doing a buffered
    writer's writeback, for one).  So are bios whose command name is not the
    one the job's pid mostly shows: the pid was reused after the job exited.
    """
    pid_task = {p: t for p, t in zip(tasks["pid"], tasks["task"]) if pd.notna(p)}
    label = bios["pid"].map(pid_task)
    mine = bios[label.notna()]
    usual = mine.groupby("pid")["comm"].agg(lambda c: c.value_counts().index[0])
    label[label.notna() & (bios["comm"] != bios["pid"].map(usual))] = np.nan
    return label.fillna(OTHER)


def window(bios, job_pids, ramp, runtime):
    """(start, end) of the measured window in trace seconds."""
    queued = bios.loc[bios["pid"].isin(job_pids), "q_time"]
    if queued.empty:
        queued = bios["q_time"]
    start = (queued.min() if len(queued) else 0.0) + ramp
    end = start + runtime if runtime else bios["q_time"].max()
    return float(start), float(end)


def task_span(own, runtime_s, span):
    """The window fio measured for one job: its runtime, ending at its last
    completion.  fio runs each job's ramp and runtime on its own clock (a
    job's ramp can end seconds after another's), so one window for all
    would count a different set of I/Os than fio does.  Other rows, and
    jobs without a runtime or a completion, use the run's window."""
    done = own["c_time"].dropna()
    if pd.isna(runtime_s) or runtime_s is None or done.empty:
        return span
    end = float(done.max())
    return end - runtime_s, end


def aside(table):
    """The rows of jobs set aside from the fairness numbers (column aside:
    a light workload's task and its run alone, analysis/light.py, which
    are measured apart); all False in a table without the column."""
    if "aside" not in table:
        return pd.Series(False, index=table.index)
    return table["aside"].fillna(False).astype(bool)


def sharing(table):
    """The rows of the fio jobs that share the device: not OTHER, not aside."""
    return (table["task"] != OTHER) & ~aside(table)


def common_span(table, span):
    """The part of time every job was measured; the run's window if none."""
    jobs = table[sharing(table)]
    start = jobs["window_start"].max()
    end = (jobs["window_start"] + jobs["window_s"]).min()
    return (float(start), float(end)) if end > start else span


def window_overlap(table):
    """How much the jobs were measured over the same time: the length of
    the intersection of all jobs' windows over the shortest job window.
    1.0 when every job's window holds the shortest one, 0.0 when some two
    do not meet; None without a job, or with a job window of no length.
    Shares of IOPS compare jobs' rates over their own windows, so with
    little overlap they compare different times of the run.  Jobs set
    aside take no part."""
    jobs = table[sharing(table)]
    if jobs.empty or not (jobs["window_s"] > 0).all():
        return None
    start = jobs["window_start"].max()
    end = (jobs["window_start"] + jobs["window_s"]).min()
    return round(float(max(0.0, end - start) / jobs["window_s"].min()), 6)


def overlap_number(overlap):
    """A low overlap with two decimals, or as many more as it takes to show
    it below COMPARABLE_OVERLAP (0.897 is not shown as 0.90)."""
    for digits in range(2, 7):
        text = "%.*f" % (digits, overlap)
        if float(text) < COMPARABLE_OVERLAP:
            return text
    return repr(overlap)


def overlap_text(overlap):
    """What a window_overlap below COMPARABLE_OVERLAP means, in the report's words."""
    return ("shares measured over windows that overlap by %s: not comparable"
            % overlap_number(overlap))


def in_window(bios, span):
    return bios[(bios["q_time"] >= span[0]) & (bios["q_time"] < span[1])]


def deviation(share, expected):
    """Relative deviation from the expected share; absolute where 0 is expected."""
    if pd.isna(expected):
        return np.nan, ""
    if expected == 0:
        return share - expected, "absolute"
    return (share - expected) / expected, "relative"


def task_table(bios, tasks, span, cost_model=None, by_requests=None):
    """One row per task (tasks' order) and a last OTHER row.

    bios need a "task" column (owners()); tasks has task, name, pid, fio_ios,
    fio_iops, direct, expected and, where a scheduler documents its own
    policy, expected_policy.  share is among the fio jobs; device_share
    among everything the device completed, OTHER included.  requests counts
    the device commands whose first bio the task queued (attribute.py's
    "commands"): merged bios make one command of many.

    With a cost_model that charges by size (devcost.charges_by_size),
    device_cost_s is what those same commands cost the device, each
    devcost.request_cost of its size, and cost_share the task's device
    seconds per second of its window among the fio jobs' (the sums' ratio
    when the windows are equally long), as share is of IOPS; NaN otherwise.

    judged_share (judged_share_policy) is the share the common line (the
    scheduler's own) judges against expected (expected_policy), NaN for a
    row it does not judge: share, or for a line in by_requests ({"" or
    "_policy": its weights}, the REQUESTS lines) request_shares(), which
    sets that line's expected column too.

    A job set aside (tasks' aside column, aside()) has no share, device
    share or cost share and is in no other row's.
    """
    by_requests = by_requests or {}
    priced = devcost.charges_by_size(cost_model)
    rows = tasks.to_dict("records") + [{"task": OTHER, "name": OTHER, "pid": None}]
    for row in rows:
        own = bios[bios["task"] == row["task"]]
        start, end = task_span(own, row.get("runtime_s"), span)
        inside = in_window(own, (start, end))
        mine = inside[inside["complete"]]
        seconds = end - start
        row["window_start"], row["window_s"] = round(start, 6), round(seconds, 6)
        row["queued"] = len(inside)
        row["ios"] = len(mine)
        row["requests"] = int(inside["commands"].sum()) if "commands" in inside else np.nan
        row["device_cost_s"] = (sum(devcost.commands_cost(c, cost_model)
                                    for c in inside["command_sectors"]) if priced else np.nan)
        row["incomplete"] = row["queued"] - row["ios"]
        row["iops"] = len(mine) / seconds if seconds > 0 else np.nan
        row["bytes_per_s"] = mine["sectors"].sum() * SECTOR / seconds if seconds > 0 else np.nan
        row["p50_ms"], row["p99_ms"] = percentiles_ms(mine["latency"])
    table = pd.DataFrame(rows)
    jobs, counted = sharing(table), ~aside(table)
    table["device_share"] = (table["iops"] / table.loc[counted, "iops"].sum()).where(counted)
    table["share"] = np.where(jobs, table["iops"] / table.loc[jobs, "iops"].sum(), np.nan)
    cost_rate = table["device_cost_s"] / table["window_s"].where(table["window_s"] > 0)
    table["cost_share"] = np.where(jobs, cost_rate / cost_rate[jobs].sum(), np.nan)
    if "" in by_requests:
        table["weight"] = table["name"].map(by_requests[""])
    for suffix in ("", "_policy"):
        expected, judged = "expected" + suffix, "judged_share" + suffix
        if expected not in table:
            continue
        if suffix in by_requests:
            table[expected], table[judged] = request_shares(table, by_requests[suffix])
        else:
            table[judged] = table["share"].where(table[expected].notna())
        dev = [deviation(share, due) for share, due in zip(table[judged], table[expected])]
        table["deviation" + suffix] = [d[0] for d in dev]
        table["deviation%s_kind" % suffix] = [d[1] for d in dev]
    table["pid"] = table["pid"].astype("Int64")
    return table


def request_shares(table, weights):
    """(expected, share) of each row of a task table for a REQUESTS line:
    the rows the line names (a fio job by its name, as an IOPS line names
    it; OTHER as "other") share their device requests, the rest have NaN.

    Shares of a rate, not of counts: each row's requests per second of its
    own window (a job's fio window, OTHER's the run's), the per-window rate
    the table already uses for iops and cost_share; requests itself has no
    rate column, and counts over the common window would need the bios
    again.  Windows of equal length give the ratio of the counts, and a
    job fio measured over a shorter time is not short-changed for it."""
    named = table["name"].isin(list(weights))
    expected = pd.Series(expected_shares(table["name"], weights), index=table.index)
    rate = table["requests"] / table["window_s"].where(table["window_s"] > 0)
    return expected, rate.where(named) / rate[named].sum()


def unknown_names(weights, measure, names):
    """The names a line gives a weight that name no row it can judge: no
    fio job's name (names), nor OTHER on a REQUESTS line."""
    rows = set(names) | ({OTHER} if measure == REQUESTS else set())
    return set(weights or {}) - rows


def percentiles_ms(latency):
    if latency.empty:
        return np.nan, np.nan
    p50, p99 = np.percentile(latency.to_numpy(), [50, 99])
    return p50 * 1000, p99 * 1000


def timeseries(bios, span, order):
    """IOPS per task (in order) per whole second of the window, by
    completion time.  A partial last second is left out: its count over a
    fraction of a second would plot as a drop at the end of every run."""
    whole = int(math.floor(span[1] - span[0]))
    done = bios[bios["complete"] & (bios["c_time"] >= span[0])
                & (bios["c_time"] < span[0] + whole)]
    second = np.floor(done["c_time"] - span[0]).astype(int)
    counts = done.groupby([second.rename("second"), done["task"]]).size()
    seconds = range(whole)
    full = pd.MultiIndex.from_product([seconds, order], names=["second", "task"])
    return counts.reindex(full, fill_value=0).rename("iops").reset_index()


def jain(values):
    """Jain's fairness index (sum x)^2 / (n sum x^2); None when undefined."""
    x = np.asarray([v for v in values if pd.notna(v)], dtype=float)
    square = (x * x).sum()
    return float(x.sum() ** 2 / (len(x) * square)) if len(x) and square > 0 else None


def device_iops(events, span):
    """Requests the device completed per second in span: C events with data.

    The throttle counts device commands, and merged bios (writeback) make one
    command of many, so work conservation is measured here, not from bios.
    """
    c = events[(events["action"] == "C") & (events["sectors"] > 0)
               & (events["time"] >= span[0]) & (events["time"] < span[1])]
    seconds = span[1] - span[0]
    return len(c) / seconds if seconds > 0 else 0.0


def fairness(rows, suffix=""):
    """(Jain index, worst deviation) of the rows against expected<suffix>,
    over judged_share<suffix> (share in a table without it); only the rows
    expected a share take part (OTHER only where a REQUESTS line names it)."""
    weighted = rows[rows["expected" + suffix] > 0]
    if weighted.empty:
        return None, None
    row = weighted.loc[weighted["deviation" + suffix].abs().idxmax()]
    worst = {"task": row["task"], "value": round(float(row["deviation" + suffix]), 4)}
    judged = "judged_share" + suffix
    return jain_of(weighted, judged if judged in rows else "share", "expected" + suffix), worst


def jain_of(jobs, share, expected):
    """Jain's index over share / expected of the jobs expected a share,
    rounded; None when undefined (no such job, or no share measured)."""
    weighted = jobs[jobs[expected] > 0]
    index = jain(weighted[share] / weighted[expected])
    return None if index is None else round(index, 6)


def run_metrics(table, throttle_iops, request_iops=None):
    """Run-level numbers from task_table(): totals, Jain index, worst deviation,
    against the common policy and, with expected_policy, the scheduler's own.

    Work conservation is request_iops (device commands) over the throttle
    when given, else the bios' total.  jain_index_cost is the Jain index
    over cost_share / expected, None where the table has no cost shares.
    Jobs set aside (aside()) are in none of them.
    """
    jobs = table[sharing(table)]
    total = float(table.loc[~aside(table), "iops"].sum())
    busy = total if request_iops is None else request_iops
    fields = {
        "trace_total_iops": round(total, 1),
        "device_request_iops": round(busy, 1),
        "work_conservation": round(busy / throttle_iops, 6) if throttle_iops else None,
    }
    fields["jain_index"], fields["worst_deviation"] = fairness(table)
    if "expected_policy" in table:
        fields["jain_index_policy"], fields["worst_deviation_policy"] = fairness(table, "_policy")
    fields["jain_index_cost"] = (jain_of(jobs, "cost_share", "expected")
                                 if "cost_share" in jobs and "expected" in jobs else None)
    return fields


def cross_check(table, tolerance=0.01):
    """Compare each job's blktrace ios with fio's total_ios.

    A buffered job cannot be compared: fio counts its write() calls, the
    device sees the flushers' writeback (in OTHER).  fio_blktrace_agree is
    None when no job could be compared.
    """
    jobs = table[table["task"] != OTHER]
    direct = jobs["direct"].astype(bool)
    checked = jobs[direct]
    bad = []
    for row in checked.itertuples():
        diff = (row.ios - row.fio_ios) / row.fio_ios if row.fio_ios else float(row.ios > 0)
        # Each edge of the window can cut one I/O in two: one is no disagreement.
        if abs(row.ios - row.fio_ios) > max(tolerance * row.fio_ios, 1):
            bad.append({"task": row.task, "blktrace_ios": int(row.ios),
                        "fio_ios": int(row.fio_ios), "diff": round(diff, 4)})
    return {
        "fio_blktrace_agree": None if checked.empty else not bad,
        "fio_blktrace_disagreements": bad,
        "fio_blktrace_unchecked": sorted(jobs.loc[~direct, "task"]),
    }
