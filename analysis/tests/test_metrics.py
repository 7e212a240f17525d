import math
import os
import unittest

import pandas as pd

from analysis import analyze, attribute, metrics, trace
from analysis.tests import TOP, blk


def fio_job(name, ios, **options):
    zero = {"iops": 0.0, "total_ios": 0}
    return {"jobname": name, "job options": options, "read": {"iops": ios / 2.0, "total_ios": ios},
            "write": zero, "trim": zero}


def fio_json(*jobs):
    return {"global options": {"direct": "1", "ramp_time": "1", "runtime": "2"}, "jobs": list(jobs)}


class ExpectTest(unittest.TestCase):
    def test_parse(self):
        text = "# two readers\n#expect: a=2 b=0.5  idle=0\n[global]\n"
        self.assertEqual(metrics.parse_expect(text), {"a": 2.0, "b": 0.5, "idle": 0.0})
        self.assertEqual(metrics.parse_expect("# no line\n[a]\n"), {})

    def test_bad_lines(self):
        for line in ("a", "a=", "=1", "a=x", "a=-1", "a=inf", "a=1 a=2"):
            with self.assertRaises(ValueError, msg=line):
                metrics.parse_expect("# expect: %s\n" % line)

    def test_per_scheduler_lines(self):
        text = ("# ioprio\n# expect: a=8 b=6 idle=0\n# expect[mq-deadline, bfq2]: a=1 b=1 idle=0\n"
                "#expect[none,kyber]: none\n[a]\n")
        self.assertEqual(metrics.parse_expect(text), {"a": 8.0, "b": 6.0, "idle": 0.0})
        self.assertEqual(metrics.policy(text, "fiops"),
                         ({"a": 8.0, "b": 6.0, "idle": 0.0}, "expect: a=8 b=6 idle=0"))
        self.assertEqual(metrics.policy(text, "mq-deadline"),
                         ({"a": 1.0, "b": 1.0, "idle": 0.0},
                          "expect[mq-deadline, bfq2]: a=1 b=1 idle=0"))
        self.assertEqual(metrics.policy(text, "kyber"), (None, "expect[none,kyber]: none"))
        self.assertEqual(metrics.policy("[a]\n", "fiops"), ({}, None))
        # Only a scheduler's own line: the others have no policy to be judged by.
        self.assertEqual(metrics.policy("# expect[bfq]: a=1\n", "none"), ({}, None))

    def test_lines_under_tunables(self):
        text = ("# expect: r=1 w=1\n# expect[fiops write_scale=3]: r=3 w=1\n"
                "# expect[fiops write_scale=3 read_scale=2]: r=3 w=2\n"
                "# expect[bfq]: r=2 w=1\n[r]\n")
        common = ({"r": 1.0, "w": 1.0}, "expect: r=1 w=1")
        self.assertEqual(metrics.policy(text, "fiops"), common)
        self.assertEqual(metrics.policy(text, "fiops", {"write_scale": "1"}), common)
        self.assertEqual(metrics.policy(text, "fiops", {"write_scale": "3", "read_scale": "1"}),
                         ({"r": 3.0, "w": 1.0}, "expect[fiops write_scale=3]: r=3 w=1"))
        # The line that names most tunables, of those that hold.
        self.assertEqual(metrics.policy(text, "fiops", {"write_scale": "3", "read_scale": "2"}),
                         ({"r": 3.0, "w": 2.0},
                          "expect[fiops write_scale=3 read_scale=2]: r=3 w=2"))
        self.assertEqual(metrics.policy(text, "bfq", {"write_scale": "3"}),
                         ({"r": 2.0, "w": 1.0}, "expect[bfq]: r=2 w=1"))
        self.assertEqual(metrics.line_tunables("expect[fiops write_scale=3]: r=3 w=1"),
                         {"write_scale": "3"})
        self.assertEqual(metrics.line_tunables("expect: r=1"), {})
        # Names the measure and the schedulers as before.
        self.assertEqual(metrics.expect_lines("# expect[fiops, bfq x=1] requests: r=1\n")[0][:2],
                         (["fiops", "bfq"], metrics.REQUESTS))

    def test_bad_per_scheduler_lines(self):
        for lines in ("# expect[]: a=1", "# expect[bfq,]: a=1", "# expect[bfq]: a",
                      "# expect[bfq]: a=1\n# expect[kyber,bfq]: none",
                      "# expect[bfq x=1]: a=1\n# expect[bfq x=1]: a=2",
                      "# expect[bfq x=]: a=1", "# expect[bfq =1]: a=1",
                      "# expect[bfq x=1 x=2]: a=1", "# expect[x=1]: a=1",
                      "# expect: a=1\n# expect: a=2"):
            with self.assertRaises(ValueError, msg=lines):
                metrics.parse_policies(lines + "\n")
                metrics.parse_expect(lines + "\n")

    def test_workloads_name_known_schedulers(self):
        """Every expect line of the shipped workloads parses, its brackets
        name schedulers the harness knows, and a scheduler's own line names
        the common line's jobs (or other, where it shares requests)."""
        known = {"none", "mq-deadline", "bfq", "kyber", "fiops"}
        folder = os.path.join(TOP, "workloads")
        # workloads/stress/ holds make stress's jobs, not bench workloads.
        for name in sorted(n for n in os.listdir(folder) if n.endswith(".fio")):
            with open(os.path.join(folder, name)) as f:
                text = f.read()
            weights = metrics.parse_expect(text)
            self.assertLessEqual(set(metrics.parse_policies(text)), known, name)
            for scheduler in known:
                own, source = metrics.policy(text, scheduler)
                self.assertFalse(weights and metrics.unknown_names(
                    own, metrics.measure_of(source), weights), name)

    def test_expected_shares(self):
        self.assertEqual(metrics.expected_shares(["a", "b", "b"], {"a": 2, "b": 1}),
                         [0.5, 0.25, 0.25])
        shares = metrics.expected_shares(["a", "b", "c"], {"a": 3, "b": 1})
        self.assertEqual(shares[:2], [0.75, 0.25])
        self.assertTrue(math.isnan(shares[2]))
        self.assertTrue(all(math.isnan(s) for s in metrics.expected_shares(["a"], {})))


class JainTest(unittest.TestCase):
    def test_known_values(self):
        self.assertEqual(metrics.jain([1, 1, 1, 1]), 1.0)
        self.assertEqual(metrics.jain([1, 0, 0, 0]), 0.25)
        self.assertAlmostEqual(metrics.jain([1, 2]), 0.9)
        self.assertAlmostEqual(metrics.jain([1.2, 0.8, 1.0]), 3.0 ** 2 / (3 * 3.08))
        self.assertEqual(metrics.jain([0.5, float("nan"), 0.5]), 1.0)
        self.assertIsNone(metrics.jain([]))
        self.assertIsNone(metrics.jain([0, 0]))

    def test_deviation(self):
        self.assertEqual(metrics.deviation(0.3, 0.25), (0.3 / 0.25 - 1, "relative"))
        self.assertEqual(metrics.deviation(0.02, 0.0), (0.02, "absolute"))

    def test_expected_zero_is_left_out_of_jain(self):
        table = pd.DataFrame({"task": ["a", "b", "idle", metrics.OTHER],
                              "iops": [60.0, 30.0, 10.0, 0.0], "share": [0.6, 0.3, 0.1, None],
                              "expected": [2 / 3, 1 / 3, 0.0, None],
                              "deviation": [-0.1, -0.1, 0.1, None]})
        run = metrics.run_metrics(table, 100)
        self.assertEqual(run["jain_index"], 1.0)
        self.assertEqual(run["work_conservation"], 1.0)
        self.assertEqual(run["worst_deviation"]["value"], -0.1)


class RunTest(unittest.TestCase):
    """Two jobs, a kernel flusher and a reused pid, over a 1 s ramp and 2 s runtime."""

    def setUp(self):
        t = blk.Text()
        for i in range(35):                       # a: every 100 ms, 5 ms each
            t.io(101, 1000 + 8 * i, 8, i / 10, i / 10 + 0.005)
        for i in range(18):                       # b: every 200 ms, 10 ms each
            t.io(102, 5000 + 8 * i, 8, 0.05 + i / 5, 0.05 + i / 5 + 0.010)
        for when in (1.5, 2.5):
            t.ev(when, 50, "Q", 9000 + int(when * 8), 8, rwbs="W", comm="kworker/u4:1")
            t.ev(when, 50, "D", 9000 + int(when * 8), 8, rwbs="W")
            t.ev(when + 0.001, 0, "C", 9000 + int(when * 8), 8, rwbs="W")
        t.ev(2.2, 102, "Q", 9900, 8, comm="sh").ev(2.2, 7, "D", 9900, 8).ev(2.21, 0, "C", 9900, 8)
        bios, _ = attribute.attribute(t.events()[0])
        fio = fio_json(fio_job("a", 20), fio_job("b", 11))
        self.tasks = analyze.job_tasks(fio, [101, 102], {"a": 2, "b": 1})
        bios["task"] = metrics.owners(bios, self.tasks)
        ramp, runtime = analyze.timing(fio, {})
        self.span = metrics.window(bios, self.tasks["pid"], ramp, runtime)
        self.table = metrics.task_table(bios, self.tasks, self.span).set_index("task")
        self.bios = bios

    def test_window(self):
        self.assertEqual(self.span, (1.0, 3.0))

    def test_owners(self):
        counts = self.bios["task"].value_counts().to_dict()
        self.assertEqual(counts, {"a": 35, "b": 18, metrics.OTHER: 3})

    def test_tasks(self):
        t = self.table
        self.assertEqual(t["ios"].tolist(), [20, 10, 3])
        self.assertEqual(t["requests"].tolist(), [20, 10, 3])    # no merges here
        self.assertEqual(t["iops"].tolist(), [10.0, 5.0, 1.5])
        self.assertEqual(t.loc["a", "bytes_per_s"], 10 * 4096)
        self.assertAlmostEqual(t.loc["a", "share"], 2 / 3)
        self.assertAlmostEqual(t.loc["b", "expected"], 1 / 3)
        self.assertAlmostEqual(t.loc["a", "deviation"], 0.0)
        self.assertAlmostEqual(t.loc[metrics.OTHER, "device_share"], 3 / 33)
        self.assertAlmostEqual(t.loc["a", "p50_ms"], 5.0, places=6)
        self.assertAlmostEqual(t.loc["b", "p99_ms"], 10.0, places=6)

    def test_run_numbers(self):
        run = metrics.run_metrics(self.table.reset_index(), 20)
        self.assertEqual(run["jain_index"], 1.0)
        self.assertEqual(run["trace_total_iops"], 16.5)
        self.assertEqual(run["work_conservation"], 0.825)

    def test_own_policy(self):
        """A scheduler's own expect line gives a second set of numbers; the
        common ones stay."""
        table = self.table.reset_index()
        self.assertEqual(table["expected_policy"].tolist()[:2], table["expected"].tolist()[:2])
        for own, jain, worst in (({"a": 1, "b": 1}, 0.9, {"task": "b", "value": -0.3333}),
                                 ({}, None, None)):
            tasks = self.tasks.drop(columns="expected_policy").assign(
                expected_policy=metrics.expected_shares(["a", "b"], own))
            table = metrics.task_table(self.bios, tasks, self.span)
            run = metrics.run_metrics(table, 20)
            self.assertEqual(run["jain_index"], 1.0)
            self.assertEqual(run["jain_index_policy"], jain)
            self.assertEqual(run["worst_deviation_policy"], worst)

    def test_cross_check(self):
        table = self.table.reset_index()
        # b: 10 against fio's 11 is one I/O cut by the window's edge.
        self.assertTrue(metrics.cross_check(table)["fio_blktrace_agree"])
        table.loc[table["task"] == "b", "fio_ios"] = 12
        check = metrics.cross_check(table)
        self.assertFalse(check["fio_blktrace_agree"])
        self.assertEqual(check["fio_blktrace_disagreements"],
                         [{"task": "b", "blktrace_ios": 10, "fio_ios": 12, "diff": -0.1667}])

    def test_timeseries(self):
        series = metrics.timeseries(self.bios, self.span, ["a", "b", metrics.OTHER])
        wide = series.pivot(index="second", columns="task", values="iops")
        self.assertEqual(wide["a"].tolist(), [10, 10])
        self.assertEqual(wide["b"].tolist(), [5, 5])
        self.assertEqual(wide[metrics.OTHER].tolist(), [1, 2])

    def test_timeseries_leaves_out_a_partial_last_second(self):
        """A window of 1.5 s has one whole second; the completions after it
        are not a second's count and must not plot as a drop."""
        span = (self.span[0], self.span[0] + 1.5)
        series = metrics.timeseries(self.bios, span, ["a", "b"])
        self.assertEqual(series["second"].unique().tolist(), [0])
        wide = series.pivot(index="second", columns="task", values="iops")
        self.assertEqual(wide["a"].tolist(), [10])


class JobTasksTest(unittest.TestCase):
    def test_numjobs_and_buffered(self):
        fio = fio_json(fio_job("t", 10), fio_job("t", 12), fio_job("w", 5, direct="0"))
        tasks = analyze.job_tasks(fio, [7, 8, 9], {"t": 1, "w": 2})
        self.assertEqual(tasks["task"].tolist(), ["t.0", "t.1", "w"])
        self.assertEqual(tasks["expected"].tolist(), [0.25, 0.25, 0.5])
        self.assertEqual(tasks["direct"].tolist(), [True, True, False])
        table = tasks.assign(ios=[10, 12, 0])
        check = metrics.cross_check(table)
        self.assertTrue(check["fio_blktrace_agree"])
        self.assertEqual(check["fio_blktrace_unchecked"], ["w"])

    def test_pid_count_mismatch_pairs_nothing(self):
        tasks = analyze.job_tasks(fio_json(fio_job("a", 1), fio_job("b", 1)), [7], {})
        self.assertTrue(tasks["pid"].isna().all())


if __name__ == "__main__":
    unittest.main()


class DeviceIopsTest(unittest.TestCase):
    def test_merged_requests_count_once_and_flushes_not_at_all(self):
        # 3 commands completed in [1, 3): one of them carried 8 merged bios;
        # a flush (0 sectors), a Q and a completion outside the window.
        rows = [(0, 1, 0.5, 1, "C", "W", 0, 8, 0, "k"),
                (0, 2, 1.0, 1, "C", "W", 8, 64, 0, "k"),
                (0, 3, 1.5, 1, "Q", "R", 100, 8, 0, "f"),
                (0, 4, 2.0, 1, "C", "R", 100, 8, 0, "f"),
                (0, 5, 2.5, 1, "C", "FN", 0, 0, 0, "k"),
                (0, 6, 2.9, 1, "C", "R", 200, 8, 0, "f"),
                (0, 7, 3.0, 1, "C", "R", 300, 8, 0, "f")]
        events = pd.DataFrame(rows, columns=trace.COLUMNS)
        self.assertAlmostEqual(metrics.device_iops(events, (1.0, 3.0)), 1.5)
        self.assertEqual(metrics.device_iops(events, (1.0, 1.0)), 0.0)


class TaskSpanTest(unittest.TestCase):
    def test_each_job_is_measured_over_its_own_fio_window(self):
        own = pd.DataFrame({"c_time": [0.5, 3.0, 9.0, float("nan")]})
        self.assertEqual(metrics.task_span(own, 4.0, (1.0, 5.0)), (5.0, 9.0))
        # No runtime from fio, or nothing completed: the run's window.
        self.assertEqual(metrics.task_span(own, None, (1.0, 5.0)), (1.0, 5.0))
        self.assertEqual(metrics.task_span(own.iloc[3:], 4.0, (1.0, 5.0)), (1.0, 5.0))

    def test_common_span_is_where_all_jobs_were_measured(self):
        table = pd.DataFrame({"task": ["a", "b", metrics.OTHER],
                              "window_start": [1.0, 2.5, 0.0], "window_s": [10.0, 10.0, 20.0]})
        self.assertEqual(metrics.common_span(table, (0.0, 1.0)), (2.5, 11.0))
        table.loc[1, "window_start"] = 20.0
        self.assertEqual(metrics.common_span(table, (0.0, 1.0)), (0.0, 1.0))
