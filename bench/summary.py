"""Per-task numbers from fio's JSON: the summary.json of a run."""


def job_iops(job):
    return sum(job[d]["iops"] for d in ("read", "write", "trim"))


def job_ios(job):
    return sum(job[d]["total_ios"] for d in ("read", "write", "trim"))


def tasks(fio, pids):
    """One entry per fio job, in the JSON's order.

    pids come from the guest, sorted; fio forks jobs in job order, so they
    pair up by position.  When the counts differ no pid is guessed.
    """
    jobs = fio["jobs"]
    if len(pids) != len(jobs):
        pids = [None] * len(jobs)
    total = sum(job_iops(j) for j in jobs) or 1.0
    result = []
    for job, pid in zip(jobs, pids):
        iops = job_iops(job)
        result.append({"name": job["jobname"], "pid": pid, "iops": round(iops, 1),
                       "ios": job_ios(job), "share": round(iops / total, 4)})
    return result


def over_throttle(iops, throttle, digits):
    """iops over the IOPS throttle, rounded; None without one (IOPS=off)."""
    return None if throttle is None else round(iops / throttle, digits)


def build(p, meta, main):
    """summary.json's first fields.  With IOPS=off (throttle_iops null,
    unthrottled true) there is no throttle to use: throttle_utilization
    is null, and total_iops is the run's number."""
    return {
        "scheduler": p["SCHED"],
        "variant": p["VARIANT"],
        "workload": p["WORKLOAD"],
        "throttle_iops": p["IOPS"],
        "unthrottled": p["IOPS"] is None,
        "device_cost_model": meta["device_cost_model"],
        "device_depth": p["DEPTH"],
        "device_tags": meta["device_tags"],
        "nr_requests": meta["nr_requests_set"],
        "tunables": meta["tunables"],
        "total_iops": main["total_iops"],
        "throttle_utilization": over_throttle(main["total_iops"], p["IOPS"], 3),
        "ceiling_iops": meta["calibration"]["ceiling_iops"],
        "valid": meta["valid"],
        "tasks": main["tasks"],
    }
