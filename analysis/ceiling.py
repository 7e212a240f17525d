"""Each run's unthrottled ceiling, and the schedulers' speed against none's.

Every run starts with a calibration step (bench.py): the workload under the
run's scheduler on the unthrottled twin of the measured device.  Its total
IOPS, the ceiling (meta.json calibration.ceiling_iops, summary.json
ceiling_iops), is how fast the guest went under that scheduler in that
boot.  A run with IOPS=off (meta.json and summary.json unthrottled) has no
throttle on the measured device either: its number is its total IOPS
(summary.json total_iops), and it has no work conservation.

The host's speed swings from boot to boot (README, Calibration), so the
schedulers compare by their ratio to the none run of the same boot:
ceiling_iops_vs_none and total_iops_vs_none, empty where the boot ran no none
or the run folder does not record its boot.
"""

import os

import pandas as pd

from analysis.markdown import md_table

NONE = "none"
# runs.csv's columns that each get a ratio to none in the same boot.
RATIOS = ("ceiling_iops", "total_iops")


def columns(run_id, meta, summary):
    """runs.csv's columns of one run: its boot, whether it ran without an
    IOPS throttle, its ceiling and its total IOPS (fio's)."""
    calibration = meta.get("calibration") or {}
    return {"boot": boot_of(run_id, meta),
            "unthrottled": bool(meta.get("unthrottled") or summary.get("unthrottled")),
            "ceiling_iops": calibration.get("ceiling_iops", summary.get("ceiling_iops")),
            "total_iops": summary.get("total_iops")}


def boot_of(run_id, meta):
    """The run's boot as a path in the report's folder: the run folder
    itself where its boot ran one scheduler, else the folder above it
    (bench.make_runs); None where meta.json does not record the boot."""
    boot = meta.get("boot")
    if not boot:
        return None
    if len(boot.get("schedulers", [])) == 1:
        return run_id
    return os.path.dirname(run_id) or "."


def add_ratios(runs):
    """runs with <column>_vs_none for each of RATIOS: the run's value over
    that of the plain none run (no tunables) of its boot; NaN where the
    boot is unknown, ran no none, or ran it more than once."""
    per_run = runs.drop_duplicates("run_id")
    nones = per_run[(per_run["scheduler"] == NONE) & (per_run["tune"] == "")
                    & per_run["boot"].notna()].drop_duplicates("boot", keep=False)
    base = nones.set_index("boot")
    for column in RATIOS:
        value = pd.to_numeric(per_run[column], errors="coerce")
        ratio = value / per_run["boot"].map(pd.to_numeric(base[column], errors="coerce"))
        runs[column + "_vs_none"] = runs["run_id"].map(dict(zip(per_run["run_id"], ratio)))
    return runs


def section(configs, run_means, per_run, number):
    """A workload section's ceiling table: each configuration's mean
    ceiling over its valid runs and its ratio to none in the same boot,
    and for configurations run with IOPS=off their total IOPS and its
    ratio.  run_means, per_run: the workload's; number: the report's
    formatter (value, 95% half-width, digits).  [] without a ceiling."""
    valid = per_run[per_run["valid"]]
    if pd.to_numeric(valid["ceiling_iops"], errors="coerce").isna().all():
        return []
    free = set(valid.loc[valid["unthrottled"], "config"])
    by = run_means.set_index("config")
    shown = [("ceiling_iops", 0), ("ceiling_iops_vs_none", 3)]
    header = ["scheduler", "ceiling IOPS", "ceiling / none"]
    if free:
        shown += [("total_iops", 0), ("total_iops_vs_none", 3)]
        header += ["IOPS (IOPS=off)", "IOPS / none"]
    rows = []
    for config in configs:
        rows.append([config] + [
            number(by.at[config, column], by.at[config, column + "_ci95"], digits)
            if column.startswith("ceiling") or config in free else "-"
            for column, digits in shown] + [by.at[config, "n"]])
    text = ("Unthrottled ceilings: each run's calibration step, the workload for its own "
            "scheduler on the device's unthrottled twin (`runs.csv` ceiling_iops; "
            "`run-means.csv` ceiling_iops, mean and 95% CI over the valid runs); "
            "ceiling / none is each run's ceiling over that of the none run in the same boot "
            "(ceiling_iops_vs_none), left out (-) where none did not run in the boot.")
    if free:
        text += ("  Runs with IOPS=off (`runs.csv` unthrottled) had no throttle on the "
                 "measured device either: their number is their total IOPS (total_iops, "
                 "and total_iops_vs_none over none's in the same boot); they have no work "
                 "conservation.")
    return [text + "\n", md_table(header + ["runs"], rows)]
