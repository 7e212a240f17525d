import json
import math
import os
import tempfile
import unittest

import numpy as np
import pandas as pd

from analysis import analyze, attribute, firstpage, metrics, report, trace
from analysis.tests import blk
from analysis.tests.test_metrics import fio_job, fio_json


class CiTest(unittest.TestCase):
    def test_t95(self):
        # Published two-sided 95% values; large df tends to the normal 1.960.
        self.assertAlmostEqual(report.t95(1), 12.706, places=3)
        self.assertAlmostEqual(report.t95(9), 2.262, places=3)
        self.assertAlmostEqual(report.t95(35), 2.030, places=3)
        self.assertAlmostEqual(report.t95(100000), 1.960, places=3)

    def test_mean_ci(self):
        mean, half, n = report.mean_ci([1, 2, 3])
        self.assertEqual((mean, n), (2.0, 3))
        self.assertAlmostEqual(half, 4.303 / math.sqrt(3), places=3)
        mean, half, n = report.mean_ci([5, None])
        self.assertEqual((mean, n), (5.0, 1))
        self.assertTrue(math.isnan(half))
        self.assertEqual(report.mean_ci([])[2], 0)


WORKLOAD = "# two readers\n# expect: a=1 b=1\n# expect[fiops]: a=3 b=1\n# expect[none]: none\n"


class ConfigTest(unittest.TestCase):
    def test_variants_name_rows_and_schedulers_order_them(self):
        runs = pd.DataFrame({
            "scheduler": ["fiops", "bfq", "bfq", "fiops", "mq-deadline"],
            "variant": ["fiops", "bfq_low_latency=0", "bfq", "", ""],
            "tune": ["", "low_latency=0", "", "write_scale=3", ""],
            "device_depth": [4] * 5})
        runs["config"] = report.config_labels(runs)
        self.assertEqual(runs["config"].tolist(), ["fiops", "bfq_low_latency=0", "bfq",
                                                   "fiops write_scale=3", "mq-deadline"])
        self.assertEqual(report.config_order(runs), ["mq-deadline", "bfq", "bfq_low_latency=0",
                                                     "fiops", "fiops write_scale=3"])

    def test_the_device_names_rows_where_runs_differ_in_it(self):
        names = [report.device_name(p) for p in (
            {}, {"DEVICE": "nvme", "LATENCY_US": None},
            {"DEVICE": "nvme-null", "LATENCY_US": 4000}, {"DEVICE": "nvme-null"})]
        self.assertEqual(names, ["nvme", "nvme", "nvme-null 4000 us", "nvme-null"])
        runs = pd.DataFrame({"scheduler": ["fiops", "fiops"], "variant": ["", ""],
                             "tune": ["", ""], "device_depth": [4, 4], "device": names[1:3]})
        self.assertEqual(report.config_labels(runs).tolist(),
                         ["fiops (nvme)", "fiops (nvme-null 4000 us)"])


def fake_run(folder, run_id, scheduler, ios, valid=True, fio_ios=None, overcharge=False,
             depth=4):
    """A run folder as the harness and analysis.analyze leave it, from a
    synthetic trace: jobs a and b queue ios[0] and ios[1] bios in 1 s (fio
    says fio_ios, by default the same) against a 100 IOPS throttle, on a
    device of the given depth.  Under fiops every request has its dispatch
    message; overcharge makes one of them charge too much."""
    run_dir = os.path.join(folder, run_id)
    os.makedirs(run_dir)
    t = blk.Text()
    for pid, count, base in ((101, ios[0], 0), (102, ios[1], 100000)):
        for i in range(count):
            start = i / count
            t.io(pid, base + 8 * i, 8, start, start + 0.002 * (pid - 100))
            if scheduler == "fiops":
                extra = 1 if overcharge and i == count // 2 else 0
                t.fiops(start, pid, base + 8 * i, 8, 1024, 1024 * (i + 1) + extra, 0,
                        count - i)
    events, _ = t.events()
    bios, _ = attribute.attribute(events)
    fio_ios = fio_ios or ios
    weights = metrics.parse_expect(WORKLOAD)
    own, source = metrics.policy(WORKLOAD, scheduler)
    tasks = analyze.job_tasks(fio_json(fio_job("a", fio_ios[0]), fio_job("b", fio_ios[1])),
                              [101, 102], weights, {} if own is None else own)
    fields, table, series = analyze.measure(bios, tasks, (0.0, 1.0), 100)
    fields = analyze.Fields(fields, **analyze.policy_fields(table, own, source),
                            expect_measure=metrics.expect_measure(WORKLOAD))
    analyze.add_fiops(fields, table, tasks, events, trace.parse_messages(t.text()))
    save_run(run_dir, scheduler, valid, fields, table, series, depth=depth)


def save_run(run_dir, scheduler, valid, fields, table, series, workload="ioprio", depth=4):
    """meta.json and summary.json as bench writes them, then the analysis's files."""
    meta = {"params": {"WORKLOAD": workload, "SCHED": scheduler, "DEPTH": depth, "IOPS": 100,
                       "RUNTIME": 1, "RAMP": 0, "VCPUS": 2, "TUNE": []},
            "kernel": {"release": "6.1.0-test", "series_sha256": "ab" * 32, "series": "p.patch"},
            "qemu_version": "QEMU emulator version 7.2", "accel": "tcg", "valid": valid,
            "status": "ok",
            "device_tags": 3, "nr_requests_set": 64, "harness_revision": "abc",
            "workload_description": "ioprio: two readers. expect: a=1 b=1"}
    with open(os.path.join(run_dir, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump({"workload": workload, "scheduler": scheduler}, f)
    analyze.write(run_dir, "main", fields, table, series)


class ReportFixture:
    """A report over a compare folder that the class's make_runs(compare)
    fills, built once for the class's tests (mixed into a TestCase)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        compare = os.path.join(cls.tmp.name, "compare-test")
        cls.make_runs(compare)
        cls.out = os.path.join(cls.tmp.name, "report")
        cls.md_path = report.write_report(compare, cls.out)
        with open(cls.md_path) as f:
            cls.md = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def per_run(self):
        """runs.csv, one row per run, indexed by run_id."""
        runs = pd.read_csv(os.path.join(self.out, "runs.csv"))
        return runs.drop_duplicates("run_id").set_index("run_id")


class ReportTest(ReportFixture, unittest.TestCase):
    @staticmethod
    def make_runs(compare):
        for run_id, scheduler, ios in (("none-1", "none", (60, 40)),
                                       ("none-2", "none", (50, 50)),
                                       ("fiops-1", "fiops", (50, 50))):
            fake_run(compare, run_id, scheduler, ios)
        fake_run(compare, "fiops-2", "fiops", (50, 50), overcharge=True)
        fake_run(compare, "fiops-3", "fiops", (90, 10), valid=False, fio_ios=(90, 12))
        # A run interrupted after its summary.json was written.
        fake_run(compare, "fiops-4", "fiops", (99, 1))
        meta_path = os.path.join(compare, "fiops-4", "meta.json")
        with open(meta_path) as f:
            meta = json.load(f)
        meta.update(status="failed", reason="interrupted by SIGINT")
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        # A run whose bench died (a full disk) before it could say so.
        fake_run(compare, "fiops-5", "fiops", (99, 1))
        meta_path = os.path.join(compare, "fiops-5", "meta.json")
        with open(meta_path) as f:
            meta = json.load(f)
        meta.update(status="running")
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        os.makedirs(os.path.join(compare, "boot", "kyber"))      # a boot that failed
        for name, meta in (("boot", {"runs": ["kyber"]}), ("boot/kyber", {"status": "failed"})):
            with open(os.path.join(compare, name, "meta.json"), "w") as f:
                json.dump(meta, f)

    def test_runs_csv(self):
        runs = pd.read_csv(os.path.join(self.out, "runs.csv"))
        self.assertEqual(len(runs), 5 * 3)                # a, b and other per run
        row = runs[(runs["run_id"] == "none-1") & (runs["task"] == "a")].iloc[0]
        self.assertEqual((row["ios"], row["share"], row["scheduler"]), (60, 0.6, "none"))
        self.assertAlmostEqual(row["jain_index"], 4 / 4.16, places=6)

    def test_fiops_columns(self):
        runs = self.per_run()
        self.assertEqual(runs.loc["fiops-1", "fiops_messages"], 100)
        self.assertTrue(runs.loc["fiops-1", "charges_consistent"])
        self.assertEqual(runs.loc["fiops-2", "charge_violations"], 4)
        self.assertTrue(runs.loc[["none-1", "none-2"], "fiops_messages"].isna().all())
        self.assertEqual(runs.loc["none-1", "policy_source"], "expect[none]: none")
        self.assertNotIn("ioprio-vios-none.png", os.listdir(os.path.join(self.out, "plots")))

    def test_means_and_ci(self):
        tasks = pd.read_csv(os.path.join(self.out, "task-means.csv"))
        row = tasks[(tasks["config"] == "none") & (tasks["task"] == "a")].iloc[0]
        self.assertAlmostEqual(row["share"], 0.55)
        self.assertAlmostEqual(row["share_ci95"], 12.706 * 0.05, places=4)
        self.assertEqual((row["n"], row["run_ids"]), (2, "none-1 none-2"))
        runs = pd.read_csv(os.path.join(self.out, "run-means.csv")).set_index("config")
        self.assertEqual(runs.loc["fiops", "n"], 2)        # the invalid run is left out
        self.assertAlmostEqual(runs.loc["none", "jain_index"], (4 / 4.16 + 1) / 2, places=5)
        self.assertEqual(runs.loc["fiops", "jain_index"], 1.0)

    def test_markdown(self):
        self.assertIn("| workload | depth | device | none | fiops |", self.md)
        self.assertIn("| ioprio | 4 | nvme | 0.981 ✓<br>own: none<br>WC 1.00, a +10% "
                      "| 1.000 ✓<br>own 0.800 ✗<br>WC 1.00, a +0% |", self.md)
        self.assertIn("| none | a | 55.0 ± 63.5 | 0.550 ± 0.635 | 0.500 | 10.0 ± 127.1% "
                      "| - | - | 2.0 ± 0.0 | 2 |", self.md)
        self.assertIn("| fiops | b | 50.0 ± 0.0 | 0.500 ± 0.000 | 0.500 | 0.0 ± 0.0% "
                      "| 0.250 | 100.0 ± 0.0% | 4.0 ± 0.0 | 2 |", self.md)
        self.assertIn("none does not schedule", self.md)
        self.assertIn("none documents no policy for this workload (`expect[none]: none`)",
                      self.md)
        self.assertIn("fiops documents its own policy for this workload "
                      "(`expect[fiops]: a=3 b=1`)", self.md)
        self.assertIn("summary.json policy_source, and policy_measure, what the policy shares; "
                      "Jain (common) judges IOPS):", self.md)
        self.assertIn("| none | documents no policy | - | 0.9808 ± 0.2444 | - |", self.md)
        self.assertIn("| fiops | `expect[fiops]: a=3 b=1` | IOPS | 1.0000 ± 0.0000 "
                      "| 0.8000 ± 0.0000 |", self.md)
        self.assertIn("`runs.csv` charges_consistent), fiops: held in 1 of 2 valid runs; "
                      "not in `fiops-2` (4 charge violations, 0 messages without an issue).",
                      self.md)
        self.assertIn("`fiops-2`: FIOPS's dispatch messages fail the charge check", self.md)
        self.assertIn("* none: `none-1`, `none-2`", self.md)
        self.assertIn("`fiops-3`: invalid", self.md)
        self.assertIn("| kernel release | 6.1.0-test |", self.md)
        self.assertIn("| device (DEVICE, with LATENCY_US per request) | nvme |", self.md)
        self.assertIn("4 of 5 runs agree", self.md)
        self.assertIn("`fiops-3`: blktrace and fio I/O counts differ", self.md)
        self.assertIn("`boot/kyber`: did not finish, left out "
                      "(meta.json status: failed; no summary.json)", self.md)
        self.assertIn("`fiops-4`: did not finish, left out "
                      "(meta.json status: failed; interrupted by SIGINT)", self.md)
        self.assertIn("`fiops-5`: did not finish, left out "
                      "(meta.json status: running; no summary.json)", self.md)
        self.assertNotIn("`boot`:", self.md)
        self.assertIn("| repetitions per workload and scheduler (valid runs) | 2 |", self.md)

    def test_verdict_csv(self):
        verdict = pd.read_csv(os.path.join(self.out, "verdict.csv")).set_index("scheduler")
        fiops, none = verdict.loc["fiops"], verdict.loc["none"]
        self.assertEqual((fiops["jain_index"], fiops["jain_own"]), (1.0, 0.8))
        # own a=3 b=1 against 50:50: b is +100%, a -33%.
        self.assertEqual((fiops["worst_task_own"], fiops["worst_deviation_own"]), ("b", 1.0))
        self.assertTrue(fiops["met_common"])
        self.assertFalse(fiops["met_own"])
        self.assertEqual(none["own_policy"], "none")
        self.assertTrue(pd.isna(none["jain_own"]))
        self.assertAlmostEqual(none["worst_deviation"], 0.1)
        self.assertEqual((none["p99_worst_task"], none["p99_worst_ms"]), ("b", 4.0))
        self.assertEqual(none["run_ids"], "none-1 none-2")

    def test_fiops_versus(self):
        versus = pd.read_csv(os.path.join(self.out, "fiops-vs.csv"))
        self.assertEqual(versus[["other", "fiops_runs", "other_runs", "verdict"]].values.tolist(),
                         [["none", 2, 2, "tie"]])
        self.assertIn("Against none, fiops wins 0, ties 1 and loses 0 of 1 rows "
                      "(`fiops-vs.csv` rows other=none).", self.md)

    def test_heat_map(self):
        heat = pd.read_csv(os.path.join(self.out, "plots", "jain-heat-map.dat"), sep="\t")
        self.assertEqual(heat[["x", "y"]].values.tolist(), [[0, 0], [1, 0]])
        self.assertAlmostEqual(heat["value"][0], (4 / 4.16 + 1) / 2, places=5)
        self.assertEqual(heat["value"][1], 1.0)
        with open(os.path.join(self.out, "plots", "jain-heat-map.gp")) as f:
            self.assertIn("set xtics ('none d4' 0, 'fiops d4' 1)", f.read())
        self.assertIn("Runs are short.**  1 s after a 0 s ramp at 100 IOPS, 100 requests a "
                      "run (ioprio)", self.md)
        self.assertIn("plots/jain-heat-map.png", self.md)
        self.assertIn("no overhead table", self.md)
        self.assertIn("The time the matrix took is not recorded", self.md)

    def test_plots(self):
        names = ["ioprio-shares.png", "ioprio-p99.png", "ioprio-iops-none.png",
                 "ioprio-iops-fiops.png", "ioprio-vios-fiops.png"]
        for name in names:
            path = os.path.join(self.out, "plots", name)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)
            self.assertIn("plots/" + name, self.md)


class DepthReportTest(ReportFixture, unittest.TestCase):
    """A compare at two device depths: shares and work conservation by depth."""

    @staticmethod
    def make_runs(compare):
        for run_id, scheduler, depth, ios in (
                ("none-4-1", "none", 4, (60, 40)), ("none-4-2", "none", 4, (50, 50)),
                ("none-32-1", "none", 32, (80, 20)), ("none-32-2", "none", 32, (80, 20)),
                ("fiops-4-1", "fiops", 4, (50, 50)), ("fiops-32-1", "fiops", 32, (50, 50)),
                ("fiops-32-2", "fiops", 32, (30, 30))):
            fake_run(compare, run_id, scheduler, ios, depth=depth)

    def read_dat(self, name):
        return pd.read_csv(os.path.join(self.out, "plots", name), sep="\t").set_index("depth")

    def test_a_panel_per_scheduler_of_shares_by_depth(self):
        none, fiops = self.read_dat("ioprio-depth-p1.dat"), self.read_dat("ioprio-depth-p2.dat")
        self.assertEqual(list(none.columns), ["a", "a ci95", "b", "b ci95"])
        self.assertEqual(list(none.index), [4, 32])
        self.assertAlmostEqual(none.loc[4, "a"], 0.55)
        self.assertAlmostEqual(none.loc[4, "a ci95"], 12.706 * 0.05, places=4)
        self.assertAlmostEqual(none.loc[32, "a"], 0.8)
        self.assertEqual(fiops.loc[4, "a ci95"], 0)       # one run: no bar
        self.assertAlmostEqual(fiops.loc[32, "b"], 0.5)
        with open(os.path.join(self.out, "plots", "ioprio-depth.gp")) as f:
            script = f.read()
        self.assertIn("set title 'none'", script)
        self.assertIn("set title 'fiops: work conservation'", script)
        self.assertIn("set logscale x", script)

    def test_work_conservation_by_depth(self):
        wc = self.read_dat("ioprio-depth-wc.dat")
        self.assertEqual(list(wc.columns), ["none", "none ci95", "fiops", "fiops ci95"])
        self.assertAlmostEqual(wc.loc[4, "none"], 1.0, places=2)
        self.assertAlmostEqual(wc.loc[32, "fiops"], 0.8, places=2)   # 100 and 60 of 100 IOPS

    def test_the_report_shows_it(self):
        with open(os.path.join(self.out, "plots", "ioprio-depth.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertIn("](plots/ioprio-depth.png)", self.md)
        self.assertIn("| ioprio | ", self.md)
        self.assertIn("none depth 32", self.md)


class SingleDepthTest(unittest.TestCase):
    def test_no_depth_plot_at_one_depth(self):
        group = pd.DataFrame({"device_depth": [4, 4], "task": ["a", "b"]})
        self.assertEqual(report.depth_plot("w", group, pd.DataFrame(), "/nonexistent"), [])



class FirstPageTest(unittest.TestCase):
    def test_met_needs_jain_and_every_task_near_its_share(self):
        self.assertTrue(firstpage.met(0.99, -0.2))
        self.assertFalse(firstpage.met(0.99, 0.3))
        self.assertFalse(firstpage.met(0.9, 0.0))
        self.assertTrue(pd.isna(firstpage.met(np.nan, 0.0)))

    def test_welch(self):
        same = pd.Series([1.0, 1.0, 1.0])
        self.assertEqual(firstpage.welch_p(same, same), 1.0)
        self.assertEqual(firstpage.welch_p(same, same - 0.1), 0.0)
        self.assertTrue(pd.isna(firstpage.welch_p(same[:1], same)))
        p = firstpage.welch_p(pd.Series([0.99, 0.98, 0.97]), pd.Series([0.5, 0.6, 0.4]))
        self.assertLess(p, 0.05)

    def test_matrix_time_from_compare_json(self):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "compare.json"), "w") as f:
                json.dump({"matrix_cells": 4, "elapsed_s": 600, "started": "S", "finished": "F",
                           "cells": [{"cell": 1, "exit": 0, "seconds": 250},
                                     {"cell": 2, "exit": 2, "seconds": 340}, {"cell": 3}]}, f)
            text = firstpage.matrix_time(folder, folder)
            cells = pd.read_csv(os.path.join(folder, "cells.csv"))
        self.assertEqual(cells["cell"].tolist(), [1, 2])
        self.assertIn("2 of its 4 cells", text)
        self.assertIn("10 min (compare.json elapsed_s = 600 s, S to F; `cells.csv` seconds: "
                      "590 s over 2 boots, 295 s a boot)", text)
        self.assertIn("Cells that failed or were invalid: 2.", text)

    def test_overhead_table_from_ratios(self):
        with tempfile.TemporaryDirectory() as folder:
            rows = [("icount", 1, 16, 64, s, 3, 0.1, r, 0.01, c, 0.02, 68000, 19.0)
                    for s, r, c in (("mq-deadline", 0.87, 1.16), ("fiops", 0.83, 1.23))]
            pd.DataFrame(rows, columns=["clock", "hwq", "jobs", "qd", "scheduler", "n",
                                        "switches", "iops_ratio", "iops_ci", "cpu_ratio",
                                        "cpu_ci", "iops_none", "cpu_us_none"]).to_csv(
                os.path.join(folder, "ratios.csv"), index=False)
            os.makedirs(os.path.join(folder, "icount-hwq1"))
            with open(os.path.join(folder, "icount-hwq1", "console.log"), "w") as f:
                f.write("[    0.000000] Linux version 6.1.0-x (gcc) #1\n")
            out = os.path.join(folder, "out")
            os.makedirs(out)
            text = firstpage.overhead_section(folder, out, ["6.1.0-y"])
            self.assertTrue(os.path.exists(os.path.join(out, "overhead-ratios.csv")))
        self.assertIn("| clock | jobs x QD | none IOPS | mq-deadline IOPS / CPU | "
                      "fiops IOPS / CPU |", text)
        self.assertIn("| icount | 16 x 64 | 68000 | 0.87 ± 0.01 / 1.16 ± 0.02 "
                      "| 0.83 ± 0.01 / 1.23 ± 0.02 |", text)
        self.assertIn("(kernel 6.1.0-x)", text)
        self.assertIn("The overhead run's kernel (6.1.0-x) is not the matrix's (6.1.0-y)", text)

    def test_overhead_folder_without_its_kernel_says_so(self):
        with tempfile.TemporaryDirectory() as folder:
            pd.DataFrame([("icount", 1, 1, 1, "fiops", 3, 2.0, 0.54, 0.0, 1.84, 0.0, 63245, 19.5)],
                         columns=["clock", "hwq", "jobs", "qd", "scheduler", "n", "switches",
                                  "iops_ratio", "iops_ci", "cpu_ratio", "cpu_ci", "iops_none",
                                  "cpu_us_none"]).to_csv(os.path.join(folder, "ratios.csv"),
                                                         index=False)
            text = firstpage.overhead_section(folder, folder, ["6.1.0-y"])
        self.assertIn("(the folder does not record its kernel)", text)
        self.assertIn("nothing here checks that it is the matrix's (6.1.0-y)", text)


if __name__ == "__main__":
    unittest.main()
