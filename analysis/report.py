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

Runs not yet analysed (no tasks.csv) are analysed in memory, not written.
"""

import argparse
import datetime
import os
import sys

import numpy as np
import pandas as pd

from analysis import analyze, metrics, plots

# Two-sided 95% Student t critical values by degrees of freedom; between
# rows the smaller df's value is used (a slightly wider interval).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365,
       8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145,
       15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080,
       22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
       29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}
Z95 = 1.960

ORDER = ["none", "mq-deadline", "kyber", "bfq", "fiops"]
GROUP = ["workload", "scheduler", "tune", "device_depth"]
TASK_METRICS = ["iops", "share", "expected", "deviation", "p99_ms"]
RUN_METRICS = ["jain_index", "work_conservation"]

UNSCHEDULED = ("none does not schedule: requests reach the device in the order they are "
               "submitted, so what each task gets follows from how it submits, not from a policy.")
NO_POLICY = {
    "ioprio": {
        "none": "has no notion of I/O priorities",
        "mq-deadline": "serves the priority classes in order (real-time, best-effort, idle, "
                       "with aging) but has no notion of the levels within best-effort",
        "kyber": "has no notion of I/O priorities",
        "fiops": "does not take I/O priorities into account yet (the series says so)",
    },
}


def t95(df):
    if df > max(T95):
        return Z95
    return T95[max(k for k in T95 if k <= df)]


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
    its meta.json lists the runs of a boot that tried several schedulers."""
    found, unfinished = [], []
    for root, dirs, files in os.walk(folder, followlinks=True):
        dirs.sort()
        if "meta.json" not in files:
            continue
        if "summary.json" in files:
            found.append(root)
        else:
            meta = analyze.read_json(os.path.join(root, "meta.json"), {})
            if "runs" not in meta:
                unfinished.append((os.path.relpath(root, folder), meta.get("status")))
    return found, unfinished


def run_data(run_dir):
    """(summary with the analysis fields, tasks table, time series) of a run."""
    summary = analyze.read_json(os.path.join(run_dir, "summary.json"), {})
    paths = [os.path.join(run_dir, n) for n in ("tasks.csv", "timeseries.csv")]
    if "jain_index" in summary and all(os.path.exists(p) for p in paths):
        return summary, pd.read_csv(paths[0]), pd.read_csv(paths[1])
    fields, table, series = analyze.compute(run_dir)
    summary.update(fields)
    return summary, table, series


def run_columns(run_id, meta, summary):
    """The run-level columns of runs.csv: what ran, on what, and its numbers."""
    p = meta.get("params", {})
    kernel = meta.get("kernel", {})
    return {
        "run_id": run_id, "workload": p.get("WORKLOAD", summary.get("workload")),
        "scheduler": p.get("SCHED", summary.get("scheduler")),
        "tune": ",".join("%s=%s" % tuple(kv) for kv in p.get("TUNE", [])),
        "device_depth": p.get("DEPTH"), "device_tags": meta.get("device_tags"),
        "nr_requests": meta.get("nr_requests_set"), "throttle_iops": p.get("IOPS"),
        "runtime_s": p.get("RUNTIME"), "ramp_s": p.get("RAMP"), "vcpus": p.get("VCPUS"),
        "accel": meta.get("accel", p.get("ACCEL")), "qemu_version": meta.get("qemu_version"),
        "kernel_release": kernel.get("release"), "series_sha256": kernel.get("series_sha256"),
        "series": kernel.get("series"), "harness_revision": meta.get("harness_revision"),
        "valid": bool(meta.get("valid", False)),
        "jain_index": summary.get("jain_index"),
        "work_conservation": summary.get("work_conservation"),
        "trace_total_iops": summary.get("trace_total_iops"),
        "fio_blktrace_agree": summary.get("fio_blktrace_agree"),
        "trace_complete": summary.get("trace_complete"),
        "other_comms": ";".join("%s:%d" % kv for kv in
                                summary.get("trace", {}).get("other_comms", {}).items()),
    }


def combine(folder):
    """(runs DataFrame, {run_id: time series}, {workload: description}, unfinished)."""
    frames, series, described = [], {}, {}
    found, unfinished = find_runs(folder)
    for run_dir in found:
        run_id = os.path.relpath(run_dir, folder)
        meta = analyze.read_json(os.path.join(run_dir, "meta.json"), {})
        summary, table, series[run_id] = run_data(run_dir)
        run = run_columns(run_id, meta, summary)
        described.setdefault(run["workload"], meta.get("workload_description", ""))
        table = table.reset_index(drop=True)
        frames.append(pd.concat([pd.DataFrame([run] * len(table)), table], axis=1))
    if not frames:
        raise SystemExit("%s: no run folders (meta.json and summary.json) below it" % folder)
    runs = pd.concat(frames, ignore_index=True)
    runs["config"] = config_labels(runs)
    return runs, series, described, unfinished


def config_labels(runs):
    """scheduler, plus the tunables and the depth where they tell runs apart."""
    label = runs["scheduler"] + np.where(runs["tune"] != "", " " + runs["tune"], "")
    if runs["device_depth"].nunique() > 1:
        label = label + " depth " + runs["device_depth"].astype(str)
    return label


def config_order(configs):
    rank = {s: i for i, s in enumerate(ORDER)}
    return sorted(set(configs), key=lambda c: (rank.get(c.split()[0], len(ORDER)), c))


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
    kinds = valid.groupby(keys + ["task"], sort=False)["deviation_kind"].first()
    tasks = tasks.merge(kinds.reset_index(), on=keys + ["task"], how="left")
    run_level = aggregate(valid.drop_duplicates("run_id"), keys, RUN_METRICS)
    return tasks, run_level


# -- text ---------------------------------------------------------------------


def number(value, ci=np.nan, digits=1):
    if pd.isna(value):
        return "-"
    text = "%.*f" % (digits, value)
    return text if pd.isna(ci) else "%s ± %.*f" % (text, digits, ci)


def deviation_text(row):
    if pd.isna(row["deviation"]):
        return "-"
    if row["deviation_kind"] == "absolute":
        return number(row["deviation"], row["deviation_ci95"], 3) + " (abs)"
    return number(100 * row["deviation"], 100 * row["deviation_ci95"], 1) + "%"


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


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
        ("throttle (IOPS)", distinct(per_run, "throttle_iops")),
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
  workload's `# expect:` line over the sum of the weights.
* deviation: (share - expected) / expected; where 0 is expected, share - 0
  (marked abs).
* Jain index over x = share / expected for the tasks expected a share:
  (sum x)^2 / (n sum x^2), 1 when every task gets exactly its due.
* work conservation: the device's completed commands per second (C events with data, all tasks and the `other` row; merged bios count once, as the throttle counts them) over the throttle.
* Means over the valid repetitions, with 95%% confidence intervals from the
  t distribution (mean ± half-width; none when there is one run).
* Cross-check: each job's blktrace I/O count against fio's total_ios; %s.
"""


def check_text(per_run):
    agree = per_run["fio_blktrace_agree"]
    checked = agree.notna().sum()
    return "%d of %d runs agree within 1%% (`runs.csv` column fio_blktrace_agree)" % (
        agree.eq(True).sum(), checked)


def summary_section(run_means, configs):
    header = ["workload", "fairest (Jain)"] + ["%s Jain / WC" % c for c in configs]
    rows = []
    for workload, group in run_means.groupby("workload", sort=False):
        by = group.set_index("config")
        best = by["jain_index"].round(4)
        fairest = ", ".join(c for c in configs if c in by.index and best[c] == best.max())
        cells = [("%s / %s" % (number(by.at[c, "jain_index"], by.at[c, "jain_index_ci95"], 4),
                               number(by.at[c, "work_conservation"], np.nan, 3))
                  if c in by.index else "-") for c in configs]
        rows.append([workload, fairest or "-"] + cells)
    return ("## Summary\n\nJain index (mean ± 95% CI) and work conservation (WC, mean) per "
            "scheduler; the fairest has the highest mean Jain index at four decimals.  "
            "Source: `run-means.csv`, one row per workload and scheduler; its run_ids "
            "column names the `runs.csv` rows averaged.\n\n") + md_table(header, rows)


def policy_notes(workload, configs):
    notes = []
    for config in configs:
        reason = NO_POLICY.get(workload, {}).get(config.split()[0])
        if reason:
            notes.append("%s %s: its numbers show what it does without the policy."
                         % (config, reason))
    if any(c.split()[0] == "none" for c in configs):
        notes.append(UNSCHEDULED)
    return notes


def task_rows(group, configs):
    rows = []
    for config in configs:
        for _, row in group[group["config"] == config].iterrows():
            if row["task"] == metrics.OTHER and not row["iops"] > 0:
                continue
            rows.append([config, row["task"], number(row["iops"], row["iops_ci95"]),
                         number(row["share"], row["share_ci95"], 3),
                         number(row["expected"], np.nan, 3), deviation_text(row),
                         number(row["p99_ms"], row["p99_ms_ci95"]), row["n"]])
    return rows


def workload_section(workload, description, tasks, runs, series, plot_dir):
    group = tasks[tasks["workload"] == workload]
    configs = config_order(group["config"])
    text = ["## %s\n" % workload, "Workload: %s\n" % (description or "(no description)")]
    text += ["Note: %s\n" % n for n in policy_notes(workload, configs)]
    other = runs[(runs["workload"] == workload) & (runs["other_comms"] != "")]
    if not other.empty:
        text.append("The other row counts bios queued by processes that are no fio job "
                    "(commands: %s; `runs.csv` column other_comms).\n"
                    % distinct(other, "other_comms"))
    header = ["scheduler", "task", "IOPS", "share", "expected", "deviation", "p99 (ms)", "runs"]
    text.append(md_table(header, task_rows(group, configs)))
    text.append("Source: `task-means.csv` rows with workload=%s; they average the `runs.csv` "
                "rows with these run_id values:\n" % workload)
    for config in configs:
        ids = group.loc[group["config"] == config, "run_ids"].iloc[0]
        text.append("* %s: %s" % (config, ", ".join("`%s`" % i for i in ids.split())))
    text.append("")
    text += workload_plots(workload, group, configs, series, plot_dir)
    return "\n".join(text) + "\n"


def slug(text):
    return "".join(c if c.isalnum() or c in "-." else "_" for c in text)


def workload_plots(workload, group, configs, series, plot_dir):
    jobs = group[group["task"] != metrics.OTHER]
    stem = os.path.join(plot_dir, slug(workload))
    table = jobs.pivot(index="config", columns="task", values="share")
    order = list(dict.fromkeys(jobs["task"]))
    table = table.loc[configs, order]
    expected = jobs.drop_duplicates("task").set_index("task")["expected"][order]
    lines = []
    png = plots.shares(stem + "-shares", table, expected,
                       "%s: mean share of IOPS per scheduler; dashes: expected" % workload)
    lines.append(image(png, "shares (task-means.csv share and expected)"))
    p99 = jobs.pivot(index="task", columns="config", values="p99_ms").loc[order, configs]
    ci = jobs.pivot(index="task", columns="config", values="p99_ms_ci95").loc[order, configs]
    png = plots.p99_bars(stem + "-p99", p99, ci, "%s: p99 Q2C latency per task" % workload)
    lines.append(image(png, "p99 latency (task-means.csv p99_ms, p99_ms_ci95)"))
    for config in configs:
        run_id = group.loc[group["config"] == config, "run_ids"].iloc[0].split()[0]
        shown = series[run_id]
        if shown.loc[shown["task"] == metrics.OTHER, "iops"].sum() == 0:
            shown = shown[shown["task"] != metrics.OTHER]
        png = plots.iops_over_time(stem + "-iops-" + slug(config), shown,
                                   "%s, %s: IOPS per second (run %s)" % (workload, config, run_id))
        lines.append(image(png, "IOPS over time, %s: timeseries.csv of run `%s`"
                           % (config, run_id)))
    return lines


def image(png, caption):
    name = os.path.join(os.path.basename(os.path.dirname(png)), os.path.basename(png))
    return "![%s](%s)\n\n*%s*\n" % (caption, name, caption)


def left_out(runs, unfinished):
    per_run = runs.drop_duplicates("run_id")
    lines = ["* `%s`: no summary.json, the run did not finish (meta.json status: %s)" % run
             for run in unfinished]
    reasons = (
        (~per_run["valid"], "invalid (meta.json invalid_reasons), left out of the means"),
        (per_run["fio_blktrace_agree"].eq(False), "blktrace and fio I/O counts differ by "
         "more than 1% (summary.json fio_blktrace_disagreements)"),
        (per_run["trace_complete"].eq(False), "the trace lost events or has unmatched "
         "completions (summary.json trace)"),
    )
    for picked, reason in reasons:
        lines += ["* `%s`: %s" % (run_id, reason) for run_id in per_run.loc[picked, "run_id"]]
    return "## Runs to look at\n\n" + ("\n".join(lines) if lines else "None.") + "\n"


def write_report(folder, out):
    """Write the CSVs, plots and fairness-report.md into out; returns the report's path."""
    plot_dir = os.path.join(out, "plots")
    os.makedirs(plot_dir, exist_ok=True)
    runs, series, described, unfinished = combine(folder)
    tasks, run_level = means(runs)
    runs.to_csv(os.path.join(out, "runs.csv"), index=False, float_format="%.10g")
    tasks.to_csv(os.path.join(out, "task-means.csv"), index=False, float_format="%.10g")
    run_level.to_csv(os.path.join(out, "run-means.csv"), index=False, float_format="%.10g")
    per_run = runs.drop_duplicates("run_id")
    parts = ["# Fairness report: %s\n" % os.path.basename(os.path.abspath(folder)),
             "Built %s from %d runs in `%s` by `python3 -m analysis.report`.\n" % (
                 datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), len(per_run), folder),
             summary_section(run_level, config_order(run_level["config"])),
             setup_section(runs), METHOD % check_text(per_run)]
    for workload in tasks["workload"].unique():
        parts.append(workload_section(workload, described.get(workload), tasks, runs, series,
                                      plot_dir))
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
    args = parser.parse_args(argv)
    print(write_report(args.folder, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
