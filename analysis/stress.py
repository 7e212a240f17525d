"""Judge a make stress run folder: one row per case, and its table.

Each case folder under stress/ holds what guest/stress.sh wrote: result
(key=value lines), errors.txt (one line per error the guest counted) and
dmesg.txt (the kernel messages printed while the case ran).  A case
passes when it finished, counted no error and its dmesg has no finding.
"""

import json
import os
import re

from analysis.files import read_kv

# Kernel reports that fail a run or a case: warnings, oopses, lockdep,
# KASAN, sleeping in atomic context, hung tasks.
DMESG_FINDINGS = re.compile(
    r"WARNING:|BUG:|Oops|Call Trace|general protection|Kernel panic"
    r"|possible circular locking|inconsistent lock state|KASAN|UBSAN"
    r"|blocked for more than|list_add corruption|list_del corruption|ODEBUG:")

# The faults case: the reader whose requests have no io_cq may get this
# much more or less than the reader that has one; fiops shares equally.
FALLBACK_RATIO = (2 / 3, 3 / 2)


def findings(path):
    """Lines of a kernel log that DMESG_FINDINGS matches."""
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return [line.strip() for line in f if DMESG_FINDINGS.search(line)]


def console_segments(console):
    """{case: console lines from its start line to the next case's}: the
    kernel messages of a case whose dmesg.txt the guest never wrote."""
    segments, name = {}, None
    if not os.path.exists(console):
        return segments
    with open(console, errors="replace") as f:
        for line in f:
            m = re.match(r"fiops: stress (\S+) on ", line)
            if m:
                name = m.group(1)
                segments[name] = []
            elif name:
                segments[name].append(line)
    return segments


def fio_output(path):
    """A fio JSON output, or None.  fio writes its error messages to the
    same file, before the JSON: they are skipped."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    start = re.search(r"(?m)^\{", text)
    try:
        return json.loads(text[start.start():]) if start else None
    except ValueError:
        return None


def fio_iops(path):
    """Total read and write IOPS of a fio JSON output, or None."""
    fio = fio_output(path)
    if fio is None:
        return None
    return sum(j["read"]["iops"] + j["write"]["iops"] for j in fio["jobs"])


def faults_errors(case_dir, result):
    """The fallback owner was used, and charged like a task."""
    errors = []
    if int(result.get("fallback", 0) or 0) <= 0:
        errors.append("no request was charged to the fallback owner: "
                      "the io_cq allocations did not fail, or fiops has no fallback owner")
    owner = fio_iops(os.path.join(case_dir, "owner.json"))
    fallback = fio_iops(os.path.join(case_dir, "fallback.json"))
    if not owner or fallback is None:
        errors.append("no IOPS from the owner and fallback readers")
        return errors
    ratio = fallback / owner
    if not FALLBACK_RATIO[0] <= ratio <= FALLBACK_RATIO[1]:
        errors.append("the reader without an io_cq got %.0f IOPS against %.0f for the "
                      "reader with one (%.2fx)" % (fallback, owner, ratio))
    return errors


# The classes case: the BE reader's least share against an RT reader of a
# sibling group of the same weight, and the slowest read a BE reader may
# see beside an RT flood of its own group: FIOPS_PRIO_AGING (200 ms) plus
# the device queue (at most 63 requests at make stress's 500 IOPS, 126 ms)
# and slack for the emulation.
BE_SHARE_MIN = 0.45
AGING_READ_MAX_MS = 500
# A fair share leaves no read of the BE reader waiting a second (at 500
# IOPS, 32 reads in flight take 64 ms); a reader starved for the RT
# reader's whole run waits for all of it, then runs alone and gets IOPS
# that look fair.
SHARE_READ_MAX_MS = 1000
# The polled case: the interrupt-driven reader's IOPS while the polled
# task is stopped, as a share of the device's while both read.
POLLED_STOPPED_MIN = 0.5
# The nowait case: the share the reader beside the RWF_NOWAIT task keeps.
NOWAIT_OTHER_MIN = 0.4


def fio_job(path):
    """The first job of a fio JSON output, or None."""
    try:
        return fio_output(path)["jobs"][0]
    except (TypeError, KeyError, IndexError):
        return None


def read_rate(result, part):
    """Device reads per second the guest counted over a part of a case
    (<part>_reads in <part>_seconds), 0 if it counted none."""
    seconds = int(result.get(part + "_seconds", 0) or 0)
    return int(result.get(part + "_reads", 0) or 0) / seconds if seconds > 0 else 0


def classes_errors(case_dir, result):
    """RT orders tasks inside a group only, and aging serves BE there."""
    errors = []
    rt = fio_iops(os.path.join(case_dir, "rt.json"))
    be = fio_job(os.path.join(case_dir, "be.json"))
    if not rt or not be:
        errors.append("no IOPS from the RT and BE readers of two groups")
    else:
        be_iops, worst = be["read"]["iops"], be["read"]["lat_ns"]["max"] / 1e6
        if be_iops / (rt + be_iops) < BE_SHARE_MIN:
            errors.append("the BE reader of group b got %.2f of the device beside an RT "
                          "reader of group a at the same weight (%.0f against %.0f IOPS), "
                          "under %.2f" % (be_iops / (rt + be_iops), be_iops, rt, BE_SHARE_MIN))
        if worst > SHARE_READ_MAX_MS:
            errors.append("the BE reader of group b waited %.0f ms for a read beside an RT "
                          "reader of group a, over %d ms" % (worst, SHARE_READ_MAX_MS))
    probe = fio_job(os.path.join(case_dir, "probe.json"))
    if not probe or not probe["read"]["total_ios"]:
        errors.append("the BE reader beside an RT flood of its group completed no read")
    else:
        worst = probe["read"]["lat_ns"]["max"] / 1e6
        if worst > AGING_READ_MAX_MS:
            errors.append("the BE reader beside an RT flood of its group waited %.0f ms for "
                          "a read, over %d ms" % (worst, AGING_READ_MAX_MS))
    return errors


def polled_errors(case_dir, result):
    """A polled task that stops reaping holds nobody else back."""
    errors = []
    if not fio_iops(os.path.join(case_dir, "polled.json")):
        errors.append("the polled reader completed nothing")
    rates = [read_rate(result, "both"), read_rate(result, "stopped")]
    if not rates[0]:
        errors.append("no reads while both readers ran")
    elif rates[1] < POLLED_STOPPED_MIN * rates[0]:
        errors.append("the other reader did %.0f IOPS while the polled task did not reap, "
                      "under %.2f of the %.0f both did before"
                      % (rates[1], POLLED_STOPPED_MIN, rates[0]))
    return errors


def nowait_errors(case_dir, result):
    """Over its share an RWF_NOWAIT read fails with EAGAIN, not passes.
    fio counts a failed read as done, so the other reader's share is of
    the reads the device did while both ran."""
    errors = []
    nowait = fio_job(os.path.join(case_dir, "nowait.json"))
    other = fio_iops(os.path.join(case_dir, "be.json"))
    if not nowait:
        return ["no fio output from the RWF_NOWAIT reader"]
    if not nowait.get("total_err"):
        errors.append("no RWF_NOWAIT read failed with EAGAIN: the reader's depth of 128 "
                      "passed its share of the tags")
    device = read_rate(result, "device")
    if not device or not other:
        errors.append("no reads from the device or the other reader")
    elif other / device < NOWAIT_OTHER_MIN:
        errors.append("the reader beside the RWF_NOWAIT task got %.2f of the device "
                      "(%.0f of %.0f IOPS), under %.2f"
                      % (other / device, other, device, NOWAIT_OTHER_MIN))
    return errors


def unplug_errors(case_dir, result):
    """The device went away under load; fio's errors are expected."""
    if result.get("removed") != "1":
        return ["the device was not removed"]
    return []


# Checks the host makes on top of the guest's errors.
CASE_CHECKS = {"faults": faults_errors, "unplug": unplug_errors, "classes": classes_errors,
               "polled": polled_errors, "nowait": nowait_errors}


def judge_case(run_dir, name, console):
    d = os.path.join(run_dir, "stress", name)
    result = read_kv(os.path.join(d, "result"))
    errors = []
    if os.path.exists(os.path.join(d, "errors.txt")):
        with open(os.path.join(d, "errors.txt"), errors="replace") as f:
            errors = [line.strip() for line in f if line.strip()]
    if "errors" not in result:
        errors.append("the case did not finish")
    elif name in CASE_CHECKS:
        errors += CASE_CHECKS[name](d, result)
    dmesg = os.path.join(d, "dmesg.txt")
    found = findings(dmesg) if os.path.exists(dmesg) else \
        [line.strip() for line in console.get(name, []) if DMESG_FINDINGS.search(line)]
    return {
        "case": name,
        "iterations": int(result.get("iterations", 0) or 0),
        "errors": len(errors),
        "dmesg_findings": len(found),
        "seconds": int(result.get("seconds", 0) or 0),
        "passed": not errors and not found,
        "error_lines": errors,
        "finding_lines": found,
        "result": result,
    }


def judge_outside(run_dir):
    """A row for the kernel's messages outside the cases: the boot, before
    the first case, and the shutdown, after the last."""
    found = findings(os.path.join(run_dir, "stress", "boot-dmesg.txt")) + \
        findings(os.path.join(run_dir, "dmesg.txt"))
    return {"case": "boot and shutdown", "iterations": 1, "errors": 0,
            "dmesg_findings": len(found), "seconds": 0, "passed": not found,
            "error_lines": [], "finding_lines": found, "result": {}}


def judge(run_dir, cases):
    """One row per case, in the order run, and one for the rest of dmesg."""
    console = console_segments(os.path.join(run_dir, "console.log"))
    return [judge_case(run_dir, name, console) for name in cases] + [judge_outside(run_dir)]


def table(rows):
    """The summary table, markdown."""
    lines = ["| case | iterations | errors | dmesg findings | seconds | result |",
             "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append("| %s | %d | %d | %d | %d | %s |"
                     % (r["case"], r["iterations"], r["errors"], r["dmesg_findings"],
                        r["seconds"], "pass" if r["passed"] else "FAIL"))
    details = []
    for r in rows:
        for line in r["error_lines"][:10]:
            details.append("- %s: error: %s" % (r["case"], line))
        for line in r["finding_lines"][:10]:
            details.append("- %s: dmesg: %s" % (r["case"], line))
    return "\n".join(lines + ([""] + details if details else [])) + "\n"
