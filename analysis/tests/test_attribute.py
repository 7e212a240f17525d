import unittest

from analysis import attribute
from analysis.tests import blk


def run(text, skips=0):
    events, info = text.events(skips)
    bios, stats = attribute.attribute(events)
    return bios, stats, info


def ms(values):
    return [round(v * 1000, 3) for v in values]


class AttributeTest(unittest.TestCase):
    def test_plain_completion_by_another_pid(self):
        bios, stats, _ = run(blk.Text().io(101, 100, 8, 0.001, 0.004))
        self.assertEqual(bios["pid"].tolist(), [101])      # C was pid 0, D pid 7
        self.assertEqual(ms(bios["latency"]), [3.0])
        self.assertEqual((stats["bios"], stats["completed"], stats["unmatched_completions"]),
                         (1, 1, 0))

    def test_back_merge_of_another_task(self):
        t = blk.Text()
        t.ev(0.001, 101, "Q", 100, 8).ev(0.001, 101, "G", 100, 8).ev(0.001, 101, "I", 100, 8)
        t.ev(0.002, 102, "Q", 108, 8).ev(0.002, 102, "M", 108, 8)
        t.ev(0.003, 7, "D", 100, 16).ev(0.010, 0, "C", 100, 16, comm="swapper/0")
        bios, stats, _ = run(t)
        self.assertEqual(bios["pid"].tolist(), [101, 102])
        self.assertTrue(bios["complete"].all())
        self.assertEqual(ms(bios["latency"]), [9.0, 8.0])
        self.assertEqual((stats["back_merges"], stats["completions"]), (1, 1))
        self.assertEqual(bios["commands"].tolist(), [1, 0])     # one command, 101's
        self.assertEqual(bios["command_sectors"].tolist(), [(16,), ()])   # of both bios' size

    def test_front_merge(self):
        t = blk.Text()
        t.ev(0.001, 101, "Q", 208, 8).ev(0.001, 101, "G", 208, 8).ev(0.001, 101, "I", 208, 8)
        t.ev(0.002, 101, "Q", 200, 8).ev(0.002, 101, "F", 200, 8)
        t.ev(0.003, 7, "D", 200, 16).ev(0.005, 0, "C", 200, 16)
        bios, stats, _ = run(t)
        self.assertEqual(bios["sector"].tolist(), [208, 200])
        self.assertEqual(ms(bios["c_time"]), [5.0, 5.0])
        self.assertEqual(stats["front_merges"], 1)
        # The command is the first-queued bio's, not the lowest sector's.
        self.assertEqual(bios["commands"].tolist(), [1, 0])

    def test_request_merges_into_request(self):
        """The kernel traces a request merged into another as M, with its range."""
        t = blk.Text()
        for pid, sector in ((101, 100), (102, 108)):
            for action in "QGI":
                t.ev(0.001, pid, action, sector, 8)
        t.ev(0.002, 7, "M", 108, 8, comm="kworker/0:1H")
        t.ev(0.003, 7, "D", 100, 16).ev(0.006, 0, "C", 100, 16)
        bios, stats, _ = run(t)
        self.assertTrue(bios["complete"].all())
        self.assertEqual(stats["back_merges"], 1)

    def test_split_counts_one_bio(self):
        t = blk.Text()
        t.ev(0.001, 105, "Q", 1000, 256).ev(0.001, 105, "X", 1000, 128)
        t.ev(0.002, 7, "D", 1000, 128).ev(0.002, 7, "D", 1128, 128)
        t.ev(0.004, 0, "C", 1000, 128)
        bios, _, _ = run(t)
        self.assertFalse(bios["complete"].any())            # half of it is still out
        t.ev(0.006, 0, "C", 1128, 128)
        bios, stats, _ = run(t)
        self.assertEqual(len(bios), 1)
        self.assertEqual(ms(bios["c_time"]), [6.0])
        self.assertEqual((stats["splits"], stats["completions"]), (1, 2))
        self.assertEqual(bios["commands"].tolist(), [2])        # split: two commands
        self.assertEqual(bios["command_sectors"].tolist(), [(128, 128)])

    def test_split_then_merge_of_the_parts_elsewhere(self):
        t = blk.Text()
        t.ev(0.001, 105, "Q", 1000, 16).ev(0.001, 105, "X", 1000, 8)
        t.ev(0.001, 106, "Q", 1016, 8).ev(0.001, 106, "M", 1016, 8)   # onto the back part
        t.ev(0.002, 7, "D", 1000, 8).ev(0.002, 7, "D", 1008, 16)
        t.ev(0.003, 0, "C", 1008, 16).ev(0.004, 0, "C", 1000, 8)
        bios, _, _ = run(t)
        self.assertEqual(bios["pid"].tolist(), [105, 106])
        self.assertEqual(ms(bios["c_time"]), [4.0, 3.0])

    def test_task_that_exits(self):
        """Ownership is fixed at Q: completions after the task is gone still count."""
        t = blk.Text()
        t.ev(0.100, 106, "Q", 300, 8).ev(0.100, 7, "D", 300, 8)
        t.ev(0.200, 106, "Q", 400, 8).ev(0.200, 7, "D", 400, 8)
        # pid 106 has exited; later completions run in other tasks' context.
        t.io(107, 500, 8, 0.300, 0.400)
        t.ev(0.500, 107, "C", 400, 8).ev(0.600, 0, "C", 300, 8)
        bios, stats, _ = run(t)
        mine = bios[bios["pid"] == 106]
        self.assertEqual(ms(mine["c_time"]), [600.0, 500.0])
        self.assertEqual(stats["completed"], 3)

    def test_lost_queue_event(self):
        """A completion whose Q was dropped is counted, never given to anyone."""
        t = blk.Text().io(101, 100, 8, 0.001, 0.002)
        t.ev(0.003, 7, "D", 900, 8).ev(0.004, 0, "C", 900, 8)
        bios, stats, info = run(t, skips=2)
        self.assertEqual(info["skips"], 2)
        self.assertEqual(len(bios), 1)
        self.assertEqual((stats["unmatched_completions"], stats["unmatched_dispatches"]), (1, 1))

    def test_requeue(self):
        t = blk.Text()
        t.ev(0.001, 101, "Q", 100, 8).ev(0.002, 7, "D", 100, 8).ev(0.003, 7, "R", 100, 8)
        t.ev(0.004, 7, "D", 100, 8).ev(0.009, 0, "C", 100, 8)
        bios, stats, _ = run(t)
        self.assertEqual(ms(bios["latency"]), [8.0])
        self.assertEqual((stats["requeues"], stats["dispatches"]), (1, 2))

    def test_partial_completion(self):
        t = blk.Text()
        t.ev(0.001, 101, "Q", 100, 8).ev(0.001, 102, "Q", 108, 8).ev(0.001, 102, "M", 108, 8)
        t.ev(0.002, 7, "D", 100, 16).ev(0.003, 0, "C", 100, 8).ev(0.005, 0, "C", 108, 8)
        bios, _, _ = run(t)
        self.assertEqual(ms(bios["c_time"]), [3.0, 5.0])
        # Two C events count as two commands, each sized as its C, each on the
        # first bio of what was left of the unit: 101's, then 102's.
        self.assertEqual(bios["command_sectors"].tolist(), [(8,), (8,)])
        self.assertEqual(bios["commands"].tolist(), [1, 1])

    def test_same_sector_twice_in_flight(self):
        t = blk.Text()
        t.ev(0.001, 101, "Q", 100, 8).ev(0.001, 7, "D", 100, 8)
        t.ev(0.002, 101, "Q", 100, 8).ev(0.002, 7, "D", 100, 8)
        t.ev(0.003, 0, "C", 100, 8).ev(0.004, 0, "C", 100, 8)
        bios, _, _ = run(t)
        self.assertEqual(ms(bios["latency"]), [2.0, 2.0])

    def test_flush_and_unfinished(self):
        t = blk.Text().ev(0.001, 101, "Q", 0, 0, rwbs="FWS").ev(0.001, 101, "Q", 100, 8)
        bios, stats, _ = run(t)
        self.assertEqual((stats["flushes"], stats["bios"], stats["incomplete"]), (1, 1, 1))
        self.assertTrue(bios["c_time"].isna().all())


if __name__ == "__main__":
    unittest.main()
