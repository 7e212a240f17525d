"""A light task under load: an application starting while others read.

A workload's light line

    # light: app alone=app-alone

names its light task, app (one fio job that reads number_ios requests one
at a time and ends: time_based=0 and ramp_time=0 in its section, a
startdelay that puts it inside the load's measured window), and the same
task's run on the idle device, app-alone (behind a stonewall, after every
other job).  Both jobs are set aside from the fairness numbers (no share,
no window, no Jain: metrics.sharing); their numbers are summary.json's
light (fields()):

  app's time under load and alone: fio's job_runtime of each (both count
  from their first I/O, ramp_time=0), and their ratio, the policy's
  measure: at most MAX_RATIO.
  app's per-request latency: fio's lat mean and 99th percentile.
  the device over app's run, from the trace (app's first queue to its
  last completion): the commands the device completed per second over the
  throttle, busy, at least MIN_BUSY (no idling bought with throughput),
  and the others' part of them (every command but app's).

A QD1 task alone on a throttled device moves at most the throttle's rate,
so finishing its requests within MAX_RATIO times that takes at least
1/MAX_RATIO of the device while it runs: the others can have at most the
rest of it then.  Over the load's whole window (others_run) their part is
1 - number_ios / (throttle x window) at best, 0.977 at 700 requests, 1000
IOPS and 30 s.

section() is the report's table of them, from runs.csv's light_ columns
(columns()).
"""

import re

import pandas as pd

from analysis import metrics
from analysis.markdown import md_table

LINE = re.compile(r"^[ \t]*#[ \t]*light:(.*)$", re.M)
MAX_RATIO = 3.0
MIN_BUSY = 0.97
# runs.csv's light columns, each "light_" + a key of fields() (failed joined by "; ").
COLUMNS = ("task", "ratio", "ratio_min", "alone_s", "loaded_s", "lat_mean_ms", "lat_p99_ms",
           "busy", "others", "others_run", "finished_in_load", "passed", "failed")


def spec(text):
    """{"task": app, "alone": its run alone} of the workload's light line;
    None without one.  Raises ValueError on a line it cannot take, or a
    light job that an expect line judges."""
    lines = LINE.findall(text)
    if not lines:
        return None
    if len(lines) > 1:
        raise ValueError("light: the jobfile has %d light lines" % len(lines))
    words = lines[0].split()
    task = [w for w in words if "=" not in w]
    alone = [w[len("alone="):] for w in words if w.startswith("alone=")]
    if len(words) != 2 or len(task) != 1 or len(alone) != 1 or alone[0] in ("", task[0]):
        raise ValueError("light: %r is not JOB alone=JOB" % lines[0].strip())
    result = {"task": task[0], "alone": alone[0]}
    for _, _, body, line in metrics.expect_lines(text):
        weighted = set() if body.strip() == metrics.NO_POLICY else set(
            metrics.parse_weights(body))
        if weighted & set(result.values()):
            raise ValueError("light: %s judges %s, which the light line sets aside"
                             % (line, ", ".join(sorted(weighted & set(result.values())))))
    return result


def names(text):
    """The jobs the light line sets aside (none without one)."""
    light = spec(text)
    return set(light.values()) if light else set()


def job_numbers(job):
    """(I/Os, seconds, lat mean ms, lat p99 ms, number_ios asked) of a fio
    JSON job: job_runtime counts from its first I/O when ramp_time=0.  The
    99th percentile is the lat one (lat_percentiles=1), else clat's."""
    ios = sum(job[d]["total_ios"] for d in ("read", "write", "trim"))
    read = job["read"]
    lat = read.get("lat_ns", {})
    p99 = (lat.get("percentile") or read.get("clat_ns", {}).get("percentile") or {}).get(
        "99.000000")
    asked = job.get("job options", {}).get("number_ios")
    return (ios, job.get("job_runtime", 0) / 1000.0,
            lat["mean"] / 1e6 if lat.get("N") else None,
            p99 / 1e6 if p99 is not None else None,
            int(asked) if asked else None)


def trace_span(bios, task):
    """(first queue, last completion) of the task's bios in trace seconds;
    None when none of them completed."""
    mine = bios[bios["task"] == task]
    done = mine.loc[mine["complete"], "c_time"]
    return None if done.empty else (float(mine["q_time"].min()), float(done.max()))


def requests(events, bios, span, task):
    """(device commands completed in span, those of task): C events with
    data, and the task's bios' commands (attribute.py) completing in it."""
    c = events[(events["action"] == "C") & (events["sectors"] > 0)
               & (events["time"] >= span[0]) & (events["time"] <= span[1])]
    mine = bios[(bios["task"] == task) & bios["complete"] & (bios["c_time"] >= span[0])
                & (bios["c_time"] <= span[1])]
    return len(c), int(mine["commands"].sum())


def over(value, throttle, digits=4):
    return None if value is None or not throttle else round(value / throttle, digits)


def rounded(value, digits=4):
    return None if value is None or pd.isna(value) else round(float(value), digits)


def fields(light, fio, bios, events, throttle, load):
    """summary.json light, None without a light line.  bios carry their
    task (analysis.measure), load is (start, end) of the window in which
    every other job was measured (metrics.common_span over metrics.sharing);
    throttle the device's IOPS (None: IOPS=off, nothing to judge by)."""
    if light is None:
        return None
    out = {"task": light["task"], "alone_task": light["alone"]}
    failed = fio_numbers(out, light, fio)
    failed += trace_numbers(out, light, bios, events, throttle, load)
    failed += marks(out, light, throttle, load)
    out["passed"], out["failed"] = not failed, failed
    return out


def fio_numbers(out, light, fio):
    """Fills out with fio's numbers of the two light jobs; returns what
    went wrong."""
    failed, jobs = [], {}
    for job in fio["jobs"]:
        jobs.setdefault(job["jobname"], []).append(job)
    out["number_ios"] = None
    for prefix, seconds_key, name in (("", "loaded_s", light["task"]),
                                      ("alone_", "alone_s", light["alone"])):
        out.update({prefix + "ios": None, seconds_key: None, prefix + "lat_mean_ms": None,
                    prefix + "lat_p99_ms": None})
        if len(jobs.get(name, [])) != 1:
            failed.append("%d fio jobs are named %s, not 1" % (len(jobs.get(name, [])), name))
            continue
        ios, seconds, mean, p99, asked = job_numbers(jobs[name][0])
        out.update({prefix + "ios": ios, seconds_key: round(seconds, 3),
                    prefix + "lat_mean_ms": rounded(mean), prefix + "lat_p99_ms": rounded(p99)})
        out["number_ios"] = out["number_ios"] or asked
        if asked and ios < asked:
            failed.append("%s did %d of its %d I/Os" % (name, ios, asked))
    return failed


def trace_numbers(out, light, bios, events, throttle, load):
    """Fills out with the trace's numbers: where app ran against the load,
    the device's commands over its run and the load's window, and who else
    the device served while app-alone ran; returns what went wrong."""
    out.update(started_in_load=None, finished_in_load=None, ios_in_load=None, trace_start=None,
               trace_s=None, alone_trace_s=None, alone_other_requests=None, device_iops=None,
               others_iops=None, busy=None, others=None, others_run=None)
    app, alone = trace_span(bios, light["task"]), trace_span(bios, light["alone"])
    if app is None or alone is None:
        return ["the trace has no completed I/O of %s (were its pids recorded?)"
                % " nor ".join(n for n, s in ((light["task"], app), (light["alone"], alone))
                               if s is None)]
    mine = bios[(bios["task"] == light["task"]) & bios["complete"]]
    out.update(trace_start=round(app[0], 6), trace_s=round(app[1] - app[0], 6),
               alone_trace_s=round(alone[1] - alone[0], 6),
               started_in_load=bool(app[0] >= load[0]), finished_in_load=bool(app[1] <= load[1]),
               ios_in_load=int((mine["c_time"] <= load[1]).sum()))
    total, own = requests(events, bios, alone, light["alone"])
    out["alone_other_requests"] = total - own
    total, own = requests(events, bios, app, light["task"])
    if app[1] > app[0]:
        out["device_iops"] = round(total / (app[1] - app[0]), 1)
        out["others_iops"] = round((total - own) / (app[1] - app[0]), 1)
    out["busy"], out["others"] = (over(out["device_iops"], throttle),
                                  over(out["others_iops"], throttle))
    total, own = requests(events, bios, load, light["task"])
    if load[1] > load[0]:
        out["others_run"] = over((total - own) / (load[1] - load[0]), throttle)
    failed = []
    if not out["started_in_load"]:
        failed.append("%s started at %.3f s, before the load's window opened at %.3f s"
                      % (light["task"], app[0], load[0]))
    if not out["finished_in_load"]:
        failed.append("the load ended at %.3f s, before %s finished (%d I/Os done by then)"
                      % (load[1], light["task"], out["ios_in_load"]))
    if out["alone_other_requests"]:
        failed.append("%s shared the device: %d other requests completed in its run"
                      % (light["alone"], out["alone_other_requests"]))
    return failed


def marks(out, light, throttle, load):
    """Fills out's ratio (or ratio_min, where the load ended before app
    finished) and returns the marks it misses."""
    out["ratio"] = out["ratio_min"] = None
    loaded, alone = out["loaded_s"], out["alone_s"]
    if loaded is not None and alone and out["started_in_load"]:
        if out["finished_in_load"]:
            out["ratio"] = round(loaded / alone, 4)
        else:
            # app had run this long when the load ended: its time is longer.
            out["ratio_min"] = round((load[1] - out["trace_start"]) / alone, 4)
    failed = []
    if out["ratio"] is not None and out["ratio"] > MAX_RATIO:
        failed.append("%s took %.2fx its time alone, over %gx" % (light["task"], out["ratio"],
                                                                   MAX_RATIO))
    if out["ratio_min"] is not None:
        failed.append("%s took over %.2fx its time alone" % (light["task"], out["ratio_min"]))
    if out["busy"] is not None and out["busy"] < MIN_BUSY:
        failed.append("the device completed %.3f of the throttle over %s's run, under %g"
                      % (out["busy"], light["task"], MIN_BUSY))
    if not throttle:
        failed.append("no IOPS throttle to judge the device's work by")
    return failed


def summary_line(light):
    """One line for analyze's output."""
    ratio = ("%.2f" % light["ratio"] if light["ratio"] is not None else
             "> %.2f" % light["ratio_min"] if light["ratio_min"] is not None else "-")
    return ("light: %s %s s under load, %s s alone, ratio %s (at most %g); device busy %s, "
            "others %s of the throttle over its run; %s"
            % (light["task"], light["loaded_s"], light["alone_s"], ratio, MAX_RATIO,
               light["busy"], light["others"],
               "passed" if light["passed"] else "failed: " + "; ".join(light["failed"])))


def columns(light):
    """runs.csv's light_ columns of a run's summary.json light (empty
    without one)."""
    light = light or {}
    return {"light_" + key: ("; ".join(light["failed"]) if key == "failed" and light
                             else light.get(key)) for key in COLUMNS}


MARK = {True: "✓", False: "✗"}


def section(per_run, configs, number, mean_ci):
    """The workload section's light table: a row per configuration with
    the means (95% CI) over its valid runs, then each run that failed the
    mark and why.  per_run: runs.csv's rows of the workload, one per run;
    number and mean_ci: the report's formatting and averaging."""
    if "light_task" not in per_run or per_run["light_task"].isna().all():
        return []
    valid = per_run[per_run["valid"] & per_run["light_task"].notna()]
    rows = []
    for config in configs:
        runs = valid[valid["config"] == config]
        if runs.empty:
            continue
        cells = [config]
        for column, digits in (("light_alone_s", 3), ("light_loaded_s", 3)):
            cells.append(number(*mean_ci(runs[column])[:2], digits=digits))
        cells.append(ratio_cell(runs, number, mean_ci))
        for column, digits in (("light_lat_mean_ms", 2), ("light_lat_p99_ms", 2),
                               ("light_busy", 3), ("light_others", 3), ("light_others_run", 3)):
            cells.append(number(*mean_ci(runs[column])[:2], digits=digits))
        passed = runs["light_passed"].eq(True).sum()
        cells += ["%s %d of %d" % (MARK[bool(passed == len(runs))], passed, len(runs)),
                  str(len(runs))]
        rows.append(cells)
    if not rows:
        return []
    text = [("A light task under load (summary.json light, `runs.csv` light_ columns; "
             "analysis/light.py): %s's time under load over its time alone on the idle "
             "device, the policy's measure (at most %g), its latency per request (fio's lat), "
             "and the device's completed commands per second over the throttle during its run "
             "(busy, at least %g: no idling bought with throughput), with the others' part "
             "of them over its run and over the load's whole window.  Passed: ratio and busy "
             "within the marks, every I/O done, the task inside the load's window and alone "
             "on the idle device.\n"
             % (distinct(valid["light_task"]), MAX_RATIO, MIN_BUSY)),
            md_table(["scheduler", "alone (s)", "under load (s)", "ratio", "mean latency (ms)",
                      "p99 latency (ms)", "busy", "others (its run)", "others (load)",
                      "passed", "runs"], rows)]
    failing = valid[valid["light_passed"].eq(False)]
    text += ["* `%s` (%s): %s" % (r.run_id, r.config, r.light_failed)
             for r in failing.itertuples()]
    return ["\n".join(text) + "\n"]


def ratio_cell(runs, number, mean_ci):
    """The mean ratio (95% CI); where the load ended before the task
    finished in some run, "> " the smallest bound, with how many."""
    unfinished = runs[runs["light_ratio"].isna() & runs["light_ratio_min"].notna()]
    if unfinished.empty:
        return number(*mean_ci(runs["light_ratio"])[:2], digits=2)
    bound = pd.concat([runs["light_ratio"].dropna(), unfinished["light_ratio_min"]]).min()
    return "> %.2f (%d of %d unfinished)" % (bound, len(unfinished), len(runs))


def distinct(values):
    return ", ".join(str(v) for v in dict.fromkeys(values.dropna())) or "-"

