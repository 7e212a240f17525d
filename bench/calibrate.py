#!/usr/bin/env python3
"""make calibrate: how fast can the guest go, per scheduler, per guest setting?

Boots once per variant of the guest settings and runs the workload
unthrottled under every scheduler in that boot, then prints the
ceilings as a table and writes calibration.json.  This is the evidence for
the defaults in bench/params.py (see the README's calibration section).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import params as params_mod  # noqa: E402
import qemu  # noqa: E402

SCHEDS = ("none", "mq-deadline", "bfq", "kyber", "fiops")
# Each variant changes the defaults by these parameters.
VARIANTS = (
    {"IDLE": "halt", "VCPUS": "2", "IOQPAIRS": "1"},
    {"IDLE": "halt", "VCPUS": "1", "IOQPAIRS": "1"},
    {"IDLE": "halt", "VCPUS": "2", "IOQPAIRS": "2"},
    {"IDLE": "poll", "VCPUS": "2", "IOQPAIRS": "1"},
    {"IDLE": "poll", "VCPUS": "1", "IOQPAIRS": "1"},
)


def run_variant(top_dir, overrides, scheds, depth_env):
    env = dict(os.environ, **overrides)
    if depth_env:
        env["DEPTH"] = depth_env
    p, _ = params_mod.load(env)
    with open(p["JOBFILE"]) as f:
        text = f.read()
    p["NR_REQUESTS"] = p["NR_REQUESTS"] or bench.auto_nr_requests(text)
    steps = [("guest/cal-" + s, qemu.UNTHROTTLED, s, bench.plan_nr_requests(p, s),
              p["CAL_RUNTIME"], 0, "-") for s in scheds]
    name = "-".join("%s%s" % (k.lower(), v) for k, v in sorted(overrides.items()))
    run_dir = os.path.join(top_dir, name)
    os.mkdir(run_dir)
    p["TIMEOUT"] = p["TIMEOUT"] or bench.auto_timeout(p, steps)
    meta = {"params": {k: v for k, v in p.items() if k != "JOBFILE"},
            "accel": "tcg", "timeout": p["TIMEOUT"]}
    bench.write_inputs(run_dir, p, steps, text)
    # The steps run on the unthrottled twin: made like the measured device
    # (DEVICE, LATENCY_US), so that a null device is measured with its latency.
    iops, failed = boot_and_collect(run_dir, p, meta, steps, twin=p["DEVICE"])
    row = {"variant": overrides, "depth": p["DEPTH"], "device": p["DEVICE"],
           "latency_us": p["LATENCY_US"],
           "ceilings": {step[len("cal-"):]: v for step, v in iops.items()},
           "failed": {step[len("cal-"):]: why for step, why in failed.items()}}
    bench.write_json(os.path.join(run_dir, "meta.json"), dict(meta, result=row))
    return row


def boot_and_collect(run_dir, p, meta, steps, twin=params_mod.FILE_DEVICE):
    """Boot once to run steps; return ({step: total IOPS}, {step: why it
    failed}), a step named by its folder under guest/.  twin: bench.boot's."""
    names = [s[0][len("guest/"):] for s in steps]
    try:
        bench.boot(run_dir, p, meta, steps, twin)
    except (bench.RunError, OSError) as e:
        return {}, {name: str(e) for name in names}
    iops, failed = {}, {}
    for name in names:
        try:
            step, _ = bench.collect_step(run_dir, name)
            iops[name] = step["total_iops"]
        except (bench.RunError, OSError, ValueError) as e:
            failed[name] = str(e)
    return iops, failed


def main():
    try:
        params_mod.load(os.environ)
    except params_mod.ParamError as e:
        print("calibrate: %s" % e, file=sys.stderr)
        return 1
    scheds = os.environ.get("SCHEDS", " ".join(SCHEDS)).split()
    when = bench.utc_now()
    workload = os.environ.get("WORKLOAD") or params_mod.DEFAULTS["WORKLOAD"][0]
    top_dir = bench.make_run_dir("calibrate", workload, when)
    rows = []
    for overrides in VARIANTS:
        bench.say("variant %s" % overrides)
        rows.append(run_variant(top_dir, overrides, scheds, os.environ.get("DEPTH")))
    bench.write_json(os.path.join(top_dir, "calibration.json"), rows)
    print("%-40s %s" % ("variant (unthrottled IOPS)", " ".join("%12s" % s for s in scheds)))
    for r in rows:
        label = " ".join("%s=%s" % kv for kv in sorted(r["variant"].items()))
        label += " DEPTH=%d" % r["depth"]
        if r["device"] != params_mod.FILE_DEVICE:
            label += " DEVICE=%s LATENCY_US=%d" % (r["device"], r["latency_us"] or 0)
        cells = ("%12.0f" % r["ceilings"][s] if s in r["ceilings"] else "%12s" % "failed"
                 for s in scheds)
        print("%-40s %s" % (label, " ".join(cells)))
    for r in rows:
        for s, why in sorted(r["failed"].items()):
            print("failed: %s %s: %s" % (r["variant"], s, why))
    print("run: " + top_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
