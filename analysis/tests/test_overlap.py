"""window_overlap: how much time the jobs' own fio windows have in common.

The case is a published mq-deadline ioprio run: the idle-class job was
held back 10 s (prio_aging_expire), so fio measured it over 10..20 s while
the others were measured over 1..11 s, and its share of IOPS compared
rates over different times.
"""

import os
import unittest

import pandas as pd

from analysis import analyze, attribute, metrics
from analysis.tests import blk
from analysis.tests.test_metrics import fio_job, fio_json
from analysis.tests.test_report import ReportFixture, save_run

WORKLOAD = "# expect: a=1 b=1 idle=0\n"


def windows(*spans):
    """A task table of jobs a, b, ... over (start, end) spans, and an other row."""
    names = [chr(ord("a") + i) for i in range(len(spans))]
    return pd.DataFrame({"task": names + [metrics.OTHER],
                         "window_start": [s for s, _ in spans] + [0.0],
                         "window_s": [e - s for s, e in spans] + [30.0]})


class WindowOverlapTest(unittest.TestCase):
    def test_values(self):
        self.assertEqual(metrics.window_overlap(windows((1, 11), (1, 11))), 1.0)
        self.assertEqual(metrics.window_overlap(windows((1, 11), (1, 11), (10, 20))), 0.1)
        self.assertEqual(metrics.window_overlap(windows((1, 11), (1.5, 11.5))), 0.95)
        self.assertEqual(metrics.window_overlap(windows((1, 11), (12, 22))), 0.0)
        # Over the shortest window: a short job inside a long one is wholly covered.
        self.assertEqual(metrics.window_overlap(windows((0, 20), (5, 10))), 1.0)

    def test_text_shows_a_low_overlap_below_the_mark(self):
        self.assertEqual(metrics.overlap_text(0.1), "shares measured over windows that "
                         "overlap by 0.10: not comparable")
        self.assertEqual(metrics.overlap_number(0.897), "0.897")    # not 0.90
        self.assertEqual(metrics.overlap_number(0.0), "0.00")

    def test_undefined(self):
        self.assertIsNone(metrics.window_overlap(windows()))
        self.assertIsNone(metrics.window_overlap(windows((1, 11), (3, 3))))


def starved_trace(idle_from):
    """Jobs a and b read every 100 ms for 11 s from 0; the idle job from
    idle_from on (held back until then)."""
    t = blk.Text()
    for pid, start, base in ((101, 0.0, 0), (102, 0.05, 100000), (103, idle_from, 200000)):
        for i in range(110):
            queued = start + i / 10
            t.io(pid, base + 8 * i, 8, queued, queued + 0.002)
    return t


def measured(idle_from):
    """(fields, table, series) of the starved trace, each job measured over
    fio's 10 s job_runtime ending at its last completion."""
    events, _ = starved_trace(idle_from).events()
    bios, _ = attribute.attribute(events)
    jobs = [fio_job(name, 100) for name in ("a", "b", "idle")]
    for job in jobs:
        job["job_runtime"] = 10000
    weights = metrics.parse_expect(WORKLOAD)
    tasks = analyze.job_tasks(fio_json(*jobs), [101, 102, 103], weights)
    fields, table, series = analyze.measure(bios, tasks, (1.0, 11.0), 300, events)
    own, source = metrics.policy(WORKLOAD, "mq-deadline")
    return analyze.Fields(fields, **analyze.policy_fields(table, own, source)), table, series


class MeasureTest(unittest.TestCase):
    def test_starved_job_measured_later(self):
        fields, table, _ = measured(9.0)
        rows = table.set_index("task")
        self.assertAlmostEqual(rows.loc["a", "window_start"], 0.902)
        self.assertAlmostEqual(rows.loc["b", "window_start"], 0.952)
        self.assertAlmostEqual(rows.loc["idle", "window_start"], 9.902)
        self.assertAlmostEqual(fields["window_overlap"], 0.1)     # 9.902 to 10.902 s
        # fio and blktrace agree for each job over its own window: not invalid.
        self.assertTrue(fields["fio_blktrace_agree"])
        self.assertEqual(rows["ios"].tolist()[:3], [100, 100, 100])

    def test_jobs_measured_together(self):
        fields, _, _ = measured(0.02)
        self.assertAlmostEqual(fields["window_overlap"], 0.995)   # 0.952 to 10.902 s


class ReportTest(ReportFixture, unittest.TestCase):
    """mq-deadline: one run whose idle job was held back, one that was not."""

    @staticmethod
    def make_runs(compare):
        for run_id, idle_from in (("mq-1", 9.0), ("mq-2", 0.02)):
            run_dir = os.path.join(compare, run_id)
            os.makedirs(run_dir)
            save_run(run_dir, "mq-deadline", True, *measured(idle_from), workload="starve")

    def test_runs_csv(self):
        runs = self.per_run()
        self.assertAlmostEqual(runs.loc["mq-1", "window_overlap"], 0.1, places=2)
        self.assertGreater(runs.loc["mq-2", "window_overlap"], 0.99)
        self.assertTrue(runs["valid"].all())

    def test_marked_not_invalid(self):
        line = "shares measured over windows that overlap by 0.10: not comparable"
        self.assertIn("Note: run `mq-1` (mq-deadline): " + line, self.md)
        self.assertIn("* mq-deadline: `mq-1` (windows overlap 0.10), `mq-2`\n", self.md)
        self.assertIn("## Runs to look at\n\n* `mq-1`: %s (summary.json window_overlap)\n"
                      % line, self.md)
        self.assertNotIn("`mq-2`:", self.md)
        self.assertNotIn("invalid", self.md.split("## Runs to look at")[1])
        # Both runs are averaged: the mark does not take the run out.
        means = pd.read_csv(os.path.join(self.out, "run-means.csv"))
        self.assertEqual(means["n"].tolist(), [2])


if __name__ == "__main__":
    unittest.main()
