"""make overhead PROFILE=1's tables (analysis/profile.py)."""

import os
import tempfile
import unittest

import pandas as pd

from analysis import profile


class ProfileTest(unittest.TestCase):
    def test_system_map_names_the_enclosing_function(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "System.map")
            with open(path, "w") as f:
                f.write("ffffffff81000000 T _text\n"
                        "ffffffff81000100 t fiops_dispatch_request\n"
                        "ffffffff81000180 D some_data\n"
                        "ffffffff81000200 W weak_fn\n")
            m = profile.SystemMap(path)
            self.assertEqual(m.name(0xffffffff81000150), "fiops_dispatch_request")
            self.assertEqual(m.name(0xffffffff81000190), "fiops_dispatch_request")
            self.assertEqual(m.name(0xffffffff81000200), "weak_fn")
            self.assertEqual(m.name(0xffffffff80000000), "kernel:?")

    def test_point_table_ranks_by_cost_over_none(self):
        rows = []
        for rnd in (1, 2):
            for sched, sym, per_kreq in (("none", "blk_mq_submit_bio", 2.0),
                                         ("fiops", "blk_mq_submit_bio", 2.2),
                                         ("fiops", "fiops_dispatch_request", 1.6),
                                         ("none", "user:get_io_u", 4.0),
                                         ("fiops", "user:get_io_u", 3.0)):
                rows.append({"jobs": 16, "qd": 64, "round": rnd, "scheduler": sched,
                             "symbol": sym, "per_kreq": per_kreq})
        lines = profile.point_table(pd.DataFrame(rows), ["none", "fiops"])
        self.assertEqual(lines[0], "| symbol | none | fiops |")
        self.assertEqual(lines[2], "| all | 6.0 | 6.8 |")       # mean of two rounds
        self.assertEqual(lines[3], "| fiops_dispatch_request | 0.00 | 1.60 |")
        self.assertEqual(lines[4], "| blk_mq_submit_bio | 2.00 | 2.20 |")
        self.assertEqual(lines[5], "| user:get_io_u | 4.00 | 3.00 |")


if __name__ == "__main__":
    unittest.main()
