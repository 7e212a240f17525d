"""Analyse one run folder's blktrace: per-task IOPS, shares and latency.

    /usr/bin/python3 -m analysis.analyze <run folder> [--phase main]

adds the run-level fields to the run's summary.json (existing fields are
kept) and writes tasks.csv and timeseries.csv next to it, and, when the
trace has FIOPS's dispatch messages, vios.png (with its .dat and .gp), and
when it has FIOPS's depth messages, depth.png.
Other phases than main get their fields under "<phase>_analysis" and their
files prefixed "<phase>-".
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys

import pandas as pd

from analysis import (attribute, depthmsg, devcost, files, groups, light, metrics, plots, schedmsg,
                      trace)

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bench_summary():
    """bench/summary.py, the harness's own fio JSON reader: jobs pair with pids there."""
    spec = importlib.util.spec_from_file_location(
        "bench_summary", os.path.join(TOP, "bench", "summary.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_summary = _bench_summary()


def read_json(path, default=None):
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return json.load(f)


def seconds(value):
    """A fio time option in seconds: plain numbers are seconds, or with s/ms/m."""
    text = str(value).strip().lower()
    for suffix, scale in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * scale
    return float(text)


def workload_text(run_dir, meta):
    """The workload as run: the folder's copy, else the jobfile meta.json names."""
    for path in (os.path.join(run_dir, "workload.fio"),
                 os.path.join(TOP, meta.get("jobfile", ""))):
        if os.path.isfile(path):
            with open(path) as f:
                return f.read()
    return ""


def option(fio, job, name, default=None):
    return job.get("job options", {}).get(name, fio.get("global options", {}).get(name, default))


def job_tasks(fio, pids, weights, own=None):
    """The fio jobs as tasks; a name fio repeats (numjobs) gets .0, .1, ...

    expected comes from weights (the common expect line), expected_policy
    from own, the scheduler's own weights ({} where it documents no policy;
    by default the common ones)."""
    jobs = bench_summary.tasks(fio, pids)
    names = [j["name"] for j in jobs]
    own_shares = metrics.expected_shares(names, weights if own is None else own)
    seen = {}
    rows = []
    for job, fio_job, share, own_share in zip(jobs, fio["jobs"],
                                              metrics.expected_shares(names, weights),
                                              own_shares):
        k = seen[job["name"]] = seen.get(job["name"], -1) + 1
        task = job["name"] if names.count(job["name"]) == 1 else "%s.%d" % (job["name"], k)
        rows.append({"task": task, "name": job["name"], "pid": job["pid"],
                     "runtime_s": fio_job.get("job_runtime", 0) / 1000 or None,
                     "fio_ios": job["ios"], "fio_iops": job["iops"],
                     "direct": str(option(fio, fio_job, "direct", "0")) == "1",
                     "cgroup": option(fio, fio_job, "cgroup"),
                     "weight": weights.get(job["name"]), "expected": share,
                     "expected_policy": own_share})
    return pd.DataFrame(rows)


def timing(fio, params):
    """fio's ramp and runtime in seconds, as it ran them; meta's params as fallback."""
    ramp = option(fio, {}, "ramp_time", params.get("RAMP", 0))
    runtime = option(fio, {}, "runtime", params.get("RUNTIME"))
    return seconds(ramp), (seconds(runtime) if runtime is not None else None)


class Fields(dict):
    """The fields compute() adds to summary.json.  vios and depth hold the
    data of the vios and depth plots for write() to draw: they are no JSON.
    vios is schedmsg.vios_table(), depth (depthmsg.depth_table(), the
    measured window)."""
    vios = None
    depth = None


def cost_model(run_dir, meta):
    """The run's device_cost_model (meta.json's, else summary.json's); None
    for a run folder from before it was recorded, whose device was IOPS-only."""
    summary = read_json(os.path.join(run_dir, "summary.json"), {})
    return meta.get("device_cost_model") or summary.get("device_cost_model")


def scheduler_of(run_dir, meta):
    """The kernel's name of the run's scheduler (a variant's too)."""
    summary = read_json(os.path.join(run_dir, "summary.json"), {})
    return (meta.get("scheduler") or meta.get("params", {}).get("SCHED")
            or summary.get("scheduler"))


def compute(run_dir, phase="main"):
    """(fields, task table, time series) of one traced step of a run."""
    step = os.path.join(run_dir, "guest", phase)
    meta = read_json(os.path.join(run_dir, "meta.json"), {})
    params = meta.get("params", {})
    fio = read_json(os.path.join(step, "fio.json"))
    with open(os.path.join(step, "pids.txt")) as f:
        pids = [int(x) for x in f.read().split()]
    text = workload_text(run_dir, meta)
    weights = metrics.parse_expect(text)
    own, source = metrics.policy(text, scheduler_of(run_dir, meta), meta.get("tunables"))
    measures = metrics.expect_measure(text), metrics.measure_of(source)
    tasks = job_tasks(fio, pids, weights, {} if own is None else own)
    light_spec = light.spec(text)
    tasks["aside"] = tasks["name"].isin(light.names(text))

    events, info, messages = trace.load(step)
    bios, stats = attribute.attribute(events)
    ramp, runtime = timing(fio, params)
    span = metrics.window(bios, tasks["pid"].dropna(), ramp, runtime)
    throttle = meta.get("throttle_iops", params.get("IOPS"))
    fields, table, series = measure(bios, tasks, span, throttle, events,
                                    cost_model(run_dir, meta),
                                    by_requests(weights, own, *measures))
    fields = Fields(fields, **policy_fields(table, own, source))
    span = (fields.pop("common_start"), fields.pop("common_end"))
    fields["trace"] = dict(info, **stats, window_start=round(span[0], 6),
                           window_s=round(span[1] - span[0], 6), ramp_s=ramp,
                           other_comms=other_comms(bios, span))
    fields["expect"] = weights
    fields["expect_measure"] = measures[0]
    fields["expect_missing"] = sorted(set(tasks["name"]) - set(weights)) if weights else []
    fields["expect_unknown"] = sorted(
        metrics.unknown_names(weights, measures[0], tasks["name"])
        | metrics.unknown_names(own, measures[1], tasks["name"]))
    fields["trace_complete"] = not (info["dropped"] or info["skips"] or info["bad_lines"]
                                    or stats["unmatched_completions"])
    add_fiops(fields, table, tasks, events, messages)
    add_depth(fields, events, messages, span)
    add_groups(fields, table, tasks, text)
    fields["light"] = light.fields(light_spec, fio, bios, events, throttle, span)
    return fields, table, series


def add_groups(fields, table, tasks, text):
    """Fields groups (a row per cgroup holding jobs, [] without) and
    group_jain, from the task table's IOPS and the jobs' cgroup= option."""
    if "cgroup" not in table:
        table = table.merge(tasks[["task", "cgroup"]], on="task", how="left")
    fields["groups"] = groups.table(table, text)
    fields["group_jain"] = groups.jain(fields["groups"])


def by_requests(weights, own, common_measure, own_measure):
    """metrics.task_table's by_requests: the weights of the common line and
    of the scheduler's own that share device requests, by column suffix."""
    lines = (("", weights, common_measure), ("_policy", own, own_measure))
    return {suffix: w for suffix, w, measure in lines if w and measure == metrics.REQUESTS}


def policy_fields(table, own, source):
    """The run's fields about its scheduler's own policy (see metrics):
    policy_measure is its line's measure, null without a policy (no line,
    or a line that says none)."""
    rows = table[table["expected_policy"].notna()]
    return {"policy_source": source, "expect_policy": own,
            "policy_measure": None if own is None else metrics.measure_of(source),
            "expected_policy": dict(zip(rows["task"], rows["expected_policy"]))}


def add_fiops(fields, table, tasks, events, messages):
    """FIOPS's dispatch messages: fields fiops_trace (None without any) and
    vios, and the task table's fiops_dispatches and fiops_cost."""
    dispatches, malformed = schedmsg.parse(messages)
    fields["fiops_trace"] = schedmsg.summarize(dispatches, malformed, events)
    table["fiops_dispatches"], table["fiops_cost"] = schedmsg.task_columns(
        dispatches, table, metrics.OTHER)
    if not dispatches.empty:
        fields.vios = schedmsg.vios_table(dispatches, tasks, events)


def add_depth(fields, events, messages, window):
    """FIOPS's depth messages: field fiops_depth (None without any) and
    depth, weighed over the measured window."""
    changes, malformed = depthmsg.parse(messages)
    trace_end = pd.concat([events["time"], messages["time"]]).max()
    fields["fiops_depth"] = depthmsg.summarize(changes, malformed, window, trace_end)
    if not changes.empty:
        fields.depth = (depthmsg.depth_table(changes, trace_end), window)


def measure(bios, tasks, span, throttle_iops, events=None, cost_model=None, requests=None):
    """(run fields, task table, time series) of attributed bios.

    Adds the owning task to bios as column "task".  Each job is measured over
    its own fio window (field window_overlap: how much those windows
    share); device totals and the series over the time all jobs were
    measured (fields common_start, common_end).  cost_model is the
    run's device_cost_model: when its device charges by size, the table
    has each task's device_cost_s and cost_share, and the fields
    jain_index_cost and cost_model_active true.  requests is task_table's
    by_requests (by_requests()): the lines judged on device requests.
    """
    bios["task"] = metrics.owners(bios, tasks)
    table = metrics.task_table(bios, tasks, span, cost_model, requests)
    common = metrics.common_span(table, span)
    request_iops = None if events is None else metrics.device_iops(events, common)
    fields = metrics.run_metrics(table, throttle_iops, request_iops)
    fields["cost_model_active"] = devcost.charges_by_size(cost_model)
    fields["window_overlap"] = metrics.window_overlap(table)
    fields.update(metrics.cross_check(table))
    fields["common_start"], fields["common_end"] = common
    return fields, table, metrics.timeseries(bios, common, list(table["task"]))


def other_comms(bios, span):
    """Which commands queued the OTHER row's completed bios, and how many each."""
    inside = metrics.in_window(bios, span)
    other = inside[(inside["task"] == metrics.OTHER) & inside["complete"]]
    return {str(k): int(v) for k, v in other["comm"].value_counts().items()}


def analyze_run(run_dir, phase="main"):
    """The fields analysis adds to a run's summary.json (nothing is written)."""
    return compute(run_dir, phase)[0]


TASK_COLUMNS = ["task", "name", "pid", "window_start", "window_s", "ios", "requests", "queued",
                "incomplete", "iops", "bytes_per_s", "share", "device_share", "weight",
                "judged_share", "expected", "deviation", "deviation_kind",
                "judged_share_policy", "expected_policy", "deviation_policy",
                "deviation_policy_kind", "device_cost_s", "cost_share",
                "p50_ms", "p99_ms", "fio_ios", "fio_iops", "direct", "aside", "fiops_dispatches",
                "fiops_cost"]


def write(run_dir, phase, fields, table, series):
    prefix = "" if phase == "main" else phase + "-"
    with files.replacing(os.path.join(run_dir, prefix + "tasks.csv")) as tmp:
        table.reindex(columns=TASK_COLUMNS).to_csv(tmp, index=False, float_format="%.10g")
    with files.replacing(os.path.join(run_dir, prefix + "timeseries.csv")) as tmp:
        series.to_csv(tmp, index=False)
    path = os.path.join(run_dir, "summary.json")
    summary = read_json(path, {})
    if phase == "main":
        summary.update(fields)
        add_task_costs(summary.get("tasks", []), table)
    else:
        summary[phase + "_analysis"] = fields
    files.write_json(path, summary, default=_plain)
    name = summary.get("variant") or summary.get("scheduler"), summary.get("workload")
    if getattr(fields, "vios", None) is not None:
        draw(plots.vios, os.path.join(run_dir, prefix + "vios"), fields.vios,
             "%s, %s: vios per task" % name)
    if getattr(fields, "depth", None) is not None:
        draw(plots.depth, os.path.join(run_dir, prefix + "depth"), *fields.depth,
             "%s, %s: FIOPS dispatch depth" % name)


def add_task_costs(entries, table):
    """Adds device_cost_s and cost_share (null where the device does not
    charge by size) to summary.json's tasks, fio's jobs in the order the
    task table has them; an entry whose job name differs is left alone."""
    jobs = table[table["task"] != metrics.OTHER]
    for entry, row in zip(entries, jobs.itertuples()):
        if entry.get("name") != row.name:
            continue
        entry["device_cost_s"] = None if pd.isna(row.device_cost_s) else round(
            float(row.device_cost_s), 6)
        entry["cost_share"] = None if pd.isna(row.cost_share) else round(float(row.cost_share), 4)


def draw(plot, stem, *args):
    """One of the run's plots, plot(stem, *args); a missing or failing
    gnuplot costs the plot only, not the numbers already written."""
    try:
        plot(stem, *args)
    except (OSError, subprocess.CalledProcessError) as e:
        print("analysis: no %s plot (%s): %s" % (plot.__name__, stem, e), file=sys.stderr)


def _plain(value):
    """numpy scalars as JSON numbers."""
    return value.item()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--phase", default="main")
    args = parser.parse_args(argv)
    fields, table, series = compute(args.run_dir, args.phase)
    write(args.run_dir, args.phase, fields, table, series)
    shown = table[["task", "ios", "fio_ios", "share", "expected", "p99_ms"]]
    print(shown.to_string(index=False))
    print("jain %s, work conservation %s, fio/blktrace agree %s"
          % (fields["jain_index"], fields["work_conservation"], fields["fio_blktrace_agree"]))
    overlap = fields["window_overlap"]
    if overlap is not None and overlap < metrics.COMPARABLE_OVERLAP:
        print(metrics.overlap_text(overlap))
    if fields["cost_model_active"]:
        print("device charges by size: cost shares %s, jain (cost) %s" % (
            " ".join("%s=%.3f" % (r.task, r.cost_share) for r in table.itertuples()
                     if r.task != metrics.OTHER), fields["jain_index_cost"]))
    if fields["policy_source"] and fields["policy_source"].startswith("expect["):
        print("own policy (%s): jain %s over %s shares" % (
            fields["policy_source"], fields["jain_index_policy"], fields["policy_measure"]))
    fiops = fields["fiops_trace"]
    if fiops:
        print("fiops: %d dispatch messages, charges consistent %s (%d violations, %d without "
              "an issue)" % (fiops["messages"], fiops["charges_consistent"],
                             fiops["charge_violations"], fiops["unmatched_messages"]))
    for row in fields["groups"]:
        print("group %(group)s weight %(weight)s: %(tasks)d tasks, %(iops).1f IOPS, share "
              "%(share)s, expected %(expected)s, task spread %(spread)s" % row)
    if fields["groups"]:
        print("group jain %s" % fields["group_jain"])
    if fields["light"]:
        print(light.summary_line(fields["light"]))
    depth = fields["fiops_depth"]
    if depth:
        print("fiops depth: %d changes (%d probes, %d trials, %d lifted, %d malformed), "
              "steady median %s, last %s"
              % (depth["changes"], depth["probes"], depth["trials"], depth["lifted"],
                 depth["malformed"], depth["steady_median"], depth["steady_last"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
