import unittest

import numpy as np

from analysis import depthmsg, trace
from analysis.tests import blk


def changes(text):
    return depthmsg.parse(trace.parse_messages(text.text()))


def controller():
    """A start at max_depth, a probe, a steady 4 for 2.5 s, then a steady 8
    with a trial, a probe and short changes around it."""
    t = blk.Text()
    t.depth(0.0, 256, 256, iops=0, lat_us=0)
    t.depth(0.1, 1, 256, iops=0, lat_us=0, probe=True)
    t.depth(0.5, 4, 4, iops=900, lat_us=4000)
    t.depth(3.0, 8, 8, iops=1900)
    t.depth(3.1, 10, 8, iops=1900)                        # a trial
    t.depth(3.2, 8, 8, iops=1900)
    t.depth(3.3, 1, 8, iops=1900, probe=True)
    t.depth(3.35, 8, 8, iops=2000, lat_us=4180)
    return t


class ParseTest(unittest.TestCase):
    def test_kinds_and_malformed(self):
        t = controller()
        t.fiops(3.4, 101, 100, 8, 1024, 1024, 0, 1)          # a dispatch: not a depth line
        t.msg(3.5, "fiops depth 3 iops=520 lat=898us")       # the format before steady=
        t.msg(3.6, "fiops depth 3 steady=x iops=1 lat=1us")
        t.msg(3.7, "bfq128S dispatch")
        d, malformed = changes(t)
        self.assertEqual(malformed, 2)
        self.assertEqual(d["time"].tolist(), [0.0, 0.1, 0.5, 3.0, 3.1, 3.2, 3.3, 3.35])
        self.assertEqual(d["depth"].tolist(), [256, 1, 4, 8, 10, 8, 1, 8])
        self.assertEqual(d["probe"].tolist(), [False, True, False, False, False, False, True,
                                               False])
        self.assertEqual(d["trial"].tolist(), [False, False, False, False, True, False, False,
                                               False])
        self.assertEqual((d["iops"].iloc[-1], d["lat_us"].iloc[-1]), (2000, 4180))

    def test_lifted(self):
        t = controller()
        t.depth(3.5, 32, 32, iops=98000, lat_us=2, lifted=True)
        t.depth(4.1, 1, 32, iops=98000, lat_us=2, probe=True, lifted=True)
        t.depth(4.2, 2, 2, iops=98000, lat_us=2)
        d, malformed = changes(t)
        self.assertEqual(malformed, 0)
        self.assertEqual(d["lifted"].tolist()[-4:], [False, True, True, False])
        self.assertEqual(d["probe"].tolist()[-3:], [False, True, False])
        self.assertFalse(d["trial"].iloc[-3])
        self.assertEqual(depthmsg.summarize(d, 0, (0.0, 5.0), 5.0)["lifted"], 2)

    def test_no_messages_is_null(self):
        t = blk.Text().ev(0.1, 101, "Q", 8, 8)
        t.fiops(0.1, 101, 8, 8, 1024, 1024, 0, 0)
        d, malformed = changes(t)
        self.assertEqual((len(d), malformed), (0, 0))
        self.assertIsNone(depthmsg.summarize(d, malformed, (0.0, 1.0), 1.0))


class SummaryTest(unittest.TestCase):
    def test_fields(self):
        d, malformed = changes(controller())
        fields = depthmsg.summarize(d, malformed, (0.0, 3.8), 4.0)
        self.assertEqual((fields["changes"], fields["probes"], fields["trials"],
                          fields["malformed"]), (8, 2, 1, 0))
        # By count the steady depth would be 8 (5 of 8 messages); by time 4:
        # 2.5 s of 3.8.
        self.assertEqual((fields["steady_median"], fields["steady_last"]), (4, 8))
        self.assertEqual((fields["depth_min"], fields["depth_max"]), (1, 256))
        self.assertEqual((fields["iops_last"], fields["lat_us_last"]), (2000, 4180))

    def test_held_inside_the_window(self):
        d, _ = changes(controller())
        # The start-up depth is before the window; the last value holds to
        # the trace's end, and the window cuts it.
        np.testing.assert_allclose(depthmsg.held(d, (0.2, 10.0), 4.0),
                                   [0, 0.3, 2.5, 0.1, 0.1, 0.1, 0.05, 0.65])
        np.testing.assert_allclose(depthmsg.held(d, (3.2, 3.5), 4.0)[-3:], [0.1, 0.05, 0.15])
        fields = depthmsg.summarize(d, 0, (3.2, 3.5), 4.0)
        self.assertEqual(fields["steady_median"], 8)

    def test_median_before_any_message_is_null(self):
        d, _ = changes(controller())
        self.assertIsNone(depthmsg.summarize(d, 0, (-2.0, -1.0), 4.0)["steady_median"])

    def test_only_malformed_lines(self):
        t = blk.Text().msg(0.5, "fiops depth 3 iops=520 lat=898us probe")
        d, malformed = changes(t)
        fields = depthmsg.summarize(d, malformed, (0.0, 1.0), 1.0)
        self.assertEqual((fields["changes"], fields["malformed"]), (0, 1))
        self.assertIsNone(fields["steady_median"])
        self.assertIsNone(fields["lat_us_last"])

    def test_plot_table_reaches_the_trace_end(self):
        d, _ = changes(controller())
        table = depthmsg.depth_table(d, 4.0)
        self.assertEqual(len(table), len(d) + 1)
        self.assertEqual(table.iloc[-1][["time", "depth", "steady", "probe"]].tolist(),
                         [4.0, 8, 8, 0])
        self.assertEqual(table["probe"].sum(), 2)


if __name__ == "__main__":
    unittest.main()
