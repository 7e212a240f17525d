"""Group shares of a run (analysis/groups.py)."""

import unittest

import pandas as pd

from analysis import groups

FLAT = "# group: a 100\n# group: b 200\n# group: c 400\n[x]\n"
NESTED = "# group: p 200\n# group: p/c1 100\n# group: p/c2 100\n# group: s 200\n"


class GroupsTest(unittest.TestCase):
    def test_weights(self):
        self.assertEqual(groups.weights(FLAT), {"a": 100, "b": 200, "c": 400})
        self.assertEqual(groups.weights("[x]\n"), {})

    def test_expected_shares_follow_weights_among_busy_siblings(self):
        shares = groups.expected_shares(groups.weights(FLAT), {"a", "b", "c"})
        self.assertAlmostEqual(shares["a"], 1 / 7)
        self.assertAlmostEqual(shares["c"], 4 / 7)
        # A group without jobs takes no share.
        shares = groups.expected_shares(groups.weights(FLAT), {"a", "b"})
        self.assertAlmostEqual(shares["b"], 2 / 3)

    def test_nested_shares_multiply_down_the_path(self):
        shares = groups.expected_shares(groups.weights(NESTED), {"p/c1", "p/c2", "s"})
        self.assertEqual(set(shares), {"p/c1", "p/c2", "s"})
        self.assertAlmostEqual(shares["p/c1"], 0.25)
        self.assertAlmostEqual(shares["s"], 0.5)

    def test_table_and_jain(self):
        tasks = pd.DataFrame({"task": ["x1", "x2", "y", "other"],
                              "iops": [100.0, 110.0, 630.0, 5.0],
                              "cgroup": ["a", "a", "c", None]})
        rows = groups.table(tasks, FLAT)
        self.assertEqual([r["group"] for r in rows], ["a", "c"])
        self.assertEqual(rows[0]["tasks"], 2)
        self.assertAlmostEqual(rows[0]["share"], 0.25)
        self.assertAlmostEqual(rows[0]["expected"], 0.2)
        self.assertAlmostEqual(rows[0]["spread"], 1.1)
        jain = groups.jain(rows)
        self.assertLess(jain, 1.0)
        self.assertGreater(jain, 0.9)
        fair = [{"share": 0.2, "expected": 0.2}, {"share": 0.8, "expected": 0.8}]
        self.assertAlmostEqual(groups.jain(fair), 1.0)

    def test_no_groups_no_rows(self):
        tasks = pd.DataFrame({"task": ["x"], "iops": [1.0], "cgroup": [None]})
        self.assertEqual(groups.table(tasks, FLAT), [])
        self.assertIsNone(groups.jain([]))


if __name__ == "__main__":
    unittest.main()
