#!/usr/bin/env python3
"""make bench: boot the built kernel in QEMU on a throttled NVMe device and
run one workload under one scheduler, into a new run folder.

A run has two steps in one boot: a calibration on an unthrottled twin of
the device (same scheduler, depth and jobfile) that measures the guest's
ceiling, then the measured run on the throttled device with blktrace.  The
run is valid only when the ceiling is at least twice the throttle: below
that the emulator, not the throttle, sets the numbers.  With IOPS=off the
measured device has no IOPS throttle and that check does not apply: such a
run measures how fast each scheduler goes, its total IOPS.
"""

import copy
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from analysis import analyze as trace_analysis  # noqa: E402
from analysis import files  # noqa: E402
from analysis import light  # noqa: E402
from analysis.stress import findings as dmesg_findings  # noqa: E402
import jobfile  # noqa: E402
import params as params_mod  # noqa: E402
import qemu  # noqa: E402
import summary  # noqa: E402

TOP = params_mod.TOP
BUILD = os.environ.get("BUILD") or os.path.join(TOP, "build")
RESULTS = os.environ.get("RESULTS") or os.path.join(TOP, "results")
KERNEL = os.path.join(BUILD, "linux", "arch", "x86", "boot", "bzImage")
INITRD = os.path.join(BUILD, "initramfs.cpio")
DISK_SIZE = 1 << 30
CEILING_MARGIN = 2.0


class RunError(Exception):
    """The run could not complete; the message is the one-line reason."""


class Interrupted(RunError):
    """SIGINT or SIGTERM arrived: the guest is killed, the runs marked failed."""


# The shell's exit status for a command killed by SIGINT.
INTERRUPTED_EXIT = 130


# The first interrupt's reason; later signals are ignored, so that they
# cannot break the writing of the failed runs' meta.json.
interrupted = []


def on_signal(signum, frame):
    if interrupted:
        return
    interrupted.append("interrupted by %s" % signal.Signals(signum).name)
    raise Interrupted(interrupted[0])


def say(msg):
    print("bench: " + msg, flush=True)


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, data):
    files.write_json(path, data)


def kernel_config():
    with open(os.path.join(BUILD, "linux", ".config")) as f:
        return f.read()


def has_fiops():
    return re.search(r"^CONFIG_MQ_IOSCHED_FIOPS=[ym]$", kernel_config(), re.M) is not None


def harness_revision():
    out = subprocess.run(["git", "-C", TOP, "describe", "--always", "--dirty"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def make_run_dir(sched, workload, when):
    """results/<UTC time>-<sched>-<workload>/, never reusing a folder."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(workload))
    if name.endswith(".fio"):
        name = name[:-4]
    parts = [when.strftime("%Y%m%dT%H%M%SZ"), sched] + ([name] if name else [])
    base = os.path.join(RESULTS, "-".join(parts))
    os.makedirs(RESULTS, exist_ok=True)
    for n in range(1, 1000):
        path = base if n == 1 else "%s.%d" % (base, n)
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
    raise RunError("cannot create a run folder under %s" % RESULTS)


def tune_column(items):
    """A plan's tunables column: name=value,... or "-" for none."""
    return ",".join("%s=%s" % tuple(kv) for kv in items) or "-"


def plan_nr_requests(p, sched):
    """A step's nr_requests column.  0 tells guest/init to leave
    queue/nr_requests as the kernel set it when it selected the scheduler:
    for none, which has no scheduler queue to size, and for
    NR_REQUESTS=kernel (blk-mq: 2 x min(device tags, 128)).  What the guest
    read back is meta.json's nr_requests_set either way."""
    if sched == "none" or p["NR_REQUESTS"] == params_mod.KERNEL_NR_REQUESTS:
        return 0
    return p["NR_REQUESTS"]


def plan_steps(runs, boot_dir):
    """(folder, serial, sched, nr_requests, runtime, trace, tune) per step.

    runs is [(run parameters, run folder)], one per variant of SCHED (see
    params.run_params).  Each gets a calibration on the unthrottled twin and
    then the measured step, in the order SCHED names them, with its own
    tunables.
    """
    steps = []
    for p, run_dir in runs:
        sched, tune = p["SCHED"], tune_column(p["TUNE"])
        nr = plan_nr_requests(p, sched)
        guest = os.path.normpath(os.path.join(os.path.relpath(run_dir, boot_dir), "guest"))
        steps.append((guest + "/calibration", qemu.UNTHROTTLED, sched, nr,
                      p["CAL_RUNTIME"], 0, tune))
        steps.append((guest + "/main", qemu.THROTTLED, sched, nr, p["RUNTIME"], 1, tune))
    return steps


def make_runs(p, when):
    """The boot folder and [(run parameters, run folder)], one per variant:
    the boot folder itself for one, <boot folder>/<label>/ for several."""
    labels = [v["label"] for v in p["VARIANTS"]]
    boot_dir = make_run_dir("+".join(labels), p["WORKLOAD"], when)
    return boot_dir, [(params_mod.run_params(p, v),
                       boot_dir if len(labels) == 1 else os.path.join(boot_dir, v["label"]))
                      for v in p["VARIANTS"]]


def auto_timeout(p, steps):
    """Boot allowance plus each step's fio time with room for a slow host."""
    return 60 + sum(int((s[4] + p["RAMP"]) * 1.5) + 20 for s in steps)


def choose_accel(p, run_dir):
    if p["ACCEL"] != "kvm":
        return "tcg", "tcg requested"
    ok, why = qemu.probe_kvm(KERNEL, run_dir)
    if ok:
        return "kvm", why
    say("KVM does not work here (%s); falling back to TCG" % why)
    return "tcg", why


def auto_nr_requests(text):
    """NR_REQUESTS=auto: room for every request the workload can have in
    flight, so that they wait in the scheduler, not for a tag."""
    return min(max(64, jobfile.total_depth(text)), params_mod.RANGES["NR_REQUESTS"][1])


def write_plan(run_dir, p, steps):
    """The guest's plan, a step a line, and guest.env.  A step may add an
    eighth column, its jobfile in the run folder; without it the guest
    runs job.fio."""
    with open(os.path.join(run_dir, "plan"), "w") as f:
        f.write("# folder serial scheduler nr_requests (0: the kernel's) runtime trace "
                "tunables [jobfile]\n")
        for s in steps:
            f.write(" ".join(str(x) for x in s) + "\n")
    with open(os.path.join(run_dir, "guest.env"), "w") as f:
        f.write("FIO_RAMP=%d\n" % p["RAMP"])
        f.write("UDEV=%d\n" % p.get("UDEV", False))


def write_inputs(run_dir, p, steps, text):
    with open(os.path.join(run_dir, "job.fio"), "w") as f:
        f.write(jobfile.prepare(text))
    shutil.copy(p["JOBFILE"], os.path.join(run_dir, "workload.fio"))
    write_plan(run_dir, p, steps)


def make_disks(run_id):
    """Sparse raw images, outside the run folder; removed after the run.
    A null device (DEVICE=nvme-null) leaves its image unused."""
    d = os.path.join(BUILD, "disks", run_id)
    os.makedirs(d, exist_ok=True)
    paths = {}
    for serial in (qemu.THROTTLED, qemu.UNTHROTTLED):
        paths[serial] = os.path.join(d, serial + ".img")
        with open(paths[serial], "wb") as f:
            f.truncate(DISK_SIZE)
    return d, paths


def backend(device, image, p):
    """A namespace's -drive backend: the image file, or the null device
    with p's latency, as large as the image (DISK_SIZE)."""
    if device == params_mod.NULL_DEVICE:
        return qemu.null_backend(DISK_SIZE, p["LATENCY_US"])
    return qemu.file_backend(image)


def disk_args(p, disks, twin=params_mod.FILE_DEVICE):
    """The measured device (DEVICE), throttled, and its twin, which is not.

    The twin's calibration measures what the guest can do without a
    throttle, the ceiling each run checks against 2x IOPS, so a run keeps
    it on a file: a null twin with a latency would measure the latency.
    make calibrate, which asks what the device itself can do, passes
    twin=DEVICE.
    """
    return [qemu.nvme_args(qemu.THROTTLED, backend(p["DEVICE"], disks[qemu.THROTTLED], p),
                           p["IOQPAIRS"], params_mod.device_cost_model(p)),
            qemu.nvme_args(qemu.UNTHROTTLED, backend(twin, disks[qemu.UNTHROTTLED], p),
                           p["IOQPAIRS"])]


def boot(run_dir, p, meta, steps, twin=params_mod.FILE_DEVICE):
    """Boot once and run the plan; twin is the unthrottled device (disk_args)."""
    disk_dir, disks = make_disks(os.path.basename(run_dir))
    try:
        console = os.path.join(run_dir, "console.log")
        cmd = qemu.command(
            KERNEL, INITRD, meta["accel"], p["VCPUS"], p["MEM"],
            qemu.kernel_cmdline(p["DEPTH"], p["IDLE"], p["KERNEL_ARGS"]), console, run_dir,
            disk_args(p, disks, twin))
        meta["qemu_cmdline"] = cmd
        write_json(os.path.join(run_dir, "meta.json"), meta)
        say("booting (%s, timeout %ds); console: %s" % (meta["accel"], meta["timeout"], console))
        rc, elapsed, timed_out = qemu.run(cmd, meta["timeout"],
                                          os.path.join(run_dir, "qemu.log"), console,
                                          progress=lambda line: say("  " + line))
    finally:
        shutil.rmtree(disk_dir, ignore_errors=True)
    meta["guest_seconds"] = round(elapsed, 1)
    error = guest_error(run_dir, rc, timed_out, meta["timeout"])
    if error:
        raise RunError(error)


def guest_error(run_dir, rc, timed_out, timeout):
    """Why a guest that qemu.run() ran in run_dir did not finish, or None:
    init writes dmesg.txt just before it powers off."""
    console = os.path.join(run_dir, "console.log")
    if timed_out:
        return "guest did not finish within %ds and was killed; console log: %s" % (timeout,
                                                                                     console)
    if rc != 0:
        return "qemu exited %d; see %s and %s" % (rc, os.path.join(run_dir, "qemu.log"), console)
    if not os.path.exists(os.path.join(run_dir, "dmesg.txt")):
        return "guest powered off without finishing; console log: %s" % console
    return None


read_kv = files.read_kv


def collect_step(run_dir, name):
    """One guest step's outcome; raises RunError when it did not run."""
    d = os.path.join(run_dir, "guest", name)
    err = os.path.join(d, "error")
    if os.path.exists(err):
        with open(err) as f:
            raise RunError("step %s: %s" % (name, f.read().strip()))
    with open(os.path.join(d, "fio.rc")) as f:
        rc = int(f.read().strip() or -1)
    if rc != 0:
        raise RunError("step %s: fio exited %d; see %s" % (name, rc, os.path.join(d, "fio.log")))
    step = {"queue": read_kv(os.path.join(d, "queue.txt"))}
    step["tune_skipped"] = [k for k in step["queue"].get("tune_skipped", "").split(",") if k]
    fio = read_json(os.path.join(d, "fio.json"))
    with open(os.path.join(d, "pids.txt")) as f:
        pids = [int(x) for x in f.read().split()]
    step["tasks"] = summary.tasks(fio, pids)
    # A light workload's task and its run alone are no part of the device's
    # total (the ceiling's): one ran for seconds, the other alone.
    aside = light.names(trace_analysis.workload_text(run_dir, {}))
    step["total_iops"] = round(sum(t["iops"] for t in step["tasks"] if t["name"] not in aside), 1)
    step["fio_errors"] = sum(j.get("error", 0) for j in fio["jobs"])
    step["blktrace_dropped"] = blktrace_dropped(os.path.join(d, "blktrace.log"))
    return step, fio


def blktrace_dropped(log):
    """blktrace's own count of events it could not store, or None untraced."""
    if not os.path.exists(log):
        return None
    with open(log) as f:
        m = re.search(r"Total:.*\(dropped (\d+)\)", f.read())
    return int(m.group(1)) if m else None


def dmesg_problems(run_dir):
    return dmesg_findings(os.path.join(run_dir, "dmesg.txt"))


def validity(p, cal, main, problems):
    """Reasons the run's numbers cannot be trusted; empty when valid.
    Without an IOPS throttle (IOPS=off) the ceiling has nothing to be over:
    the emulator is meant to be the limit, and the other checks remain."""
    reasons = []
    if not params_mod.unthrottled(p) and cal["total_iops"] < CEILING_MARGIN * p["IOPS"]:
        reasons.append("ceiling %.0f IOPS unthrottled is under %.0fx the %d IOPS throttle: "
                       "the guest, not the throttle, is the bottleneck"
                       % (cal["total_iops"], CEILING_MARGIN, p["IOPS"]))
    if main["blktrace_dropped"]:
        reasons.append("blktrace dropped %d events" % main["blktrace_dropped"])
    if main["blktrace_dropped"] is None:
        reasons.append("blktrace did not report its event count")
    if main["fio_errors"] or cal["fio_errors"]:
        reasons.append("fio reported I/O errors")
    if problems:
        reasons.append("dmesg has %d kernel reports (WARNING, BUG, lockdep, KASAN, hung task)"
                       % len(problems))
    return reasons


def analyse(run_dir, p, meta):
    cal, _ = collect_step(run_dir, "calibration")
    main, _ = collect_step(run_dir, "main")
    info = read_kv(os.path.join(run_dir, "guest", "info.txt"))
    problems = dmesg_problems(run_dir)
    meta["guest"] = info
    meta["device_tags"] = int(main["queue"].get("nr_tags", 0))
    meta["nr_requests_set"] = int(main["queue"].get("nr_requests", 0))
    meta["tunables"] = {k[len("iosched."):]: v for k, v in main["queue"].items()
                        if k.startswith("iosched.")}
    meta["tune_skipped"] = main["tune_skipped"]
    meta["calibration"] = {
        "ceiling_iops": cal["total_iops"],
        "ceiling_over_throttle": summary.over_throttle(cal["total_iops"], p["IOPS"], 2),
        "runtime": p["CAL_RUNTIME"], "tasks": cal["tasks"]}
    meta["blktrace_dropped"] = main["blktrace_dropped"]
    meta["dmesg_problems"] = problems
    # The guest-side reasons; analyse_trace() adds the trace's.
    meta["run_invalid_reasons"] = validity(p, cal, main, problems)
    meta["invalid_reasons"] = list(meta["run_invalid_reasons"])
    meta["valid"] = not meta["invalid_reasons"]
    result = summary.build(p, meta, main)
    write_json(os.path.join(run_dir, "summary.json"), result)
    return result


def analyse_trace(run_dir, meta):
    """Per-task numbers from blktrace, added to summary.json.

    The trace must be complete and, for every direct-I/O job, agree with
    fio's count within 1%; otherwise the run is marked invalid.
    """
    write_json(os.path.join(run_dir, "meta.json"), meta)
    fields, table, series = trace_analysis.compute(run_dir)
    trace_analysis.write(run_dir, "main", fields, table, series)
    reasons = []
    if not fields["trace_complete"]:
        reasons.append("blktrace is incomplete: %s" % fields["trace"])
    for d in fields["fio_blktrace_disagreements"]:
        reasons.append("%s: blktrace counted %d I/Os, fio %d (%+.1f%%)"
                       % (d["task"], d["blktrace_ios"], d["fio_ios"], 100 * d["diff"]))
    # Kept apart from the guest-side reasons so that reanalysis replaces them.
    meta["trace_invalid_reasons"] = reasons
    meta["invalid_reasons"] = meta["run_invalid_reasons"] + reasons
    meta["valid"] = not meta["invalid_reasons"]
    result = read_json(os.path.join(run_dir, "summary.json"))
    result["valid"] = meta["valid"]
    write_json(os.path.join(run_dir, "summary.json"), result)
    return result


TRACE_REASON = re.compile(r"blktrace counted \d+ I/Os|^blktrace is incomplete")


def reanalyse(run_dirs):
    """Redo the trace analysis of finished runs (make reanalyse RUNS=...).

    The guest's data is not touched; summary.json, tasks.csv, timeseries.csv
    and the trace part of meta.json's validity are written anew, and
    meta.json records when.
    """
    for run_dir in run_dirs:
        meta = read_json(os.path.join(run_dir, "meta.json"))
        if meta.get("status") != "ok":
            say("%s: status %s, skipped" % (run_dir, meta.get("status")))
            continue
        meta["run_invalid_reasons"] = meta.get("run_invalid_reasons", [
            r for r in meta["invalid_reasons"] if not TRACE_REASON.search(r)])
        result = analyse_trace(run_dir, meta)
        meta["reanalysed"] = utc_now().isoformat()
        write_json(os.path.join(run_dir, "meta.json"), meta)
        say("%s: valid %s, Jain %s" % (run_dir, result["valid"], result["jain_index"]))


def workload_meta(p, text):
    return {
        "jobfile": os.path.relpath(p["JOBFILE"], TOP) if p["JOBFILE"].startswith(TOP)
        else p["JOBFILE"],
        "workload_description": jobfile.description(text),
        "workload_depth": jobfile.total_depth(text),
    }


def base_meta(p, notes, kernel_info, when):
    """What every boot records: parameters, kernel, harness, QEMU, device."""
    return {
        "status": "running",
        "start": when.isoformat(),
        "params": {k: v for k, v in p.items() if k != "JOBFILE"},
        "notes": notes,
        "kernel": kernel_info,
        "harness_revision": harness_revision(),
        "qemu_version": qemu.version(),
        "host_fio_version": subprocess.run(["fio", "--version"], capture_output=True,
                                           text=True).stdout.strip(),
        "throttle_iops": p["IOPS"],
        "unthrottled": params_mod.unthrottled(p),
        "device_cost_model": params_mod.device_cost_model(p),
        "device_depth": p["DEPTH"],
        "ioqpairs": p["IOQPAIRS"],
        "vcpus": p["VCPUS"],
    }


# Files of a boot that every run folder of it gets a copy of.
SHARED_FILES = ("job.fio", "workload.fio", "plan", "guest.env", "console.log", "qemu.log",
                "dmesg.txt", os.path.join("guest", "info.txt"))


def share_boot_files(boot_dir, run_dir):
    if run_dir == boot_dir:
        return
    for name in SHARED_FILES:
        src = os.path.join(boot_dir, name)
        if os.path.exists(src):
            os.makedirs(os.path.dirname(os.path.join(run_dir, name)), exist_ok=True)
            shutil.copy(src, os.path.join(run_dir, name))


def finish_run(p, boot_meta, run_dir, boot_dir, boot_error):
    """Analyse one variant's run of the boot; write its meta and summary.

    Its params are those of the run: the kernel's scheduler name, and TUNE
    with the variant's tunables merged in.
    """
    meta = copy.deepcopy(boot_meta)
    for key in ("SCHED", "VARIANT", "TUNE"):
        meta["params"][key] = p[key]
    meta["scheduler"] = p["SCHED"]
    meta["variant"] = p["VARIANT"]
    share_boot_files(boot_dir, run_dir)
    code = 0
    try:
        if boot_error:
            raise RunError(boot_error)
        analyse(run_dir, p, meta)
        result = analyse_trace(run_dir, meta)
        meta["status"] = "ok"
        say("%s: %.0f IOPS %s; ceiling %.0f unthrottled; Jain %s"
            % (p["VARIANT"], result["total_iops"],
               "with no IOPS throttle" if params_mod.unthrottled(p)
               else "of %d throttle" % p["IOPS"],
               meta["calibration"]["ceiling_iops"], result["jain_index"]))
        for t in result["tasks"]:
            say("  %-16s pid %-6s %8.1f IOPS  share %.3f"
                % (t["name"], t["pid"], t["iops"], t["share"]))
        if result.get("light"):
            say("  " + light.summary_line(result["light"]))
        if not meta["valid"]:
            for r in meta["invalid_reasons"]:
                print("bench: INVALID RUN (%s): %s" % (p["VARIANT"], r), file=sys.stderr)
            code = 2
    except (RunError, OSError, ValueError, KeyError) as e:
        meta["status"] = "failed"
        meta["reason"] = str(e)
        print("bench: FAILED (%s): %s" % (p["VARIANT"], e), file=sys.stderr)
        code = 1
    meta["end"] = utc_now().isoformat()
    try:
        write_json(os.path.join(run_dir, "meta.json"), meta)
    except OSError as e:
        # A full disk: the folder keeps the meta.json of a running run,
        # which make report leaves out as unfinished.
        print("bench: FAILED (%s): cannot write its meta.json: %s; the run stays marked "
              "running and make report leaves it out" % (p["VARIANT"], e), file=sys.stderr)
        code = 1
    return code


def check_kernel(p):
    if not os.path.exists(KERNEL) or not os.path.exists(INITRD):
        return "no kernel or initramfs in %s; run make bench, not bench.py" % BUILD
    if "fiops" in [v["scheduler"] for v in p["VARIANTS"]] and not has_fiops():
        return ("fiops is not in this kernel (kernel-patches/series does not add "
                "CONFIG_MQ_IOSCHED_FIOPS)")
    return None


def main():
    try:
        p, notes = params_mod.load()
    except params_mod.ParamError as e:
        print("bench: " + str(e), file=sys.stderr)
        return 1
    for n in notes:
        say("note: " + n)
    problem = check_kernel(p)
    if problem:
        print("bench: " + problem, file=sys.stderr)
        return 1

    with open(p["JOBFILE"]) as f:
        text = f.read()
    if p["NR_REQUESTS"] is None:
        p["NR_REQUESTS"] = auto_nr_requests(text)

    when = utc_now()
    boot_dir, runs = make_runs(p, when)
    steps = plan_steps(runs, boot_dir)
    if p["TIMEOUT"] is None:
        p["TIMEOUT"] = auto_timeout(p, steps)

    meta = base_meta(p, notes, read_json(os.path.join(BUILD, "kernel.json")), when)
    meta.update(workload_meta(p, text))
    meta["timeout"] = p["TIMEOUT"]
    meta["boot"] = {"folder": os.path.basename(boot_dir),
                    "schedulers": [v["entry"] for v in p["VARIANTS"]]}
    meta["accel"], meta["accel_note"] = choose_accel(p, boot_dir)
    write_inputs(boot_dir, p, steps, text)
    if os.environ.get("GUEST_HANG") == "1":
        open(os.path.join(boot_dir, "hang"), "w").close()
    boot_error = None
    try:
        boot(boot_dir, p, meta, steps)
    except (RunError, OSError) as e:
        boot_error = str(e)
    code = 0
    for run_p, run_dir in runs:
        if interrupted:
            boot_error = interrupted[0]
        code = max(code, finish_run(run_p, meta, run_dir, boot_dir, boot_error))
        if run_dir != boot_dir:
            say("%s run: %s" % (run_p["VARIANT"], run_dir))
    if len(runs) > 1:
        meta["status"] = "failed" if boot_error else "ok"
        meta["runs"] = [os.path.basename(d) for _, d in runs]
        meta["end"] = utc_now().isoformat()
        write_json(os.path.join(boot_dir, "meta.json"), meta)
    print("run: " + boot_dir)
    return INTERRUPTED_EXIT if interrupted else code


def main_interruptible():
    """main() with SIGINT and SIGTERM marking the runs failed, not leaving
    half-written folders or a guest behind."""
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        return main()
    except Interrupted as e:
        print("bench: %s" % e, file=sys.stderr)
        return INTERRUPTED_EXIT


if __name__ == "__main__":
    if sys.argv[1:2] == ["--reanalyse"]:
        sys.exit(reanalyse(sys.argv[2:]) or 0)
    sys.exit(main_interruptible())
