"""make overhead's numbers (analysis/overhead.py)."""

import json
import os
import tempfile
import unittest

from analysis import overhead


def save_point(boot, name, iops, ios, busy, rc=0):
    d = os.path.join(boot, "overhead", name)
    os.makedirs(d)
    with open(os.path.join(d, "fio.rc"), "w") as f:
        f.write("%d\n" % rc)
    with open(os.path.join(d, "fio.json"), "w") as f:
        json.dump({"jobs": [{"read": {"iops": iops, "total_ios": ios}}]}, f)
    # user nice system idle iowait irq softirq steal guest guest_nice
    with open(os.path.join(d, "stat-before.txt"), "w") as f:
        f.write("cpu  100 0 100 500 7 0 0 0 0 0\n")
    with open(os.path.join(d, "stat-after.txt"), "w") as f:
        f.write("cpu  %d 0 100 900 9 0 0 0 0 0\n" % (100 + busy))


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


if __name__ == "__main__":
    unittest.main()
