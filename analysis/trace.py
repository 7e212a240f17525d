"""Read a run's blktrace files into a DataFrame of events, via blkparse.

blkparse prints every event with FORMAT.  Each event line starts with "@ "
so that blkparse's other output (message events, which bypass -f, and its
closing statistics) can never be taken for an event; the command name goes
last because it is the one field that may hold spaces.  A split (X) needs no
payload field: the kernel traces the front part of the split bio, so the
remainder starts at sector + sectors.

A message event (blk_add_trace_msg, such as bfq's log or FIOPS's dispatch
notes) is printed in blkparse's default layout whatever -f says:

    259,0    1        0     1.234567890   215  m   N <text>

device, CPU, sequence (always 0), time, pid, an optional "ino,gen" cgroup
id, "m", "N", then the text (blkparse.c, handle_notify).  parse_messages()
reads these lines, tolerant of the spacing; the pid there is whoever ran
when the message was logged, so a scheduler that names a task says so in
its text.
"""

import glob
import os
import re
import subprocess
import tempfile

import pandas as pd

from analysis import notes

FORMAT = "@ %c %s %T.%9t %p %a %d %S %n %e %C\\n"
COLUMNS = ["cpu", "seq", "time", "pid", "action", "rwbs", "sector", "sectors", "error", "comm"]
NUMBERS = {"cpu": int, "seq": int, "time": float, "pid": int, "sector": int,
           "sectors": int, "error": int}

SKIPS = re.compile(r"^Skips: (\d+) forward", re.M)
ENTRIES = re.compile(r"^Events \(.*\): (\d+) entries", re.M)
LOG_TOTAL = re.compile(r"Total:\s+(\d+) events \(dropped (\d+)\)")
MESSAGE = re.compile(r"^\s*\d+,\s*\d+\s+(\d+)\s+\d+\s+(\d+\.\d+)\s+(\d+)\s+"
                     r"(?:[0-9a-fA-F]+,[0-9a-fA-F]+\s+)?m\s+N\s+(.*?)\s*$")
MESSAGE_COLUMNS = ["cpu", "time", "pid", "text"]


def parse_line(line):
    """One event line as a tuple in COLUMNS order, or None when malformed."""
    fields = line[2:].rstrip("\n").split(None, len(COLUMNS) - 1)
    if len(fields) == len(COLUMNS) - 1:
        fields.append("")      # no command name known for that pid
    if len(fields) != len(COLUMNS):
        return None
    try:
        return tuple(NUMBERS[c](v) if c in NUMBERS else v for c, v in zip(COLUMNS, fields))
    except ValueError:
        return None


def parse(text):
    """blkparse output -> (events DataFrame, info dict).

    info holds blkparse's own counts: "skips" (events missing from the
    per-CPU sequence, i.e. lost), "entries" (events it read) and
    "bad_lines" (event lines that did not parse; should be 0).
    """
    rows, bad = [], 0
    for line in text.splitlines():
        if not line.startswith("@ "):
            continue
        row = parse_line(line)
        if row is None:
            bad += 1
        else:
            rows.append(row)
    events = pd.DataFrame(rows, columns=COLUMNS)
    info = {"skips": _count(SKIPS, text), "entries": _count(ENTRIES, text), "bad_lines": bad}
    return events, info


def parse_messages(text):
    """blkparse output -> DataFrame of its message events (MESSAGE_COLUMNS)."""
    rows = []
    for line in text.splitlines():
        m = MESSAGE.match(line)
        if m:
            rows.append((int(m.group(1)), float(m.group(2)), int(m.group(3)), m.group(4)))
    return pd.DataFrame(rows, columns=MESSAGE_COLUMNS)


def _count(pattern, text):
    m = pattern.search(text)
    return int(m.group(1)) if m else None


def parse_log(text):
    """blktrace's own report (blktrace.log): events written and dropped."""
    m = LOG_TOTAL.search(text)
    if not m:
        return {"log_events": None, "dropped": None}
    return {"log_events": int(m.group(1)), "dropped": int(m.group(2))}


def devices(trace_dir):
    """Device names that have trace files (<dev>.blktrace.<cpu>) in trace_dir."""
    names = glob.glob(os.path.join(trace_dir, "*.blktrace.*"))
    return sorted({os.path.basename(n).rsplit(".blktrace.", 1)[0] for n in names})


def run_blkparse(trace_dir, device):
    """blkparse output of a device's trace, its messages made readable
    first (see analysis/notes.py); the run folder is not touched."""
    with tempfile.TemporaryDirectory() as tmp:
        notes.untag(trace_dir, device, tmp)
        out = subprocess.run(["blkparse", "-D", tmp, "-i", device, "-f", FORMAT],
                             capture_output=True, text=True, errors="replace", check=True)
    return out.stdout


def load(trace_dir, device=None):
    """Events, info and message events of one traced step (e.g.
    <run>/guest/main), from one blkparse run.

    info adds blktrace's "dropped" count from blktrace.log (None when the
    log is missing or says nothing) and the number of message events to
    blkparse's counts.
    """
    if device is None:
        found = devices(trace_dir)
        if len(found) != 1:
            raise ValueError("%s: expected the trace files of one device, found %s"
                             % (trace_dir, found))
        device = found[0]
    text = run_blkparse(trace_dir, device)
    events, info = parse(text)
    messages = parse_messages(text)
    info["device"] = device
    info["messages"] = len(messages)
    log = os.path.join(trace_dir, "blktrace.log")
    log_text = ""
    if os.path.exists(log):
        with open(log, errors="replace") as f:
            log_text = f.read()
    info.update(parse_log(log_text))
    return events, info, messages
