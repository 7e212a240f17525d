"""analysis/notes.py: cgroup-tagged message events made readable."""

import os
import subprocess
import tempfile
import unittest

from analysis import notes

ISSUE = (0x1 << 16) | 2         # any non-notify action


def record(action, payload, magic=notes.MAGIC | 7, time=1000):
    return notes.RECORD.pack(magic, 0, time, 0, 0, action, 0, 0x10300000, 0, 0,
                             len(payload)) + payload


def message(text, tagged):
    action = (notes.BLK_TC_NOTIFY << notes.BLK_TC_SHIFT) | notes.BLK_TN_MESSAGE
    if tagged:
        return record(action | notes.TA_CGROUP, b"\1" + b"\0" * 7 + text)
    return record(action, text)


class UntagTest(unittest.TestCase):
    def test_tagged_message_becomes_plain(self):
        data = record(ISSUE, b"") + message(b"fiops dispatch pid=1", True)
        out, count = notes.untag_records(data)
        self.assertEqual(count, 1)
        self.assertEqual(out, record(ISSUE, b"") + message(b"fiops dispatch pid=1", False))

    def test_everything_else_is_copied_byte_for_byte(self):
        data = record(ISSUE, b"") + message(b"plain", False) + record(ISSUE, b"abcd")
        self.assertEqual(notes.untag_records(data), (data, 0))

    def test_bad_magic_stops_the_rewrite_and_keeps_the_rest(self):
        tail = record(ISSUE, b"", magic=0x12345678) + message(b"x", True)
        data = message(b"a", True) + tail
        out, count = notes.untag_records(data)
        self.assertEqual(count, 1)
        self.assertTrue(out.endswith(tail))

    def test_blkparse_prints_the_untagged_message(self):
        """The reason for the module: blkparse 1.2 drops tagged messages."""
        data = record((1 << 16) | 1, b"", time=1) + message(b"fiops dispatch pid=7", True)
        with tempfile.TemporaryDirectory() as src, tempfile.TemporaryDirectory() as dst:
            with open(os.path.join(src, "nvme0n1.blktrace.0"), "wb") as f:
                f.write(data)
            self.assertEqual(notes.untag(src, "nvme0n1", dst), 1)
            out = subprocess.run(["blkparse", "-D", dst, "-i", "nvme0n1"],
                                 capture_output=True, text=True, check=True).stdout
        self.assertIn("fiops dispatch pid=7", out)


if __name__ == "__main__":
    unittest.main()
