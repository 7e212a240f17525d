#!/usr/bin/env python3
"""make compare: the scheduler x workload x device-depth matrix, repeated.

Every scheduler of one (workload, depth, repetition) runs in the same boot
(bench.py with SCHED naming them all), so that their ratios come from one
run; the order rotates with each repetition so that no scheduler always
goes first.  Everything lands in results/<UTC>-compare/, one boot folder
per cell, and each run folder is analysed from its blktrace.

The matrix is a numbered list of cells (one boot each), the same for the
same parameters on any machine.  CELLS picks some of them ("1-27 40"), so
that the matrix can be split over several machines; `--merge PART...`
joins their compare folders into one for make report.  `--list` prints the
cells.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import params as params_mod  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# Every fairness workload: equal shares, reads against writes, priority
# levels, sizes, depth asymmetry, many tasks, buffered writeback, cgroup
# weights, and the deep device with a latency floor.  Not ioprio-rt (one
# job is expected everything: it tells a class order, not a share),
# qd4-qd16 and qd4-qd512 (depth-asym's question with two tasks),
# lift-transition (a check of FIOPS's depth lift), groups-nested, and the
# integrity ones (no fairness).
WORKLOADS = ("equal-readers", "readers-writers", "ioprio", "size-mix", "depth-asym",
             "many-tasks", "sync-async", "groups", "deep-knee")
# Device depths: 3 tags, where requests wait in the scheduler; 31; and 1022,
# where every request of a workload fits the device and waits in the throttle.
DEPTHS = "4 32 1023"
# The device a workload is about, unless the environment names one: deep-knee
# is meant for a device with a 4 ms latency floor whose knee is 8 requests in
# flight (README, Null device with a latency floor).
# many-tasks runs longer: its 32 tasks get about 31 IOPS each, 125 I/Os in
# 4 s, and a request or two cut by a job's window edges then puts blktrace
# and fio more than 1% apart (measured 2026-12-06: 0.8% to 1.6%).  At 12 s
# the same edges are under 0.6%.
WORKLOAD_ENV = {"deep-knee": {"DEVICE": "nvme-null", "LATENCY_US": "4000", "IOPS": "2000"},
                "many-tasks": {"RUNTIME": "12", "CAL_RUNTIME": "2"}}
# Run lengths.  A boot costs about 10 s plus, per scheduler, its fio time
# (CAL_RUNTIME + RAMP, then RUNTIME + RAMP) and about 4 s of switching and
# analysis: measured 2026-12-03, 100 s a boot of 5 schedulers at RUNTIME=10
# RAMP=1 CAL_RUNTIME=2, and 2026-12-06, 52 s a boot of 2 at RUNTIME=12 RAMP=2
# CAL_RUNTIME=3.  The default matrix is 9 workloads x 3 depths x 3
# repetitions = 81 boots; at these lengths a boot is 10 + 5 x (1 + 1 + 4 + 1
# + 4) = 65 s, 81 x 65 s = 88 min.  4 s at 1000 IOPS is 4000 I/Os a run;
# the report gives the confidence intervals they buy.  many-tasks' 9 boots
# at RUNTIME=12 CAL_RUNTIME=2 add 9 x 5 x 9 s = 7 min.
SHORT = {"RUNTIME": "4", "RAMP": "1", "CAL_RUNTIME": "1"}


def matrix(env):
    """Every cell of the matrix env asks for, numbered from 1; CELLS does not
    change it (selection picks from it)."""
    # Variants too ("bfq bfq:low_latency=0"): bench.py gets them back as SCHED.
    scheds = [v["entry"] for v in
              params_mod.parse_scheds(env.get("SCHEDS") or " ".join(params_mod.SCHEDULERS), [])]
    workloads = (env.get("WORKLOADS") or " ".join(WORKLOADS)).split()
    depths = [params_mod.parse_int("DEPTH", d) for d in (env.get("DEPTHS") or DEPTHS).split()]
    repeat = env.get("REPEAT") or "3"
    if not repeat.isdigit() or int(repeat) < 1:
        raise ValueError("REPEAT=%s: must be a whole number, 1 or more" % repeat)
    repeat = int(repeat)
    cells = []
    for rep in range(repeat):
        for depth in depths:
            for w in workloads:
                shift = rep % len(scheds)
                cells.append({"cell": len(cells) + 1, "workload": w, "depth": depth,
                              "repetition": rep + 1,
                              "scheds": scheds[shift:] + scheds[:shift]})
    # Each cell's parameters as its bench.py will read them, so that a bad
    # one (a verifying workload on DEVICE=nvme-null) stops the matrix
    # before the first boot rather than failing its cells one by one.
    for cell in cells:
        full = cell_env(env, cell)
        p, _ = params_mod.load(full)
        cell["device"] = p["DEVICE"]
        cell["lengths"] = {k: full[k] for k in SHORT}
    return cells


def cell_env(env, cell):
    """bench.py's environment for one cell: the cell's schedulers, workload
    and depth, and the workload's device and SHORT's run lengths unless env
    sets them."""
    full = dict(env, SCHED=" ".join(cell["scheds"]), WORKLOAD=cell["workload"],
                DEPTH=str(cell["depth"]))
    # The workload's own settings come last: they override SHORT's lengths.
    for k, v in list(SHORT.items()) + list(WORKLOAD_ENV.get(cell["workload"], {}).items()):
        full[k] = env.get(k) or v
    return full


def fingerprint(cells, env):
    """What makes two compare folders parts of one matrix: the same cells
    and the same parameters."""
    keys = ("cell", "workload", "depth", "repetition", "scheds", "device")
    text = json.dumps([[c[k] for k in keys] for c in cells] + [sorted(env.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_cells(text, count):
    """The cell numbers CELLS names ("3", "1-27", "1-9 40"), in order;
    ValueError for anything else or a number outside 1..count."""
    picked = []
    for word in text.split():
        first, dash, last = word.partition("-")
        if not (first.isdigit() and (last.isdigit() or not dash)):
            raise ValueError("CELLS=%s: %r is not a cell number or a range N-M" % (text, word))
        lo, hi = int(first), int(last or first)
        if not 1 <= lo <= hi <= count:
            raise ValueError("CELLS=%s: %s is outside the matrix's cells 1-%d"
                             % (text, word, count))
        picked += [n for n in range(lo, hi + 1) if n not in picked]
    if not picked:
        raise ValueError("CELLS is empty: give cell numbers (1-%d) or leave it unset" % count)
    return picked


def cell_line(cell):
    return "%d %s DEPTH=%d rep %d (%s) %s" % (cell["cell"], cell["workload"], cell["depth"],
                                             cell["repetition"], " ".join(cell["scheds"]),
                                             cell["device"])


# The signal that stopped the matrix, and the bench.py running meanwhile.
stopped = []
running = []


def on_signal(signum, frame):
    """Pass SIGINT or SIGTERM on to the running bench.py, which kills its
    guest and marks its runs failed; the matrix stops after it."""
    if not stopped:
        stopped.append(signal.Signals(signum).name)
    for proc in running:
        proc.send_signal(signal.SIGTERM)


def run_cell(cell, out_dir, env):
    """One boot; returns (exit code, boot folder or None, bench's last stderr line)."""
    full = dict(cell_env(env, cell), RESULTS=out_dir)
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "bench.py")], env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    running.append(proc)
    try:
        stdout, stderr = proc.communicate()
    finally:
        running.remove(proc)
    with open(os.path.join(out_dir, "bench.log"), "a") as f:
        f.write(stdout + stderr)
    lines = stdout.strip().splitlines()
    boot = lines[-1][len("run: "):] if lines and lines[-1].startswith("run: ") else None
    return proc.returncode, boot, stderr.strip().splitlines()[-1:] or [""]


def eta(started, done, total):
    if not done:
        return "?"
    left = (time.monotonic() - started) / done * (total - done)
    return "%dm%02ds" % divmod(int(left), 60)


def utc_text():
    return bench.utc_now().strftime("%Y-%m-%dT%H:%M:%SZ")


def run_matrix(cells, picked, env):
    """Run the picked cells into a new compare folder; returns (exit code, folder)."""
    out_dir = bench.make_run_dir("compare", "", bench.utc_now())
    params_env = {k: env[k] for k in params_mod.DEFAULTS if env.get(k)}
    todo = [c for c in cells if c["cell"] in picked]
    record = {"matrix_cells": len(cells), "fingerprint": fingerprint(cells, params_env),
              "cells": todo, "env": params_env, "started": utc_text()}
    bench.write_json(os.path.join(out_dir, "compare.json"), record)
    started, worst = time.monotonic(), 0
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    for i, cell in enumerate(todo):
        if stopped:
            break
        t0 = time.monotonic()
        code, boot, last = run_cell(cell, out_dir, env)
        cell.update(exit=code, boot=os.path.basename(boot) if boot else None,
                    seconds=round(time.monotonic() - t0, 1))
        worst = max(worst, code)
        print("compare: [%d/%d] %s DEPTH=%d rep %d (%s): %s in %ds, elapsed %ds, ETA %s"
              % (i + 1, len(todo), cell["workload"], cell["depth"], cell["repetition"],
                 " ".join(cell["scheds"]), {0: "ok", 2: "INVALID"}.get(code, "FAILED"),
                 cell["seconds"], time.monotonic() - started, eta(started, i + 1, len(todo))),
              flush=True)
        if code:
            print("compare:   " + last[0], flush=True)
        record.update(finished=utc_text(), elapsed_s=round(time.monotonic() - started, 1))
        bench.write_json(os.path.join(out_dir, "compare.json"), record)
    if stopped:
        record["interrupted"] = stopped[0]
        bench.write_json(os.path.join(out_dir, "compare.json"), record)
        print("compare: stopped by %s; the cells without an exit code did not run"
              % stopped[0], file=sys.stderr)
    print("run: " + out_dir)
    return (bench.INTERRUPTED_EXIT if stopped else worst), out_dir


def read_parts(parts):
    """[(folder, compare.json, picked cell numbers or None)] of the parts,
    given as FOLDER or FOLDER:CELLS ("A-compare:1-5,7": only those cells);
    ValueError unless all come from one matrix."""
    read = []
    for part in parts:
        folder, colon, picked = part.partition(":")
        path = os.path.join(folder, "compare.json")
        if not os.path.isfile(path):
            raise ValueError("%s: no compare.json; not a make compare folder" % folder)
        record = bench.read_json(path)
        cells = parse_cells(picked.replace(",", " "), record["matrix_cells"]) if colon else None
        read.append((folder, record, cells))
    prints = {record.get("fingerprint") for _, record, _ in read}
    if len(prints) != 1 or None in prints:
        raise ValueError("the parts come from different matrices (compare.json fingerprint: %s);"
                         " run every part with the same SCHEDS, WORKLOADS, DEPTHS, REPEAT and "
                         "bench parameters" % ", ".join(sorted(str(p) for p in prints)))
    return read


def pick_runs(read):
    """(kept, replaced): per cell the one run that counts, whatever the
    parts' order: its only successful run, else (all failed) its last;
    ValueError for a cell that succeeded in two parts."""
    runs = {}
    for folder, record, picked in read:
        for cell in record["cells"]:
            if "exit" in cell and (picked is None or cell["cell"] in picked):
                runs.setdefault(cell["cell"], []).append(dict(cell, folder=folder))
    kept, replaced = [], []
    for n in sorted(runs):
        good = [c for c in runs[n] if c["exit"] == 0]
        if len(good) > 1:
            raise ValueError("cell %d ran in both %s and %s; leave one out (FOLDER:CELLS)"
                             % (n, good[0]["folder"], good[1]["folder"]))
        keep = good[0] if good else runs[n][-1]
        kept.append(keep)
        replaced += [c for c in runs[n] if c is not keep]
    return kept, replaced


def part_name(folder):
    """How compare.json names a part: its folder's own name."""
    return os.path.basename(os.path.abspath(folder))


def link_boots(cells, out_dir):
    """Link each cell's boot folder into out_dir as c<cell>-<boot>: two
    machines can name two boots alike (the same second, schedulers and
    workload at another depth)."""
    for cell in cells:
        folder = cell.pop("folder")
        cell["part"] = part_name(folder)
        if cell.get("boot"):
            source = os.path.join(os.path.abspath(folder), cell["boot"])
            cell["boot"] = "c%d-%s" % (cell["cell"], cell["boot"])
            os.symlink(os.path.relpath(source, out_dir), os.path.join(out_dir, cell["boot"]))


def merge(parts):
    """Join compare folders of one matrix into a new one, each cell's boot
    linked, compare.json with the cells, each part and the matrix's time;
    returns (folder, cells that no part ran)."""
    read = read_parts(parts)
    cells, replaced = pick_runs(read)
    for cell in replaced:
        cell["part"] = part_name(cell.pop("folder"))
    out_dir = bench.make_run_dir("compare", "", bench.utc_now())
    try:
        link_boots(cells, out_dir)
    except OSError:
        shutil.rmtree(out_dir)
        raise
    total = read[0][1]["matrix_cells"]
    ran = {c["cell"] for c in cells}
    record = {"matrix_cells": total, "fingerprint": read[0][1]["fingerprint"],
              "cells": cells, "env": read[0][1]["env"],
              "missing_cells": [n for n in range(1, total + 1) if n not in ran],
              "replaced_cells": replaced,
              "parts": [{"folder": part_name(f),
                         "started": r.get("started"), "finished": r.get("finished"),
                         "elapsed_s": r.get("elapsed_s"), "cells": len(r["cells"]),
                         "taken": "all" if t is None else " ".join(map(str, t))}
                        for f, r, t in read],
              # The matrix's time: its cells' boots, wherever they ran.
              "elapsed_s": round(sum(c.get("seconds") or 0 for c in cells), 1),
              "parts_elapsed_s": round(sum(r.get("elapsed_s") or 0 for _, r, _ in read), 1)}
    bench.write_json(os.path.join(out_dir, "compare.json"), record)
    return out_dir, record["missing_cells"]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    env = dict(os.environ)
    try:
        if argv[:1] == ["--merge"]:
            if len(argv) < 2:
                raise ValueError("--merge: give the compare folders to join")
            out_dir, missing = merge(argv[1:])
            if missing:
                print("compare: cells not run in any part: %s"
                      % " ".join(map(str, missing)), file=sys.stderr)
            print("run: " + out_dir)
            return 0
        if argv and argv != ["--list"]:
            raise ValueError("unknown arguments %s (--list, or --merge FOLDER...)"
                             % " ".join(argv))
        cells = matrix(env)
        picked = parse_cells(env["CELLS"], len(cells)) if env.get("CELLS") else \
            [c["cell"] for c in cells]
    except (params_mod.ParamError, ValueError) as e:
        print("compare: %s" % e, file=sys.stderr)
        return 1
    if argv == ["--list"]:
        print("\n".join(cell_line(c) for c in cells if c["cell"] in picked))
        return 0
    return run_matrix(cells, picked, env)[0]


if __name__ == "__main__":
    sys.exit(main())
