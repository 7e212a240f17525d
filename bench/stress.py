#!/usr/bin/env python3
"""make stress: boot a kernel once and run the stress cases of
guest/stress.sh on fiops, then judge them (analysis/stress.py) into a
summary table in the run folder: results/<UTC time>-stress-<form>/.

    STRESS=full   (default) the debug kernel (guest/kernel-debug.config),
                  2 minutes of scheduler switching, 1000 tasks of churn
    STRESS=short  the bench kernel, 20 s and 200 tasks: make test's form
    STRESS_CASES  a subset of the cases, in the order given
    STRESS_KERNEL another bzImage (say, one without a fix)

Exit status 0 when every case passed, 1 when one failed, 130 when
interrupted.
"""

import os
import shutil
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from analysis import stress as judge_mod  # noqa: E402
import bench  # noqa: E402
import qemu  # noqa: E402

TOP = bench.TOP
JOBS = os.path.join(TOP, "workloads", "stress")
THROTTLE_IOPS = 500
PLUG = "plug"

# Per form: each case's argument (seconds or tasks) and the kernel.
FORMS = {
    "full": {"kernel": "linux-debug", "args": {"switch": 120, "churn": 1000, "hostile": 0,
                                                "faults": 60, "cgroups": 90, "classes": 30,
                                                "polled": 30, "nowait": 20, "unplug": 0}},
    "short": {"kernel": "linux", "args": {"switch": 20, "churn": 200, "hostile": 0,
                                          "faults": 15, "cgroups": 15, "classes": 15,
                                          "polled": 15, "nowait": 10, "unplug": 0}},
}
CASES = ("switch", "churn", "hostile", "faults", "cgroups", "classes", "polled", "nowait",
         "unplug")

# The fiops tunables and the values they accept.
FIOPS_LIMITS = {
    "read_scale": (1, 100), "write_scale": (1, 100), "sync_scale": (1, 100),
    "async_scale": (1, 100), "size_scale": (0, 1000), "depth_control": (0, 1),
    "max_depth": (1, 2048), "tag_share": (0, 1),
}
COMMON_BAD = [("empty", b"\n"), ("abc", b"abc"), ("minus-one", b"-1"),
              ("2^32", b"4294967296"), ("two-numbers", b"1 2"), ("4KiB", b"1" * 4096),
              ("all-bytes", bytes(range(256)))]


def bad_values(name):
    """(label, bytes) a sysfs file must refuse with EINVAL."""
    if name == "scheduler":
        return [("no-such", b"nosuch"), ("suffix", b"fiops2"), ("upper", b"FIOPS"),
                ("4KiB", b"x" * 4096)]
    if name == "nr_requests":
        return [("empty", b"\n"), ("abc", b"abc"), ("minus-one", b"-1"),
                ("above-max", b"2049"), ("huge", b"1000000"), ("2^32", b"4294967296")]
    low, high = FIOPS_LIMITS[name]
    values = list(COMMON_BAD)
    if low > 0:
        values.append(("below-min", b"%d" % (low - 1)))
    values.append(("above-max", b"%d" % (high + 1)))
    values += [("byte-%02x" % b, bytes([b])) for b in range(256) if not chr(b).isdigit()]
    return values


def write_hostile(stress_dir):
    """stress/bad-values/<file>/<n>: one bad value a file; bad-values.txt names them."""
    with open(os.path.join(stress_dir, "bad-values.txt"), "w") as labels:
        for name in list(FIOPS_LIMITS) + ["scheduler", "nr_requests"]:
            d = os.path.join(stress_dir, "bad-values", name)
            os.makedirs(d)
            for n, (label, value) in enumerate(bad_values(name)):
                with open(os.path.join(d, "%03d" % n), "wb") as f:
                    f.write(value)
                labels.write("%s/%03d %s\n" % (name, n, label))


def write_inputs(run_dir, cases, args):
    stress_dir = os.path.join(run_dir, "stress")
    os.makedirs(stress_dir)
    for name in os.listdir(JOBS):
        shutil.copy(os.path.join(JOBS, name), stress_dir)
    write_hostile(stress_dir)
    with open(os.path.join(stress_dir, "cases"), "w") as f:
        for case in cases:
            serial = PLUG if case == "unplug" else qemu.THROTTLED
            f.write("%s %s %s\n" % (case, serial, PLUG if case == "unplug" else args[case]))


def case_budget(case, arg):
    """Seconds a case should take on the bench kernel, with slack."""
    return {"switch": arg + 60, "churn": arg * 0.3 + 30, "hostile": 300,
            "faults": 2 * arg + 120, "cgroups": arg + 90, "classes": 2 * arg + 60,
            "polled": arg + 60, "nowait": arg + 60, "unplug": 150}[case]


def disks(disk_dir):
    """The throttled device the cases load, with a queue pair for polling
    (POLL_QUEUES), and the one unplug removes."""
    args = []
    for serial, model, pairs in (
            (qemu.THROTTLED, {"iops": THROTTLE_IOPS, "bps": 0, "iops_size": 0}, 2),
            (PLUG, None, 1)):
        image = os.path.join(disk_dir, serial + ".img")
        with open(image, "wb") as f:
            f.truncate(bench.DISK_SIZE)
        args.append(qemu.nvme_args(serial, qemu.file_backend(image), pairs, model))
    return args


class Unplugger:
    """Console progress: says each line, and answers the guest's
    "unplug <serial>" with QMP's device_del."""

    def __init__(self, qmp, meta):
        self.qmp, self.meta = qmp, meta

    def __call__(self, line):
        bench.say("  " + line)
        if line.startswith("unplug "):
            serial = line.split()[1]
            try:
                qemu.qmp_command(self.qmp, "device_del", {"id": qemu.device_id(serial)})
                self.meta["unplug"] = "device_del %s sent" % qemu.device_id(serial)
            except (OSError, RuntimeError, ValueError) as e:
                self.meta["unplug"] = "device_del failed: %s" % e
            bench.say("  " + self.meta["unplug"])


def boot(run_dir, kernel, meta):
    disk_dir = os.path.join(bench.BUILD, "disks", os.path.basename(run_dir))
    os.makedirs(disk_dir, exist_ok=True)
    sock_dir = tempfile.mkdtemp(prefix="fiops-qmp-")
    qmp = os.path.join(sock_dir, "qmp.sock")
    try:
        console = os.path.join(run_dir, "console.log")
        cmdline = "console=ttyS0 panic=-1 nvme.io_queue_depth=64 nvme.poll_queues=1"
        cmd = qemu.command(kernel, bench.INITRD, "tcg", 2, 1024, cmdline, console, run_dir,
                           disks(disk_dir), qmp=qmp)
        meta["qemu_cmdline"] = cmd
        bench.write_json(os.path.join(run_dir, "meta.json"), meta)
        bench.say("booting %s (timeout %ds); console: %s" % (kernel, meta["timeout"], console))
        rc, elapsed, timed_out = qemu.run(cmd, meta["timeout"], os.path.join(run_dir, "qemu.log"),
                                          console, progress=Unplugger(qmp, meta))
    finally:
        shutil.rmtree(disk_dir, ignore_errors=True)
        shutil.rmtree(sock_dir, ignore_errors=True)
    meta["guest_seconds"] = round(elapsed, 1)
    return bench.guest_error(run_dir, rc, timed_out, meta["timeout"])


def settings(env):
    """(form, cases, kernel) from the environment; raises ValueError."""
    form = env.get("STRESS") or "full"
    if form not in FORMS:
        raise ValueError("STRESS=%s: must be one of %s" % (form, ", ".join(FORMS)))
    cases = (env.get("STRESS_CASES") or " ".join(CASES)).split()
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise ValueError("STRESS_CASES: no case %s; the cases are %s"
                         % (", ".join(unknown), " ".join(CASES)))
    kernel = env.get("STRESS_KERNEL") or os.path.join(
        bench.BUILD, FORMS[form]["kernel"], "arch", "x86", "boot", "bzImage")
    if not os.path.exists(kernel):
        raise ValueError("no kernel %s (make stress builds it; make test builds the "
                         "bench kernel)" % kernel)
    if not os.path.exists(bench.INITRD):
        raise ValueError("no initramfs %s: run make guest" % bench.INITRD)
    return form, cases, kernel


def kernel_info(kernel):
    """kernel.json of the build the bzImage belongs to, if it has one."""
    tree = kernel
    for _ in range(4):    # <tree>/arch/x86/boot/bzImage
        tree = os.path.dirname(tree)
    name = os.path.basename(tree)
    path = os.path.join(os.path.dirname(tree), "kernel%s.json" % name[len("linux"):])
    return bench.read_json(path) if os.path.exists(path) else {"bzImage": kernel}


def run(form, cases, kernel):
    args = FORMS[form]["args"]
    when = bench.utc_now()
    run_dir = bench.make_run_dir("stress", form, when)
    slowdown = 3 if FORMS[form]["kernel"] == "linux-debug" else 1.5
    meta = {"status": "running", "start": when.isoformat(), "form": form, "cases": cases,
            "case_args": {c: args[c] for c in cases}, "kernel": kernel_info(kernel),
            "bzImage": kernel, "harness_revision": bench.harness_revision(),
            "qemu_version": qemu.version(), "throttle_iops": THROTTLE_IOPS,
            "timeout": int(120 + slowdown * sum(case_budget(c, args[c]) for c in cases))}
    write_inputs(run_dir, cases, args)
    try:
        boot_error = boot(run_dir, kernel, meta)
    except bench.Interrupted as e:
        boot_error = str(e)
    rows = judge_mod.judge(run_dir, cases)
    meta["rows"] = rows
    meta["passed"] = not boot_error and all(r["passed"] for r in rows)
    meta["status"] = "failed" if boot_error else "ok"
    if boot_error:
        meta["reason"] = boot_error
    meta["end"] = bench.utc_now().isoformat()
    bench.write_json(os.path.join(run_dir, "meta.json"), meta)
    text = judge_mod.table(rows)
    with open(os.path.join(run_dir, "stress.md"), "w") as f:
        f.write("# make stress (%s), %s\n\nkernel %s\n\n%s"
                % (form, when.strftime("%Y-%m-%d %H:%M UTC"),
                   meta["kernel"].get("release", kernel), text))
    print(text, end="")
    if boot_error:
        print("stress: FAILED: %s" % boot_error, file=sys.stderr)
    print("run: " + run_dir)
    if bench.interrupted:
        return bench.INTERRUPTED_EXIT
    return 0 if meta["passed"] else 1


def main():
    try:
        form, cases, kernel = settings(os.environ)
    except ValueError as e:
        print("stress: %s" % e, file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, bench.on_signal)
    signal.signal(signal.SIGTERM, bench.on_signal)
    return run(form, cases, kernel)


if __name__ == "__main__":
    sys.exit(main())
