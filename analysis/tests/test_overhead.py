"""make overhead's numbers (analysis/overhead.py)."""

import json
import os
import tempfile
import unittest

from analysis import overhead


def save_point(boot, name, iops, ios, busy, rc=0, switches=None):
    d = os.path.join(boot, "overhead", name)
    os.makedirs(d)
    with open(os.path.join(d, "fio.rc"), "w") as f:
        f.write("%d\n" % rc)
    with open(os.path.join(d, "fio.json"), "w") as f:
        json.dump({"jobs": [{"read": {"iops": iops, "total_ios": ios}}]}, f)
    # user nice system idle iowait irq softirq steal guest guest_nice
    # Folders from before ctxt was recorded have the cpu line only.
    with open(os.path.join(d, "stat-before.txt"), "w") as f:
        f.write("cpu  100 0 100 500 7 0 0 0 0 0\n")
        if switches is not None:
            f.write("ctxt 5000\n")
    with open(os.path.join(d, "stat-after.txt"), "w") as f:
        f.write("cpu  %d 0 100 900 9 0 0 0 0 0\n" % (100 + busy))
        if switches is not None:
            f.write("ctxt %d\n" % (5000 + switches))


class OverheadTest(unittest.TestCase):
    def test_ratios_to_none_in_the_same_round(self):
        with tempfile.TemporaryDirectory() as top:
            boot = os.path.join(top, "hwq1")
            lines = []
            for rnd, (none, fiops) in enumerate(((1000, 900), (2000, 1900)), 1):
                for sched, iops in (("none", none), ("fiops", fiops)):
                    name = "j16-qd64-r%d-%s" % (rnd, sched)
                    # 3 s of I/O; busy ticks make the CPU per request.
                    save_point(boot, name, iops, 3 * iops, 3 * iops // 100)
                    lines.append("%s %s 16 64 3\n" % (name, sched))
            save_point(boot, "j16-qd64-r3-none", 0, 0, 0, rc=1)
            lines.append("j16-qd64-r3-none none 16 64 3\n")
            with open(os.path.join(boot, "overhead", "plan"), "w") as f:
                f.writelines(lines)
            runs = overhead.table(top)
            self.assertEqual(len(runs), 4)        # the failed point is left out
            # 30 ticks of 10 ms over 3000 requests: 100 us each.
            self.assertAlmostEqual(runs["cpu_us"].iloc[0], 100.0)
            s = overhead.summary(runs).set_index("scheduler")
            self.assertAlmostEqual(s.loc["fiops", "iops_ratio"], (0.9 + 0.95) / 2)
            self.assertEqual(s.loc["fiops", "n"], 2)
            self.assertAlmostEqual(s.loc["none", "iops_ratio"], 1.0)
            text = overhead.report(top)
            self.assertIn("| 16 x 64 | 1500 | 100.0 | 0.93 ± ", text)
            self.assertIn("| 16 x 64 | - | - |", text)     # no ctxt recorded

    def test_clocks_and_context_switches(self):
        with tempfile.TemporaryDirectory() as top:
            for boot, fiops_switches in (("hwq1", 6000), ("icount-hwq1", 300)):
                lines = []
                for sched, iops, switches in (("none", 1000, 150), ("fiops", 800,
                                                                    fiops_switches)):
                    name = "j1-qd1-r1-%s" % sched
                    save_point(os.path.join(top, boot), name, iops, 3 * iops, 30,
                               switches=switches)
                    lines.append("%s %s 1 1 3\n" % (name, sched))
                with open(os.path.join(top, boot, "overhead", "plan"), "w") as f:
                    f.writelines(lines)
            os.makedirs(os.path.join(top, "hwq-notes"))     # not a boot folder
            s = overhead.summary(overhead.table(top)).set_index(["clock", "scheduler"])
            # Each clock's fiops is compared with none of the same boot.
            self.assertAlmostEqual(s.loc[("icount", "fiops"), "iops_ratio"], 0.8)
            self.assertAlmostEqual(s.loc[("wall", "fiops"), "switches"], 2.5)
            self.assertAlmostEqual(s.loc[("icount", "none"), "switches"], 0.05)
            text = overhead.report(top)
            self.assertIn("## wall clock, nr_hw_queues 1", text)
            self.assertIn("## icount clock, nr_hw_queues 1", text)
            self.assertIn("| 1 x 1 | 0.05 | 0.12 |", text)

    def test_fiops_over_the_others_round_by_round(self):
        with tempfile.TemporaryDirectory() as top:
            boot = os.path.join(top, "icount-hwq1")
            lines = []
            # fiops/mq-deadline is 0.9 in both rounds though none moves.
            for rnd, scale in ((1, 1), (2, 2)):
                for sched, iops in (("none", 1000), ("mq-deadline", 800), ("fiops", 720)):
                    name = "j16-qd64-r%d-%s" % (rnd, sched)
                    save_point(boot, name, iops * scale, 3 * iops * scale, 30)
                    lines.append("%s %s 16 64 3\n" % (name, sched))
            with open(os.path.join(boot, "overhead", "plan"), "w") as f:
                f.writelines(lines)
            text = overhead.report(top)
            self.assertIn("| jobs x QD | over mq-deadline IOPS | CPU |", text)
            self.assertIn("| 16 x 64 | 0.90 ± 0.00 | 1.11 ± 0.00 |", text)

    def test_lifted_from_the_debugfs_depth_line(self):
        with tempfile.TemporaryDirectory() as top:
            boot = os.path.join(top, "icount-hwq1")
            lines = []
            for rnd, state in ((1, "1"), (2, "0"), (3, None)):
                for sched in ("none", "fiops"):
                    name = "j16-qd8-r%d-%s" % (rnd, sched)
                    save_point(boot, name, 1000, 3000, 30)
                    lines.append("%s %s 16 8 3\n" % (name, sched))
                if state is not None:
                    with open(os.path.join(boot, "overhead", name, "sched_debugfs.txt"),
                              "w") as f:
                        f.write("== async_depth\n48\n== depth\ndepth=32 steady=32 climb=0 "
                                "inflight=0 held=0 iops_max=70000 lat_min_us=2 probe=0 "
                                "lifted=%s\n" % state)
            with open(os.path.join(boot, "overhead", "plan"), "w") as f:
                f.writelines(lines)
            runs = overhead.table(top).set_index(["round", "scheduler"])
            self.assertEqual(runs.loc[(1, "fiops"), "lifted"], 1)
            self.assertEqual(runs.loc[(2, "fiops"), "lifted"], 0)
            # No file, or a scheduler without the line: unknown, not "not lifted".
            self.assertNotEqual(runs.loc[(3, "fiops"), "lifted"], runs.loc[(3, "fiops"), "lifted"])
            text = overhead.report(top)
            self.assertIn("(debugfs depth, share of rounds): 16 x 8: 50%.", text)


if __name__ == "__main__":
    unittest.main()
