"""Bench parameters: defaults, validation, and the 2012 scheduler names.

Every parameter comes from the environment (make exports them) and is
recorded in meta.json.  Bad values stop the run before anything boots.
"""

import os
import re

import jobfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCHEDULERS = ("none", "mq-deadline", "bfq", "kyber", "fiops")
# Not a scheduler, and not in compare's default set: none with blk-iocost
# on for the measured device (io.cost.qos enable=1), to compare group weights.
IOCOST = "iocost"
# The measured device: the throttled NVMe device on a raw image file, or on
# QEMU's null-co driver, which stores nothing and answers each request
# after LATENCY_US (bench/qemu.py null_backend).
FILE_DEVICE = "nvme"
NULL_DEVICE = "nvme-null"
DEVICES = (FILE_DEVICE, NULL_DEVICE)
ALIASES = {"noop": "none", "deadline": "mq-deadline", "cfq": "bfq"}

# name: (default, description).  "auto" values are derived in bench.py.
DEFAULTS = {
    "SCHED": ("none", "I/O scheduler(s) on the measured device; several, "
              "space-separated, run one after the other in one boot"),
    "WORKLOAD": ("equal-readers", "name in workloads/ or path to a fio jobfile"),
    "IOPS": ("1000", "QEMU throttle on the measured device (iops-total); off = no IOPS "
             "throttle, to measure the schedulers' own speed"),
    "BPS": ("0", "QEMU bytes/s throttle on the measured device (bps-total); 0 = off"),
    "IOPS_SIZE": ("0", "QEMU iops-size: a request of S > IOPS_SIZE bytes counts as "
                  "S/IOPS_SIZE I/Os against IOPS; 0 = off"),
    "DEVICE": (FILE_DEVICE, "measured device: nvme (raw image file) or nvme-null (QEMU's "
               "null-co: writes discarded, reads zeroes, LATENCY_US per request)"),
    "LATENCY_US": ("0", "microseconds nvme-null takes for every request (latency-ns); "
                   "0 = none"),
    "DEPTH": ("4", "nvme.io_queue_depth; the device has DEPTH-1 tags"),
    "NR_REQUESTS": ("auto", "queue/nr_requests; auto = max(64, workload depth); kernel = "
                    "as blk-mq set it when the scheduler was selected"),
    "RUNTIME": ("30", "seconds of measured fio run"),
    "RAMP": ("2", "seconds fio runs before it starts counting"),
    "CAL_RUNTIME": ("5", "seconds of the unthrottled calibration run"),
    "VCPUS": ("2", "guest CPUs"),
    "ACCEL": ("tcg", "tcg, or kvm (probed, falls back to tcg)"),
    "IDLE": ("halt", "guest idle loop: halt (kernel default) or poll (idle=poll)"),
    "KERNEL_ARGS": ("", "extra guest kernel command line arguments, e.g. nvme.poll_queues=1"),
    "UDEV": ("0", "1 = udevd applies guest/udev's rules at boot, as a distribution's "
             "boot does (they give fiops to non-rotational disks); 0 = not started"),
    "IOQPAIRS": ("1", "NVMe I/O queue pairs (max_ioqpairs)"),
    "MEM": ("1024", "guest memory in MiB"),
    "TIMEOUT": ("auto", "seconds before a guest is killed; auto from RUNTIME"),
    "TUNE": ("", "scheduler tunables, name=value,... written to queue/iosched/ "
             "of every scheduler that has them"),
}

# Inclusive integer ranges.  DEPTH: the nvme driver takes 2..4095.
# NR_REQUESTS: blk-mq caps scheduler queues at MAX_SCHED_RQ (2048).
# BPS, IOPS_SIZE: the range of a value other than 0 (off).  BPS: less than
# one 4 KiB page a second is no device to measure.  IOPS_SIZE: the emulated
# NVMe device takes at most 512 KiB a request (QEMU's default MDTS), so an
# IOPS_SIZE over 1 MiB could never charge a request more than one I/O.
# LATENCY_US: at most a second a request (1022 tags in flight still make
# about 1000 IOPS at DEPTH=1023).
RANGES = {
    "IOPS": (10, 1000000),
    "BPS": (4096, 10 ** 12),
    "IOPS_SIZE": (512, 1 << 20),
    "LATENCY_US": (1, 1000000),
    "DEPTH": (2, 4095),
    "NR_REQUESTS": (1, 2048),
    "RUNTIME": (1, 3600),
    "RAMP": (0, 600),
    "CAL_RUNTIME": (1, 600),
    "VCPUS": (1, 8),
    "IOQPAIRS": (1, 8),
    "MEM": (256, 16384),
    "TIMEOUT": (5, 36000),
}


# The value that means "derive it" (auto) or "off" (0; for IOPS, off): None
# in params.  IOPS=off leaves the measured device without an I/O throttle
# (bench/qemu.py sets no iops-total): a run then measures how fast each
# scheduler goes, and bench.validity has no throttle to hold the ceiling to.
UNSET = {"NR_REQUESTS": "auto", "TIMEOUT": "auto", "BPS": "0", "IOPS_SIZE": "0",
         "LATENCY_US": "0", "IOPS": "off"}
# A word kept as it is in params: NR_REQUESTS=kernel leaves queue/nr_requests
# at what blk-mq chose when the scheduler was selected (bench.plan_nr_requests).
KERNEL_NR_REQUESTS = "kernel"
WORDS = {"NR_REQUESTS": KERNEL_NR_REQUESTS}


class ParamError(ValueError):
    """A parameter value that cannot be used; the message says why."""


def resolve_workload(value):
    """Return the jobfile path for a workload name or path."""
    if os.sep in value or value.endswith(".fio"):
        path = os.path.abspath(value)
    else:
        path = os.path.join(TOP, "workloads", value + ".fio")
    if not os.path.isfile(path):
        known = sorted(f[:-4] for f in os.listdir(os.path.join(TOP, "workloads"))
                       if f.endswith(".fio"))
        raise ParamError("WORKLOAD=%s: no such jobfile %s (known: %s)"
                         % (value, path, " ".join(known)))
    return path


def parse_int(name, value):
    lo, hi = RANGES[name]
    words = [w for w in (UNSET.get(name), WORDS.get(name)) if w]
    other = " (or %s)" % ", ".join("0: off" if w == "0" else w for w in words) if words else ""
    try:
        number = int(value, 10)
    except ValueError:
        raise ParamError("%s=%s: not a whole number%s" % (name, value, other)) from None
    if not lo <= number <= hi:
        raise ParamError("%s=%s: must be between %d and %d%s" % (name, value, lo, hi, other))
    return number


TUNE_ITEM = re.compile(r"^([a-z][a-z0-9_]*)=([0-9A-Za-z_.-]+)$")
# A variant's label names its run folder: the entry with every character
# that a path, make or the shell could take apart replaced by "_".
LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]")


def parse_tune(value, where=None):
    """"write_scale=3,read_scale=1" -> [("write_scale", "3"), ...]."""
    items = []
    for item in value.replace(",", " ").split():
        m = TUNE_ITEM.match(item)
        if not m:
            raise ParamError("%s: %s is not name=value" % (where or "TUNE=" + value, item))
        items.append(m.groups())
    return items


def split_sched(value):
    """SCHED's entries.  Spaces and commas separate them, but a name=value,
    which cannot be a scheduler, continues the tunables of the variant
    before it: "none,bfq:low_latency=0,slice_idle=0 fiops" is three entries."""
    entries = []
    for token in re.split(r"[\s,]+", value.strip()):
        if "=" in token and ":" not in token and entries and ":" in entries[-1]:
            entries[-1] += "," + token
        elif token:
            entries.append(token)
    return entries


def parse_variant(entry, value, notes):
    """"bfq:low_latency=0" -> {"entry", "label", "scheduler", "tune"}."""
    sched, colon, tune = entry.partition(":")
    if sched in ALIASES:
        notes.append("SCHED=%s is the 2012 name; using %s" % (sched, ALIASES[sched]))
        sched = ALIASES[sched]
    if sched not in SCHEDULERS + (IOCOST,):
        raise ParamError("SCHED=%s: must be one of %s (or noop, deadline, cfq), "
                         "optionally with :name=value,..."
                         % (sched, ", ".join(SCHEDULERS + (IOCOST,))))
    items = parse_tune(tune, "SCHED=" + value)
    if colon and not items:
        raise ParamError("SCHED=%s: %s has no tunables after the colon" % (value, entry))
    if items:
        entry = "%s:%s" % (sched, ",".join("%s=%s" % kv for kv in items))
    else:
        entry = sched
    return {"entry": entry, "label": LABEL_UNSAFE.sub("_", entry), "scheduler": sched,
            "tune": items}


def parse_scheds(value, notes):
    """The variants in the order they run; 2012 names mapped.  A variant is
    a scheduler, or a scheduler with its own tunables ("bfq:low_latency=0")."""
    variants = []
    for entry in split_sched(value):
        variant = parse_variant(entry, value, notes)
        if variant["label"] in [v["label"] for v in variants]:
            raise ParamError("SCHED=%s: %s is named twice" % (value, variant["entry"]))
        variants.append(variant)
    if not variants:
        raise ParamError("SCHED is empty")
    return variants


def run_params(p, variant):
    """The parameters of one variant's run: its scheduler, and TUNE with the
    variant's tunables on top, for that run only."""
    tune = dict(p["TUNE"])
    tune.update(variant["tune"])
    return dict(p, SCHED=variant["scheduler"], VARIANT=variant["label"],
                TUNE=list(tune.items()))


KERNEL_ARG = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.,:=-]*$")


def parse_kernel_args(value):
    """Extra guest kernel arguments: plain words only, so that nothing can
    end the command line early or smuggle in shell or QEMU syntax."""
    args = value.split()
    for arg in args:
        if not KERNEL_ARG.match(arg):
            raise ParamError("KERNEL_ARGS=%s: %s is not a plain kernel argument "
                             "(letters, digits, _ . , : = -)" % (value, arg))
    return args


def load(env=None):
    """Read and validate the parameters; return (params, notes)."""
    env = os.environ if env is None else env
    raw = {name: (env.get(name) or default) for name, (default, _) in DEFAULTS.items()}
    notes = []
    params = {}

    params["VARIANTS"] = parse_scheds(raw["SCHED"], notes)
    params["SCHED"] = params["VARIANTS"][0]["scheduler"]
    params["TUNE"] = parse_tune(raw["TUNE"])

    params["WORKLOAD"] = raw["WORKLOAD"]
    params["JOBFILE"] = resolve_workload(raw["WORKLOAD"])

    accel = raw["ACCEL"]
    if accel not in ("tcg", "kvm"):
        raise ParamError("ACCEL=%s: must be tcg or kvm" % accel)
    params["ACCEL"] = accel

    if raw["UDEV"] not in ("0", "1"):
        raise ParamError("UDEV=%s: must be 0 or 1" % raw["UDEV"])
    params["UDEV"] = raw["UDEV"] == "1"
    if raw["IDLE"] not in ("poll", "halt"):
        raise ParamError("IDLE=%s: must be poll or halt" % raw["IDLE"])
    params["IDLE"] = raw["IDLE"]
    params["KERNEL_ARGS"] = parse_kernel_args(raw["KERNEL_ARGS"])
    if raw["DEVICE"] not in DEVICES:
        raise ParamError("DEVICE=%s: must be nvme (a raw image file) or %s (QEMU's null-co "
                         "driver with LATENCY_US)" % (raw["DEVICE"], NULL_DEVICE))
    params["DEVICE"] = raw["DEVICE"]

    for name in RANGES:
        if raw[name] == UNSET.get(name):
            params[name] = None
        elif raw[name] == WORDS.get(name):
            params[name] = raw[name]
        else:
            params[name] = parse_int(name, raw[name])
    check_throttle(params)
    check_device(params)
    check_groups(params)
    if params["VCPUS"] == 1:
        notes.append("VCPUS=1: the emulated NVMe device loses completions with one vCPU "
                     "here (I/O timeouts, see the README's calibration section)")
    return params, notes


def check_groups(p):
    """The workload's cgroups (jobfile.groups) must be ones the guest can make."""
    with open(p["JOBFILE"]) as f:
        text = f.read()
    try:
        jobfile.check_groups(text)
    except ValueError as e:
        raise ParamError("WORKLOAD=%s: %s" % (p["WORKLOAD"], e)) from None


def check_throttle(p):
    """IOPS_SIZE scales what a request counts against IOPS: with IOPS=off
    there is nothing for it to scale."""
    if p["IOPS"] is None and p["IOPS_SIZE"] is not None:
        raise ParamError("IOPS_SIZE=%d: it sets how many I/Os a large request counts against "
                         "IOPS, and IOPS=off sets no I/O throttle; leave IOPS_SIZE unset or 0, "
                         "or give IOPS a number (BPS still charges by size)" % p["IOPS_SIZE"])


def unthrottled(p):
    """Whether the run's measured device has no IOPS throttle (IOPS=off):
    no ceiling check, no work conservation, its number is its total IOPS."""
    return p["IOPS"] is None


def check_device(p):
    """LATENCY_US belongs to the null device, and the null device cannot run
    a workload that checks what it reads back: it keeps nothing."""
    if p["LATENCY_US"] is not None and p["DEVICE"] != NULL_DEVICE:
        raise ParamError("LATENCY_US=%d: only DEVICE=%s takes a latency; DEVICE=%s answers "
                         "as fast as the host's file does (leave LATENCY_US unset or 0)"
                         % (p["LATENCY_US"], NULL_DEVICE, p["DEVICE"]))
    if p["DEVICE"] != NULL_DEVICE:
        return
    with open(p["JOBFILE"]) as f:
        verifying = jobfile.verifying_jobs(f.read())
    if verifying:
        raise ParamError("WORKLOAD=%s: %s verify the data they read back (verify=), but "
                         "DEVICE=%s discards writes and reads zeroes; run it with DEVICE=nvme"
                         % (p["WORKLOAD"], ", ".join(verifying), NULL_DEVICE))


def device_cost_model(p):
    """What one request costs the throttled device: meta.json, summary.json
    and analysis/devcost.py read this dict; None means that limit is off
    (iops None: IOPS=off).
    device and latency_us say what answers behind the throttle: with a
    latency the device completes at most min(in flight / latency, iops)
    requests a second."""
    return {"iops": p["IOPS"], "bps": p["BPS"], "iops_size": p["IOPS_SIZE"],
            "device": p["DEVICE"], "latency_us": p["LATENCY_US"]}
