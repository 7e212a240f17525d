#!/usr/bin/env python3
"""make calibrate-size: what does a request of each size cost the throttled
device, and which FIOPS size_scale matches it?

One boot under SCHED (default none), the measured device throttled as IOPS,
BPS and IOPS_SIZE say (IOPS_SIZE=4096 when neither BPS nor IOPS_SIZE is
given).  For each block size one random reader (libaio, direct, QD4) runs
CAL_RUNTIME seconds on the throttled device, a plan step with its own
jobfile.  The device time per request is t(S) = 1/IOPS(S); a least-squares
line t(S) = a + b*S gives size_scale (analysis/devcost.size_scale_for).
Writes calibration-size.json and prints size_scale=<N>.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (puts the top folder on the path for analysis)
import calibrate  # noqa: E402
import jobfile  # noqa: E402
import params as params_mod  # noqa: E402
import qemu  # noqa: E402
from analysis import devcost  # noqa: E402

SIZES = tuple(4096 << n for n in range(7))  # 4k .. 256k
JOB = """\
# calibrate-size: one random reader of {bs} bytes, direct, libaio, QD4.
[size-{label}]
rw=randread
bs={bs}
direct=1
ioengine=libaio
iodepth=4
"""


def load_params(env):
    """params for the sweep: one scheduler (variant), size charging on by
    default (IOPS_SIZE=4096, unless IOPS=off, which only BPS can charge)."""
    env = dict(env)
    if not env.get("BPS") and not env.get("IOPS_SIZE") and env.get("IOPS") != "off":
        env["IOPS_SIZE"] = "4096"
    p, notes = params_mod.load(env)
    if params_mod.unthrottled(p) and p["BPS"] is None:
        raise params_mod.ParamError("IOPS=off: calibrate-size measures what a throttle charges "
                                    "each size, and with IOPS=off only BPS could; give BPS or "
                                    "an IOPS number")
    if len(p["VARIANTS"]) != 1:
        raise params_mod.ParamError("SCHED=%s: calibrate-size runs under one scheduler"
                                    % env.get("SCHED"))
    p = params_mod.run_params(p, p["VARIANTS"][0])
    # The sweep is the workload: WORKLOAD's jobfile is not run.
    del p["JOBFILE"]
    p["WORKLOAD"] = "calibrate-size"
    p["NR_REQUESTS"] = p["NR_REQUESTS"] or bench.auto_nr_requests(JOB)
    return p, notes


def label(size):
    return "%dk" % (size // 1024)


def step_name(size):
    return "size-" + label(size)


def write_steps(run_dir, p):
    """A jobfile and a plan step per size, on the throttled device, untraced."""
    nr = bench.plan_nr_requests(p, p["SCHED"])
    steps = []
    for size in SIZES:
        name = "job-%s.fio" % label(size)
        with open(os.path.join(run_dir, name), "w") as f:
            f.write(jobfile.prepare(JOB.format(bs=size, label=label(size))))
        steps.append(("guest/" + step_name(size), qemu.THROTTLED, p["SCHED"], nr,
                      p["CAL_RUNTIME"], 0, bench.tune_column(p["TUNE"]), name))
    bench.write_plan(run_dir, p, steps)
    return steps


def fit(rows):
    """Least squares t = a + b*S over the measured sizes: (a, b, r^2)."""
    s = np.array([r["bs"] for r in rows], dtype=float)
    t = np.array([r["t_s"] for r in rows], dtype=float)
    b, a = np.polyfit(s, t, 1)
    ss_tot = float(((t - t.mean()) ** 2).sum())
    ss_res = float(((t - (a + b * s)) ** 2).sum())
    return float(a), float(b), 1.0 - ss_res / ss_tot if ss_tot else 1.0


def result(p, iops, failed):
    """calibration-size.json: the per-size table, the fit and size_scale.

    iops and failed are calibrate.boot_and_collect's, by step name."""
    model = params_mod.device_cost_model(p)
    failed = dict(failed)
    rows = []
    for size in SIZES:
        name = step_name(size)
        if name in failed:
            continue
        if not iops.get(name):
            failed[name] = "fio measured no I/O"
            continue
        rows.append({"bs": size, "iops": iops[name], "t_s": 1.0 / iops[name],
                     "model_t_s": devcost.request_cost(size, model)})
    out = {"device_cost_model": model, "scheduler": p["SCHED"], "variant": p["VARIANT"],
           "runtime": p["CAL_RUNTIME"], "sizes": rows, "failed": failed,
           "a": None, "b": None, "r2": None, "size_scale": None}
    if len(rows) < 2:
        failed["fit"] = "fewer than 2 sizes measured"
        return out
    out["a"], out["b"], out["r2"] = fit(rows)
    try:
        out["size_scale"] = devcost.size_scale_for(out["a"], out["b"])
    except ValueError as e:
        failed["fit"] = str(e)
    return out


def report(out):
    print("%8s %10s %10s %12s" % ("size", "IOPS", "t (ms)", "model t (ms)"))
    for r in out["sizes"]:
        print("%8s %10.1f %10.3f %12.3f"
              % (label(r["bs"]), r["iops"], 1000 * r["t_s"], 1000 * r["model_t_s"]))
    for name, why in sorted(out["failed"].items()):
        print("failed: %s: %s" % (name, why))
    if out["a"] is not None:
        print("fit: t(S) = a + b*S, a = %.4f ms, b = %.4f ms per 4 KiB, r^2 = %.4f"
              % (1000 * out["a"], 1000 * 4096 * out["b"], out["r2"]))
    if out["size_scale"] is not None:
        print("size_scale=%d" % out["size_scale"])


def main():
    try:
        p, notes = load_params(os.environ)
    except params_mod.ParamError as e:
        print("calibrate-size: %s" % e, file=sys.stderr)
        return 1
    problem = bench.check_kernel(p)
    if problem:
        print("calibrate-size: " + problem, file=sys.stderr)
        return 1
    when = bench.utc_now()
    run_dir = bench.make_run_dir("calibrate-size", "", when)
    steps = write_steps(run_dir, p)
    p["TIMEOUT"] = p["TIMEOUT"] or bench.auto_timeout(p, steps)
    meta = bench.base_meta(p, notes, bench.read_json(os.path.join(bench.BUILD, "kernel.json")),
                           when)
    meta.update(timeout=p["TIMEOUT"], scheduler=p["SCHED"], variant=p["VARIANT"],
                workload_description=JOB.splitlines()[0].lstrip("# "))
    meta["accel"], meta["accel_note"] = bench.choose_accel(p, run_dir)
    iops, failed = calibrate.boot_and_collect(run_dir, p, meta, steps)
    out = result(p, iops, failed)
    bench.write_json(os.path.join(run_dir, "calibration-size.json"), out)
    meta.update(status="ok" if iops else "failed", end=bench.utc_now().isoformat(),
                result={k: out[k] for k in ("a", "b", "r2", "size_scale", "failed")})
    bench.write_json(os.path.join(run_dir, "meta.json"), meta)
    report(out)
    print("run: " + run_dir)
    return 0 if out["size_scale"] is not None and not out["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
