"""The README documents what the analysis writes and the workloads shipped."""

import os
import re
import shutil
import tempfile
import unittest

from analysis import analyze
from analysis.tests import TOP
from analysis.tests.test_schedmsg import run_folder

with open(os.path.join(TOP, "README.md")) as f:
    README = f.read()


def undocumented(names):
    """The names the README never writes as `name`."""
    return sorted(n for n in names if "`%s`" % n not in README)


def section(title):
    """The README's text under "## title", up to the next section."""
    start = README.index("## %s\n" % title)
    end = README.find("\n## ", start + 1)
    return README[start:end if end >= 0 else len(README)]


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class FieldsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            run_folder(tmp, "fiops")
            cls.fields, cls.table, _ = analyze.compute(tmp)

    def test_summary_fields(self):
        text = section("Reading summary.json")
        missing = [k for k in self.fields if "`%s`" % k not in text]
        self.assertEqual(missing, [], "summary.json fields the README does not describe")
        self.assertIn("`window_overlap`", text)
        self.assertIn("`device_cost_s` and `cost_share`", text)      # in tasks entries
        self.assertIn("and `messages`, the message events", text)   # trace.messages

    def test_fiops_trace_keys(self):
        self.assertIsNotNone(self.fields["fiops_trace"])
        self.assertEqual(undocumented(self.fields["fiops_trace"]), [])

    def test_fiops_depth_keys(self):
        self.assertIsNotNone(self.fields["fiops_depth"])
        self.assertEqual(undocumented(self.fields["fiops_depth"]), [])

    def test_tasks_csv_columns(self):
        table = section("Reading summary.json").split("| tasks.csv column | what |")[1]
        missing = [c for c in analyze.TASK_COLUMNS if "`%s`" % c not in table]
        self.assertEqual(missing, [], "tasks.csv columns missing from the README's table")


class WorkloadsTest(unittest.TestCase):
    def test_every_workload_has_a_row(self):
        rows = re.findall(r"^\| (`[^|]*`) \|", section("Workloads"), re.M)
        named = set(re.findall(r"`([^`]+)`", " ".join(rows)))
        shipped = {n[:-len(".fio")] for n in os.listdir(os.path.join(TOP, "workloads"))
                   if n.endswith(".fio")}
        self.assertEqual(sorted(shipped - named), [])
        self.assertIn("`# expect[sched]: none`", section("Workloads"))


if __name__ == "__main__":
    unittest.main()
