"""Expect lines that share device requests ("# expect[fiops] requests: ...").

The case is workloads/sync-async.fio: two direct 4k readers r1, r2 and a
buffered writer w whose data a kernel flusher thread writes back (the
other row), two bios merged into each of its commands.  FIOPS promises
r1:r2:writeback requests = 5:5:2 (a writeback request costs
async_scale/sync_scale = 2.5 reads); the common line asks for equal fio
IOPS of r1, r2 and w.
"""

import json
import os
import shutil
import tempfile
import unittest

import pandas as pd

from analysis import analyze, attribute, metrics
from analysis.tests import TOP, blk
from analysis.tests.test_metrics import fio_job, fio_json
from analysis.tests.test_report import ReportFixture

SYNC_ASYNC = os.path.join(TOP, "workloads", "sync-async.fio")
READERS = (("r1", 101, 0), ("r2", 102, 5000000))
WRITER, FLUSHER = 103, 50
MS = 1000000
COMMON_REQUESTS = "# expect requests: r1=1 r2=1 other=1\n[r1]\n[r2]\n[w]\n"
PROMISED = 20       # the flusher's commands per 100 ms: r1:r2:other requests = 5:5:2
GREEDY = 50         # as many as each reader: 1:1:1


def sync_async_events(flushes, seconds=3.5):
    """(ns, pid, action, sector, sectors): r1 and r2 each queue a 4k read
    every 20 ms (50 requests a second), the flusher flushes commands of two
    merged 4k bios a second; w queues nothing.  Each request takes 1 ms."""
    events = [(0, pid, "comm", "fio") for _, pid, _ in READERS]
    events += [(0, WRITER, "comm", "fio"), (0, FLUSHER, "comm", "kworker/u4:1")]
    for _, pid, base in READERS:
        for i in range(int(seconds * 50)):
            ns, sector = i * 20 * MS + pid % 2 * MS, base + 8 * i
            events += [(ns, pid, "Q", sector, 8), (ns + 1, 7, "D", sector, 8),
                       (ns + MS, 0, "C", sector, 8)]
    for i in range(int(seconds * flushes)):
        ns, sector = i * 1000 * MS // flushes + 3 * MS, 9000000 + 16 * i
        events += [(ns, FLUSHER, "Q", sector, 8), (ns + 1, FLUSHER, "Q", sector + 8, 8),
                   (ns + 2, FLUSHER, "M", sector + 8, 8), (ns + 3, 7, "D", sector, 16),
                   (ns + MS, 0, "C", sector, 16)]
    return sorted(events, key=lambda e: e[0])


def sync_async_fio():
    """fio.json over a 1 s ramp and 2 s runtime: the readers' 100 I/Os
    each, and w's write() calls, which the device never sees as w's."""
    return fio_json(fio_job("r1", 100), fio_job("r2", 100), fio_job("w", 300, direct="0"))


def sync_async_run(folder, flushes, scheduler, workload=None):
    """A run folder as bench leaves it (binary trace for blkparse),
    running the shipped sync-async.fio (or workload's text) under scheduler."""
    step = os.path.join(folder, "guest", "main")
    os.makedirs(step)
    with open(os.path.join(step, "nvme0n1.blktrace.0"), "wb") as f:
        f.write(blk.binary(sync_async_events(flushes)))
    with open(os.path.join(step, "blktrace.log"), "w") as f:
        f.write("  Total:   99 events (dropped 0),   1 KiB data\n")
    with open(os.path.join(step, "pids.txt"), "w") as f:
        f.write("101\n102\n103\n")
    with open(os.path.join(step, "fio.json"), "w") as f:
        json.dump(sync_async_fio(), f)
    shutil.copy(SYNC_ASYNC, os.path.join(folder, "workload.fio"))
    if workload is not None:
        with open(os.path.join(folder, "workload.fio"), "w") as f:
            f.write(workload)
    meta = {"scheduler": scheduler, "variant": scheduler, "valid": True,
            "params": {"SCHED": scheduler, "IOPS": 1000, "WORKLOAD": "sync-async", "DEPTH": 4,
                       "RUNTIME": 2, "RAMP": 1, "TUNE": []}}
    meta["status"] = "ok"  # finished, as bench says of a run the report uses
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump({"scheduler": scheduler, "variant": scheduler, "workload": "sync-async"}, f)


class ExpectMeasureTest(unittest.TestCase):
    def test_measure_after_the_bracket(self):
        text = ("# expect: r1=1 r2=1 w=1\n# expect[fiops] requests: r1=5 r2=5 other=2\n"
                "#expect[bfq]  iops : r1=2 r2=1\n# expect[kyber]: none\n")
        self.assertEqual(metrics.expect_measure(text), metrics.IOPS)
        self.assertEqual(metrics.policy(text, "fiops"),
                         ({"r1": 5.0, "r2": 5.0, "other": 2.0},
                          "expect[fiops] requests: r1=5 r2=5 other=2"))
        self.assertEqual(metrics.measure_of("expect[fiops] requests: r1=5 r2=5 other=2"),
                         metrics.REQUESTS)
        self.assertEqual(metrics.measure_of(metrics.policy(text, "bfq")[1]), metrics.IOPS)
        self.assertEqual(metrics.measure_of(metrics.policy(text, "none")[1]), metrics.IOPS)
        self.assertIsNone(metrics.measure_of(None))

    def test_common_line_with_a_measure(self):
        text = "# expect requests: r1=1 other=1\n[r1]\n"
        self.assertEqual(metrics.parse_expect(text), {"r1": 1.0, "other": 1.0})
        self.assertEqual(metrics.expect_measure(text), metrics.REQUESTS)
        self.assertEqual(metrics.policy(text, "fiops"),
                         ({"r1": 1.0, "other": 1.0}, "expect requests: r1=1 other=1"))
        self.assertIsNone(metrics.expect_measure("[r1]\n"))

    def test_bad_measures(self):
        for line in ("# expect[fiops] request: a=1", "# expect shares: a=1",
                     "# expect[fiops] requests iops: a=1"):
            with self.assertRaises(ValueError, msg=line):
                metrics.parse_policies(line + "\n")
                metrics.parse_expect(line + "\n")
        # Prose that says "expect" is no expect line, nor is "expected".
        self.assertEqual(metrics.expect_lines("# expect it to be slow: a=1\n"
                                              "# expected: a=1\n"), [])

    def test_shipped_workload(self):
        with open(SYNC_ASYNC) as f:
            text = f.read()
        self.assertEqual(metrics.parse_expect(text), {"r1": 1.0, "r2": 1.0, "w": 1.0})
        own, source = metrics.policy(text, "fiops")
        self.assertEqual((own, metrics.measure_of(source)),
                         ({"r1": 5.0, "r2": 5.0, "other": 2.0}, metrics.REQUESTS))
        for scheduler in ("bfq", "mq-deadline", "none", "kyber"):
            self.assertIsNone(metrics.policy(text, scheduler)[0], scheduler)

    def test_unknown_names(self):
        self.assertEqual(metrics.unknown_names({"r1": 5, "other": 2, "x": 1}, metrics.REQUESTS,
                                               ["r1", "w"]), {"x"})
        self.assertEqual(metrics.unknown_names({"r1": 5, "other": 2}, metrics.IOPS, ["r1"]),
                         {"other"})
        self.assertEqual(metrics.unknown_names(None, None, ["r1"]), set())


class RequestSharesTest(unittest.TestCase):
    def test_per_second_of_each_window_over_the_named_rows(self):
        """r2 was measured over half the time of the others: its 50 requests
        are 50 a second, as r1's 100 over 2 s.  w is not named: left out."""
        table = pd.DataFrame({"task": ["r1", "r2", "w", metrics.OTHER],
                              "name": ["r1", "r2", "w", metrics.OTHER],
                              "requests": [100, 50, 3, 40],
                              "window_s": [2.0, 1.0, 2.0, 2.0]})
        expected, share = metrics.request_shares(table, {"r1": 5, "r2": 5, "other": 2})
        self.assertEqual(expected.round(12).tolist()[:2], [round(5 / 12, 12)] * 2)
        self.assertAlmostEqual(expected[3], 2 / 12)
        self.assertAlmostEqual(share[0], 5 / 12)
        self.assertAlmostEqual(share[1], 5 / 12)
        self.assertAlmostEqual(share[3], 2 / 12)
        self.assertTrue(pd.isna(expected[2]) and pd.isna(share[2]))


class MeasureTest(unittest.TestCase):
    """analyze.measure over the run's window (1 s ramp, 2 s) of the synthetic trace."""

    def judge(self, flushes, scheduler="fiops", text=None):
        events = blk.Text()
        for e in sync_async_events(flushes):
            if e[2] != "comm":
                comm = "kworker/u4:1" if e[1] == FLUSHER else "fio"
                events.ev(e[0] / 1e9, e[1], e[2], e[3], e[4], rwbs="W" if e[3] >= 9000000
                          else "R", comm=comm if e[2] in "QM" else "swapper/0")
        events, _ = events.events()
        bios, _ = attribute.attribute(events)
        if text is None:
            with open(SYNC_ASYNC) as f:
                text = f.read()
        weights = metrics.parse_expect(text)
        own, source = metrics.policy(text, scheduler)
        measures = metrics.expect_measure(text), metrics.measure_of(source)
        tasks = analyze.job_tasks(sync_async_fio(), [101, 102, 103], weights,
                                  {} if own is None else own)
        fields, table, _ = analyze.measure(bios, tasks, (1.0, 3.0), 1000, events, None,
                                           analyze.by_requests(weights, own, *measures))
        fields.update(analyze.policy_fields(table, own, source))
        return fields, table.set_index("task")

    def test_fiops_as_promised(self):
        fields, t = self.judge(PROMISED)
        self.assertEqual(t["requests"].tolist(), [100, 100, 0, 40])
        self.assertEqual(t["ios"].tolist(), [100, 100, 0, 80])     # two bios a flush
        for task, share in (("r1", 5 / 12), ("r2", 5 / 12), (metrics.OTHER, 2 / 12)):
            self.assertAlmostEqual(t.loc[task, "expected_policy"], share)
            self.assertAlmostEqual(t.loc[task, "judged_share_policy"], share)
            self.assertAlmostEqual(t.loc[task, "deviation_policy"], 0.0)
        self.assertTrue(pd.isna(t.loc["w", "expected_policy"]))
        self.assertTrue(pd.isna(t.loc["w", "judged_share_policy"]))
        self.assertEqual(fields["policy_measure"], "requests")
        self.assertEqual(fields["jain_index_policy"], 1.0)
        self.assertEqual(fields["worst_deviation_policy"]["value"], 0.0)
        self.assertEqual(fields["expected_policy"],
                         {"r1": 5 / 12, "r2": 5 / 12, metrics.OTHER: 2 / 12})
        # The common line still judges fio jobs' IOPS: w's writes are not its own.
        self.assertEqual(t.loc[["r1", "r2", "w"], "judged_share"].tolist(), [0.5, 0.5, 0.0])
        self.assertEqual(fields["jain_index"], round(2 / 3, 6))
        self.assertEqual(fields["worst_deviation"], {"task": "w", "value": -1.0})

    def test_writeback_served_like_a_reader(self):
        """1:1:1 requests: x = 0.8, 0.8, 2 against 5:5:2, Jain 12.96 / 15.84 = 9/11."""
        fields, t = self.judge(GREEDY)
        self.assertEqual(t["requests"].tolist(), [100, 100, 0, 100])
        self.assertAlmostEqual(t.loc["r1", "judged_share_policy"], 1 / 3)
        self.assertAlmostEqual(t.loc["r1", "deviation_policy"], -0.2)
        self.assertAlmostEqual(t.loc[metrics.OTHER, "deviation_policy"], 1.0)
        self.assertEqual(t.loc[metrics.OTHER, "deviation_policy_kind"], "relative")
        self.assertEqual(fields["jain_index_policy"], round(9 / 11, 6))
        self.assertEqual(fields["worst_deviation_policy"], {"task": metrics.OTHER, "value": 1.0})

    def test_common_line_on_requests(self):
        """The common line shares requests: jain_index and deviation judge
        them, and the scheduler without a line of its own is judged alike."""
        fields, t = self.judge(GREEDY, text=COMMON_REQUESTS)
        self.assertEqual(t["weight"].tolist()[:2] + t["weight"].tolist()[3:], [1.0, 1.0, 1.0])
        self.assertTrue(pd.isna(t.loc["w", "weight"]))
        for task in ("r1", "r2", metrics.OTHER):
            self.assertAlmostEqual(t.loc[task, "judged_share"], 1 / 3)
            self.assertAlmostEqual(t.loc[task, "expected"], 1 / 3)
            self.assertAlmostEqual(t.loc[task, "deviation"], 0.0)
        self.assertEqual(t.loc["r1", "share"], 0.5)             # IOPS among the jobs, as ever
        self.assertEqual(fields["jain_index"], 1.0)
        self.assertEqual(fields["jain_index_policy"], 1.0)
        self.assertEqual(fields["policy_measure"], "requests")

    def test_schedulers_without_a_policy(self):
        fields, t = self.judge(PROMISED, "bfq")
        self.assertIsNone(fields["policy_measure"])
        self.assertIsNone(fields["jain_index_policy"])
        self.assertEqual(fields["expected_policy"], {})
        self.assertTrue(t["judged_share_policy"].isna().all())


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class RunFolderTest(unittest.TestCase):
    """analyze.compute and write: summary.json and tasks.csv."""

    def test_fiops_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            sync_async_run(tmp, PROMISED, "fiops")
            fields, table, series = analyze.compute(tmp)
            analyze.write(tmp, "main", fields, table, series)
            with open(os.path.join(tmp, "summary.json")) as f:
                summary = json.load(f)
            tasks = pd.read_csv(os.path.join(tmp, "tasks.csv")).set_index("task")
        self.assertEqual(summary["policy_source"], "expect[fiops] requests: r1=5 r2=5 other=2")
        self.assertEqual(summary["policy_measure"], "requests")
        self.assertEqual(summary["expect_measure"], "iops")
        self.assertEqual(summary["expect_policy"], {"r1": 5.0, "r2": 5.0, "other": 2.0})
        self.assertEqual(summary["expect_unknown"], [])
        self.assertEqual(summary["jain_index_policy"], 1.0)
        self.assertAlmostEqual(summary["expected_policy"]["other"], 2 / 12)
        self.assertEqual(tasks.loc[metrics.OTHER, "requests"], 40)
        self.assertAlmostEqual(tasks.loc[metrics.OTHER, "judged_share_policy"], 2 / 12)
        self.assertAlmostEqual(tasks.loc[metrics.OTHER, "expected_policy"], 2 / 12)
        self.assertTrue(pd.isna(tasks.loc["w", "judged_share_policy"]))


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class ReportTest(ReportFixture, unittest.TestCase):
    """A sync-async compare: FIOPS as promised, twice, and mq-deadline."""

    @staticmethod
    def make_runs(compare):
        for run_id, flushes, scheduler in (("fiops-1", PROMISED, "fiops"),
                                           ("fiops-2", GREEDY, "fiops"),
                                           ("mq-deadline-1", GREEDY, "mq-deadline")):
            sync_async_run(os.path.join(compare, run_id), flushes, scheduler)

    def test_expected_marks_of_the_common_iops_line(self):
        self.assertTrue(os.path.exists(os.path.join(self.out, "plots",
                                                    "sync-async-shares-expected.dat")))

    def test_runs_csv(self):
        runs = self.per_run()
        self.assertEqual(runs.loc["fiops-1", "policy_measure"], "requests")
        self.assertTrue(pd.isna(runs.loc["mq-deadline-1", "policy_measure"]))
        self.assertEqual(runs.loc["fiops-2", "jain_index_policy"], round(9 / 11, 6))

    def test_markdown(self):
        self.assertIn("| scheduler | documented policy | measure (own) | Jain (common) "
                      "| Jain (own) |", self.md)
        self.assertIn("| fiops | `expect[fiops] requests: r1=5 r2=5 other=2` | device requests "
                      "| 0.6667 ± 0.0000 | 0.9091 ± 1.1551 |", self.md)
        self.assertIn("| mq-deadline | documents no policy | - | 0.6667 | - |", self.md)
        self.assertIn("policy_measure, what the policy shares; Jain (common) judges IOPS)",
                      self.md)
        self.assertIn("| scheduler | task | IOPS | share | expected | deviation | share (own) "
                      "| expected (own) | deviation (own) | p99 (ms) | runs |", self.md)
        # other: 2/12 and 1/3 of the requests, mean 0.25 against 2/12.
        self.assertIn("| fiops | other | 70.0 ± 381.2 | - | - | - | 0.250 ± 1.059 | 0.167 "
                      "| 50.0 ± 635.3% |", self.md)
        self.assertIn("| fiops | r1 | 50.0 ± 0.0 | 0.500 ± 0.000 | 0.333 | 50.0 ± 0.0% "
                      "| 0.375 ± 0.529 | 0.417 | -10.0 ± 127.1% |", self.md)
        self.assertIn("| fiops | w | 0.0 ± 0.0 | 0.000 ± 0.000 | 0.333 | -100.0 ± 0.0% "
                      "| - | - | - |", self.md)
        self.assertIn("| mq-deadline | r1 | 50.0 | 0.500 | 0.333 | 50.0% | - | - | - |", self.md)



@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class CommonLineReportTest(ReportFixture, unittest.TestCase):
    """A workload whose common line shares requests, and no scheduler line."""

    @staticmethod
    def make_runs(compare):
        sync_async_run(os.path.join(compare, "fiops-1"), GREEDY, "fiops", COMMON_REQUESTS)

    def test_markdown(self):
        self.assertIn("| scheduler | task | IOPS | share | share (common) | expected | deviation "
                      "| p99 (ms) | runs |", self.md)
        self.assertIn("| fiops | other | 100.0 | - | 0.333 | 0.333 | 0.0% |", self.md)
        self.assertNotIn("measure (own)", self.md)

    def test_no_expected_marks_on_the_iops_shares(self):
        self.assertFalse(os.path.exists(os.path.join(self.out, "plots",
                                                     "sync-async-shares-expected.dat")))


if __name__ == "__main__":
    unittest.main()
