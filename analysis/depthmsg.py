"""FIOPS's dispatch-depth messages in the blktrace: the depth over time.

With depth_control on, the FIOPS kernel logs one blktrace message at every
change of the number of requests it lets into the driver.  The control on
sbitmap tokens (patch 26) logs the limit, the steady limit and iops_max:

    fiops depth 4 steady=8 iops=2000

a message whose depth differs from steady is a trial; since it reads the
completions' latency it logs the latency floor too (lat=Fus, the lowest
window mean of 10 s, 0 until a window measured one).  Kernels of series
11-24 logged lat_min there, and probes:

    fiops depth 10 steady=10 iops=2000 lat=4180us
    fiops depth 1 steady=10 iops=2000 lat=4180us probe

depth is the limit now in effect, steady the limit outside trials and
probes, iops the controller's iops_max and lat its lat_min in
microseconds.  " probe" marks a probe of lat_min (depth 1 until two
requests complete alone); a message whose depth differs from steady
without it is a trial of another depth for one window.  " lifted" (patch
24) marks a limit lifted because the driver completes requests in the
task that dispatches them (null_blk with irqmode=0):

    fiops depth 32 steady=32 iops=98000 lat=2us lifted  Times are the
trace's, as for the dispatch messages (analysis/schedmsg.py).  Kernels
from before the steady= field log lines that count as malformed here.
"""

import numpy as np
import pandas as pd

from analysis import schedmsg

DEPTH = (r"^fiops\s+depth\s+(?P<depth>\d+)\s+steady=(?P<steady>\d+)\s+iops=(?P<iops>\d+)"
         r"(?:\s+lat=(?P<lat_us>\d+)us)?(?P<probe>(?:\s+probe)?)(?P<lifted>(?:\s+lifted)?)\s*$")
NUMBERS = ["depth", "steady", "iops"]
COLUMNS = ["time"] + NUMBERS + ["lat_us", "probe", "trial", "lifted"]


def parse(messages):
    """trace.parse_messages() rows -> (changes DataFrame in COLUMNS, number
    of "fiops depth" messages that did not parse)."""
    rows, malformed = schedmsg.extract(messages, DEPTH, r"fiops\s+depth\b",
                                       optional=("lat_us",))
    for name in NUMBERS:
        rows[name] = rows[name].astype(np.int64)
    # Absent from the token control's messages: NaN there.
    rows["lat_us"] = pd.to_numeric(rows["lat_us"], errors="coerce")
    rows["probe"] = rows["probe"] != ""
    rows["lifted"] = rows["lifted"] != ""
    rows["trial"] = (rows["depth"] != rows["steady"]) & ~rows["probe"]
    return rows[COLUMNS], malformed


def held(changes, window, trace_end):
    """Seconds inside window (start, end) during which each message's values
    were in effect: until the next message, the last one until trace_end."""
    times = changes["time"].to_numpy()
    until = np.append(times[1:], max(trace_end, times[-1]))
    return np.clip(np.minimum(until, window[1]) - np.maximum(times, window[0]), 0, None)


def weighted_median(values, weights):
    """The smallest value that holds at least half of the weight; None
    when nothing has weight."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    if not len(cumulative) or cumulative[-1] <= 0:
        return None
    return int(values[order][np.searchsorted(cumulative, cumulative[-1] / 2)])


def summarize(changes, malformed, window, trace_end):
    """summary.json's fiops_depth; None without any depth message.  The
    steady depth's median weighs each value by its time inside the
    measured window, so the start-up depth and a short trial count little."""
    if changes.empty and not malformed:
        return None
    fields = {"changes": len(changes), "probes": int(changes["probe"].sum()),
              "trials": int(changes["trial"].sum()),
              "lifted": int(changes["lifted"].sum()), "malformed": malformed,
              "steady_median": None, "steady_last": None, "depth_min": None,
              "depth_max": None, "iops_last": None, "lat_us_last": None}
    if changes.empty:
        return fields
    last = changes.iloc[-1]
    fields.update(
        steady_median=weighted_median(changes["steady"].to_numpy(),
                                      held(changes, window, trace_end)),
        steady_last=int(last["steady"]), depth_min=int(changes["depth"].min()),
        depth_max=int(changes["depth"].max()), iops_last=int(last["iops"]),
        lat_us_last=None if pd.isna(last["lat_us"]) else int(last["lat_us"]))
    return fields


def depth_table(changes, trace_end):
    """The depth plot's data: one row per message, and the last values once
    more at trace_end, so that the steps reach the end of the trace."""
    end = changes.iloc[[-1]].assign(time=max(trace_end, changes["time"].iloc[-1]),
                                     probe=False, trial=False)
    table = pd.concat([changes, end], ignore_index=True)
    return table.astype({"probe": int, "trial": int})
