"""Device-cost shares on a device that charges by size (BPS, IOPS_SIZE).

The acceptance case is workloads/size-mix.fio (4k, 16k and 64k readers) on
IOPS=1000 IOPS_SIZE=4096, where a 4k, 16k and 64k request cost the device
1, 4 and 16 ms: a scheduler that gives the readers equal device time gives
them IOPS 16:4:1, one that gives them equal IOPS gives them device time
1:4:16.
"""

import json
import os
import shutil
import tempfile
import unittest

import pandas as pd

from analysis import analyze, attribute, devcost, metrics
from analysis.tests import TOP, blk
from analysis.tests.test_metrics import fio_job, fio_json
from analysis.tests.test_report import ReportFixture

SIZE_MIX = os.path.join(TOP, "workloads", "size-mix.fio")
BY_SIZE = {"iops": 1000, "bps": None, "iops_size": 4096}
PER_REQUEST = {"iops": 1000, "bps": None, "iops_size": None}
READERS = (("r4k", 101, 8), ("r16k", 102, 32), ("r64k", 103, 128))
EQUAL_TIME = (160, 40, 10)      # I/Os per second: 0.16 device seconds a second each
EQUAL_IOPS = (50, 50, 50)
SEVEN_13THS = round(7 / 13, 6)  # Jain over x = 3 * (16, 4, 1) / 21


def size_mix_events(rates, seconds=3.5):
    """(ns, pid, action, sector, sectors) of the three readers issuing
    rates[i] requests a second, each its own command done in 1 ms."""
    events = []
    for (_, pid, sectors), rate in zip(READERS, rates):
        for i in range(int(seconds * rate)):
            ns, sector = i * 1000000000 // rate, pid * 1000000 + sectors * i
            events += [(ns, pid, "Q", sector, sectors), (ns + 1, 7, "D", sector, sectors),
                       (ns + 1000000, 0, "C", sector, sectors)]
    return sorted(events, key=lambda e: e[0])


def size_mix_text(rates):
    t = blk.Text()
    for ns, pid, action, sector, sectors in size_mix_events(rates):
        t.ev(ns / 1e9, pid, action, sector, sectors,
             comm="fio" if action == "Q" else "swapper/0")
    return t


def size_mix_fio(rates):
    """fio.json of the readers over a 1 s ramp and 2 s runtime."""
    return fio_json(*(fio_job(name, 2 * rate) for (name, _, _), rate in zip(READERS, rates)))


def measure(text, rates, model):
    """analyze.measure over the run's window (1 s ramp, 2 s): (fields, table by task)."""
    events, _ = text.events()
    bios, _ = attribute.attribute(events)
    with open(SIZE_MIX) as f:
        weights = metrics.parse_expect(f.read())
    tasks = analyze.job_tasks(size_mix_fio(rates), [101, 102, 103], weights)
    fields, table, _ = analyze.measure(bios, tasks, (1.0, 3.0), 1000, events, model)
    return fields, table.set_index("task")


class DevcostTest(unittest.TestCase):
    def test_charges_by_size(self):
        self.assertFalse(devcost.charges_by_size(None))            # before the model existed
        self.assertFalse(devcost.charges_by_size(PER_REQUEST))
        self.assertTrue(devcost.charges_by_size(BY_SIZE))
        self.assertTrue(devcost.charges_by_size({"iops": 1000, "bps": 8192000,
                                                 "iops_size": None}))

    def test_commands_cost(self):
        self.assertAlmostEqual(devcost.commands_cost((8, 32, 128), BY_SIZE), 0.021)
        self.assertEqual(devcost.commands_cost((), BY_SIZE), 0)
        # 4 MB/s: a 64k command is held 16 ms by the bytes bucket, a 2k one 1 ms by the I/O one.
        bps = {"iops": 1000, "bps": 4096000, "iops_size": None}
        self.assertAlmostEqual(devcost.commands_cost((128, 4), bps), 0.017)


class CostShareTest(unittest.TestCase):
    def test_equal_device_time_is_equal_cost_shares(self):
        """FIOPS with its size cost on: IOPS 16:4:1, each reader a third of the device time."""
        fields, t = measure(size_mix_text(EQUAL_TIME), EQUAL_TIME, BY_SIZE)
        self.assertEqual(t.loc[["r4k", "r16k", "r64k"], "requests"].tolist(), [320, 80, 20])
        for task in ("r4k", "r16k", "r64k"):
            self.assertAlmostEqual(t.loc[task, "device_cost_s"], 0.32)
            self.assertAlmostEqual(t.loc[task, "cost_share"], 1 / 3)
        self.assertAlmostEqual(t.loc["r4k", "share"], 16 / 21)
        self.assertTrue(fields["cost_model_active"])
        self.assertEqual(fields["jain_index_cost"], 1.0)
        self.assertEqual(fields["jain_index"], SEVEN_13THS)

    def test_equal_iops_is_unequal_device_time(self):
        """FIOPS with size_scale=0: equal IOPS, device time 1:4:16."""
        fields, t = measure(size_mix_text(EQUAL_IOPS), EQUAL_IOPS, BY_SIZE)
        self.assertEqual(t.loc[["r4k", "r16k", "r64k"], "device_cost_s"].round(9).tolist(),
                         [0.1, 0.4, 1.6])
        self.assertAlmostEqual(t.loc["r64k", "cost_share"], 16 / 21)
        self.assertEqual(fields["jain_index"], 1.0)
        self.assertEqual(fields["jain_index_cost"], SEVEN_13THS)

    def test_a_device_that_does_not_charge_by_size_has_no_cost(self):
        for model in (PER_REQUEST, None):
            fields, t = measure(size_mix_text(EQUAL_TIME), EQUAL_TIME, model)
            self.assertFalse(fields["cost_model_active"])
            self.assertIsNone(fields["jain_index_cost"])
            self.assertTrue(t["device_cost_s"].isna().all())
            self.assertTrue(t["cost_share"].isna().all())
            self.assertEqual(fields["jain_index"], SEVEN_13THS)

    def test_a_merged_command_costs_its_first_bio_task_its_whole_size(self):
        """Two 4k bios of r4k and r16k merged into one 8k command: 2 ms, all
        r4k's, as requests counts it; the flusher's write is the other row's."""
        t = blk.Text()
        t.ev(1.1, 101, "Q", 100, 8).ev(1.1, 101, "G", 100, 8).ev(1.1, 101, "I", 100, 8)
        t.ev(1.2, 102, "Q", 108, 8).ev(1.2, 102, "M", 108, 8)
        t.ev(1.3, 7, "D", 100, 16).ev(1.4, 0, "C", 100, 16, comm="swapper/0")
        t.io(103, 5000, 128, 1.5, 1.6)
        t.ev(2.0, 50, "Q", 9000, 8, rwbs="W", comm="kworker/u4:1")
        t.ev(2.0, 7, "D", 9000, 8, rwbs="W").ev(2.1, 0, "C", 9000, 8, rwbs="W")
        fields, table = measure(t, (1, 1, 1), BY_SIZE)
        self.assertEqual(table["requests"].tolist(), [1, 0, 1, 1])
        self.assertEqual(table["ios"].tolist(), [1, 1, 1, 1])
        self.assertEqual(table["device_cost_s"].round(9).tolist(), [0.002, 0.0, 0.016, 0.001])
        self.assertEqual(table["cost_share"].round(6).tolist()[:3], [0.111111, 0.0, 0.888889])
        self.assertTrue(pd.isna(table.loc[metrics.OTHER, "cost_share"]))


def size_mix_run(folder, rates, model, scheduler="fiops", variant=None, fio_tasks=True):
    """A run folder as bench leaves it (binary trace for blkparse), running
    the shipped size-mix.fio; model None leaves device_cost_model out, as
    folders from before it were."""
    step = os.path.join(folder, "guest", "main")
    os.makedirs(step)
    comms = [(0, pid, "comm", "fio") for _, pid, _ in READERS]
    with open(os.path.join(step, "nvme0n1.blktrace.0"), "wb") as f:
        f.write(blk.binary(comms + size_mix_events(rates)))
    with open(os.path.join(step, "blktrace.log"), "w") as f:
        f.write("  Total:   99 events (dropped 0),   1 KiB data\n")
    with open(os.path.join(step, "pids.txt"), "w") as f:
        f.write("101\n102\n103\n")
    with open(os.path.join(step, "fio.json"), "w") as f:
        json.dump(size_mix_fio(rates), f)
    shutil.copy(SIZE_MIX, os.path.join(folder, "workload.fio"))
    meta = {"scheduler": scheduler, "variant": variant or scheduler, "valid": True,
            "params": {"SCHED": scheduler, "IOPS": 1000, "WORKLOAD": "size-mix", "DEPTH": 4,
                       "RUNTIME": 2, "RAMP": 1, "TUNE": []}}
    summary = {"scheduler": scheduler, "variant": variant or scheduler, "workload": "size-mix",
               "tasks": [{"name": name, "pid": pid, "iops": rate, "ios": 2 * rate}
                         for (name, pid, _), rate in zip(READERS, rates)] if fio_tasks else []}
    if model is not None:
        meta["device_cost_model"] = summary["device_cost_model"] = model
    meta["status"] = "ok"  # finished, as bench says of a run the report uses
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump(summary, f)


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class RunFolderTest(unittest.TestCase):
    """analyze.compute and write: tasks.csv, summary.json and its tasks."""

    def analyse(self, rates, model):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        size_mix_run(tmp.name, rates, model)
        fields, table, series = analyze.compute(tmp.name)
        analyze.write(tmp.name, "main", fields, table, series)
        with open(os.path.join(tmp.name, "summary.json")) as f:
            summary = json.load(f)
        return summary, pd.read_csv(os.path.join(tmp.name, "tasks.csv")).set_index("task")

    def test_size_charging_run(self):
        summary, tasks = self.analyse(EQUAL_TIME, BY_SIZE)
        self.assertTrue(summary["cost_model_active"])
        self.assertEqual(summary["jain_index_cost"], 1.0)
        self.assertEqual(summary["expect"], {"r4k": 1.0, "r16k": 1.0, "r64k": 1.0})
        self.assertEqual([(t["name"], t["device_cost_s"], t["cost_share"])
                          for t in summary["tasks"]],
                         [("r4k", 0.32, 0.3333), ("r16k", 0.32, 0.3333), ("r64k", 0.32, 0.3333)])
        self.assertEqual(tasks.loc["r64k", "requests"], 20)
        self.assertAlmostEqual(tasks.loc["r64k", "device_cost_s"], 0.32)
        self.assertAlmostEqual(tasks.loc["r16k", "cost_share"], 1 / 3)
        self.assertEqual(tasks.loc[metrics.OTHER, "device_cost_s"], 0)
        columns = list(tasks.reset_index().columns)
        self.assertEqual(columns[columns.index("device_cost_s"):][:2],
                         ["device_cost_s", "cost_share"])

    def test_old_run_folder_is_iops_only(self):
        summary, tasks = self.analyse(EQUAL_TIME, None)
        self.assertIs(summary["cost_model_active"], False)
        self.assertIsNone(summary["jain_index_cost"])
        self.assertEqual([(t["device_cost_s"], t["cost_share"]) for t in summary["tasks"]],
                         [(None, None)] * 3)
        self.assertTrue(tasks["device_cost_s"].isna().all())
        self.assertTrue(tasks["cost_share"].isna().all())


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class ReportTest(ReportFixture, unittest.TestCase):
    """A size-mix compare: FIOPS with and without its size cost on a size-charging
    device, and FIOPS on a device that charges per request."""

    @staticmethod
    def make_runs(compare):
        for run_id, rates, model, variant in (
                ("size-1", EQUAL_TIME, BY_SIZE, "fiops_size_scale=1000"),
                ("size-2", EQUAL_TIME, BY_SIZE, "fiops_size_scale=1000"),
                ("flat-1", EQUAL_IOPS, BY_SIZE, "fiops"),
                ("iops-1", EQUAL_IOPS, PER_REQUEST, "fiops")):
            size_mix_run(os.path.join(compare, run_id), rates, model, variant=variant)

    def test_runs_csv(self):
        runs = self.per_run()
        self.assertEqual(runs["cost_model_active"].to_dict(),
                         {"flat-1": True, "iops-1": False, "size-1": True, "size-2": True})
        self.assertEqual(runs.loc["size-1", "jain_index_cost"], 1.0)
        self.assertEqual(runs.loc["flat-1", "jain_index_cost"], SEVEN_13THS)
        self.assertTrue(pd.isna(runs.loc["iops-1", "jain_index_cost"]))
        self.assertEqual(runs.loc["iops-1", "device_cost"], "per request")
        self.assertEqual(runs.loc["size-1", "device_cost"], "iops_size=4096")

    def test_markdown(self):
        # Device models differ in this compare: they name the configurations.
        self.assertIn("| scheduler | Jain (IOPS) | Jain (cost) |", self.md)
        self.assertIn("| fiops (iops_size=4096) | 1.0000 | 0.5385 |", self.md)
        self.assertIn("| fiops (per request) | 1.0000 | - |", self.md)
        self.assertIn("| fiops_size_scale=1000 (iops_size=4096) | 0.5385 ± 0.0000 "
                      "| 1.0000 ± 0.0000 |", self.md)
        self.assertIn("| scheduler | task | IOPS | share | cost share | expected | deviation |",
                      self.md)
        self.assertIn("| fiops_size_scale=1000 (iops_size=4096) | r64k | 10.0 ± 0.0 "
                      "| 0.048 ± 0.000 | 0.333 ± 0.000 | 0.333 |", self.md)
        self.assertIn("| fiops (iops_size=4096) | r64k | 50.0 | 0.333 | 0.762 | 0.333 |",
                      self.md)
        self.assertIn("| fiops (per request) | r64k | 50.0 | 0.333 | - | 0.333 |", self.md)
        self.assertIn("| device charges (summary.json device_cost_model) | "
                      "iops_size=4096, per request |", self.md)


if __name__ == "__main__":
    unittest.main()
