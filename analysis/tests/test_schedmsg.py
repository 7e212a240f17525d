import json
import os
import shutil
import tempfile
import unittest

import numpy as np
import pandas as pd

from analysis import analyze, metrics, schedmsg, trace
from analysis.tests import blk
from analysis.tests.test_metrics import fio_job, fio_json


def dispatches(text):
    d, malformed = schedmsg.parse(trace.parse_messages(text.text()))
    return d, malformed, text.events()[0]


def chain(pid, start, steps, t0=0.0, base=1000):
    """A task's consecutive dispatches as (time, sector, cost, vios, queued)."""
    rows, vios = [], start
    for i, (cost, queued) in enumerate(steps):
        vios += cost
        rows.append((t0 + i / 100, base + 8 * i, cost, vios, queued))
    return rows


def issued(t, pid, rows, min_vios=0):
    """Each row as a bio that FIOPS dispatches: Q, the message, D."""
    for time, sector, cost, vios, queued in rows:
        t.ev(time, pid, "Q", sector, 8)
        t.fiops(time, pid, sector, 8, cost, vios, min_vios, queued)
        t.ev(time, 7, "D", sector, 8, comm="kworker/0:1H")
    return t


class ParseTest(unittest.TestCase):
    def test_layouts_blkparse_prints(self):
        text = "\n".join([
            "259,0    1        0     1.234567890   215  m   N " + blk.dispatch_text(
                215, "be", 4, 1024, 52224, 51200, 7, 123456, 8),
            # a cgroup id before "m", wider fields, a trailing space
            "  8,16  11        0   120.000000001     3 1a,2  m   N " + blk.dispatch_text(
                216, "idle", 7, 0, 18446744073709551615, 5, 0, 9, 16) + " ",
            "259,0    0        0     1.3     0  m   N bfq128S dispatch",
            "259,0    0        0     1.4     0  m   N fiops dispatch pid=1 class=xx level=0",
            "@ 0 1 1.5 1 Q R 8 8 0 fio",
        ])
        messages = trace.parse_messages(text)
        self.assertEqual(messages["cpu"].tolist(), [1, 11, 0, 0])
        self.assertEqual(messages["time"].tolist(), [1.23456789, 120.000000001, 1.3, 1.4])
        d, malformed = schedmsg.parse(messages)
        self.assertEqual(malformed, 1)
        self.assertEqual(d["pid"].tolist(), [215, 216])
        self.assertEqual(d["class"].tolist(), ["be", "idle"])
        self.assertEqual(d.loc[1, "vios"], np.uint64(2 ** 64 - 1))
        self.assertEqual(d.loc[0, "sector"], 123456)
        self.assertEqual(d.loc[1, "nr_sectors"], 16)

    def test_no_messages(self):
        d, malformed = schedmsg.parse(trace.parse_messages("@ 0 1 1.5 1 Q R 8 8 0 fio\n"))
        self.assertEqual((len(d), malformed), (0, 0))
        self.assertIsNone(schedmsg.summarize(d, malformed, blk.Text().events()[0]))


class ChecksTest(unittest.TestCase):
    def test_consistent_run(self):
        t = blk.Text()
        issued(t, 101, chain(101, 0, [(1024, 3), (1024, 2), (1024, 0)]))
        # 102 empties its queue, then re-enters at a higher min_vios: a jump forward.
        issued(t, 102, chain(102, 0, [(1024, 0)], base=5000))
        issued(t, 102, chain(102, 4096, [(1024, 1), (0, 1)], t0=0.5, base=6000))
        d, malformed, events = dispatches(t)
        fields = schedmsg.summarize(d, malformed, events)
        self.assertEqual(fields["messages"], 6)
        self.assertEqual((fields["uncharged"], fields["tasks"], fields["reentries"]), (1, 2, 1))
        self.assertEqual((fields["matched_issues"], fields["unmatched_messages"],
                          fields["issues_without_message"]), (6, 0, 0))
        self.assertEqual(fields["charge_violations"], 0)
        self.assertTrue(fields["charges_consistent"])

    def test_message_cut_by_the_end_of_the_trace(self):
        """A dispatch logged after the last D lost its D to blktrace
        stopping; one logged before it and never issued is a real miss."""
        t = blk.Text()
        issued(t, 101, chain(101, 0, [(1024, 3), (1024, 2)]))
        t.fiops(0.05, 101, 800, 8, 1024, 3072, 0, 1)        # no D, before the last D
        issued(t, 101, chain(101, 3072, [(1024, 1)], t0=0.1, base=900))
        t.fiops(0.2, 101, 1000, 8, 1024, 4096, 0, 0)        # no D, after the last D
        d, malformed, events = dispatches(t)
        fields = schedmsg.summarize(d, malformed, events)
        self.assertEqual((fields["matched_issues"], fields["unmatched_messages"],
                          fields["cut_at_trace_end"]), (3, 1, 1))
        self.assertFalse(fields["charges_consistent"])

    def test_only_the_end_of_the_trace_cut_is_consistent(self):
        t = blk.Text()
        issued(t, 101, chain(101, 0, [(1024, 3), (1024, 2)]))
        t.fiops(0.2, 101, 1000, 8, 1024, 3072, 0, 1)
        d, malformed, events = dispatches(t)
        fields = schedmsg.summarize(d, malformed, events)
        self.assertEqual((fields["unmatched_messages"], fields["cut_at_trace_end"]), (0, 1))
        self.assertTrue(fields["charges_consistent"])

    def test_violations(self):
        t = blk.Text()
        # Backwards after leaving the tree, and forward while still queued.
        issued(t, 101, chain(101, 8192, [(1024, 0)]))
        issued(t, 101, chain(101, 4096, [(1024, 2)], t0=0.1, base=2000))
        issued(t, 101, chain(101, 9000, [(1024, 1)], t0=0.2, base=3000))
        d, malformed, events = dispatches(t)
        fields = schedmsg.summarize(d, malformed, events)
        self.assertEqual(fields["charge_violations"], 2)
        first = fields["violation_examples"][0]
        self.assertEqual((first["previous_vios"], first["cost"], first["vios"], first["gap"]),
                         (9216, 1024, 5120, -5120))
        self.assertEqual(fields["violation_examples"][1]["gap"], 10024 - 6144)
        self.assertFalse(fields["charges_consistent"])

    def test_u64_wraps_as_in_the_kernel(self):
        t = blk.Text()
        top = 2 ** 64 - 512
        t.fiops(0.1, 101, 100, 8, 1024, top, 0, 2).ev(0.1, 7, "D", 100, 8)
        t.fiops(0.2, 101, 200, 8, 1024, 512, 0, 1).ev(0.2, 7, "D", 200, 8)
        d, malformed, events = dispatches(t)
        self.assertEqual(len(schedmsg.charge_check(d)[0]), 0)

    def test_matching_issues(self):
        t = blk.Text()
        t.fiops(0.1, 101, 100, 8, 1024, 1024, 0, 1)
        t.ev(0.1, 7, "D", 100, 8)
        t.ev(0.2, 7, "R", 100, 8).ev(0.3, 7, "D", 100, 8)   # requeued: no message
        t.fiops(0.4, 101, 200, 8, 1024, 2048, 0, 1)         # no D: lost, or never issued
        t.fiops(0.5, 101, 300, 8, 1024, 3072, 0, 0)
        t.ev(0.5, 7, "D", 300, 16)                          # another size
        t.ev(0.6, 7, "D", 0, 0, rwbs="FN")                  # a flush: no data
        t.ev(0.05, 7, "D", 200, 8)                          # before its message
        d, _, events = dispatches(t)
        matched, orphans = schedmsg.match_issues(d, events)
        self.assertEqual(matched.tolist(), [True, False, False])
        self.assertEqual(orphans, 3)

    def test_same_sector_again_later(self):
        t = blk.Text()
        for i, when in enumerate((0.1, 0.3)):
            t.fiops(when, 101, 100, 8, 1024, 1024 * (i + 1), 0, 1)
        t.ev(0.2, 7, "D", 100, 8).ev(0.4, 7, "D", 100, 8)
        d, _, events = dispatches(t)
        matched, orphans = schedmsg.match_issues(d, events)
        self.assertEqual((matched.tolist(), orphans), ([True, True], 0))


class TaskColumnsTest(unittest.TestCase):
    def test_counts_inside_each_window(self):
        t = blk.Text()
        issued(t, 101, chain(101, 0, [(1024, 1)] * 4))             # 0.00 .. 0.03
        issued(t, 50, chain(50, 0, [(3072, 1)] * 2, base=9000))    # a flusher
        d, _, events = dispatches(t)
        table = pd.DataFrame({"task": ["a", "b", metrics.OTHER], "pid": [101, 102, None],
                              "window_start": [0.01, 0.0, 0.0], "window_s": [1.0, 1.0, 1.0]})
        counts, costs = schedmsg.task_columns(d, table, metrics.OTHER)
        self.assertEqual((counts, costs), ([3, 0, 2], [3072, 0, 6144]))
        none, _ = schedmsg.task_columns(d.iloc[:0], table, metrics.OTHER)
        self.assertTrue(all(np.isnan(none)))

    def test_vios_table_labels(self):
        t = blk.Text()
        issued(t, 50, chain(50, 0, [(1024, 1)], base=9000))
        t.lines[0] = t.lines[0].replace(" fio", " kworker/u4:1")
        issued(t, 101, chain(101, 0, [(1024, 1)]))
        t.fiops(0.9, 77, 1, 8, 1024, 1024, 0, 0)
        d, _, events = dispatches(t)
        tasks = analyze.job_tasks(fio_json(fio_job("a", 1), fio_job("b", 1)), [101, 102], {})
        data = schedmsg.vios_table(d, tasks, events)
        by_pid = data.drop_duplicates("pid").set_index("pid")
        self.assertEqual(by_pid["label"].to_dict(),
                         {50: "kworker/u4:1 (50)", 101: "a (101)", 77: "pid (77)"})
        self.assertEqual(by_pid["series"].to_dict(), {101: 0, 50: 1, 77: 2})
        self.assertEqual(by_pid.loc[101, "lead"], 1024)


if __name__ == "__main__":
    unittest.main()


def run_folder(folder, scheduler):
    """A run folder as bench leaves it, with a binary trace for blkparse:
    jobs a and b (pids 101, 102) every 100 ms and 200 ms for 3.5 s, each
    request logged by FIOPS, a flusher (pid 50) whose two bios make one
    command, and FIOPS's depth: a probe, 2 from 0.002 s, a trial of 3 at
    1 s, and 4 from 2.6 s to the trace's end."""
    events = [(0, 101, "comm", "fio"), (0, 102, "comm", "fio"), (0, 50, "comm", "kworker/u4:1")]
    for pid, period, base in ((101, 0.1, 1000), (102, 0.2, 50000)):
        count = int(3.5 / period)
        for i in range(count):
            ns, sector = int((i * period + pid % 2 * 0.01) * 1e9), base + 8 * i
            text = blk.dispatch_text(pid, "be", 4, 1024, 1024 * (i + 1), 1024 * i, count - i - 1,
                                     sector, 8)
            events += [(ns, pid, "Q", sector, 8), (ns + 1, 7, "msg", text),
                       (ns + 2, 7, "D", sector, 8), (ns + 2000000, 0, "C", sector, 8)]
    events += [(1500000000, 50, "Q", 90000, 8), (1500000001, 50, "Q", 90008, 8),
               (1500000002, 50, "M", 90008, 8),
               (1500000003, 7, "msg", blk.dispatch_text(50, "be", 4, 3072, 3072, 0, 0, 90000, 16)),
               (1500000004, 7, "D", 90000, 16), (1500000005, 0, "C", 90000, 16)]
    events += [(ns, 0, "msg", blk.depth_text(*values)) for ns, values in (
        (1000000, (1, 256, 0, 0, True)), (2000000, (2, 2, 10, 300)),
        (1000000000, (3, 2, 10, 300)), (1050000000, (2, 2, 10, 300)),
        (2600000000, (4, 4, 12, 280)))]
    step = os.path.join(folder, "guest", "main")
    os.makedirs(step)
    with open(os.path.join(step, "nvme0n1.blktrace.0"), "wb") as f:
        f.write(blk.binary(sorted(events, key=lambda e: e[0])))
    with open(os.path.join(step, "blktrace.log"), "w") as f:
        f.write("  Total:   99 events (dropped 0),   1 KiB data\n")
    with open(os.path.join(step, "pids.txt"), "w") as f:
        f.write("101\n102\n")
    with open(os.path.join(step, "fio.json"), "w") as f:
        json.dump(fio_json(fio_job("a", 40), fio_job("b", 20)), f)
    with open(os.path.join(folder, "workload.fio"), "w") as f:
        f.write("# two readers\n# expect: a=2 b=1\n# expect[mq-deadline]: a=1 b=1\n"
                "# expect[none]: none\n[a]\n[b]\n")
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump({"scheduler": scheduler, "status": "ok", "params": {"SCHED": scheduler, "IOPS": 100}}, f)
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump({"scheduler": scheduler, "workload": "two"}, f)


@unittest.skipUnless(shutil.which("blkparse"), "blkparse is not installed")
class RunTest(unittest.TestCase):
    """analyze.compute and write on a run folder, through the real blkparse."""

    def analyse(self, scheduler):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        run_folder(tmp.name, scheduler)
        fields, table, series = analyze.compute(tmp.name)
        analyze.write(tmp.name, "main", fields, table, series)
        with open(os.path.join(tmp.name, "summary.json")) as f:
            summary = json.load(f)
        return tmp.name, summary, pd.read_csv(os.path.join(tmp.name, "tasks.csv"))

    def test_fiops_fields_and_plot(self):
        folder, summary, tasks = self.analyse("fiops")
        fiops = summary["fiops_trace"]
        self.assertEqual((fiops["messages"], fiops["matched_issues"], fiops["tasks"]),
                         (35 + 17 + 1, 35 + 17 + 1, 3))
        self.assertEqual((fiops["issues_without_message"], fiops["charge_violations"]), (0, 0))
        self.assertTrue(fiops["charges_consistent"])
        rows = tasks.set_index("task")
        # a's window is 2 s (fio's runtime) ending at its last completion.
        self.assertEqual(rows.loc["a", "fiops_dispatches"], rows.loc["a", "ios"])
        self.assertEqual(rows.loc["a", "fiops_cost"], 1024 * rows.loc["a", "ios"])
        self.assertEqual(rows.loc["other", ["ios", "requests", "fiops_dispatches",
                                            "fiops_cost"]].tolist(), [2, 1, 1, 3072])
        self.assertEqual(summary["policy_source"], "expect: a=2 b=1")
        self.assertEqual(summary["jain_index_policy"], summary["jain_index"])
        if shutil.which("gnuplot"):
            with open(os.path.join(folder, "vios.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            data = pd.read_csv(os.path.join(folder, "vios.dat"), sep="\t")
            self.assertEqual(sorted(data["label"].unique()),
                             ["a (101)", "b (102)", "kworker/u4:1 (50)"])
            with open(os.path.join(folder, "depth.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_fiops_depth(self):
        _, summary, _ = self.analyse("fiops")
        depth = summary["fiops_depth"]
        self.assertEqual((depth["changes"], depth["probes"], depth["trials"],
                          depth["malformed"]), (5, 1, 1, 0))
        # The measured window is 1 s to 3 s: 2 holds for 1.6 s of it (the
        # trial does not change the steady depth), 4 for the last 0.4 s.
        self.assertEqual((depth["steady_median"], depth["steady_last"], depth["depth_max"]),
                         (2, 4, 4))

    def test_own_policies(self):
        _, summary, tasks = self.analyse("mq-deadline")
        self.assertEqual(summary["policy_source"], "expect[mq-deadline]: a=1 b=1")
        self.assertEqual(summary["expect_policy"], {"a": 1.0, "b": 1.0})
        self.assertEqual(summary["expected_policy"], {"a": 0.5, "b": 0.5})
        self.assertEqual(summary["expect"], {"a": 2.0, "b": 1.0})
        self.assertNotEqual(summary["jain_index_policy"], summary["jain_index"])
        self.assertEqual(tasks["expected_policy"].tolist()[:2], [0.5, 0.5])
        _, summary, tasks = self.analyse("none")
        self.assertEqual((summary["policy_source"], summary["expect_policy"]),
                         ("expect[none]: none", None))
        self.assertEqual(summary["expected_policy"], {})
        self.assertIsNone(summary["jain_index_policy"])
        self.assertTrue(tasks["expected_policy"].isna().all())

    def test_no_messages(self):
        folder, summary, tasks = self.analyse("fiops")
        step = os.path.join(folder, "guest", "main", "nvme0n1.blktrace.0")
        with open(step, "rb") as f:
            data = f.read()
        # The same trace without its message events.
        kept, offset = [], 0
        while offset < len(data):
            pdu = blk.EVENT.unpack_from(data, offset)[-1]
            event = data[offset:offset + blk.EVENT.size + pdu]
            if blk.EVENT.unpack_from(event)[5] != blk.MESSAGE | blk.NOTIFY << 16:
                kept.append(event)
            offset += len(event)
        with open(step, "wb") as f:
            f.write(b"".join(kept))
        for name in ("vios", "depth"):
            for suffix in (".png", ".dat", ".gp"):
                if os.path.exists(os.path.join(folder, name + suffix)):
                    os.remove(os.path.join(folder, name + suffix))
        fields, table, series = analyze.compute(folder)
        analyze.write(folder, "main", fields, table, series)
        self.assertIsNone(fields["fiops_trace"])
        self.assertIsNone(fields["fiops_depth"])
        self.assertEqual(fields["trace"]["messages"], 0)
        self.assertTrue(table["fiops_dispatches"].isna().all())
        self.assertFalse(os.path.exists(os.path.join(folder, "vios.png")))
        self.assertFalse(os.path.exists(os.path.join(folder, "depth.png")))
