import os
import shutil
import tempfile
import unittest

from analysis import attribute, trace
from analysis.tests import blk


class ParseTest(unittest.TestCase):
    TEXT = """@ 1 1 0.000000000 128 Q R 657864 8 0 fio
@ 1 2 0.000208470 128 G R 657864 8 0 fio
259,1    0        0     1.000000000     0  m   N bfq128S dispatch
@ 0 3 0.007471570 1 C R 657864 8 0 kworker/u4:2 (flush)
@ 0 4 0.5 1 C R nosector 8 0 x
CPU0 (nvme0n1):
 Reads Queued:        6080,    24320KiB	 Writes Queued:           0,        0KiB
Events (nvme0n1): 60597 entries
Skips: 3 forward (3 -   0.0%)
"""

    def test_events_and_counts(self):
        events, info = trace.parse(self.TEXT)
        self.assertEqual(list(events["action"]), ["Q", "G", "C"])
        self.assertEqual(events["sector"].tolist(), [657864] * 3)
        self.assertEqual(events.loc[0, "pid"], 128)
        self.assertAlmostEqual(events.loc[2, "time"], 0.00747157)
        self.assertEqual(events.loc[2, "comm"], "kworker/u4:2 (flush)")
        self.assertEqual(info, {"skips": 3, "entries": 60597, "bad_lines": 1})

    def test_messages(self):
        messages = trace.parse_messages(self.TEXT)
        self.assertEqual(messages.to_dict("records"),
                         [{"cpu": 0, "time": 1.0, "pid": 0, "text": "bfq128S dispatch"}])
        self.assertEqual(list(trace.parse_messages("").columns), trace.MESSAGE_COLUMNS)

    def test_empty(self):
        events, info = trace.parse("")
        self.assertEqual(len(events), 0)
        self.assertEqual(list(events.columns), trace.COLUMNS)
        self.assertIsNone(info["skips"])

    def test_blktrace_log(self):
        text = ("=== nvme0n1 ===\n  CPU  0:               273669 events,    12829 KiB data\n"
                "  Total:                332567 events (dropped 5),    15590 KiB data\n")
        self.assertEqual(trace.parse_log(text), {"log_events": 332567, "dropped": 5})
        self.assertEqual(trace.parse_log(""), {"log_events": None, "dropped": None})


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class BlkparseTest(unittest.TestCase):
    """trace.FORMAT through the real blkparse, on a binary trace written here."""

    def test_round_trip(self):
        events = [(0, 101, "comm", "fio"), (0, 7, "comm", "kworker/0:1H"),
                  (1000, 101, "Q", 100, 8), (2000, 101, "G", 100, 8),
                  (3000, 101, "Q", 108, 16), (4000, 101, "M", 108, 16),
                  (4500, 7, "msg", blk.dispatch_text(101, "be", 4, 1024, 2048, 1024, 0, 100, 24)),
                  (5000, 7, "D", 100, 24), (9000, 7, "C", 100, 24)]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "nvme0n1.blktrace.0"), "wb") as f:
                f.write(blk.binary(events))
            with open(os.path.join(d, "blktrace.log"), "w") as f:
                f.write("  Total:   6 events (dropped 0),   1 KiB data\n")
            self.assertEqual(trace.devices(d), ["nvme0n1"])
            parsed, info, messages = trace.load(d)
        self.assertEqual(list(parsed["action"]), ["Q", "G", "Q", "M", "D", "C"])
        self.assertEqual(parsed["sectors"].tolist(), [8, 8, 16, 16, 24, 24])
        self.assertEqual(parsed["comm"].tolist()[0], "fio")
        self.assertEqual(parsed["pid"].tolist()[-1], 7)
        self.assertAlmostEqual(parsed["time"].iloc[-1], 8e-6)     # from the first event
        self.assertEqual((info["skips"], info["dropped"], info["bad_lines"]), (0, 0, 0))
        # The message comes out of the same blkparse run, in its default layout.
        self.assertEqual(info["messages"], 1)
        self.assertAlmostEqual(messages["time"].item(), 3.5e-6)
        self.assertTrue(messages["text"].item().startswith("fiops dispatch pid=101 "))
        bios, stats = attribute.attribute(parsed)
        self.assertEqual(bios["pid"].tolist(), [101, 101])
        self.assertTrue(bios["complete"].all())
        self.assertEqual(stats["back_merges"], 1)
        self.assertEqual([round(x * 1e9) for x in bios["latency"]], [8000, 6000])


if __name__ == "__main__":
    unittest.main()
