"""Build the QEMU command line, probe KVM, and run a guest with a timeout."""

import json
import os
import socket
import subprocess
import time

QEMU = os.environ.get("QEMU", "qemu-system-x86_64")

# The measured device and its unthrottled twin, found in the guest by serial.
THROTTLED = "thr"
UNTHROTTLED = "raw"


def version():
    out = subprocess.run([QEMU, "--version"], capture_output=True, text=True)
    return out.stdout.splitlines()[0] if out.returncode == 0 else "unknown"


def kernel_cmdline(depth, idle="halt", extra=()):
    """Guest kernel command line.

    idle=poll is opt-in: two polling vCPUs take both host cores and starve
    QEMU's main loop and I/O threads, which halves the ceilings measured by
    make calibrate (see the README).
    """
    args = ["console=ttyS0", "panic=-1", "nvme.io_queue_depth=%d" % depth]
    if idle == "poll":
        args.append("idle=poll")
    # KERNEL_ARGS, e.g. nvme.poll_queues=1; checked by params.parse_kernel_args.
    args.extend(extra)
    return " ".join(args)


# device_cost_model keys and the QEMU throttling options they set.
THROTTLE_OPTIONS = (("iops", "iops-total"), ("bps", "bps-total"), ("iops_size", "iops-size"))


def file_backend(image):
    """-drive options of a namespace on a raw image file."""
    return "file=%s,format=raw,aio=threads" % image


def null_backend(size, latency_us):
    """-drive options of a namespace on QEMU's null-co driver (block/null.c):
    nothing is stored, a read returns zeroes (read-zeroes; without it the
    guest would read whatever the buffer held), and every request sleeps
    latency-ns in its own coroutine before it completes, so requests in
    flight wait side by side: the device answers at most in flight / latency
    requests a second.  size is what the guest sees, as a file's would be."""
    return "driver=null-co,size=%d,read-zeroes=on,latency-ns=%d" % (size,
                                                                   1000 * (latency_us or 0))


def nvme_args(serial, backend, ioqpairs, cost_model=None):
    """One NVMe controller with one namespace on backend (file_backend or
    null_backend), throttled as cost_model (params.device_cost_model) says
    when given; a limit that is off (None: IOPS=off, no BPS or IOPS_SIZE)
    sets no throttling option, so IOPS=off alone leaves the device as
    unthrottled as its twin.  The throttle sits in front of the backend: a
    request waits for the throttle, then for the null device's latency.

    QEMU's leaky bucket cannot hold less than iops/10 requests (100 ms) when
    no burst is set, and a burst must be at least the average: the harness
    keeps that default and lets fio's ramp_time swallow the initial burst.
    The same holds for the bytes bucket.
    """
    drive = "%s,if=none,id=%s,cache=writeback" % (backend, serial)
    for key, option in THROTTLE_OPTIONS:
        if cost_model and cost_model[key]:
            drive += ",throttling.%s=%d" % (option, cost_model[key])
    device = "nvme,id=%s,drive=%s,serial=%s,max_ioqpairs=%d" % (device_id(serial), serial,
                                                                 serial, ioqpairs)
    return ["-drive", drive, "-device", device]


def device_id(serial):
    """The qdev id of the NVMe controller of serial, for QMP's device_del."""
    return "nvme-" + serial


def command(kernel, initrd, accel, vcpus, mem, cmdline, console, share, disks, qmp=None,
            icount=None):
    """Full command line; disks is a list of nvme_args() lists; qmp, a
    Unix socket path for qmp_command(); icount, a shift for TCG's
    instruction counting: the guest's clock then advances 2**shift ns per
    instruction it executes, whatever the host's speed."""
    cmd = [QEMU, "-nodefaults", "-no-reboot", "-display", "none",
           "-accel", accel, "-m", str(mem), "-smp", str(vcpus),
           "-kernel", kernel, "-append", cmdline,
           "-serial", "file:%s" % console]
    if accel == "kvm":
        cmd += ["-cpu", "max"]
    if initrd:
        cmd += ["-initrd", initrd]
    if share:
        cmd += ["-virtfs", "local,path=%s,mount_tag=results,security_model=none,id=results"
                % share]
    for d in disks:
        cmd += d
    if qmp:
        cmd += ["-qmp", "unix:%s,server=on,wait=off" % qmp]
    if icount is not None:
        cmd += ["-icount", "shift=%d" % icount]
    return cmd


def qmp_command(path, execute, arguments=None, timeout=10):
    """Run one QMP command on a guest's socket; return its "return" value.
    Raises OSError when QEMU cannot be reached, RuntimeError when the
    command fails."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        stream = sock.makefile("rw")
        json.loads(stream.readline())  # the greeting
        for cmd in ({"execute": "qmp_capabilities"},
                    dict({"execute": execute}, **({"arguments": arguments} if arguments else {}))):
            stream.write(json.dumps(cmd) + "\n")
            stream.flush()
            while True:
                reply = json.loads(stream.readline())
                if "event" not in reply:
                    break
            if "error" in reply:
                raise RuntimeError("QMP %s: %s" % (cmd["execute"], reply["error"].get("desc")))
        return reply.get("return")


def run(cmd, timeout, log, console=None, progress=None):
    """Run QEMU; return (returncode, elapsed, timed_out).  Kills on timeout,
    and on any exception while it waits (an interrupt), which it re-raises.

    While it runs, every console line the guest init prints ("fiops: ...")
    is passed to progress, so that a long run shows where it is.
    """
    start = time.monotonic()
    seen = 0
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        timed_out = False
        try:
            while proc.poll() is None:
                if time.monotonic() - start > timeout:
                    proc.kill()
                    timed_out = True
                    break
                time.sleep(0.5)
                seen = _report(console, seen, progress)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): leave no guest behind.
            proc.kill()
            proc.wait()
            raise
        rc = proc.wait()
    _report(console, seen, progress)
    return rc, time.monotonic() - start, timed_out


def _report(console, seen, progress):
    """Pass new "fiops:" console lines to progress; return lines seen."""
    if not (console and progress and os.path.exists(console)):
        return seen
    with open(console, errors="replace") as f:
        lines = f.read().splitlines()
    for line in lines[seen:]:
        if line.startswith("fiops: "):
            progress(line[len("fiops: "):])
    return len(lines)


def probe_kvm(kernel, workdir):
    """Does KVM boot a kernel here?  Nested KVM hangs after SeaBIOS on these
    machines, so boot the kernel with no root and wait for its panic."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "/dev/kvm is not accessible"
    console = os.path.join(workdir, "kvm-probe-console.log")
    cmd = command(kernel, None, "kvm", 1, 256, "console=ttyS0 panic=-1", console,
                  None, [])
    rc, elapsed, timed_out = run(cmd, 30, os.path.join(workdir, "kvm-probe-qemu.log"))
    with open(console, errors="replace") as f:
        text = f.read()
    if "Kernel panic" in text:
        return True, "kvm booted the kernel in %.1fs" % elapsed
    if timed_out:
        return False, "kvm probe did not reach the kernel within 30s"
    return False, "kvm probe exited %d before the kernel ran" % rc
