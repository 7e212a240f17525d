"""Guest tests: each boots the built kernel in QEMU through bench.py."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(HERE), "bench.py")
RUN_FILES = ("meta.json", "summary.json", "job.fio", "workload.fio", "plan",
             "console.log", "dmesg.txt", "guest/info.txt",
             "guest/calibration/fio.json", "guest/main/fio.json",
             "guest/main/blktrace.log", "guest/main/pids.txt", "guest/main/queue.txt")
IN_TREE = ("none", "mq-deadline", "bfq", "kyber")


# This machine's unthrottled ceilings swing between 0.9K and 12K IOPS, and a
# run whose ceiling is under 2x the throttle is invalid: at the default 1000
# IOPS a slow minute fails tests that check something else.  The tests
# throttle at 500 unless they set IOPS; ThrottleTest checks the default.
TEST_IOPS = "500"


def bench(results, **env):
    """Run bench.py; return (completed process, run folder or None)."""
    env.setdefault("IOPS", TEST_IOPS)
    full = dict(os.environ, RESULTS=results, **{k: str(v) for k, v in env.items()})
    out = subprocess.run([sys.executable, BENCH], capture_output=True, text=True,
                         env=full, timeout=900)
    lines = out.stdout.strip().splitlines()
    run = lines[-1][len("run: "):] if lines and lines[-1].startswith("run: ") else None
    return out, run


def load(run, name):
    with open(os.path.join(run, name)) as f:
        return json.load(f)


class GuestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="fiops-test-")
        cls.results = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assert_complete(self, run):
        for name in RUN_FILES:
            self.assertTrue(os.path.exists(os.path.join(run, name)), name)
        traces = [f for f in os.listdir(os.path.join(run, "guest", "main"))
                  if ".blktrace." in f]
        self.assertTrue(traces, "no blktrace output")


class SmokeTest(GuestTest):
    """Every in-tree scheduler: verified mixed I/O, complete folder, clean dmesg."""

    def check(self, sched):
        out, run = bench(self.results, SCHED=sched, WORKLOAD="smoke-verify",
                         RUNTIME=6, CAL_RUNTIME=3, RAMP=1)
        self.assertIsNotNone(run, out.stdout + out.stderr)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assert_complete(run)
        meta, summ = load(run, "meta.json"), load(run, "summary.json")
        self.assertEqual(meta["status"], "ok")
        self.assertTrue(meta["valid"], meta.get("invalid_reasons"))
        self.assertEqual(meta["dmesg_problems"], [])
        with open(os.path.join(run, "guest", "main", "queue.txt")) as f:
            self.assertIn("[%s]" % sched, f.read())
        self.assertEqual(summ["scheduler"], sched)
        self.assertEqual(summ["device_tags"], 3)
        self.assertEqual(len(summ["tasks"]), 2)
        for t in summ["tasks"]:
            self.assertGreater(t["ios"], 0)
            self.assertIsInstance(t["pid"], int)
        self.assertAlmostEqual(sum(t["share"] for t in summ["tasks"]), 1.0, places=2)
        fio = load(run, "guest/main/fio.json")
        self.assertTrue(all(j["error"] == 0 for j in fio["jobs"]))
        self.assertEqual(fio["global options"].get("verify"), "crc32c")

    def test_none(self):
        self.check("none")

    def test_mq_deadline(self):
        self.check("mq-deadline")

    def test_bfq(self):
        self.check("bfq")

    def test_kyber(self):
        self.check("kyber")

    def test_fiops(self):
        self.check("fiops")


class FiopsTest(GuestTest):
    """fiops next to an in-tree scheduler in one boot, with its tunables."""

    def test_two_schedulers_one_boot(self):
        out, boot = bench(self.results, SCHED="mq-deadline fiops", TUNE="write_scale=3",
                          WORKLOAD="smoke-verify", RUNTIME=5, CAL_RUNTIME=3, RAMP=1)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertEqual(load(boot, "meta.json")["runs"], ["mq-deadline", "fiops"])
        for sched in ("mq-deadline", "fiops"):
            run = os.path.join(boot, sched)
            self.assert_complete(run)
            summ = load(run, "summary.json")
            self.assertEqual(summ["scheduler"], sched)
            self.assertTrue(summ["valid"])
            self.assertEqual(len(summ["tasks"]), 2)
        fiops = load(os.path.join(boot, "fiops"), "meta.json")
        self.assertEqual(fiops["tunables"]["write_scale"], "3")
        self.assertEqual(fiops["tunables"]["read_scale"], "1")
        self.assertEqual((fiops["tunables"]["sync_scale"], fiops["tunables"]["async_scale"],
                          fiops["tunables"]["size_scale"]), ("2", "5", "0"))
        self.assertEqual(fiops["tune_skipped"], [])
        deadline = load(os.path.join(boot, "mq-deadline"), "meta.json")
        self.assertEqual(deadline["tune_skipped"], ["write_scale"])
        with open(os.path.join(boot, "fiops", "guest", "main", "sched_debugfs.txt")) as f:
            debugfs = f.read()
        self.assertIn("== dispatched", debugfs)
        self.assertIn("== service_tree", debugfs)
        # Every request fiops dispatched left a blktrace message that
        # blkparse shows, and the charges add up.
        trace = load(os.path.join(boot, "fiops"), "summary.json")["fiops_trace"]
        self.assertIsNotNone(trace)
        self.assertGreater(trace["messages"], 0)
        self.assertTrue(trace["charges_consistent"], trace)
        self.assertEqual(trace["issues_without_message"], 0)
        self.assertTrue(os.path.exists(os.path.join(boot, "fiops", "vios.png")))
        self.assertIsNone(load(os.path.join(boot, "mq-deadline"), "summary.json")["fiops_trace"])
        # Reanalysis from the stored trace gives the same numbers.
        run = os.path.join(boot, "fiops")
        before = load(run, "summary.json")
        out = subprocess.run([sys.executable, BENCH, "--reanalyse", run],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        after = load(run, "summary.json")
        self.assertTrue(after["valid"])
        self.assertEqual(after["jain_index"], before["jain_index"])
        self.assertIn("reanalysed", load(run, "meta.json"))

    def test_variant_tunables_do_not_leak_into_the_next_run(self):
        out, boot = bench(self.results, SCHED="fiops:size_scale=1000 fiops",
                          WORKLOAD="smoke-verify", RUNTIME=2, CAL_RUNTIME=1, RAMP=0)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        first = load(os.path.join(boot, "fiops_size_scale=1000"), "meta.json")
        second = load(os.path.join(boot, "fiops"), "meta.json")
        self.assertEqual(first["tunables"]["size_scale"], "1000")
        self.assertEqual(second["tunables"]["size_scale"], "0")

    def test_bad_tunable_is_refused(self):
        out, run = bench(self.results, SCHED="fiops", TUNE="write_scale=101",
                         WORKLOAD="smoke-verify", RUNTIME=2, CAL_RUNTIME=1, RAMP=0)
        self.assertEqual(out.returncode, 1)
        self.assertIn("refused the tunables write_scale=101", out.stderr)


class DepthControlTest(GuestTest):
    """At 1023 device tags the dispatch-depth control decides depth-asym's
    shares; with depth_control=0 the device's own queue does, as before
    the control existed."""

    def test_control_on_and_off(self):
        out, boot = bench(self.results, SCHED="fiops fiops:depth_control=0",
                          WORKLOAD="depth-asym", DEPTH=1023, RUNTIME=8, CAL_RUNTIME=2,
                          RAMP=2)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        shares = {}
        for run in ("fiops", "fiops_depth_control=0"):
            summ = load(os.path.join(boot, run), "summary.json")
            self.assertTrue(summ["valid"], summ)
            shares[run] = {t["name"]: t["share"] for t in summ["tasks"]}
            with open(os.path.join(boot, run, "guest", "main", "sched_debugfs.txt")) as f:
                shares[run]["debugfs"] = f.read()
        on, off = shares["fiops"], shares["fiops_depth_control=0"]
        depth = load(os.path.join(boot, "fiops"), "summary.json")["fiops_depth"]
        # The deepest reader's share follows its 32 of 37 requests in
        # flight without the control (0.86 measured), a third with it.
        self.assertLess(on["qd32"], 0.45, on)
        self.assertGreater(on["qd1"], 0.2, on)
        self.assertGreater(off["qd32"], 0.7, off)
        self.assertLess(off["qd1"], 0.06, off)
        # The limit held during the run (the blktrace depth messages); by
        # the time debugfs is read the device is idle and the control cold.
        self.assertLessEqual(depth["steady_median"], 9, depth)
        self.assertRegex(on["debugfs"], r"== depth\ndepth=\d+ steady=\d+ inflight=\d+ ")
        self.assertEqual(load(os.path.join(boot, "fiops_depth_control=0"),
                              "meta.json")["tunables"]["depth_control"], "0")


def read_merges(run):
    """Read requests the device merged during the main step: the second
    field of /sys/block/<dev>/stat, after minus before."""
    fields = []
    for name in ("stat-before.txt", "stat-after.txt"):
        with open(os.path.join(run, "guest", "main", name)) as f:
            fields.append(int(f.read().split()[1]))
    return fields[1] - fields[0]


class MergeTest(GuestTest):
    """Two tasks reading the even and the odd blocks of one small region:
    every merge would join two tasks.  mq-deadline merges them (9192 and
    9754 merges in 5 s, measured); fiops must not, or one task pays for
    the other's I/O."""

    def test_insert_merges_stay_within_a_task(self):
        out, boot = bench(self.results, SCHED="mq-deadline fiops", WORKLOAD="interleaved",
                          RUNTIME=5, CAL_RUNTIME=2, RAMP=1)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertGreater(read_merges(os.path.join(boot, "mq-deadline")), 0)
        self.assertEqual(read_merges(os.path.join(boot, "fiops")), 0)
        with open(os.path.join(boot, "fiops", "guest", "main", "sched_debugfs.txt")) as f:
            self.assertIn("== merged\n0\n", f.read())


class StressTest(GuestTest):
    """make stress's short form on the bench kernel: every case passes."""

    def test_short_form(self):
        env = dict(os.environ, RESULTS=self.results, STRESS="short")
        out = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "stress.py")],
                             env=env, capture_output=True, text=True, timeout=1800)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        run = out.stdout.strip().splitlines()[-1][len("run: "):]
        meta = load(run, "meta.json")
        self.assertTrue(meta["passed"])
        self.assertEqual([r["case"] for r in meta["rows"]],
                         ["switch", "churn", "hostile", "faults", "cgroups", "classes",
                          "polled", "nowait", "unplug", "boot and shutdown"])
        for row in meta["rows"]:
            self.assertGreater(row["iterations"], 0, row)
            self.assertEqual((row["errors"], row["dmesg_findings"]), (0, 0), row)
        self.assertGreater(int(meta["rows"][3]["result"]["fallback"]), 0)
        self.assertEqual(int(meta["rows"][4]["result"]["bad_weights"]), 19)
        self.assertEqual(int(meta["rows"][4]["result"]["dying_cgroups"]), 0)
        with open(os.path.join(run, "stress.md")) as f:
            self.assertIn("| churn | 200 | 0 | 0 |", f.read())


class UdevRuleTest(GuestTest):
    """guest/udev's rule, applied by udevd at boot, gives the NVMe devices
    fiops; without udevd they keep the kernel's default."""

    def schedulers(self, **env):
        out, run = bench(self.results, SCHED="none", WORKLOAD="smoke-verify",
                         RUNTIME=2, CAL_RUNTIME=1, RAMP=0, **env)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        with open(os.path.join(run, "guest", "info.txt")) as f:
            return [line.split("=", 1)[1] for line in f.read().splitlines()
                    if ".schedulers=" in line]

    def test_the_rule_selects_fiops(self):
        found = self.schedulers(UDEV=1)
        self.assertEqual(len(found), 2)
        for line in found:
            self.assertIn("[fiops]", line)

    def test_the_kernel_default_without_udev(self):
        found = self.schedulers()
        self.assertEqual(len(found), 2)
        for line in found:
            # One queue pair: the kernel's own default, mq-deadline.
            self.assertIn("[mq-deadline]", line)


class CompareTest(GuestTest):
    """End to end: a short compare of two schedulers builds a report."""

    def test_compare_builds_a_report(self):
        top = os.path.dirname(os.path.dirname(HERE))
        env = dict(os.environ, RESULTS=self.results, SCHEDS="none fiops",
                   WORKLOADS="equal-readers", DEPTHS="4", REPEAT="1", RUNTIME="4", CAL_RUNTIME="2",
                   RAMP="1", IOPS=TEST_IOPS)
        out = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "compare.py")],
                             env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("compare: [1/1] equal-readers DEPTH=4 rep 1 (none fiops): ok", out.stdout)
        folder = out.stdout.strip().splitlines()[-1][len("run: "):]
        report_dir = os.path.join(self.results, "report")
        out = subprocess.run([sys.executable, "-m", "analysis.report", folder,
                              "--out", report_dir], cwd=top, capture_output=True, text=True,
                             timeout=300)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        with open(os.path.join(report_dir, "fairness-report.md")) as f:
            md = f.read()
        self.assertIn("## equal-readers", md)
        self.assertIn("| equal-readers | ", md)
        runs = pd.read_csv(os.path.join(report_dir, "runs.csv"))
        for sched in ("none", "fiops"):
            rows = runs[(runs["scheduler"] == sched) & runs["task"].isin(["r1", "r2", "r3", "r4"])]
            self.assertEqual(len(rows), 4, runs.to_string())
            self.assertTrue(rows["valid"].all())
            self.assertAlmostEqual(rows["share"].sum(), 1.0, places=2)
        pngs = os.listdir(os.path.join(report_dir, "plots"))
        self.assertTrue(any(p.startswith("equal-readers") and p.endswith(".png") for p in pngs))


class ThrottleTest(GuestTest):
    def test_default_readers_saturate_the_throttle(self):
        out, run = bench(self.results, SCHED="mq-deadline", RUNTIME=10, CAL_RUNTIME=3,
                         IOPS=1000)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        summ, meta = load(run, "summary.json"), load(run, "meta.json")
        self.assertEqual(len(summ["tasks"]), 4)
        self.assertGreaterEqual(meta["calibration"]["ceiling_over_throttle"], 2.0)
        self.assertAlmostEqual(summ["total_iops"] / summ["throttle_iops"], 1.0, delta=0.05)
        self.assertEqual(meta["blktrace_dropped"], 0)


class KunitTest(unittest.TestCase):
    """The FIOPS KUnit suites, booted once; any failed case fails."""

    def test_fiops_kunit(self):
        # The build folder make passes on (BUILD=... make test), as make kunit uses it.
        build = os.environ.get("BUILD") or os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                        "build")
        with open(os.path.join(build, "linux", ".config")) as f:
            self.assertIn("CONFIG_FIOPS_KUNIT_TEST=y", f.read().splitlines())
        kernel = os.path.join(build, "linux", "arch", "x86", "boot", "bzImage")
        out = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "kunit.py"),
                              kernel, "fiops"], capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertIn(" 0 failed suites", out.stdout)


class FailureTest(GuestTest):
    def test_hung_guest_is_killed_and_reported(self):
        out, run = bench(self.results, GUEST_HANG=1, TIMEOUT=25, RUNTIME=5)
        self.assertEqual(out.returncode, 1)
        self.assertIn("did not finish within 25s", out.stderr)
        self.assertIn("console log: " + os.path.join(run, "console.log"), out.stderr)
        meta = load(run, "meta.json")
        self.assertEqual(meta["status"], "failed")
        with open(os.path.join(run, "console.log")) as f:
            self.assertIn("hang requested by the host", f.read())


if __name__ == "__main__":
    unittest.main()
