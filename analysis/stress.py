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


def fio_iops(path):
    """Total read and write IOPS of a fio JSON output, or None."""
    try:
        with open(path) as f:
            fio = json.load(f)
    except (OSError, ValueError):
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


def unplug_errors(case_dir, result):
    """The device went away under load; fio's errors are expected."""
    if result.get("removed") != "1":
        return ["the device was not removed"]
    return []


# Checks the host makes on top of the guest's errors.
CASE_CHECKS = {"faults": faults_errors, "unplug": unplug_errors}


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
