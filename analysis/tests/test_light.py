"""A light task under load (analysis/light.py): the light workloads'
jobfiles, their numbers from a synthetic run, and the report's table."""

import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import pandas as pd

from analysis import analyze, light, metrics, report
from analysis.tests import TOP, blk
from analysis.tests.test_report import ReportFixture


def bench_module(name):
    """A module of bench/, as the guest-side harness has it."""
    spec = importlib.util.spec_from_file_location("bench_" + name,
                                                  os.path.join(TOP, "bench", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


jobfile = bench_module("jobfile")
WORKLOADS = ("light-random", "light-buffered")
MiB = 1 << 20


def workload(name):
    with open(os.path.join(TOP, "workloads", name + ".fio")) as f:
        return f.read()


def size(value):
    """A fio size with a k or m suffix, in bytes."""
    scale = {"k": 1024, "m": MiB}.get(value[-1], 1)
    return int(value[:-1] if scale > 1 else value) * scale


class JobfileTest(unittest.TestCase):
    def test_a_job_may_leave_the_harness_clock(self):
        text = ("[global]\ntime_based=0\nramp_time=0\n[a]\ntime_based=1\nruntime=9\n"
                "[b]\ntime_based=0\nramp_time=0\nramp_time=5\n")
        body = jobfile.prepare(text)[len(jobfile.PRELUDE):].splitlines()
        self.assertEqual(body, [
            "[global]", "# bench: removed 'time_based=0'", "# bench: removed 'ramp_time=0'",
            "[a]", "# bench: removed 'time_based=1'", "# bench: removed 'runtime=9'",
            "[b]", "time_based=0", "ramp_time=0", "# bench: removed 'ramp_time=5'"])

    def test_light_workloads(self):
        for name in WORKLOADS:
            text = workload(name)
            jobs = {j["name"]: j for j in jobfile.jobs(text)}
            self.assertEqual(light.spec(text), {"task": "app", "alone": "app-alone"}, name)
            self.assertEqual(metrics.parse_expect(text), {"load": 1.0}, name)
            self.assertEqual(list(jobs), ["load", "app", "app-alone"], name)
            load, app, alone = jobs["load"], jobs["app"], jobs["app-alone"]
            self.assertEqual((load["numjobs"], load.get("time_based")), ("5", None), name)
            self.assertEqual(load["direct"], "1" if name == "light-random" else "0", name)
            if name == "light-random":
                self.assertEqual((load["iodepth"], load["rw"], load["bs"]),
                                 ("32", "randread", "4k"))
            else:
                self.assertEqual((load["rw"], load["ioengine"], load["invalidate"]),
                                 ("read", "psync", "1"))
            self.assertNotIn("stonewall", app)
            self.assertIn("stonewall", alone)
            self.assertGreaterEqual(int(app["startdelay"]), 3, name)
            for job in (app, alone):
                self.assertEqual((job["time_based"], job["ramp_time"], job["number_ios"],
                                  job["direct"], job["rw"], job.get("iodepth", "1")),
                                 ("0", "0", "700", "1", "randread", "1"), name)
                sizes = [size(part.split("/")[0]) for part in job["bssplit"].split(":")]
                self.assertEqual((min(sizes), max(sizes)), (4096, 128 * 1024), name)
                self.assertEqual(sum(int(p.split("/")[1]) for p in job["bssplit"].split(":")),
                                 100, name)
                # Same region for both, past the load's, inside the 1 GiB device.
                self.assertEqual((job["offset"], job["size"]), (app["offset"], app["size"]))
                self.assertGreaterEqual(size(job["offset"]),
                                        5 * size(load["offset_increment"]), name)
                self.assertLessEqual(size(job["offset"]) + size(job["size"]), 1 << 30, name)
            self.assertEqual(jobfile.total_depth(text),
                             5 * int(load.get("iodepth", 1)) + 2, name)
            prepared = jobfile.prepare(text)
            self.assertEqual(prepared.count("\ntime_based=0\n"), 2, name)
            self.assertEqual(prepared.count("\nramp_time=0\n"), 2, name)

    @unittest.skipUnless(shutil.which("fio"), "fio is not installed")
    def test_fio_parses_them(self):
        env = dict(os.environ, FIO_DEV="/dev/null", FIO_RUNTIME="30", FIO_RAMP="2")
        for name in WORKLOADS:
            with tempfile.NamedTemporaryFile("w", suffix=".fio") as f:
                f.write(jobfile.prepare(workload(name)))
                f.flush()
                out = subprocess.run(["fio", "--parse-only", f.name], env=env,
                                     capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, name + ": " + out.stderr)

    def test_light_lines(self):
        self.assertIsNone(light.spec("# expect: a=1\n[a]\n"))
        self.assertEqual(light.names("# light: x alone=y\n"), {"x", "y"})
        self.assertEqual(light.names("[a]\n"), set())
        for text, message in (("# light: x\n", "is not JOB alone=JOB"),
                              ("# light: x alone=\n", "is not JOB alone=JOB"),
                              ("# light: x alone=x\n", "is not JOB alone=JOB"),
                              ("# light: x y alone=z\n", "is not JOB alone=JOB"),
                              ("# light: x idle=y\n", "is not JOB alone=JOB"),
                              ("# light: x alone=y\n# light: x alone=z\n", "2 light lines"),
                              ("# expect: x=1 l=1\n# light: x alone=y\n",
                               "judges x, which the light line sets aside"),
                              ("# expect[fiops]: y=1\n# light: x alone=y\n", "judges y")):
            with self.assertRaisesRegex(ValueError, message, msg=text):
                light.spec(text)
        light.spec("# expect[none]: none\n# light: x alone=y\n")


LOADERS = (101, 102, 103, 104, 105)
APP, ALONE = 106, 107
THROTTLE = 100
NUMBER_IOS = 70
WORKLOAD = ("# light-random: a light task under load\n# expect: load=1\n"
            "# light: app alone=app-alone\n[load]\nnumjobs=5\n[app]\n[app-alone]\n")


def light_run(every, app_start=4.0, gap=0.01, app_gap=None):
    """(blktrace events, fio JSON) of a light run on a 100 IOPS device: it
    completes a command every gap s from 0.5 s to 12.5 s, the loaders'
    (pids 101-105, each bio queued 0.3 s before) in turn but for every
    every-th slot from app_start on, which app (106) takes until its
    NUMBER_IOS are done, each queued at its last one's completion (QD1);
    app_gap spaces the slots while app runs (a device left idle).  Then
    app-alone (107) takes a slot every gap s from 12.6 s."""
    events, done = [], {pid: [] for pid in LOADERS + (APP, ALONE)}
    t, slot, turn, app_q = 0.5, 0, 0, None

    def io(pid, queued, completed):
        sector = pid * 100000 + 8 * len(done[pid])
        done[pid].append((queued, completed))
        events.extend([(int(queued * 1e9), pid, "Q", sector, 8),
                       (int(queued * 1e9) + 1000, 7, "D", sector, 8),
                       (int(completed * 1e9), 0, "C", sector, 8)])

    while t < 12.5:
        app_on = t >= app_start and len(done[APP]) < NUMBER_IOS
        if app_on and slot % every == 0:
            queued = app_q if app_q is not None else t - 0.001
            io(APP, queued, t)
            app_q = t + 0.0001
        else:
            pid = LOADERS[turn % 5]
            turn += 1
            io(pid, t - 0.3, t)
        slot += 1
        t += app_gap if app_on and app_gap else gap
    # app's I/Os the load left undone, alone, then app-alone's.
    t = max(t, 12.5)
    while len(done[APP]) < NUMBER_IOS:
        io(APP, t - 0.001, t)
        t += gap
    t = max(t, 12.6)
    for i in range(NUMBER_IOS):
        io(ALONE, t - (0.001 if i == 0 else gap - 0.0001), t)
        t += gap
    events.sort(key=lambda e: e[0])

    def job(name, pid, runtime_ms, options=None):
        ios = len(done[pid]) if options else sum(
            1 for q, _ in done[pid] if q >= done[pid][-1][1] - runtime_ms / 1000)
        latency = [c - q for q, c in done[pid]]
        read = {"iops": ios * 1000 / runtime_ms, "total_ios": ios,
                "lat_ns": {"N": ios, "mean": 1e9 * sum(latency) / len(latency),
                           "percentile": {"99.000000": int(1e9 * max(latency))}}}
        zero = {"iops": 0.0, "total_ios": 0}
        return {"jobname": name, "job_runtime": runtime_ms, "error": 0,
                "job options": dict(options or {}, direct="1"),
                "read": read, "write": zero, "trim": zero}

    def span_ms(pid):
        return round(1000 * (done[pid][-1][1] - done[pid][0][0]))

    options = {"number_ios": str(NUMBER_IOS), "time_based": "0", "ramp_time": "0"}
    fio = {"global options": {"ramp_time": "2", "runtime": "10"},
           "jobs": [job("load", pid, 10000) for pid in LOADERS]
           + [job("app", APP, span_ms(APP), options),
              job("app-alone", ALONE, span_ms(ALONE), dict(options, stonewall="1"))]}
    return events, fio


def write_run(run_dir, scheduler, every, **kw):
    """A run folder of light_run(every, **kw) as bench leaves it, analysed."""
    events, fio = light_run(every, **kw)
    step = os.path.join(run_dir, "guest", "main")
    os.makedirs(step)
    with open(os.path.join(step, "nvme0n1.blktrace.0"), "wb") as f:
        f.write(blk.binary(events))
    with open(os.path.join(step, "blktrace.log"), "w") as f:
        f.write("  Total:   %d events (dropped 0),   1 KiB data\n" % len(events))
    with open(os.path.join(step, "pids.txt"), "w") as f:
        f.write("".join("%d\n" % p for p in LOADERS + (APP, ALONE)))
    with open(os.path.join(step, "fio.json"), "w") as f:
        json.dump(fio, f)
    with open(os.path.join(run_dir, "workload.fio"), "w") as f:
        f.write(WORKLOAD)
    meta = {"scheduler": scheduler, "status": "ok", "valid": True, "throttle_iops": THROTTLE,
            "params": {"WORKLOAD": "light-random", "SCHED": scheduler, "DEPTH": 1023,
                       "IOPS": THROTTLE, "RUNTIME": 10, "RAMP": 2, "VCPUS": 2, "TUNE": []},
            "device_tags": 1022, "nr_requests_set": 162, "accel": "tcg",
            "workload_description": "light-random: a light task under load"}
    with open(os.path.join(run_dir, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump({"scheduler": scheduler, "workload": "light-random"}, f)
    fields, table, series = analyze.compute(run_dir)
    analyze.write(run_dir, "main", fields, table, series)
    return fields, table


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class FieldsTest(unittest.TestCase):
    def run_of(self, every, **kw):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        return write_run(tmp.name, "fiops", every, **kw)

    def test_app_within_three_times_its_time_alone(self):
        fields, table = self.run_of(2)
        lt = fields["light"]
        # 70 I/Os every other 10 ms slot: 1.381 s; alone, every slot: 0.691 s.
        self.assertEqual((lt["ios"], lt["alone_ios"], lt["number_ios"]), (70, 70, 70))
        self.assertAlmostEqual(lt["ratio"], 2.0, delta=0.03)
        self.assertEqual((lt["loaded_s"], lt["alone_s"]), (1.381, 0.691))
        self.assertAlmostEqual(lt["busy"], 1.0, delta=0.02)
        self.assertAlmostEqual(lt["others"], 0.5, delta=0.02)
        self.assertAlmostEqual(lt["others_run"], 1 - 70 / (THROTTLE * 10.0), delta=0.02)
        self.assertAlmostEqual(lt["lat_mean_ms"], 19.63, delta=0.01)   # (1 + 69 x 19.9) / 70
        self.assertEqual(lt["alone_other_requests"], 0)
        self.assertTrue(lt["started_in_load"] and lt["finished_in_load"])
        self.assertEqual((lt["passed"], lt["failed"]), (True, []))
        # app and app-alone are set aside: the five loaders share among themselves.
        rows = table.set_index("task")
        self.assertEqual(rows["aside"].fillna(False).tolist(), [False] * 5 + [True, True, False])
        self.assertTrue(rows.loc[["app", "app-alone"], "share"].isna().all())
        self.assertAlmostEqual(rows.loc["load.0":"load.4", "share"].sum(), 1.0)
        self.assertGreater(fields["jain_index"], 0.99)
        self.assertGreater(fields["window_overlap"], 0.99)
        # Not set aside, app-alone's window, after the load's, would meet no other.
        self.assertEqual(metrics.window_overlap(table.drop(columns="aside")), 0.0)
        self.assertTrue(fields["fio_blktrace_agree"], fields["fio_blktrace_disagreements"])
        self.assertIn("ratio 2.0", light.summary_line(lt))

    def test_too_slow_under_load_fails(self):
        lt = self.run_of(5)[0]["light"]
        self.assertAlmostEqual(lt["ratio"], 5.0, delta=0.1)
        self.assertAlmostEqual(lt["busy"], 1.0, delta=0.02)
        self.assertFalse(lt["passed"])
        self.assertEqual(len(lt["failed"]), 1)
        self.assertRegex(lt["failed"][0], r"^app took [45]\.\d\dx its time alone, over 3x$")

    def test_idling_fails_on_the_device_busy(self):
        # Every other slot, but slots 15 ms apart while app runs: the device
        # idles a third of the time, app is fast enough.
        lt = self.run_of(2, app_gap=0.015)[0]["light"]
        self.assertLessEqual(lt["ratio"], light.MAX_RATIO)
        self.assertAlmostEqual(lt["busy"], 0.667, delta=0.02)
        self.assertFalse(lt["passed"])
        self.assertEqual(len(lt["failed"]), 1)
        self.assertRegex(lt["failed"][0], r"^the device completed 0\.6\d\d of the throttle "
                         r"over app's run, under 0\.97$")

    def test_unfinished_under_load_is_a_lower_bound(self):
        lt = self.run_of(5, app_start=11.0)[0]["light"]
        self.assertFalse(lt["finished_in_load"])
        self.assertIsNone(lt["ratio"])
        self.assertGreater(lt["ratio_min"], 2.0)
        self.assertLess(lt["ios_in_load"], NUMBER_IOS)
        self.assertFalse(lt["passed"])
        self.assertTrue(any("before app finished" in r for r in lt["failed"]))

    def test_started_before_the_load_was_measured_is_no_ratio(self):
        lt = self.run_of(2, app_start=1.0)[0]["light"]
        self.assertFalse(lt["started_in_load"])
        self.assertIsNone(lt["ratio"])
        self.assertFalse(lt["passed"])
        # In trace seconds: blkparse counts from the first event, load.0's queue at 0.2 s.
        self.assertRegex(lt["failed"][0], r"^app started at 0\.799 s, before the load.s window")

    def test_without_a_throttle_nothing_passes(self):
        out = {"task": "app", "loaded_s": 1.0, "alone_s": 0.5, "started_in_load": True,
               "finished_in_load": True, "trace_start": 4.0, "busy": None}
        self.assertEqual(light.marks(out, {"task": "app"}, None, (2.0, 12.0)),
                         ["no IOPS throttle to judge the device's work by"])
        self.assertEqual(out["ratio"], 2.0)

    def test_no_light_line_no_fields(self):
        self.assertIsNone(light.fields(None, {}, None, None, THROTTLE, (0, 1)))


class BenchTest(unittest.TestCase):
    def test_the_total_and_ceiling_leave_the_light_jobs_out(self):
        bench = bench_module("bench")
        _, fio = light_run(2)
        with tempfile.TemporaryDirectory() as run_dir:
            step = os.path.join(run_dir, "guest", "main")
            os.makedirs(step)
            for name, text in (("fio.rc", "0\n"), ("queue.txt", "nr_tags=1022\n"),
                               ("pids.txt", "".join("%d\n" % p for p in range(101, 108))),
                               ("fio.json", json.dumps(fio))):
                with open(os.path.join(step, name), "w") as f:
                    f.write(text)
            every = sum(j["read"]["iops"] for j in fio["jobs"])
            loads = sum(j["read"]["iops"] for j in fio["jobs"][:5])
            # Without its workload.fio bench cannot tell the light jobs apart.
            self.assertAlmostEqual(bench.collect_step(run_dir, "main")[0]["total_iops"], every,
                                   delta=0.5)
            with open(os.path.join(run_dir, "workload.fio"), "w") as f:
                f.write(WORKLOAD)
            self.assertAlmostEqual(bench.collect_step(run_dir, "main")[0]["total_iops"], loads,
                                   delta=0.5)
            self.assertGreater(every - loads, 100)


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class ReportTest(ReportFixture, unittest.TestCase):
    @staticmethod
    def make_runs(compare):
        for run_id, scheduler, every in (("fiops-1", "fiops", 2), ("fiops-2", "fiops", 2),
                                         ("none-1", "none", 5)):
            write_run(os.path.join(compare, run_id), scheduler, every)

    def test_light_table(self):
        section = self.md.split("## light-random")[1]
        table = section.split("A light task under load")[1].split("\n\n")[1]
        rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
                for line in table.splitlines()[2:]}
        self.assertEqual(list(rows), ["none", "fiops"])
        self.assertEqual(rows["fiops"][2], "2.00 ± 0.00")
        self.assertTrue(rows["fiops"][-2].startswith("✓ 2 of 2"), rows["fiops"])
        self.assertTrue(rows["none"][-2].startswith("✗ 0 of 1"), rows["none"])
        self.assertIn("* `none-1` (none): app took 4.", section)
        runs = pd.read_csv(os.path.join(self.out, "runs.csv")).drop_duplicates("run_id")
        runs = runs.set_index("run_id")
        self.assertEqual(runs.loc["fiops-1", "light_passed"], True)
        self.assertAlmostEqual(runs.loc["none-1", "light_ratio"], 5.0, delta=0.1)
        self.assertEqual(runs.loc["fiops-1", "light_task"], "app")

    def test_light_columns_without_a_light_run(self):
        self.assertEqual(light.columns(None), {"light_" + k: None for k in light.COLUMNS})
        self.assertEqual(light.section(pd.DataFrame({"run_id": ["a"]}), ["x"],
                                       report.number, report.mean_ci), [])


if __name__ == "__main__":
    unittest.main()
