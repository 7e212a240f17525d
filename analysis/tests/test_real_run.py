"""The analysis on the harness's example run, when this checkout has it."""

import os
import shutil
import unittest

from analysis import analyze
from analysis.tests import TOP

EXAMPLE = os.path.join(TOP, "results", "20261203T015354Z-bfq-equal-readers")


@unittest.skipUnless(os.path.isdir(EXAMPLE), "no example run folder (results/ is not in git)")
@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class ExampleRunTest(unittest.TestCase):
    def test_blktrace_agrees_with_fio(self):
        fields, table, series = analyze.compute(EXAMPLE)
        jobs = table[table["task"] != "other"]
        print()
        for row in jobs.itertuples():
            print("  %s pid %d: blktrace %d ios, fio %d (%+.2f%%)" % (
                row.task, row.pid, row.ios, row.fio_ios, 100.0 * (row.ios / row.fio_ios - 1)))
        self.assertTrue(fields["fio_blktrace_agree"], fields["fio_blktrace_disagreements"])
        for row in jobs.itertuples():
            self.assertLessEqual(abs(row.ios - row.fio_ios), 0.01 * row.fio_ios, row.task)
        self.assertEqual(jobs["task"].tolist(), ["r1", "r2", "r3", "r4"])
        self.assertEqual(table.loc[table["task"] == "other", "ios"].item(), 0)
        self.assertTrue(fields["trace_complete"])
        self.assertEqual(fields["trace"]["front_merges"], 1)   # one F in that trace
        self.assertEqual(fields["trace"]["completed"], fields["trace"]["bios"])
        self.assertGreater(fields["jain_index"], 0.99)
        self.assertEqual(len(series), 10 * 5)                 # 10 s, four jobs and other


if __name__ == "__main__":
    unittest.main()
