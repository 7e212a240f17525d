"""Judging a make stress run folder (analysis/stress.py)."""

import json
import os
import tempfile
import unittest

from analysis import stress


def fio_json(path, iops):
    with open(path, "w") as f:
        json.dump({"jobs": [{"read": {"iops": iops}, "write": {"iops": 0}}]}, f)


class StressJudgeTest(unittest.TestCase):
    def test_a_warning_at_boot_or_shutdown_fails_its_own_row(self):
        self.case("hostile", {"iterations": 10, "errors": 0})
        with open(os.path.join(self.run, "dmesg.txt"), "w") as f:
            f.write("[ 99.0] WARNING: CPU: 0 PID: 1 at block/elevator.c:1\n")
        hostile, outside = stress.judge(self.run, ["hostile"])
        self.assertTrue(hostile["passed"])
        self.assertFalse(outside["passed"])
        self.assertIn("| boot and shutdown | 1 | 0 | 1 | 0 | FAIL |", stress.table([outside]))

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def case(self, name, result, errors="", dmesg="", **files):
        d = os.path.join(self.run, "stress", name)
        os.makedirs(d)
        with open(os.path.join(d, "result"), "w") as f:
            f.write("".join("%s=%s\n" % kv for kv in result.items()))
        with open(os.path.join(d, "errors.txt"), "w") as f:
            f.write(errors)
        if dmesg is not None:
            with open(os.path.join(d, "dmesg.txt"), "w") as f:
                f.write(dmesg)
        for fname, iops in files.items():
            fio_json(os.path.join(d, fname + ".json"), iops)
        return d

    def test_clean_case_passes(self):
        self.case("churn", {"iterations": 1000, "errors": 0, "seconds": 90},
                  dmesg="[ 1.0] nvme nvme0: 1/0/0 default/read/poll queues\n")
        row, outside = stress.judge(self.run, ["churn"])
        self.assertTrue(row["passed"])
        self.assertTrue(outside["passed"])
        self.assertEqual((row["iterations"], row["errors"], row["dmesg_findings"]), (1000, 0, 0))

    def test_a_warning_fails_the_case_it_happened_in(self):
        self.case("churn", {"iterations": 10, "errors": 0},
                  dmesg="[ 5.1] WARNING: CPU: 1 PID: 77 at block/fiops-iosched.c:1326\n"
                        "[ 5.1] Call Trace:\n")
        self.case("hostile", {"iterations": 10, "errors": 0})
        churn, hostile, _ = stress.judge(self.run, ["churn", "hostile"])
        self.assertFalse(churn["passed"])
        self.assertEqual(churn["dmesg_findings"], 2)
        self.assertTrue(hostile["passed"])

    def test_lockdep_kasan_and_hung_tasks_are_findings(self):
        for line in ("WARNING: possible circular locking dependency detected",
                     "BUG: KASAN: use-after-free in fiops_dispatch_request+0x1",
                     "INFO: task fio:123 blocked for more than 60 seconds.",
                     "BUG: sleeping function called from invalid context"):
            self.assertTrue(stress.DMESG_FINDINGS.search(line), line)

    def test_guest_errors_fail(self):
        self.case("hostile", {"iterations": 300, "errors": 1},
                  errors="read_scale <- 003: exit 0, not EINVAL: \n")
        row, _ = stress.judge(self.run, ["hostile"])
        self.assertFalse(row["passed"])
        self.assertIn("read_scale <- 003", stress.table([row]))

    def test_unfinished_case_fails_and_console_gives_its_findings(self):
        d = os.path.join(self.run, "stress", "switch")
        os.makedirs(d)
        with open(os.path.join(self.run, "console.log"), "w") as f:
            f.write("fiops: stress switch on nvme0n1 (120)\n"
                    "[ 9.0] BUG: kernel NULL pointer dereference, address: 0\n")
        row, _ = stress.judge(self.run, ["switch"])
        self.assertFalse(row["passed"])
        self.assertEqual(row["dmesg_findings"], 1)
        self.assertIn("the case did not finish", row["error_lines"])

    def test_faults_needs_the_fallback_owner_and_an_equal_share(self):
        self.case("faults", {"iterations": 40, "errors": 0, "fallback": 350},
                  owner=240, fallback=250)
        row, _ = stress.judge(self.run, ["faults"])
        self.assertTrue(row["passed"], row)

    def test_faults_fails_when_requests_without_icq_jump_the_queue(self):
        self.case("faults", {"iterations": 40, "errors": 0, "fallback": 350},
                  owner=20, fallback=480)
        row, _ = stress.judge(self.run, ["faults"])
        self.assertFalse(row["passed"])
        self.assertIn("24.00x", row["error_lines"][0])

    def test_faults_fails_when_no_fault_happened(self):
        self.case("faults", {"iterations": 40, "errors": 0, "fallback": 0},
                  owner=250, fallback=250)
        row, _ = stress.judge(self.run, ["faults"])
        self.assertFalse(row["passed"])

    def test_unplug_needs_the_device_gone(self):
        self.case("unplug", {"iterations": 1, "errors": 0, "removed": 0, "fio_rc": 1})
        row, _ = stress.judge(self.run, ["unplug"])
        self.assertFalse(row["passed"])
        self.assertEqual(row["error_lines"], ["the device was not removed"])

    def job(self, d, name, iops, **extra):
        """A fio JSON with one job reading at iops, and extra read keys."""
        read = {"iops": iops, "total_ios": int(iops * 10), "lat_ns": {"max": 0}}
        read.update(extra.pop("read", {}))
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump({"jobs": [dict({"read": read, "write": {"iops": 0}}, **extra)]}, f)

    def classes(self, be, probe_max_ms, probe_ios=50, be_max_ms=120):
        d = self.case("classes", {"iterations": 2, "errors": 0})
        self.job(d, "rt", 500 - be)
        self.job(d, "be", be, read={"lat_ns": {"max": be_max_ms * 1e6}})
        self.job(d, "probe", 5, read={"total_ios": probe_ios,
                                      "lat_ns": {"max": probe_max_ms * 1e6}})
        return stress.judge(self.run, ["classes"])[0]

    def test_classes_passes_with_a_fair_share_and_aging(self):
        self.assertTrue(self.classes(be=240, probe_max_ms=260)["passed"])

    def test_classes_fails_when_rt_in_one_group_starves_another(self):
        row = self.classes(be=3, probe_max_ms=260)
        self.assertFalse(row["passed"])
        self.assertIn("0.01 of the device", row["error_lines"][0])

    def test_classes_fails_when_be_ran_only_after_rt(self):
        # Starved for the RT reader's run, then alone: IOPS equal, a read 17 s.
        row = self.classes(be=250, probe_max_ms=100, be_max_ms=17027)
        self.assertFalse(row["passed"])
        self.assertIn("waited 17027 ms for a read beside an RT reader", row["error_lines"][0])

    def test_classes_fails_when_be_waits_past_the_aging_bound(self):
        row = self.classes(be=250, probe_max_ms=15000)
        self.assertFalse(row["passed"])
        self.assertIn("waited 15000 ms", row["error_lines"][0])
        self.assertFalse(self.classes_again(probe_ios=0)["passed"])

    def classes_again(self, **kw):
        self.tearDown()
        self.setUp()
        return self.classes(be=250, probe_max_ms=100, **kw)

    def polled(self, both, stopped):
        d = self.case("polled", {"iterations": 1, "errors": 0, "both_seconds": 4,
                                 "both_reads": both * 4, "stopped_seconds": 5,
                                 "stopped_reads": stopped * 5})
        self.job(d, "polled", 200)
        return stress.judge(self.run, ["polled"])[0]

    def test_polled_passes_when_the_other_reader_goes_on(self):
        self.assertTrue(self.polled(both=500, stopped=490)["passed"])

    def test_polled_fails_when_a_task_that_stops_reaping_stalls_the_others(self):
        row = self.polled(both=500, stopped=12)
        self.assertFalse(row["passed"])
        self.assertIn("did 12 IOPS", row["error_lines"][0])

    def nowait(self, total_err, other):
        d = self.case("nowait", {"iterations": 1, "errors": 0, "device_seconds": 10,
                                 "device_reads": 5000})
        self.job(d, "nowait", 30000, total_err=total_err)
        self.job(d, "be", other)
        return stress.judge(self.run, ["nowait"])[0]

    def test_nowait_passes_with_eagain_and_a_kept_share(self):
        self.assertTrue(self.nowait(total_err=3000, other=250)["passed"])

    def test_fio_error_lines_before_the_json_are_skipped(self):
        d = self.case("nowait", {"iterations": 1, "errors": 0, "device_seconds": 10,
                                 "device_reads": 5000})
        self.job(d, "nowait", 250, total_err=900)
        path = os.path.join(d, "nowait.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write("fio: io_u error on file /dev/nvme0n1: Resource temporarily "
                    "unavailable: read offset=4096, buflen=4096\n" + text)
        self.job(d, "be", 250)
        self.assertTrue(stress.judge(self.run, ["nowait"])[0]["passed"])

    def test_nowait_fails_when_reads_pass_the_share(self):
        row = self.nowait(total_err=0, other=60)
        self.assertFalse(row["passed"])
        self.assertEqual(len(row["error_lines"]), 2)
        self.assertIn("passed its share", row["error_lines"][0])


if __name__ == "__main__":
    unittest.main()
