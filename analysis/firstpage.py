"""The report's first page: verdicts, a heat map, the depth plot, overhead,
and what the numbers say, each number from a CSV row named next to it.

    verdict.csv    one row per workload, device depth, device and scheduler:
                   Jain index against the workload's common expect line and
                   against the scheduler's own, work conservation, the worst
                   task's mean deviation, the slowest task's p99, and whether
                   the policy is met (MET_JAIN, MET_DEVIATION)
    fiops-vs.csv   per workload, depth and other scheduler: fiops's Jain
                   index against the other's over the repetitions, Welch's t
                   test, and win / tie / lose (WIN_MARGIN)
    overhead-ratios.csv
                   make overhead's ratios.csv, when the report is given one
"""

import os
import re
import shutil
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from analysis import analyze, metrics, plots
from analysis.markdown import image, md_table, slug

# A policy is met when the Jain index over share / expected is at least
# MET_JAIN and no task expected a share is further than MET_DEVIATION from
# it (relative): Jain alone forgives one task far off among many.
MET_JAIN = 0.95
MET_DEVIATION = 0.25
# fiops wins (loses) a row when its mean Jain index is higher (lower) by at
# least WIN_MARGIN and Welch's t test over the repetitions gives p < WIN_P;
# anything else is a tie, so three runs at 0.999 against 0.998 tie.
WIN_MARGIN = 0.02
WIN_P = 0.05
FIOPS = "fiops"
# The order of schedulers in every table of the report (report.ORDER).
SCHEDULERS = ["none", "mq-deadline", "kyber", "bfq", FIOPS, "iocost"]
MARK = {True: "✓", False: "✗"}

LIMITS = """## The method's limits

What these numbers can and cannot say about a real machine:

* **The device is emulated.**  QEMU's NVMe controller on a raw image file
  (or `null-co` with a fixed latency for deep-knee) throttled to a fixed
  IOPS budget serves requests in arrival order, one per 1/IOPS; at a deep
  device queue the throttle keeps reads and writes in separate queues and
  alternates between them.  A real SSD has internal parallelism, a write
  cache, garbage collection and read/write interference that none of this
  has: shares measured here are the scheduler's decisions against a simple,
  known server, not a prediction of IOPS on a given drive.
* **The CPU is emulated: accelerator {accel}, {vcpus} vCPUs.**  Under TCG on
  these 2-core machines the guest runs 5 to 20
  times slower than on hardware; a run is valid only when the unthrottled
  ceiling is at least twice the throttle, so the throttle, not the
  emulator, sets the pace{unthrottled}.  CPU costs and lock contention do not transfer:
  the overhead table is measured separately on null_blk with `-icount`
  (guest time counts instructions), which ranks schedulers by path length
  and says nothing about cache misses or many cores.
* **Runs are short.**  {lengths} (`runs.csv` runtime_s, ramp_s,
  throttle_iops); the 95% intervals over the repetitions in `verdict.csv`
  say how far that goes.  Tasks that get a few IOPS (the idle class, 32 tasks of
  many-tasks) carry the widest intervals, and nothing here covers minutes
  of steady state, writeback storms or a filling page cache.
* **What transfers** is the policy's shape: which task gets how much when
  they compete, at which device depth a scheduler's choice stops mattering
  because the device queue decides, and which schedulers can hold requests
  back.  Absolute IOPS, latency in milliseconds and CPU cost have to be
  measured on the hardware.
"""


def limits(runs):
    """The limits page, with this matrix's emulator and run lengths."""
    per_run = runs.drop_duplicates("run_id")
    lengths = per_run.groupby(["runtime_s", "ramp_s", "throttle_iops"], dropna=False).agg(
        workloads=("workload", lambda w: ", ".join(dict.fromkeys(w))))
    text = "; ".join("%s s after a %s s ramp %s (%s)"
                     % (rt, ramp, "with no IOPS throttle (IOPS=off)" if pd.isna(iops) else
                        "at %d IOPS, %d requests a run" % (iops, float(rt) * float(iops)),
                        r.workloads)
                     for (rt, ramp, iops), r in lengths.iterrows())
    distinct = {c: ", ".join(str(v) for v in per_run[c].dropna().unique()) or "?"
                for c in ("accel", "vcpus")}
    unthrottled = ("; runs with IOPS=off have no throttle and no such check: they measure "
                   "the emulated guest's own speed, which compares schedulers only within a "
                   "boot (IOPS over none's in the same boot) and not on hardware"
                   if per_run["throttle_iops"].isna().any() else "")
    return LIMITS.format(lengths=text, unthrottled=unthrottled, **distinct)


def labelled(frame, column="config"):
    """frame with a scheduler column: its config without the depth (the
    label config_labels gives with depth=False, per workload)."""
    label = frame[column].str.replace(r" depth \d+", "", regex=True)
    return frame.assign(sched=label)


def worst(tasks, suffix=""):
    """(task, mean deviation) of the task expected a share whose mean
    deviation is furthest from 0; (None, NaN) without such a task."""
    weighted = tasks[tasks["expected" + suffix] > 0].dropna(subset=["deviation" + suffix])
    if weighted.empty:
        return None, np.nan
    row = weighted.loc[weighted["deviation" + suffix].abs().idxmax()]
    return row["task"], float(row["deviation" + suffix])


def met(jain, deviation):
    if pd.isna(jain) or pd.isna(deviation):
        return np.nan
    return bool(jain >= MET_JAIN and abs(deviation) <= MET_DEVIATION)


def verdicts(runs, tasks, run_means):
    """verdict.csv's rows, from the report's frames."""
    per_run = runs[runs["valid"]].drop_duplicates("run_id")
    rows = []
    for r in labelled(run_means).itertuples(index=False):
        key = (tasks["workload"] == r.workload) & (tasks["config"] == r.config)
        own = tasks[key]
        mine = per_run[(per_run["workload"] == r.workload) & (per_run["config"] == r.config)]
        sources = mine["policy_source"].dropna()
        source = sources.iloc[0] if len(sources) else None
        no_policy = bool(mine["policy_none"].any())
        own_line = isinstance(source, str) and source.startswith("expect[") and not no_policy
        task, deviation = worst(own)
        row = {"workload": r.workload, "device_depth": r.device_depth, "device": r.device,
               "scheduler": r.sched, "config": r.config, "n": r.n,
               "jain_index": r.jain_index, "jain_index_ci95": r.jain_index_ci95,
               "work_conservation": r.work_conservation,
               "work_conservation_ci95": r.work_conservation_ci95,
               "worst_task": task, "worst_deviation": deviation,
               "met_common": met(r.jain_index, deviation),
               "own_policy": source if own_line else ("none" if no_policy else ""),
               "jain_own": np.nan, "jain_own_ci95": np.nan, "worst_task_own": None,
               "worst_deviation_own": np.nan, "met_own": np.nan}
        if own_line:
            task, deviation = worst(own, "_policy")
            row.update(jain_own=r.jain_index_policy, jain_own_ci95=r.jain_index_policy_ci95,
                       worst_task_own=task, worst_deviation_own=deviation,
                       met_own=met(r.jain_index_policy, deviation))
        slowest = own.dropna(subset=["p99_ms"])
        slowest = slowest[slowest["task"] != metrics.OTHER]
        if not slowest.empty:
            top = slowest.loc[slowest["p99_ms"].idxmax()]
            row.update(p99_worst_task=top["task"], p99_worst_ms=top["p99_ms"])
        rows.append(dict(row, run_ids=r.run_ids))
    return pd.DataFrame(rows)


def fiops_versus(runs):
    """fiops-vs.csv's rows: per workload, depth, device and other
    scheduler, both Jain indexes over the valid repetitions and the
    verdict."""
    per_run = labelled(runs[runs["valid"]].drop_duplicates("run_id"))
    rows = []
    keys = ["workload", "device_depth", "device"]
    for key, group in per_run.groupby(keys, sort=False):
        mine = group.loc[group["sched"] == FIOPS, "jain_index"].dropna()
        if mine.empty:
            continue
        for other in [s for s in group["sched"].unique() if s != FIOPS]:
            theirs = group.loc[group["sched"] == other, "jain_index"].dropna()
            if theirs.empty:
                continue
            diff = mine.mean() - theirs.mean()
            p = welch_p(mine, theirs)
            rows.append(dict(zip(keys, key), other=other, fiops_jain=mine.mean(),
                             other_jain=theirs.mean(), difference=diff, p_value=p,
                             fiops_runs=len(mine), other_runs=len(theirs),
                             verdict=decide(diff, p)))
    return pd.DataFrame(rows, columns=keys + ["other", "fiops_jain", "other_jain", "difference",
                                               "p_value", "fiops_runs", "other_runs", "verdict"])


def decide(diff, p):
    """win, lose or tie; undecided without a p value (one run a side)."""
    if pd.isna(p):
        return "undecided"
    if abs(diff) >= WIN_MARGIN and p < WIN_P:
        return "win" if diff > 0 else "lose"
    return "tie"


def welch_p(a, b):
    """Welch's two-sided p value; NaN with fewer than two runs a side.
    Runs that all gave one value each side (Jain 1.0 three times) differ
    for certain if the values differ: p 0 then, 1 if they are equal."""
    if len(a) < 2 or len(b) < 2:
        return np.nan
    if a.std() == 0 and b.std() == 0:
        return 0.0 if a.mean() != b.mean() else 1.0
    with warnings.catch_warnings():
        # One side all but equal (0.9999, 1.0, 1.0) warns of lost precision;
        # its variance is still tiny, which is what the test needs.
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


# -- the page -----------------------------------------------------------------


def percent(value):
    return "-" if pd.isna(value) else "%+.0f%%" % (100 * value)


def decimal(value, digits):
    return "-" if pd.isna(value) else "%.*f" % (digits, value)


def cell(row):
    """A verdict table cell: Jain (common) and its mark, the own policy's
    where the scheduler has one, work conservation and the worst task."""
    text = "%s %s" % (decimal(row.jain_index, 3), MARK.get(row.met_common, ""))
    if row.own_policy == "none":
        text += "<br>own: none"
    elif row.own_policy:
        text += "<br>own %s %s" % (decimal(row.jain_own, 3), MARK.get(row.met_own, ""))
    text += "<br>WC %s" % decimal(row.work_conservation, 2)
    if row.worst_task is not None and pd.notna(row.worst_deviation):
        text += ", %s %s" % (row.worst_task, percent(row.worst_deviation))
    return text


def order(frame, column, first):
    rank = {s: i for i, s in enumerate(first)}
    return sorted(frame[column].unique(), key=lambda s: (rank.get(s, len(first)), s))


def verdict_table(verdict, scheds):
    rows = []
    for (workload, depth, device), group in verdict.groupby(
            ["workload", "device_depth", "device"], sort=False):
        by = group.set_index("scheduler")
        rows.append(["%s" % workload, str(depth), device]
                    + [cell(by.loc[s]) if s in by.index else "-" for s in scheds])
    return md_table(["workload", "depth", "device"] + scheds, rows)


def heat_map(verdict, scheds, plot_dir):
    """The Jain index (common line) by workload (rows) and scheduler x depth
    (columns), numbers printed on the cells; returns the PNG."""
    depths = sorted(verdict["device_depth"].unique())
    workloads = list(dict.fromkeys(verdict["workload"]))
    columns = [(s, d) for s in scheds for d in depths]
    table = verdict.set_index(["workload", "scheduler", "device_depth"])["jain_index"]
    frame = pd.DataFrame({"%s d%s" % c: [table.get((w,) + c, np.nan) for w in workloads]
                          for c in columns}, index=workloads)
    where = device_text(verdict.drop_duplicates("workload"))
    return plots.heat_map(os.path.join(plot_dir, "jain-heat-map"), frame,
                          "Jain index, common expect line (verdict.csv jain_index); dN: device "
                          "depth N; %s" % where)


def device_text(per_workload):
    """"nvme" or "nvme, deep-knee on nvme-null 4000 us": the device most
    workloads ran on, then the workloads that ran on another."""
    common = per_workload["device"].mode().iloc[0]
    others = per_workload[per_workload["device"] != common]
    return ", ".join([common] + ["%s on %s" % (r.workload, r.device)
                                 for r in others.itertuples()])


def overhead_section(folder, out, releases=()):
    """The overhead table from make overhead's folder (ratios.csv), copied
    to out as overhead-ratios.csv; text saying why there is none without.
    releases: the matrix's kernels, which the overhead run should share."""
    if not folder:
        return ("## Overhead\n\nNo make overhead folder was given (make report "
                "OVERHEAD=<folder>), so this report has no overhead table.\n")
    ratios = pd.read_csv(os.path.join(folder, "ratios.csv"))
    shutil.copy(os.path.join(folder, "ratios.csv"), os.path.join(out, "overhead-ratios.csv"))
    release = kernel_release(folder)
    header = ["clock", "jobs x QD", "none IOPS"] + [
        "%s IOPS / CPU" % s for s in order(ratios[ratios["scheduler"] != "none"], "scheduler",
                                           SCHEDULERS)]
    scheds = [h.split()[0] for h in header[3:]]
    rows = []
    first_hwq = ratios["hwq"].min()
    for (clock, jobs, qd), group in ratios[ratios["hwq"] == first_hwq].groupby(
            ["clock", "jobs", "qd"], sort=False):
        by = group.set_index("scheduler")
        cells = ["%.2f ± %.2f / %.2f ± %.2f" % (by.at[s, "iops_ratio"], by.at[s, "iops_ci"],
                                                 by.at[s, "cpu_ratio"], by.at[s, "cpu_ci"])
                 if s in by.index else "-" for s in scheds]
        rows.append([clock, "%d x %d" % (jobs, qd), "%.0f" % group["iops_none"].iloc[0]] + cells)
    return ("## Overhead\n\nIOPS and guest CPU time per request relative to none in the same "
            "boot (mean ± 95%% CI over rounds), 4k random reads on null_blk (irqmode=0), "
            "%d hardware queue(s), from `%s` (%s).  Source: `overhead-ratios.csv`, one "
            "row per clock, hwq, jobs, qd and scheduler (iops_ratio, iops_ci, cpu_ratio, "
            "cpu_ci; iops_none).\n\n" % (first_hwq, os.path.basename(os.path.abspath(folder)),
                                         "kernel " + release if release else
                                         "the folder does not record its kernel")
            + md_table(header, rows) + other_kernel(release, releases))


def other_kernel(release, releases):
    if not releases or release in releases:
        return ""
    if not release:
        return ("\n**The overhead folder does not record its kernel, so nothing here checks that "
                "it is the matrix's (%s).**\n" % ", ".join(releases))
    return ("\n**The overhead run's kernel (%s) is not the matrix's (%s): its numbers belong "
            "to another build.**\n" % (release, ", ".join(releases)))


def kernel_release(folder):
    """The kernel a make overhead folder ran: its meta.json's, or the first
    "Linux version" its guests printed (make overhead records no other);
    None when the folder keeps neither (a report's copy of the CSVs)."""
    for root, _, names in sorted(os.walk(folder)):
        if "meta.json" in names:
            release = analyze.read_json(os.path.join(root, "meta.json"), {}).get(
                "kernel", {}).get("release")
            if release:
                return release
        if "console.log" in names:
            with open(os.path.join(root, "console.log"), errors="replace") as f:
                found = re.search(r"Linux version (\S+)", f.read())
            if found:
                return found.group(1)
    return None


def matrix_time(folder, out=None):
    """A sentence on how long the matrix took, from compare.json, whose
    cells go to out's cells.csv (one row per cell: what ran, its exit code,
    boot folder and seconds)."""
    record = analyze.read_json(os.path.join(folder, "compare.json"), {})
    if "elapsed_s" not in record:
        return "The time the matrix took is not recorded (no compare.json elapsed_s)."
    ran = [c for c in record.get("cells", []) if "exit" in c]
    if out:
        pd.DataFrame([dict(c, scheds=" ".join(c.get("scheds", []))) for c in ran]).to_csv(
            os.path.join(out, "cells.csv"), index=False)
    timed = [c["seconds"] for c in ran if c.get("seconds")]
    seconds = sum(timed)
    text = ("The matrix: %d of its %d cells (one boot each, every scheduler in it) ran in "
            "%.0f min (compare.json elapsed_s = %.0f s"
            % (len(ran), record.get("matrix_cells", len(ran)), record["elapsed_s"] / 60,
               record["elapsed_s"]))
    if record.get("parts"):
        text += (", the sum of its cells' boots from %d parts, which ran %.0f s in all"
                 % (len(record["parts"]), record.get("parts_elapsed_s") or 0))
    elif record.get("started"):
        text += ", %s to %s" % (record["started"], record.get("finished", "?"))
    text += "; `cells.csv` seconds: %.0f s over %d boots, %.0f s a boot)." % (
        seconds, len(timed), seconds / max(len(timed), 1))
    failed = [c["cell"] for c in ran if c["exit"] != 0]
    if failed:
        text += "  Cells that failed or were invalid: %s." % " ".join(map(str, failed))
    replaced = record.get("replaced_cells") or []
    if replaced:
        text += ("  Cells run again after a failed or invalid run, whose good run counts: %s "
                 "(compare.json replaced_cells)." % " ".join(str(c["cell"]) for c in replaced))
    missing = record.get("missing_cells") or []
    if missing:
        text += "  Cells no part ran: %s." % " ".join(map(str, missing))
    return text


def row_name(row, keys):
    return ", ".join("%s=%s" % (k, row[k]) for k in keys)


def numbers_say(verdict, versus):
    """Sentences built from the CSVs, each naming the rows it rests on."""
    lines = []
    keys = ["workload", "device_depth", "scheduler"]
    for sched in order(verdict, "scheduler", SCHEDULERS):
        group = verdict[verdict["scheduler"] == sched]
        judged = group["met_own"].where(group["own_policy"].str.startswith("expect["),
                                        group["met_common"])
        lines.append("%s meets the policy it is judged by (its own line where it has one, "
                     "else the common one) in %d of %d rows (`verdict.csv` rows "
                     "scheduler=%s, met_own or met_common)."
                     % (sched, int(judged.eq(True).sum()), int(judged.notna().sum()), sched))
    for other in order(versus, "other", SCHEDULERS):
        group = versus[versus["other"] == other]
        counts = group["verdict"].value_counts()
        lines.append("Against %s, fiops wins %d, ties %d and loses %d of %d rows%s "
                     "(`fiops-vs.csv` rows other=%s)."
                     % (other, counts.get("win", 0), counts.get("tie", 0),
                        counts.get("lose", 0), len(group),
                        "; %d undecided (one run a side)" % counts["undecided"]
                        if counts.get("undecided") else "", other))
        for r in group[group["verdict"] == "lose"].itertuples():
            lines.append("  fiops loses to %s on %s at depth %s: Jain %.3f against %.3f "
                         "(p = %.3f; `fiops-vs.csv` row workload=%s, device_depth=%s, "
                         "other=%s)." % (other, r.workload, r.device_depth, r.fiops_jain,
                                         r.other_jain, r.p_value, r.workload, r.device_depth,
                                         other))
        if (group["difference"] > 0).any():
            best = group.loc[group["difference"].idxmax()]
            lines.append("  The largest gain over %s: %s at depth %s, Jain %.3f against %.3f "
                         "(`fiops-vs.csv` row workload=%s, device_depth=%s, other=%s)."
                         % (other, best["workload"], best["device_depth"], best["fiops_jain"],
                            best["other_jain"], best["workload"], best["device_depth"], other))
    mine = verdict[verdict["scheduler"] == FIOPS].dropna(subset=["work_conservation"])
    if not mine.empty:
        low = mine.loc[mine["work_conservation"].idxmin()]
        lines.append("fiops's lowest work conservation is %.3f, on %s at depth %s "
                     "(`verdict.csv` row %s)." % (low["work_conservation"], low["workload"],
                                                  low["device_depth"], row_name(low, keys)))
    return "\n".join("* " + line if not line.startswith("  ") else "  * " + line.strip()
                     for line in lines) + "\n"


def write(folder, out, runs, tasks, run_means, plot_dir, overhead=None):
    """Write verdict.csv and fiops-vs.csv; returns the first page's markdown."""
    verdict = verdicts(runs, tasks, run_means)
    versus = fiops_versus(runs)
    verdict.to_csv(os.path.join(out, "verdict.csv"), index=False, float_format="%.6g")
    versus.to_csv(os.path.join(out, "fiops-vs.csv"), index=False, float_format="%.6g")
    scheds = order(verdict, "scheduler", SCHEDULERS)
    heat = heat_map(verdict, scheds, plot_dir)
    parts = [matrix_time(folder, out) + "\n",
             "## Verdicts\n\nPer workload, device depth and scheduler (`verdict.csv`, the row "
             "with those workload, device_depth, device and scheduler): the Jain index over "
             "share / expected against the workload's common `# expect:` line with ✓ where "
             "the policy is met (Jain at least %.2f and every task expected a share within "
             "%d%% of it), the same against the scheduler's own line where it documents one "
             "(own; \"own: none\" where it documents no policy for the workload), work "
             "conservation (WC) and the task furthest from its share (mean deviation).\n\n"
             % (MET_JAIN, 100 * MET_DEVIATION) + verdict_table(verdict, scheds),
             "## Jain index by workload, scheduler and depth\n\n"
             + image(heat, "Jain index (verdict.csv jain_index) per workload, scheduler and "
                     "device depth"),
             ]
    # report.depth_plot draws it from the valid runs' task means at 2 depths or more.
    if tasks.loc[tasks["workload"] == "depth-asym", "device_depth"].nunique() > 1:
        png = os.path.join(plot_dir, slug("depth-asym") + "-depth.png")
        parts.append("## Shares against device depth: depth-asym\n\n" + image(
            png, "each task's share of the jobs' IOPS and work conservation against device "
            "depth (task-means.csv share, run-means.csv work_conservation, workload "
            "depth-asym)"))
    releases = sorted(str(r) for r in runs["kernel_release"].dropna().unique())
    parts.append(overhead_section(overhead, out, releases))
    parts.append("## What the numbers say\n\nWritten from the CSVs by "
                 "`analysis/firstpage.py`; fiops wins or loses a row when its mean Jain index "
                 "differs by at least %.2f and Welch's t test over the repetitions gives "
                 "p < %.2f, else it ties.\n\n" % (WIN_MARGIN, WIN_P)
                 + numbers_say(verdict, versus))
    return "\n".join(parts)
