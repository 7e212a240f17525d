"""Prepare a workload's fio jobfile for the guest, and read what it asks.

The harness owns the device, the runtime and the ramp: a prelude sets them
through environment variables the guest fills in, and the same options are
taken out of the workload (each removal is left as a comment), so that any
fio jobfile runs unchanged otherwise.
"""

import re

OWNED = ("filename", "directory", "runtime", "time_based", "ramp_time")
# A job may step out of the harness's clock in its own section: with
# time_based=0 it ends on its own count (number_ios) and with ramp_time=0 it
# counts from its first I/O; the light workloads' application task does
# both (analysis/light.py).  Anywhere else these options are the harness's.
OPT_OUT = {"time_based": "0", "ramp_time": "0"}

PRELUDE = """\
# Prepended by bench/jobfile.py: the harness sets device, runtime and ramp.
[global]
filename=${FIO_DEV}
runtime=${FIO_RUNTIME}
ramp_time=${FIO_RAMP}
time_based=1

"""

SECTION = re.compile(r"^\s*\[(.+)\]\s*$")
OPTION = re.compile(r"^\s*([A-Za-z0-9_]+)\s*(?:=\s*(.*?))?\s*$")


def prepare(text):
    """Return the jobfile the guest runs: prelude + workload minus owned
    options, but for a job's own OPT_OUT."""
    out = [PRELUDE]
    in_job = False
    for line in text.splitlines():
        section = SECTION.match(line)
        if section:
            in_job = section.group(1).strip() != "global"
        m = OPTION.match(line)
        if (m and not line.lstrip().startswith(("#", ";")) and m.group(1) in OWNED
                and not (in_job and OPT_OUT.get(m.group(1)) == m.group(2))):
            out.append("# bench: removed %r\n" % line.strip())
        else:
            out.append(line + "\n")
    return "".join(out)


def _number(value, default):
    """fio integers may carry k/m suffixes; depth and numjobs do not need them."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def jobs(text):
    """List the job sections as dicts of options, with [global] inherited.

    fio applies every [global] to the jobs after it; a job's own options
    override.  Comments start with # or ;.
    """
    current_global = {}
    result = []
    section = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        m = SECTION.match(line)
        if m:
            name = m.group(1).strip()
            if name == "global":
                section = current_global
            else:
                section = dict(current_global)
                section["name"] = name
                result.append(section)
            continue
        m = OPTION.match(line)
        if m and section is not None:
            section[m.group(1)] = m.group(2) if m.group(2) is not None else "1"
    return result


def total_depth(text):
    """How many requests the workload can have in flight at once."""
    return sum(_number(j.get("iodepth"), 1) * _number(j.get("numjobs"), 1)
               for j in jobs(text))


def verifying_jobs(text):
    """The names of the jobs that check the data they read back: fio's
    verify set to a method (0 is off, null only pretends)."""
    return [j["name"] for j in jobs(text) if j.get("verify", "0") not in ("0", "null")]


def description(text):
    """The opening comment block of a workload, as one line."""
    words = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        words.append(line.lstrip("#").strip())
    return " ".join(w for w in words if w)


GROUP = re.compile(r"^[ \t]*#[ \t]*group:(.*)$", re.M)
GROUP_PATH = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$")
# Every weight file the guest writes takes these: io.bfq.weight stops at 1000.
GROUP_WEIGHTS = (1, 1000)


def groups(text):
    """{path: weight} of the "# group: PATH WEIGHT" lines, in their order:
    the cgroups the guest makes (guest/init setup_groups), a nested one
    after its parent, each with WEIGHT as its default weight in
    io.fiops.weight, io.bfq.weight and io.weight.  Raises ValueError on a
    line it cannot take."""
    result = {}
    for line in GROUP.findall(text):
        fields = line.split()
        if len(fields) != 2 or not GROUP_PATH.match(fields[0]) or not fields[1].isdigit():
            raise ValueError("group: %r is not PATH WEIGHT" % line.strip())
        path, weight = fields[0], int(fields[1])
        if not GROUP_WEIGHTS[0] <= weight <= GROUP_WEIGHTS[1]:
            raise ValueError("group: %s weight %d is outside %d..%d"
                             % (path, weight, *GROUP_WEIGHTS))
        parent = path.rpartition("/")[0]
        if parent and parent not in result:
            raise ValueError("group: %s comes before its parent %s" % (path, parent))
        if path in result:
            raise ValueError("group: %s is named twice" % path)
        result[path] = weight
    return result


def job_groups(text):
    """{job name: cgroup} of the jobs that fio's cgroup= puts in a group."""
    return {j["name"]: j["cgroup"] for j in jobs(text) if j.get("cgroup")}


def check_groups(text):
    """Raise ValueError unless every job's cgroup= is a group the jobfile
    names, and nested groups hold no job: cgroup v2 lets a group with the
    io controller on for its children hold no task."""
    named = groups(text)
    parents = {p.rpartition("/")[0] for p in named}
    for job, group in job_groups(text).items():
        if group not in named:
            raise ValueError("job %s: cgroup=%s has no \"# group: %s WEIGHT\" line"
                             % (job, group, group))
        if group in parents:
            raise ValueError("job %s: cgroup=%s has groups below it; put the job in one"
                             % (job, group))

