"""Each run's unthrottled ceiling in runs.csv and the report, and runs with
IOPS=off (no throttle on the measured device)."""

import json
import os
import shutil
import tempfile
import unittest

import numpy as np
import pandas as pd

from analysis import analyze, ceiling, report
from analysis.tests.test_report import ReportFixture, fake_run
from analysis.tests.test_schedmsg import run_folder


def update_json(path, **fields):
    with open(path) as f:
        data = json.load(f)
    data.update(fields)
    with open(path, "w") as f:
        json.dump(data, f)


def boot_run(compare, run_id, scheduler, schedulers, ceiling_iops, total_iops, workload,
             unthrottled):
    """A finished run of a boot that ran schedulers, with the ceiling its
    calibration measured and its total IOPS, as bench records them (the
    ceiling in meta.json only: runs.csv must take meta's)."""
    fake_run(compare, run_id, scheduler, (50, 50))
    run_dir = os.path.join(compare, run_id)
    iops = None if unthrottled else 100
    meta_path = os.path.join(run_dir, "meta.json")
    with open(meta_path) as f:
        params = json.load(f)["params"]
    update_json(meta_path, params=dict(params, WORKLOAD=workload, IOPS=iops),
                throttle_iops=iops, unthrottled=unthrottled,
                device_cost_model={"iops": iops, "bps": None, "iops_size": None},
                calibration={"ceiling_iops": ceiling_iops},
                boot={"folder": os.path.basename(os.path.dirname(run_dir))
                      if len(schedulers) > 1 else os.path.basename(run_dir),
                      "schedulers": schedulers})
    # Without a throttle analyze gives no work conservation (AnalyzeTest).
    update_json(os.path.join(run_dir, "summary.json"), workload=workload,
                total_iops=total_iops, unthrottled=unthrottled, throttle_iops=iops,
                **({"work_conservation": None} if unthrottled else {}))


class CeilingReportTest(ReportFixture, unittest.TestCase):
    """Two boots of none and fiops and a boot of fiops alone, all with
    IOPS=off (workload ioprio); one throttled boot (workload equal)."""

    @staticmethod
    def make_runs(compare):
        both = ["none", "fiops"]
        for run_id, scheduler, schedulers, ceiling_iops, total in (
                ("b1/none", "none", both, 1000.0, 800.0),
                ("b1/fiops", "fiops", both, 1500.0, 1200.0),
                ("b2/none", "none", both, 2000.0, 1600.0),
                ("b2/fiops", "fiops", both, 2400.0, 2000.0),
                ("solo", "fiops", ["fiops"], 900.0, 700.0)):
            boot_run(compare, run_id, scheduler, schedulers, ceiling_iops, total, "ioprio", True)
        for run_id, scheduler, ceiling_iops in (("b3/fiops", "fiops", 450.0),
                                                ("b3/none", "none", 500.0)):
            boot_run(compare, run_id, scheduler, ["fiops", "none"], ceiling_iops, 99.0, "equal",
                     False)
        for boot in ("b1", "b2", "b3"):
            with open(os.path.join(compare, boot, "meta.json"), "w") as f:
                json.dump({"runs": ["none", "fiops"], "status": "ok"}, f)

    def test_runs_csv_has_each_runs_ceiling_from_meta(self):
        runs = self.per_run()
        self.assertEqual(runs["ceiling_iops"].to_dict(),
                         {"b1/fiops": 1500, "b1/none": 1000, "b2/fiops": 2400, "b2/none": 2000,
                          "b3/fiops": 450, "b3/none": 500, "solo": 900})
        self.assertEqual(runs["boot"].to_dict(),
                         {"b1/fiops": "b1", "b1/none": "b1", "b2/fiops": "b2", "b2/none": "b2",
                          "b3/fiops": "b3", "b3/none": "b3", "solo": "solo"})
        self.assertEqual(runs.loc["b1/fiops", "ceiling_iops_vs_none"], 1.5)
        self.assertEqual(runs.loc["b2/fiops", "total_iops_vs_none"], 1.25)
        self.assertEqual(runs.loc["b3/fiops", "ceiling_iops_vs_none"], 0.9)
        self.assertEqual(runs.loc["b1/none", "ceiling_iops_vs_none"], 1.0)
        # No none in its boot: no ratio.
        self.assertTrue(np.isnan(runs.loc["solo", "ceiling_iops_vs_none"]))
        self.assertTrue(runs.loc["solo", "unthrottled"])
        self.assertFalse(runs.loc["b3/fiops", "unthrottled"])
        self.assertTrue(np.isnan(runs.loc["solo", "throttle_iops"]))
        self.assertEqual(runs.loc["solo", "device_cost"], "unthrottled")

    def test_run_means_have_the_ceiling(self):
        means = pd.read_csv(os.path.join(self.out, "run-means.csv"))
        fiops = means[(means["workload"] == "ioprio") & (means["config"] == "fiops")].iloc[0]
        self.assertEqual(fiops["ceiling_iops"], 1600)
        self.assertAlmostEqual(fiops["ceiling_iops_vs_none"], 1.35)
        self.assertAlmostEqual(fiops["total_iops_vs_none"], 1.375)
        self.assertEqual(fiops["n"], 3)
        # Work conservation against a throttle there was not: empty, not a number.
        self.assertTrue(np.isnan(fiops["work_conservation"]))

    def test_the_report_shows_the_ceiling_per_scheduler(self):
        section = self.md[self.md.index("## ioprio\n"):self.md.index("## equal\n")]
        self.assertIn("Unthrottled ceilings: each run's calibration step", section)
        self.assertIn("| scheduler | ceiling IOPS | ceiling / none | IOPS (IOPS=off) "
                      "| IOPS / none | runs |", section)
        self.assertIn("| none | 1500 ± 6353 | 1.000 ± 0.000 | 1200 ± 5082 | 1.000 ± 0.000 "
                      "| 2 |", section)
        self.assertIn("| fiops | 1600 ± 1875 | 1.350 ± 1.906 | 1300 ± 1629 | 1.375 ± 1.588 "
                      "| 3 |", section)
        self.assertIn("Runs with IOPS=off (`runs.csv` unthrottled)", section)
        # The throttled workload: the ceiling, without the IOPS=off columns.
        section = self.md[self.md.index("## equal\n"):]
        self.assertIn("| scheduler | ceiling IOPS | ceiling / none | runs |", section)
        self.assertIn("| none | 500 | 1.000 | 1 |", section)
        self.assertIn("| fiops | 450 | 0.900 | 1 |", section)
        self.assertNotIn("Runs with IOPS=off", section)

    def test_the_report_says_the_runs_had_no_throttle(self):
        for text in ("| throttle (IOPS) | off (IOPS=off), 100 |",
                     "1 s after a 0 s ramp with no IOPS throttle (IOPS=off) (ioprio)",
                     "1 s after a 0 s ramp at 100 IOPS, 100 requests a run (equal)",
                     "runs with IOPS=off have no throttle and no such check",
                     # Work conservation against no throttle: "-", not a number.
                     "| ioprio | 4 | nvme | 1.000 ✓<br>own: none<br>WC -, a +0% "
                     "| 1.000 ✓<br>own 0.800 ✗<br>WC -, a +0% |"):
            self.assertIn(text, self.md)


class RatioTest(unittest.TestCase):
    def test_a_ratio_needs_one_plain_none_in_a_known_boot(self):
        runs = pd.DataFrame({
            "run_id": ["a/none", "a/bfq", "a/bfq", "b", "c/none", "c/fiops", "d/x", "d/y"],
            "scheduler": ["none", "bfq", "bfq", "bfq", "none", "fiops", "none", "fiops"],
            "tune": [""] * 8, "boot": ["a", "a", "a", None, "c", "c", "d", "d"],
            "ceiling_iops": [1000.0, 800.0, 800.0, 700.0, None, 900.0, 10.0, 20.0],
            "total_iops": [None] * 8})
        # Boot d ran none twice: ambiguous, no ratio.
        runs.loc[len(runs)] = ["d/z", "none", "", "d", 30.0, None]
        out = ceiling.add_ratios(runs)
        ratio = dict(zip(out["run_id"], out["ceiling_iops_vs_none"]))
        self.assertEqual((ratio["a/none"], ratio["a/bfq"]), (1.0, 0.8))
        self.assertTrue(np.isnan(ratio["b"]))           # boot unknown
        self.assertTrue(np.isnan(ratio["c/fiops"]))     # none has no ceiling
        self.assertTrue(np.isnan(ratio["d/y"]))
        self.assertTrue(out["total_iops_vs_none"].isna().all())

    def test_boot_of_a_run(self):
        self.assertEqual(ceiling.boot_of("x/boot/fiops", {"boot": {"schedulers": ["a", "b"]}}),
                         "x/boot")
        self.assertEqual(ceiling.boot_of("fiops", {"boot": {"schedulers": ["a", "b"]}}), ".")
        self.assertEqual(ceiling.boot_of("x/boot", {"boot": {"schedulers": ["a"]}}), "x/boot")
        self.assertIsNone(ceiling.boot_of("x/boot", {}))

    def test_device_cost_names_a_device_without_an_iops_throttle(self):
        self.assertEqual(report.device_cost({"iops": None, "bps": None}), "unthrottled")
        self.assertEqual(report.device_cost({"iops": None, "bps": 8192000}),
                         "iops=off,bps=8192000")
        self.assertEqual(report.device_cost({"iops": 1000, "bps": None}), "per request")
        self.assertEqual(report.device_cost(None), "per request")


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class AnalyzeTest(unittest.TestCase):
    def test_no_work_conservation_without_a_throttle(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_folder(tmp, "fiops")
            throttled, _, _ = analyze.compute(tmp)
            update_json(os.path.join(tmp, "meta.json"), throttle_iops=None, unthrottled=True,
                        params={"SCHED": "fiops", "IOPS": None})
            fields, _, _ = analyze.compute(tmp)
        self.assertGreater(throttled["work_conservation"], 0)
        self.assertIsNone(fields["work_conservation"])
        self.assertEqual(fields["device_request_iops"], throttled["device_request_iops"])


if __name__ == "__main__":
    unittest.main()
