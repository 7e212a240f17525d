"""Fairness report over a compare folder: several run folders, repeated.

    /usr/bin/python3 -m analysis.report <compare folder> [--out reports/DATE]

Every run folder below the compare folder (a folder with meta.json and
summary.json) is one run; its id is its path inside the compare folder.
Writes into --out (default reports/<UTC date>/):

  runs.csv          one row per run and task, run-level numbers repeated
  task-means.csv    mean and 95% confidence interval per workload,
                    scheduler and task, over the valid repetitions
  run-means.csv     the same for the run-level numbers (Jain index, work
                    conservation)
  fairness-report.md, and plots/ with each PNG's data and gnuplot script.

Runs are grouped by their variant (bench's name for a scheduler with its
tunables) where summary.json has one, else by scheduler and tunables.
Runs not yet analysed by this version (no tasks.csv, or summary.json
lacks a field of ANALYSIS_FIELDS) are analysed in memory, not written.
"""

import argparse
import datetime
import os
import sys

import numpy as np
import pandas as pd
from scipy import stats

from analysis import analyze, ceiling, devcost, firstpage, light, metrics, plots
from analysis.markdown import image, md_table, slug


ORDER = firstpage.SCHEDULERS
GROUP = ["workload", "scheduler", "variant", "tune", "device_depth", "device", "device_cost"]
TASK_METRICS = ["iops", "share", "judged_share", "expected", "deviation", "judged_share_policy",
                "expected_policy", "deviation_policy", "device_cost_s", "cost_share", "p99_ms"]
RUN_METRICS = ["jain_index", "jain_index_policy", "jain_index_cost", "work_conservation",
               "group_jain", "ceiling_iops", "ceiling_iops_vs_none", "total_iops",
               "total_iops_vs_none"]
# summary.json fields a run's analysis must have for the report to use its
# files; a run analysed before one of them existed is analysed again.
ANALYSIS_FIELDS = ("policy_source", "policy_measure", "cost_model_active", "window_overlap")
# How the report names an expect line's measure (metrics.MEASURES).
MEASURE_NAMES = {metrics.IOPS: "IOPS", metrics.REQUESTS: "device requests"}

UNSCHEDULED = ("none does not schedule: requests reach the device in the order they are "
               "submitted, so what each task gets follows from how it submits, not from a policy.")


def t95(df):
    """Two-sided 95% Student t critical value for df degrees of freedom."""
    return float(stats.t.ppf(0.975, df))


def mean_ci(values):
    """(mean, 95% half-width, n) of the non-missing values; half-width NaN for n < 2."""
    x = pd.Series(values, dtype=float).dropna()
    n = len(x)
    if n == 0:
        return np.nan, np.nan, 0
    half = t95(n - 1) * x.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
    return float(x.mean()), float(half), n


def find_runs(folder):
    """(run folders, unfinished ones): a folder with meta.json is a run, unless
    its meta.json lists the runs of a boot that tried several schedulers.  A
    run is unfinished without a summary.json, or unless its meta.json says
    it finished ("ok"): a run that failed after writing summary.json (an
    interrupt, a full disk) may lack files, and one still "running" may
    have died before it could say so."""
    found, unfinished = [], []
    for root, dirs, files in os.walk(folder, followlinks=True):
        dirs.sort()
        if "meta.json" not in files:
            continue
        meta = analyze.read_json(os.path.join(root, "meta.json"), {})
        if "runs" in meta:
            continue
        if "summary.json" in files and meta.get("status") == "ok":
            found.append(root)
        else:
            unfinished.append((os.path.relpath(root, folder), meta.get("status"),
                               meta.get("reason", "no summary.json")))
    return found, unfinished


def run_data(run_dir):
    """(summary with the analysis fields, tasks table, time series, vios plot
    data) of a run; the vios data is its vios.dat's path, or the frame
    itself when the run is analysed here, or None without FIOPS messages."""
    summary = analyze.read_json(os.path.join(run_dir, "summary.json"), {})
    paths = [os.path.join(run_dir, n) for n in ("tasks.csv", "timeseries.csv", "vios.dat")]
    analysed = all(field in summary for field in ANALYSIS_FIELDS)
    if analysed and all(os.path.exists(p) for p in paths[:2]):
        vios = paths[2] if os.path.exists(paths[2]) else None
        return summary, pd.read_csv(paths[0]), pd.read_csv(paths[1]), vios
    fields, table, series = analyze.compute(run_dir)
    summary.update(fields)
    # tasks.csv's columns: the table's own (runtime_s, ...) would collide with runs.csv's.
    return summary, table.reindex(columns=analyze.TASK_COLUMNS), series, fields.vios


def run_columns(run_id, meta, summary):
    """The run-level columns of runs.csv: what ran, on what, and its numbers."""
    p = meta.get("params", {})
    kernel = meta.get("kernel", {})
    return {
        "run_id": run_id, "workload": p.get("WORKLOAD", summary.get("workload")),
        "scheduler": p.get("SCHED", summary.get("scheduler")),
        "variant": meta.get("variant") or summary.get("variant") or p.get("VARIANT") or "",
        "tune": ",".join("%s=%s" % tuple(kv) for kv in p.get("TUNE", [])),
        "device_depth": p.get("DEPTH"), "device_tags": meta.get("device_tags"),
        "device": device_name(p), "latency_us": p.get("LATENCY_US"),
        "device_cost": device_cost(meta.get("device_cost_model")
                                   or summary.get("device_cost_model")),
        "nr_requests": meta.get("nr_requests_set"), "throttle_iops": p.get("IOPS"),
        "runtime_s": p.get("RUNTIME"), "ramp_s": p.get("RAMP"), "vcpus": p.get("VCPUS"),
        "accel": meta.get("accel", p.get("ACCEL")), "qemu_version": meta.get("qemu_version"),
        "kernel_release": kernel.get("release"), "series_sha256": kernel.get("series_sha256"),
        "series": kernel.get("series"), "harness_revision": meta.get("harness_revision"),
        "valid": bool(meta.get("valid", False)),
        "jain_index": summary.get("jain_index"),
        "jain_index_policy": summary.get("jain_index_policy"),
        "cost_model_active": bool(summary.get("cost_model_active")),
        "jain_index_cost": summary.get("jain_index_cost"),
        "policy_source": summary.get("policy_source"),
        "policy_measure": summary.get("policy_measure"),
        "expect_measure": summary.get("expect_measure"),
        "policy_none": (summary.get("policy_source") is not None
                        and summary.get("expect_policy") is None),
        "work_conservation": summary.get("work_conservation"),
        "group_jain": summary.get("group_jain"),
        "window_overlap": summary.get("window_overlap"),
        "trace_total_iops": summary.get("trace_total_iops"),
        "fio_blktrace_agree": summary.get("fio_blktrace_agree"),
        "trace_complete": summary.get("trace_complete"),
        "other_comms": ";".join("%s:%d" % kv for kv in
                                summary.get("trace", {}).get("other_comms", {}).items()),
        **fiops_columns(summary.get("fiops_trace")),
        **light.columns(summary.get("light")),
        **ceiling.columns(run_id, meta, summary),
    }


def device_name(params):
    """What the measured device is (DEVICE) and, for the null device, its
    LATENCY_US: "nvme", "nvme-null 4000 us".  A run folder from before
    DEVICE had the file-backed nvme."""
    device = params.get("DEVICE") or "nvme"
    latency = params.get("LATENCY_US")
    return "%s %d us" % (device, latency) if latency else device


def device_cost(model):
    """How the run's device charges a request: "per request" (IOPS only,
    also for a run folder from before device_cost_model), else the size
    limits that are on, "iops_size=4096" or "bps=8192000"; with IOPS=off
    "unthrottled", or "iops=off,bps=8192000"."""
    off = ["iops=off"] if model and model.get("iops", 1) is None else []
    if not devcost.charges_by_size(model):
        return "unthrottled" if off else "per request"
    return ",".join(off + ["%s=%s" % (k, model[k]) for k in ("bps", "iops_size")
                           if model.get(k)])


def fiops_columns(fiops):
    """runs.csv's view of summary.json fiops_trace (empty without messages)."""
    fiops = fiops or {}
    return {"fiops_messages": fiops.get("messages"),
            "charges_consistent": fiops.get("charges_consistent"),
            "charge_violations": fiops.get("charge_violations"),
            "unmatched_messages": fiops.get("unmatched_messages"),
            "issues_without_message": fiops.get("issues_without_message")}


def combine(folder):
    """(runs DataFrame, {run_id: time series}, {run_id: vios data or None},
    {workload: description}, unfinished)."""
    frames, series, vios, described = [], {}, {}, {}
    found, unfinished = find_runs(folder)
    for run_dir in found:
        run_id = os.path.relpath(run_dir, folder)
        meta = analyze.read_json(os.path.join(run_dir, "meta.json"), {})
        summary, table, series[run_id], vios[run_id] = run_data(run_dir)
        run = run_columns(run_id, meta, summary)
        described.setdefault(run["workload"], meta.get("workload_description", ""))
        table = table.reset_index(drop=True)
        frames.append(pd.concat([pd.DataFrame([run] * len(table)), table], axis=1))
    if not frames:
        raise SystemExit("%s: no run folders (meta.json and summary.json) below it" % folder)
    runs = ceiling.add_ratios(pd.concat(frames, ignore_index=True))
    # Labelled per workload: a workload on a device of its own (deep-knee on
    # the null device) keeps plain labels, with the device in its titles.
    runs["config"] = pd.concat([config_labels(group) for _, group in
                                runs.groupby("workload", sort=False)])
    return runs, series, vios, described, unfinished


def config_labels(runs, depth=True):
    """The variant where it says more than the scheduler, else the scheduler
    and its tunables; plus the depth (unless depth is false), the device and
    how it charges where they tell runs apart."""
    plain = runs["scheduler"] + np.where(runs["tune"] != "", " " + runs["tune"], "")
    named = (runs["variant"] != "") & (runs["variant"] != runs["scheduler"])
    label = plain.where(~named, runs["variant"])
    if depth and runs["device_depth"].nunique() > 1:
        label = label + " depth " + runs["device_depth"].astype(str)
    for column in ("device", "device_cost"):
        if column in runs and runs[column].nunique() > 1:
            label = label + " (" + runs[column] + ")"
    return label


def config_order(frame, column="config"):
    """frame's configs (or another label column), in ORDER of their
    schedulers, then by name."""
    rank = {s: i for i, s in enumerate(ORDER)}
    pairs = frame[[column, "scheduler"]].drop_duplicates(column)
    return [c for _, c in sorted((rank.get(s, len(ORDER)), c) for c, s in pairs.itertuples(
        index=False))]


def aggregate(rows, keys, columns):
    """Mean and 95% CI of columns per keys, with n and the run ids averaged."""
    out = []
    for key, group in rows.groupby(keys, sort=False, dropna=False):
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        for column in columns:
            row[column], row[column + "_ci95"], _ = mean_ci(group[column])
        row["n"] = group["run_id"].nunique()
        row["run_ids"] = " ".join(sorted(group["run_id"].unique()))
        out.append(row)
    return pd.DataFrame(out)


def means(runs):
    """(task means, run means) over the valid runs."""
    valid = runs[runs["valid"]]
    if valid.empty:
        raise SystemExit("no valid runs to average; see the runs' meta.json invalid_reasons")
    keys = GROUP + ["config"]
    tasks = aggregate(valid, keys + ["task"], TASK_METRICS)
    kinds = valid.groupby(keys + ["task"], sort=False)[
        ["deviation_kind", "deviation_policy_kind"]].first()
    tasks = tasks.merge(kinds.reset_index(), on=keys + ["task"], how="left")
    run_level = aggregate(valid.drop_duplicates("run_id"), keys, RUN_METRICS)
    return tasks, run_level


def group_means(folder, runs):
    """Mean and 95% CI of each cgroup's share and task spread per workload,
    config and group, over the valid runs' summary.json groups; empty
    without groups."""
    rows = []
    for run in runs[runs["valid"]].drop_duplicates("run_id").itertuples():
        summary = analyze.read_json(os.path.join(folder, run.run_id, "summary.json"), {})
        rows += [dict(group, run_id=run.run_id, workload=run.workload, config=run.config)
                 for group in summary.get("groups") or []]
    if not rows:
        return pd.DataFrame(columns=["workload", "config", "group"])
    return aggregate(pd.DataFrame(rows), ["workload", "config", "group"],
                     ["share", "expected", "spread"])


# -- text ---------------------------------------------------------------------


def not_comparable(per_run):
    """The runs whose jobs' windows overlap too little for their shares to
    compare (summary.json window_overlap below metrics.COMPARABLE_OVERLAP)."""
    return per_run[per_run["window_overlap"] < metrics.COMPARABLE_OVERLAP]


def run_list(ids, per_run):
    """The run ids, each marked with its window overlap where that is too low."""
    low = not_comparable(per_run).set_index("run_id")["window_overlap"]
    return ", ".join("`%s`" % i + (" (windows overlap %s)" % metrics.overlap_number(low[i])
                                   if i in low else "") for i in ids)


def number(value, ci=np.nan, digits=1):
    if pd.isna(value):
        return "-"
    text = "%.*f" % (digits, value)
    return text if pd.isna(ci) else "%s ± %.*f" % (text, digits, ci)


def deviation_text(row, column="deviation"):
    if pd.isna(row[column]):
        return "-"
    if row[column + "_kind"] == "absolute":
        return number(row[column], row[column + "_ci95"], 3) + " (abs)"
    return number(100 * row[column], 100 * row[column + "_ci95"], 1) + "%"


def distinct(runs, column):
    values = [str(v) for v in runs[column].dropna().unique() if str(v) != ""]
    return ", ".join(values) or "-"


def setup_section(runs):
    per_run = runs.drop_duplicates("run_id")
    reps = per_run[per_run["valid"]].groupby(GROUP, dropna=False)["run_id"].nunique()
    series = distinct(per_run, "series_sha256")
    rows = [
        ("kernel release", distinct(per_run, "kernel_release")),
        ("patch series", "sha256 %s (%s)" % (series, distinct(per_run, "series"))),
        ("QEMU", distinct(per_run, "qemu_version")),
        ("accelerator", distinct(per_run, "accel")),
        ("throttle (IOPS)", distinct(per_run.fillna({"throttle_iops": "off (IOPS=off)"}),
                                    "throttle_iops")),
        ("device (DEVICE, with LATENCY_US per request)", distinct(per_run, "device")),
        ("device charges (summary.json device_cost_model)", distinct(per_run, "device_cost")),
        ("device depth (NVMe queue depth; tags)", "%s; %s" % (
            distinct(per_run, "device_depth"), distinct(per_run, "device_tags"))),
        ("scheduler nr_requests", distinct(per_run, "nr_requests")),
        ("vCPUs", distinct(per_run, "vcpus")),
        ("runtime after ramp (s); ramp (s)", "%s; %s" % (
            distinct(per_run, "runtime_s"), distinct(per_run, "ramp_s"))),
        ("repetitions per workload and scheduler (valid runs)",
         "%d to %d" % (reps.min(), reps.max()) if reps.min() != reps.max() else str(reps.min())),
        ("harness revision", distinct(per_run, "harness_revision")),
    ]
    return ("## Setup\n\nFrom the runs' meta.json, as in `runs.csv` (all %d runs).\n\n"
            % len(per_run)) + md_table(["", "value"], rows)


METHOD = """## Method

Each run boots the kernel in QEMU, runs the workload's fio jobs against the
throttled NVMe device under one scheduler and records blktrace.  A
completion's pid is whoever ran on that CPU, so `analysis/attribute.py`
matches every completion to the bios that were queued (Q) with that sector
range, following splits, back and front merges and requeues; a bio counts
once, as fio counts one I/O per queued bio, and its latency runs from Q to
the completion of its last piece (Q2C).  The owner is the pid that queued
the bio, paired with fio's jobs through the pids the guest recorded; bios of
other pids are the `other` row.  Each job is counted over the window fio
measured for it (its `job_runtime`, ending at its last completion: fio keeps
each job's ramp and runtime on the job's own clock); bios count when queued
inside it.  Device totals and the time series cover the time all jobs were
measured.

* share: a task's part of the jobs' IOPS; expected: its weight in the
  workload's `# expect:` line over the sum of the weights.  A scheduler
  that documents another policy for the workload has its own
  `# expect[scheduler]:` line, and its numbers against it are marked (own);
  `# expect[scheduler]: none` says it documents none.
* A line that shares device requests (`# expect[scheduler] requests:`,
  measure "device requests") judges each task's device commands (tasks.csv
  requests) per second of its window, among exactly the tasks the line
  names; it can name the `other` row, writeback queued by kernel flusher
  threads, as one party.  share (own) / share (common) is the share such a
  line judges (tasks.csv judged_share_policy / judged_share; the IOPS share
  for a line in IOPS).
* deviation: (share - expected) / expected; where 0 is expected, share - 0
  (marked abs).
* Jain index over x = share / expected for the tasks expected a share:
  (sum x)^2 / (n sum x^2), 1 when every task gets exactly its due.
* cost share, where the device charges by size (`BPS`, `IOPS_SIZE`;
  summary.json cost_model_active): a task's part of the device time the
  jobs' commands cost, each command `analysis/devcost.py`'s request_cost of
  its size and counted on the task that queued its first bio, as the
  requests column counts; Jain (cost) is the Jain index over cost share /
  expected.  On such a device equal IOPS is not equal device time.
* window overlap: the time all jobs' windows have in common over the
  shortest window (summary.json window_overlap).  A scheduler that holds
  a job back past the others' ramp (mq-deadline's aging of an idle-class
  job) moves that job's window later; below %.1f the run is marked, its
  shares measured over different times and not comparable.
* work conservation: the device's completed commands per second (C events with data, all tasks and the `other` row; merged bios count once, as the throttle counts them) over the throttle.
* Means over the valid repetitions, with 95%% confidence intervals from the
  t distribution (mean ± half-width; none when there is one run).
* Cross-check: each job's blktrace I/O count against fio's total_ios; %s.
* FIOPS charge check, where the kernel logs its dispatches (one blktrace
  message per request, `analysis/schedmsg.py`): every message has the issue
  (D) of its request, and each task's vios grows by exactly what each
  dispatch charged, jumping forward only when the task re-enters the tree.
"""


def check_text(per_run):
    agree = per_run["fio_blktrace_agree"]
    checked = agree.notna().sum()
    return "%d of %d runs agree within 1%% (`runs.csv` column fio_blktrace_agree)" % (
        agree.eq(True).sum(), checked)


def config_policies(per_run, configs):
    """{config: (policy_source, documents none, policy_measure)} from the
    runs' summaries."""
    policies = {}
    for config in configs:
        rows = per_run[per_run["config"] == config]
        sources = rows["policy_source"].dropna()
        measures = rows["policy_measure"].dropna()
        policies[config] = (sources.iloc[0] if len(sources) else None,
                            bool(rows["policy_none"].any()),
                            measures.iloc[0] if len(measures) else None)
    return policies


def own_policy(source):
    """Whether the line is a scheduler's own expect[...] line."""
    return isinstance(source, str) and source.startswith("expect[")


def policy_notes(policies, configs, schedulers):
    notes = []
    for config in configs:
        source, none, _ = policies[config]
        if none:
            notes.append("%s documents no policy for this workload (`%s`): it is judged only "
                         "against the common expect line." % (config, source))
        elif own_policy(source):
            notes.append("%s documents its own policy for this workload (`%s`): the columns "
                         "marked (own) judge it against that, the others against the common "
                         "expect line." % (config, source))
    if "none" in schedulers:
        notes.append(UNSCHEDULED)
    return notes


def policy_table(policies, configs, run_means, common_measure):
    """Jain index against the common line and against each scheduler's own,
    with what each judges (IOPS or device requests)."""
    by = run_means.set_index("config")
    rows = []
    for config in configs:
        source, none, measure = policies[config]
        policy = ("documents no policy" if none else "`%s`" % source if own_policy(source)
                  else "the common line")
        rows.append([config, policy, "-" if none else MEASURE_NAMES.get(measure, "-"),
                     number(by.at[config, "jain_index"], by.at[config, "jain_index_ci95"], 4),
                     "-" if none else number(by.at[config, "jain_index_policy"],
                                             by.at[config, "jain_index_policy_ci95"], 4)])
    common = ("; Jain (common) judges %s" % MEASURE_NAMES[common_measure]
              if common_measure in MEASURE_NAMES else "")
    return ("Each scheduler against the policy it documents (`run-means.csv` jain_index and "
            "jain_index_policy; summary.json policy_source, and policy_measure, what the "
            "policy shares%s):\n\n" % common
            + md_table(["scheduler", "documented policy", "measure (own)", "Jain (common)",
                        "Jain (own)"], rows))


def fiops_checks(per_run, configs, schedulers):
    """A line per configuration that has FIOPS messages or is FIOPS: did the
    charge check (summary.json fiops_trace) hold in all its valid runs?"""
    lines = []
    for config in configs:
        runs = per_run[(per_run["config"] == config) & per_run["valid"]]
        logged = runs[runs["fiops_messages"].notna()]
        if schedulers[config] != "fiops" and logged.empty:
            continue
        failed = logged[~logged["charges_consistent"].eq(True)]
        if logged.empty:
            verdict = "no dispatch messages in its traces (a kernel without them): not checked"
        elif failed.empty and len(logged) == len(runs):
            verdict = "held in all %d valid runs" % len(runs)
        else:
            verdict = "held in %d of %d valid runs" % (len(logged) - len(failed), len(runs))
            verdict += "".join(
                "; not in `%s` (%d charge violations, %d messages without an issue)"
                % (r.run_id, r.charge_violations, r.unmatched_messages)
                for r in failed.itertuples())
            verdict += "".join("; `%s` has no dispatch messages" % r for r in
                               runs.loc[runs["fiops_messages"].isna(), "run_id"])
        lines.append("FIOPS charge check (every dispatch message has its issue, each task's "
                     "vios grew by exactly its charges; `runs.csv` charges_consistent), "
                     "%s: %s.\n" % (config, verdict))
    return lines


def cost_table(configs, run_means):
    """Jain index over IOPS shares next to Jain over device-cost shares."""
    by = run_means.set_index("config")
    rows = [[config, number(by.at[config, "jain_index"], by.at[config, "jain_index_ci95"], 4),
             number(by.at[config, "jain_index_cost"], by.at[config, "jain_index_cost_ci95"], 4)]
            for config in configs]
    return ("The device charges requests by size in these runs (summary.json "
            "cost_model_active): the same IOPS can be very different device time.  "
            "cost share is each task's part of the device time its commands cost (tasks.csv "
            "device_cost_s, cost_share); Jain (cost) judges cost shares against the expected "
            "ones as Jain (IOPS) judges IOPS shares (`run-means.csv` jain_index_cost):\n\n"
            + md_table(["scheduler", "Jain (IOPS)", "Jain (cost)"], rows))


def task_rows(group, configs, own, cost=False, judged=()):
    """The workload's task table; judged names the lines ("" common,
    "_policy" own) whose judged share differs from share (lines on device
    requests): they get a share (common) / share (own) column."""
    rows = []
    for config in configs:
        for _, row in group[group["config"] == config].iterrows():
            if row["task"] == metrics.OTHER and not row["iops"] > 0:
                continue
            cells = [config, row["task"], number(row["iops"], row["iops_ci95"]),
                     number(row["share"], row["share_ci95"], 3)]
            if cost:
                cells.append(number(row["cost_share"], row["cost_share_ci95"], 3))
            if "" in judged:
                cells.append(number(row["judged_share"], row["judged_share_ci95"], 3))
            cells += [number(row["expected"], np.nan, 3), deviation_text(row)]
            if "_policy" in judged:
                cells.append(number(row["judged_share_policy"],
                                    row["judged_share_policy_ci95"], 3))
            if own:
                cells += [number(row["expected_policy"], np.nan, 3),
                          deviation_text(row, "deviation_policy")]
            rows.append(cells + [number(row["p99_ms"], row["p99_ms_ci95"]), row["n"]])
    return rows


def judged_lines(per_run):
    """Which lines of the workload's valid runs judge device requests: ""
    for the common line, "_policy" for the scheduler's own (task_rows),
    which is the common one where a run's scheduler has no line of its own."""
    return tuple(suffix for suffix, column in (("", "expect_measure"),
                                                ("_policy", "policy_measure"))
                 if per_run[column].eq(metrics.REQUESTS).any())


def group_table(groups, configs, run_means):
    """Each scheduler's cgroup shares against their weights, with group_jain."""
    by = run_means.set_index("config")
    rows = []
    for config in configs:
        for g in groups[groups["config"] == config].itertuples():
            rows.append([config, g.group, number(g.share, g.share_ci95, 4),
                         number(g.expected, digits=4), number(g.spread, g.spread_ci95, 3),
                         number(by.at[config, "group_jain"], by.at[config, "group_jain_ci95"], 4)
                         if config in by.index else "-", str(g.n)])
    return ("Cgroup shares (summary.json groups; `# group:` lines of the workload): a group's "
            "share of the jobs' IOPS, what its weight asks, the spread of its tasks' IOPS "
            "(largest over smallest) and Jain's index of share/expected over the groups.\n\n"
            + md_table(["scheduler", "group", "share", "expected", "task spread", "group Jain",
                        "runs"], rows) + "\n")


def workload_section(workload, description, tasks, run_means, runs, data, plot_dir,
                     groups=None):
    group = tasks[tasks["workload"] == workload]
    configs = config_order(group)
    schedulers = dict(zip(group["config"], group["scheduler"]))
    per_run = runs[runs["workload"] == workload].drop_duplicates("run_id")
    policies = config_policies(per_run[per_run["valid"]], configs)
    own = any(own_policy(source) for source, _, _ in policies.values())
    cost = bool(per_run.loc[per_run["valid"], "cost_model_active"].any())
    judged = tuple(s for s in judged_lines(per_run[per_run["valid"]]) if own or s == "")
    common_measure = per_run.loc[per_run["valid"], "expect_measure"].dropna()
    text = ["## %s\n" % workload, "Workload: %s\n" % (description or "(no description)")]
    text += ["Note: %s\n" % n for n in policy_notes(policies, configs, schedulers.values())]
    text += ["Note: run `%s` (%s): %s (summary.json window_overlap: the jobs' own fio windows, "
             "over which each share is counted, have that much time in common).\n"
             % (r.run_id, r.config, metrics.overlap_text(r.window_overlap))
             for r in not_comparable(per_run[per_run["valid"]]).itertuples()]
    if own:
        text.append(policy_table(policies, configs, run_means[run_means["workload"] == workload],
                                 common_measure.iloc[0] if len(common_measure) else None))
    if cost:
        text.append(cost_table(configs, run_means[run_means["workload"] == workload]))
    text += ceiling.section(configs, run_means[run_means["workload"] == workload], per_run,
                            number)
    text += fiops_checks(per_run, configs, schedulers)
    text += light.section(per_run, configs, number, mean_ci)
    if groups is not None and (groups["workload"] == workload).any():
        text.append(group_table(groups[groups["workload"] == workload], configs,
                                run_means[run_means["workload"] == workload]))
    other = per_run[per_run["other_comms"] != ""]
    if not other.empty:
        text.append("The other row counts bios queued by processes that are no fio job "
                    "(commands: %s; `runs.csv` column other_comms).\n"
                    % distinct(other, "other_comms"))
    header = ["scheduler", "task", "IOPS", "share"] + (["cost share"] if cost else [])
    header += ["share (common)"] if "" in judged else []
    header += ["expected", "deviation"]
    header += ["share (own)"] if "_policy" in judged else []
    header += ["expected (own)", "deviation (own)"] if own else []
    text.append(md_table(header + ["p99 (ms)", "runs"],
                         task_rows(group, configs, own, cost, judged)))
    text.append("Source: `task-means.csv` rows with workload=%s; they average the `runs.csv` "
                "rows with these run_id values:\n" % workload)
    for config in configs:
        ids = group.loc[group["config"] == config, "run_ids"].iloc[0]
        text.append("* %s: %s" % (config, run_list(ids.split(), per_run)))
    text.append("")
    text += workload_plots(workload, group, configs, data, plot_dir, "" not in judged)
    text += depth_plot(workload, group, run_means[run_means["workload"] == workload], plot_dir)
    return "\n".join(text) + "\n"


def workload_plots(workload, group, configs, data, plot_dir, marks=True):
    """Shares, p99 latency, and per configuration one run's IOPS over time
    and, where its trace has FIOPS's messages, its vios over time.  data is
    ({run_id: time series}, {run_id: vios data}).  marks: draw the expected
    shares on the IOPS shares (not where the common line shares requests)."""
    series, vios = data
    jobs = group[group["task"] != metrics.OTHER]
    stem = os.path.join(plot_dir, slug(workload))
    table = jobs.pivot(index="config", columns="task", values="share")
    order = list(dict.fromkeys(jobs["task"]))
    table = table.loc[configs, order]
    expected = jobs.drop_duplicates("task").set_index("task")["expected"][order]
    if not marks:
        expected = expected * np.nan
    lines = []
    where = titled(workload, group)
    png = plots.shares(stem + "-shares", table, expected,
                       "%s: mean share of IOPS per scheduler; dashes: expected" % where)
    lines.append(image(png, "shares (task-means.csv share and expected)"))
    p99 = jobs.pivot(index="task", columns="config", values="p99_ms").loc[order, configs]
    ci = jobs.pivot(index="task", columns="config", values="p99_ms_ci95").loc[order, configs]
    png = plots.p99_bars(stem + "-p99", p99, ci, "%s: p99 Q2C latency per task" % where)
    lines.append(image(png, "p99 latency (task-means.csv p99_ms, p99_ms_ci95)"))
    for config in configs:
        rows = group[group["config"] == config]
        run_id = rows["run_ids"].iloc[0].split()[0]
        shown = series[run_id]
        if shown.loc[shown["task"] == metrics.OTHER, "iops"].sum() == 0:
            shown = shown[shown["task"] != metrics.OTHER]
        png = plots.iops_over_time(stem + "-iops-" + slug(config), shown,
                                   "%s, %s: IOPS per second" % (titled(workload, rows), config))
        lines.append(image(png, "IOPS over time, %s: timeseries.csv of run `%s`"
                           % (config, run_id)))
        lines += vios_plot(stem + "-vios-" + slug(config), titled(workload, rows), config,
                           rows["run_ids"].iloc[0], vios)
    return lines


def titled(workload, rows):
    """A plot title's start: the workload, then the device model and depths
    of its rows: "depth-asym (nvme, depth 4, 32, 1023)"."""
    depths = ", ".join(str(d) for d in sorted(rows["device_depth"].unique()))
    return "%s (%s, depth %s)" % (workload, ", ".join(rows["device"].unique()), depths)


def depth_plot(workload, group, run_means, plot_dir):
    """Where the workload ran at several device depths: each task's share
    and the work conservation against depth, a panel per configuration
    without its depth.  group: the workload's task means; run_means: its
    run means."""
    if group["device_depth"].nunique() < 2:
        return []
    jobs = group[group["task"] != metrics.OTHER].assign(panel=config_labels(group, False))
    runs = run_means.assign(panel=config_labels(run_means, False))
    order = list(dict.fromkeys(jobs["task"]))
    shares = {panel: depth_table(jobs[jobs["panel"] == panel], "task", "share", order)
              for panel in config_order(jobs, "panel")}
    conservation = depth_table(runs, "panel", "work_conservation", list(shares))
    png = plots.by_depth(os.path.join(plot_dir, slug(workload) + "-depth"), shares, conservation,
                         "%s: share of the jobs' IOPS and work conservation against "
                         "device depth (mean, 95%% CI)" % titled(workload, group))
    return [image(png, "share and work conservation against device depth (task-means.csv "
                  "share, share_ci95; run-means.csv work_conservation, work_conservation_ci95; "
                  "by device_depth)")]


def depth_table(rows, column, value, names):
    """By depth (index), for each of names in rows' column: value and its
    _ci95, side by side."""
    table = rows.pivot(index="device_depth", columns=column, values=[value, value + "_ci95"])
    pairs = {}
    for name in names:
        pairs[name] = table[(value, name)]
        pairs[name + " ci95"] = table[(value + "_ci95", name)]
    return pd.DataFrame(pairs).sort_index()


def vios_plot(stem, workload, config, run_ids, vios):
    """The vios plot of the configuration's first run with FIOPS messages."""
    for run_id in run_ids.split():
        frame = vios.get(run_id)
        if frame is None:
            continue
        if not isinstance(frame, pd.DataFrame):
            frame = pd.read_csv(frame, sep="\t")
        png = plots.vios(stem, frame, "%s, %s: FIOPS vios per task (run %s)"
                         % (workload, config, run_id))
        return [image(png, "vios over time, %s: vios.dat of run `%s`, from FIOPS's "
                      "dispatch messages" % (config, run_id))]
    return []


def left_out(runs, unfinished):
    per_run = runs.drop_duplicates("run_id")
    lines = ["* `%s`: did not finish, left out (meta.json status: %s; %s)" % run
             for run in unfinished]
    reasons = (
        (~per_run["valid"], "invalid (meta.json invalid_reasons), left out of the means"),
        (per_run["fio_blktrace_agree"].eq(False), "blktrace and fio I/O counts differ by "
         "more than 1% (summary.json fio_blktrace_disagreements)"),
        (per_run["trace_complete"].eq(False), "the trace lost events or has unmatched "
         "completions (summary.json trace)"),
        (per_run["charges_consistent"].eq(False), "FIOPS's dispatch messages fail the charge "
         "check (summary.json fiops_trace)"),
    )
    for picked, reason in reasons:
        lines += ["* `%s`: %s" % (run_id, reason) for run_id in per_run.loc[picked, "run_id"]]
    lines += ["* `%s`: %s (summary.json window_overlap)" % (r.run_id, metrics.overlap_text(
        r.window_overlap)) for r in not_comparable(per_run).itertuples()]
    return "## Runs to look at\n\n" + ("\n".join(lines) if lines else "None.") + "\n"


def write_report(folder, out, overhead=None):
    """Write the CSVs, plots and fairness-report.md into out; returns the
    report's path.  overhead: a make overhead folder for the first page's
    overhead table."""
    plot_dir = os.path.join(out, "plots")
    os.makedirs(plot_dir, exist_ok=True)
    runs, series, vios, described, unfinished = combine(folder)
    tasks, run_level = means(runs)
    runs.to_csv(os.path.join(out, "runs.csv"), index=False, float_format="%.10g")
    tasks.to_csv(os.path.join(out, "task-means.csv"), index=False, float_format="%.10g")
    run_level.to_csv(os.path.join(out, "run-means.csv"), index=False, float_format="%.10g")
    per_run = runs.drop_duplicates("run_id")
    parts = ["# Fairness report: %s\n" % os.path.basename(os.path.abspath(folder)),
             "Built %s from %d runs in `%s` by `python3 -m analysis.report`.\n" % (
                 datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), len(per_run), folder),
             firstpage.write(folder, out, runs, tasks, run_level, plot_dir, overhead),
             setup_section(runs), METHOD % (metrics.COMPARABLE_OVERLAP, check_text(per_run)),
             firstpage.limits(runs), "# Detail: one section per workload\n"]
    groups = group_means(folder, runs)
    groups.to_csv(os.path.join(out, "group-means.csv"), index=False, float_format="%.10g")
    for workload in tasks["workload"].unique():
        parts.append(workload_section(workload, described.get(workload), tasks, run_level,
                                      runs, (series, vios), plot_dir, groups))
    parts.append(left_out(runs, unfinished))
    path = os.path.join(out, "fairness-report.md")
    with open(path, "w") as f:
        f.write("\n".join(parts))
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="compare folder holding run folders")
    today = datetime.datetime.utcnow().strftime("%Y-%m-%d")
    parser.add_argument("--out", default=os.path.join(analyze.TOP, "reports", today))
    parser.add_argument("--overhead", help="a make overhead folder (its ratios.csv) for the "
                        "first page's overhead table")
    args = parser.parse_args(argv)
    print(write_report(args.folder, args.out, args.overhead))
    return 0


if __name__ == "__main__":
    sys.exit(main())
