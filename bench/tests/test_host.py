"""Host tests of the orchestrator: no guest is booted."""

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import bench  # noqa: E402
import calibrate_size  # noqa: E402
import compare  # noqa: E402
import jobfile  # noqa: E402
from analysis import devcost, files  # noqa: E402  (bench put the top folder on the path)
import kunit  # noqa: E402
import overhead  # noqa: E402
import qemu  # noqa: E402
import stress  # noqa: E402
import params  # noqa: E402
import summary  # noqa: E402


# device_cost_model's device keys for the default, file-backed device.
ON_FILE = {"device": "nvme", "latency_us": None}


class ParamsTest(unittest.TestCase):
    def load(self, **env):
        return params.load({k: str(v) for k, v in env.items()})

    def test_defaults(self):
        p, notes = self.load()
        self.assertEqual(p["SCHED"], "none")
        self.assertEqual(p["IOPS"], 1000)
        self.assertEqual(p["DEPTH"], 4)
        self.assertIsNone(p["NR_REQUESTS"])
        self.assertTrue(p["JOBFILE"].endswith("workloads/equal-readers.fio"))
        self.assertEqual(notes, [])

    def test_iocost_is_a_variant_but_not_a_default(self):
        p, _ = self.load(SCHED="fiops iocost")
        self.assertEqual([v["scheduler"] for v in p["VARIANTS"]], ["fiops", "iocost"])
        self.assertNotIn("iocost", params.SCHEDULERS)

    def test_a_workload_with_bad_groups_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.fio")
            with open(path, "w") as f:
                f.write("# group: a 5000\n[x]\ncgroup=a\n")
            with self.assertRaisesRegex(params.ParamError, "WORKLOAD=.*outside 1..1000"):
                self.load(WORKLOAD=path)

    def test_2012_names_map_with_a_note(self):
        for old, new in (("noop", "none"), ("deadline", "mq-deadline"), ("cfq", "bfq")):
            p, notes = self.load(SCHED=old)
            self.assertEqual(p["SCHED"], new)
            self.assertIn("2012 name", notes[0])

    def test_several_schedulers_and_tunables(self):
        p, notes = self.load(SCHED="none cfq,fiops", TUNE="write_scale=3 read_scale=1")
        self.assertEqual([v["label"] for v in p["VARIANTS"]], ["none", "bfq", "fiops"])
        self.assertEqual(p["SCHED"], "none")
        self.assertEqual(p["TUNE"], [("write_scale", "3"), ("read_scale", "1")])
        self.assertEqual(len(notes), 1)

    def test_bad_values_are_named(self):
        cases = [
            (dict(SCHED="cfq2"), "SCHED=cfq2"),
            (dict(IOPS="fast"), "IOPS=fast: not a whole number"),
            (dict(IOPS="0"), "IOPS=0: must be between"),
            (dict(DEPTH="1"), "DEPTH=1: must be between 2"),
            (dict(DEPTH="4096"), "DEPTH=4096"),
            (dict(NR_REQUESTS="4096"), "NR_REQUESTS=4096"),
            (dict(IOPS="auto"), "IOPS=auto"),
            (dict(RUNTIME="-3"), "RUNTIME=-3"),
            (dict(ACCEL="hvf"), "ACCEL=hvf"),
            (dict(WORKLOAD="no-such-workload"), "known: "),
            (dict(VCPUS="9"), "VCPUS=9"),
            (dict(SCHED="bfq kyber bfq"), "bfq is named twice"),
            (dict(SCHED=" "), "SCHED is empty"),
            (dict(TUNE="write_scale"), "write_scale is not name=value"),
            (dict(TUNE="../x=1"), "../x=1 is not name=value"),
            (dict(TUNE="write_scale=3;reboot"), "is not name=value"),
            (dict(SCHED="bfq:low_latency=0 bfq:low_latency=0"),
             "bfq:low_latency=0 is named twice"),
            (dict(SCHED="bfq cfq"), "bfq is named twice"),
            (dict(SCHED="bfq:"), "bfq: has no tunables after the colon"),
            (dict(SCHED="bfq:low_latency"), "SCHED=bfq:low_latency: low_latency is not"),
            (dict(SCHED="bfq:x=1;reboot"), "x=1;reboot is not name=value"),
            (dict(SCHED="bfq:x=1:y=2"), "is not name=value"),
            (dict(SCHED="cfq2:x=1"), "SCHED=cfq2: must be one of"),
            (dict(SCHED="low_latency=0 bfq"), "SCHED=low_latency=0: must be one of"),
        ]
        for env, message in cases:
            with self.assertRaises(params.ParamError) as cm:
                self.load(**env)
            self.assertIn(message, str(cm.exception), env)

    def test_variants(self):
        p, notes = self.load(SCHED="bfq bfq:low_latency=0 fiops")
        self.assertEqual(p["SCHED"], "bfq")
        self.assertEqual(p["VARIANTS"], [
            {"entry": "bfq", "label": "bfq", "scheduler": "bfq", "tune": []},
            {"entry": "bfq:low_latency=0", "label": "bfq_low_latency=0", "scheduler": "bfq",
             "tune": [("low_latency", "0")]},
            {"entry": "fiops", "label": "fiops", "scheduler": "fiops", "tune": []}])
        self.assertEqual(notes, [])

    def test_variant_tunables_continue_after_commas(self):
        p, notes = self.load(SCHED="none,cfq:low_latency=0,slice_idle=0, fiops,bfq")
        self.assertEqual([v["entry"] for v in p["VARIANTS"]],
                         ["none", "bfq:low_latency=0,slice_idle=0", "fiops", "bfq"])
        self.assertEqual(p["VARIANTS"][1]["label"], "bfq_low_latency=0_slice_idle=0")
        self.assertIn("2012 name", notes[0])

    def test_variant_tunables_go_on_top_of_tune_for_its_run(self):
        p, _ = self.load(SCHED="bfq bfq:low_latency=0,back_seek_max=8",
                         TUNE="low_latency=1,slice_idle=0")
        plain, variant = (params.run_params(p, v) for v in p["VARIANTS"])
        self.assertEqual((plain["SCHED"], plain["VARIANT"]), ("bfq", "bfq"))
        self.assertEqual(plain["TUNE"], [("low_latency", "1"), ("slice_idle", "0")])
        self.assertEqual((variant["SCHED"], variant["VARIANT"]),
                         ("bfq", "bfq_low_latency=0_back_seek_max=8"))
        self.assertEqual(variant["TUNE"], [("low_latency", "0"), ("slice_idle", "0"),
                                           ("back_seek_max", "8")])
        self.assertEqual(p["TUNE"], [("low_latency", "1"), ("slice_idle", "0")])

    def test_size_charging_is_off_by_default(self):
        p, _ = self.load()
        self.assertIsNone(p["BPS"])
        self.assertIsNone(p["IOPS_SIZE"])
        self.assertEqual(params.device_cost_model(p),
                         {"iops": 1000, "bps": None, "iops_size": None, **ON_FILE})
        p, _ = self.load(IOPS=500, BPS=4096000, IOPS_SIZE=4096)
        self.assertEqual(params.device_cost_model(p),
                         {"iops": 500, "bps": 4096000, "iops_size": 4096, **ON_FILE})

    def test_size_charging_ranges(self):
        for env, message in ((dict(BPS="100"), "BPS=100: must be between 4096 and "
                              "1000000000000 (or 0: off)"),
                             (dict(IOPS_SIZE="4k"), "IOPS_SIZE=4k: not a whole number"),
                             (dict(IOPS_SIZE="-4096"), "IOPS_SIZE=-4096: must be between 512"),
                             (dict(IOPS_SIZE=str(2 << 20)), "IOPS_SIZE=2097152")):
            with self.assertRaises(params.ParamError) as cm:
                self.load(**env)
            self.assertIn(message, str(cm.exception))

    def test_iops_off_leaves_the_device_without_an_iops_throttle(self):
        p, _ = self.load(IOPS="off")
        self.assertIsNone(p["IOPS"])
        self.assertTrue(params.unthrottled(p))
        self.assertFalse(params.unthrottled(self.load()[0]))
        self.assertEqual(params.device_cost_model(p),
                         {"iops": None, "bps": None, "iops_size": None, **ON_FILE})
        p, _ = self.load(IOPS="off", BPS=8192000)      # the bytes throttle still applies
        self.assertEqual(params.device_cost_model(p),
                         {"iops": None, "bps": 8192000, "iops_size": None, **ON_FILE})
        for env, message in (
                (dict(IOPS="abc"), "IOPS=abc: not a whole number (or off)"),
                (dict(IOPS="OFF"), "IOPS=OFF: not a whole number (or off)"),
                (dict(IOPS="0"), "IOPS=0: must be between 10 and 1000000 (or off)"),
                (dict(IOPS="off", IOPS_SIZE=4096), "IOPS_SIZE=4096: it sets how many I/Os a "
                 "large request counts against IOPS, and IOPS=off sets no I/O throttle")):
            with self.assertRaises(params.ParamError) as cm:
                self.load(**env)
            self.assertIn(message, str(cm.exception), env)
        p, _ = self.load(IOPS="off", IOPS_SIZE=0)       # 0 is off: nothing to refuse
        self.assertIsNone(p["IOPS_SIZE"])

    def test_nr_requests_kernel_is_kept_as_the_word(self):
        p, _ = self.load(NR_REQUESTS="kernel")
        self.assertEqual(p["NR_REQUESTS"], "kernel")
        for bad, message in (("4096", "NR_REQUESTS=4096: must be between 1 and 2048 "
                                      "(or auto, kernel)"),
                             ("Kernel", "NR_REQUESTS=Kernel: not a whole number")):
            with self.assertRaises(params.ParamError) as cm:
                self.load(NR_REQUESTS=bad)
            self.assertIn(message, str(cm.exception))

    def test_null_device_and_its_latency(self):
        p, _ = self.load()
        self.assertEqual((p["DEVICE"], p["LATENCY_US"]), ("nvme", None))
        p, _ = self.load(DEVICE="nvme-null", LATENCY_US=4000, IOPS=2000)
        self.assertEqual(params.device_cost_model(p),
                         {"iops": 2000, "bps": None, "iops_size": None,
                          "device": "nvme-null", "latency_us": 4000})
        p, _ = self.load(DEVICE="nvme-null")       # no latency: as fast as QEMU answers
        self.assertIsNone(p["LATENCY_US"])
        p, _ = self.load(LATENCY_US=0)
        self.assertIsNone(p["LATENCY_US"])

    def test_device_errors_are_named_before_a_boot(self):
        cases = [
            (dict(DEVICE="ssd"), "DEVICE=ssd: must be nvme"),
            (dict(LATENCY_US=4000), "LATENCY_US=4000: only DEVICE=nvme-null takes a latency"),
            (dict(DEVICE="nvme", LATENCY_US=1), "LATENCY_US=1: only DEVICE=nvme-null"),
            (dict(DEVICE="nvme-null", LATENCY_US=1000001),
             "LATENCY_US=1000001: must be between 1 and 1000000 (or 0: off)"),
            (dict(DEVICE="nvme-null", LATENCY_US="4ms"), "LATENCY_US=4ms: not a whole number"),
            (dict(DEVICE="nvme-null", WORKLOAD="integrity"),
             "WORKLOAD=integrity: v1, v2, v3, v4 verify the data they read back (verify=), "
             "but DEVICE=nvme-null discards writes"),
            (dict(DEVICE="nvme-null", LATENCY_US=100, WORKLOAD="smoke-verify"),
             "WORKLOAD=smoke-verify: rw1, rw2 verify"),
        ]
        for env, message in cases:
            with self.assertRaises(params.ParamError) as cm:
                self.load(**env)
            self.assertIn(message, str(cm.exception), env)

    def test_makefile_exports_every_parameter(self):
        with open(os.path.join(params.TOP, "Makefile")) as f:
            text = f.read().replace("\\\n", " ")
        line = next(l for l in text.splitlines() if l.startswith("BENCH_VARS :="))
        self.assertEqual(sorted(line.split(":=")[1].split()), sorted(params.DEFAULTS))

    def test_workload_path(self):
        with tempfile.NamedTemporaryFile("w", suffix=".fio") as f:
            p, _ = self.load(WORKLOAD=f.name)
            self.assertEqual(p["JOBFILE"], f.name)


class JobfileTest(unittest.TestCase):
    TEXT = """# two readers
# expect: a=1 b=1
[global]
iodepth=4
filename=/dev/sda
runtime=60
[a]
numjobs=2
[b]
iodepth=16
time_based
"""

    def test_prepare_owns_device_and_time(self):
        out = jobfile.prepare(self.TEXT)
        self.assertTrue(out.startswith(jobfile.PRELUDE))
        body = out[len(jobfile.PRELUDE):]
        for opt in ("filename=/dev/sda", "runtime=60", "time_based"):
            self.assertIn("# bench: removed '%s'" % opt, body)
        self.assertNotIn("\nfilename=/dev/sda", body)
        self.assertIn("iodepth=16", body)

    def test_jobs_inherit_global(self):
        jobs = jobfile.jobs(self.TEXT)
        self.assertEqual([j["name"] for j in jobs], ["a", "b"])
        self.assertEqual(jobs[0]["iodepth"], "4")
        self.assertEqual(jobs[1]["iodepth"], "16")
        self.assertEqual(jobs[1]["time_based"], "1")

    def test_total_depth(self):
        self.assertEqual(jobfile.total_depth(self.TEXT), 2 * 4 + 16)

    def test_verifying_jobs(self):
        self.assertEqual(jobfile.verifying_jobs(self.TEXT), [])
        text = "[global]\nverify=crc32c\n[a]\n[b]\nverify=0\n[c]\nverify=null\n"
        self.assertEqual(jobfile.verifying_jobs(text), ["a"])
        self.assertEqual(jobfile.verifying_jobs("[a]\nverify=md5\n[b]\n"), ["a"])

    def test_description(self):
        self.assertEqual(jobfile.description(self.TEXT), "two readers expect: a=1 b=1")

    GROUPS = "# group: p 200\n# group: p/c 100\n# group: s 50\n[x]\ncgroup=p/c\n[y]\ncgroup=s\n"

    def test_groups_and_their_jobs(self):
        self.assertEqual(jobfile.groups(self.GROUPS), {"p": 200, "p/c": 100, "s": 50})
        self.assertEqual(jobfile.job_groups(self.GROUPS), {"x": "p/c", "y": "s"})
        jobfile.check_groups(self.GROUPS)
        self.assertEqual(jobfile.groups(self.TEXT), {})

    def test_bad_group_lines_are_refused(self):
        for text, message in (("# group: a\n", "is not PATH WEIGHT"),
                              ("# group: a 0\n", "outside 1..1000"),
                              ("# group: a 1001\n", "outside 1..1000"),
                              ("# group: a x\n", "is not PATH WEIGHT"),
                              ("# group: ../a 10\n", "is not PATH WEIGHT"),
                              ("# group: a/b 10\n", "before its parent a"),
                              ("# group: a 10\n# group: a 20\n", "named twice")):
            with self.assertRaisesRegex(ValueError, message):
                jobfile.groups(text)

    def test_jobs_must_be_in_a_named_leaf_group(self):
        with self.assertRaisesRegex(ValueError, "cgroup=q has no"):
            jobfile.check_groups("# group: p 100\n[x]\ncgroup=q\n")
        with self.assertRaisesRegex(ValueError, "cgroup=p has groups below it"):
            jobfile.check_groups(self.GROUPS + "[z]\ncgroup=p\n")


def fio_job(name, read_iops, write_iops=0.0, ios=100):
    zero = {"iops": 0.0, "total_ios": 0}
    return {"jobname": name, "error": 0,
            "read": {"iops": read_iops, "total_ios": ios},
            "write": {"iops": write_iops, "total_ios": 0}, "trim": zero}


class SummaryTest(unittest.TestCase):
    def test_shares_and_pids(self):
        fio = {"jobs": [fio_job("a", 300.0), fio_job("b", 100.0, 100.0)]}
        t = summary.tasks(fio, [101, 102])
        self.assertEqual([x["pid"] for x in t], [101, 102])
        self.assertEqual([x["share"] for x in t], [0.6, 0.4])
        self.assertEqual(t[1]["iops"], 200.0)

    def test_pid_count_mismatch_guesses_nothing(self):
        fio = {"jobs": [fio_job("a", 1.0), fio_job("b", 1.0)]}
        self.assertEqual([x["pid"] for x in summary.tasks(fio, [7])], [None, None])


    def test_summary_carries_the_cost_model(self):
        model = {"iops": 1000, "bps": None, "iops_size": 4096}
        p = {"SCHED": "bfq", "VARIANT": "bfq_low_latency=0", "WORKLOAD": "w", "IOPS": 1000,
             "DEPTH": 4}
        meta = {"device_cost_model": model, "device_tags": 3, "nr_requests_set": 64,
                "tunables": {}, "calibration": {"ceiling_iops": 5000.0}, "valid": True}
        out = summary.build(p, meta, {"total_iops": 900.0, "tasks": []})
        self.assertEqual(out["device_cost_model"], model)
        self.assertEqual((out["scheduler"], out["variant"]), ("bfq", "bfq_low_latency=0"))


    def test_an_unthrottled_summary_has_no_utilization(self):
        p = {"SCHED": "none", "VARIANT": "none", "WORKLOAD": "w", "IOPS": None, "DEPTH": 4}
        meta = {"device_cost_model": {"iops": None}, "device_tags": 3, "nr_requests_set": 0,
                "tunables": {}, "calibration": {"ceiling_iops": 5000.0}, "valid": True}
        out = summary.build(p, meta, {"total_iops": 4200.0, "tasks": []})
        self.assertEqual((out["throttle_iops"], out["unthrottled"]), (None, True))
        self.assertIsNone(out["throttle_utilization"])
        self.assertEqual((out["total_iops"], out["ceiling_iops"]), (4200.0, 5000.0))
        out = summary.build(dict(p, IOPS=1000), meta, {"total_iops": 990.0, "tasks": []})
        self.assertEqual((out["unthrottled"], out["throttle_utilization"]), (False, 0.99))


class DeviceTest(unittest.TestCase):
    """The QEMU drives: only the measured device is throttled."""

    def drives(self, **env):
        p, _ = params.load({k: str(v) for k, v in env.items()})
        disks = bench.disk_args(p, {"thr": "/d/thr.img", "raw": "/d/raw.img"})
        return [d[1] for d in disks]

    def test_size_charging_on_the_throttled_device_only(self):
        thr, raw = self.drives(IOPS=1000, BPS=8192000, IOPS_SIZE=4096)
        self.assertTrue(thr.startswith("file=/d/thr.img,"))
        self.assertTrue(thr.endswith(",throttling.iops-total=1000,throttling.bps-total=8192000,"
                                     "throttling.iops-size=4096"), thr)
        self.assertTrue(raw.startswith("file=/d/raw.img,"))
        self.assertNotIn("throttling", raw)

    def test_iops_only_by_default(self):
        thr, raw = self.drives()
        self.assertTrue(thr.endswith(",throttling.iops-total=1000"), thr)
        self.assertEqual(thr.count("throttling"), 1)
        self.assertNotIn("throttling", raw)

    def test_iops_off_sets_no_iops_throttle(self):
        thr, raw = self.drives(IOPS="off")
        self.assertEqual(thr, "file=/d/thr.img,format=raw,aio=threads,if=none,id=thr,"
                              "cache=writeback")
        self.assertNotIn("throttling", raw)
        thr, _ = self.drives(IOPS="off", BPS=8192000)
        self.assertTrue(thr.endswith(",cache=writeback,throttling.bps-total=8192000"), thr)
        self.assertNotIn("iops", thr)
        thr, _ = self.drives(IOPS="off", DEVICE="nvme-null", LATENCY_US=100)
        self.assertNotIn("throttling", thr)

    def test_null_device_is_throttled_and_its_twin_stays_a_file(self):
        thr, raw = self.drives(DEVICE="nvme-null", LATENCY_US=4000, IOPS=2000, IOPS_SIZE=4096)
        # Spelled as QEMU 7.2's null-co takes them (block/null.c), as large
        # as the image file of the file-backed device.
        self.assertEqual(thr, "driver=null-co,size=%d,read-zeroes=on,latency-ns=4000000,"
                              "if=none,id=thr,cache=writeback,throttling.iops-total=2000,"
                              "throttling.iops-size=4096" % bench.DISK_SIZE)
        self.assertEqual(raw, "file=/d/raw.img,format=raw,aio=threads,if=none,id=raw,"
                              "cache=writeback")

    def test_calibration_twin_is_the_null_device_unthrottled(self):
        p, _ = params.load({"DEVICE": "nvme-null", "LATENCY_US": "250"})
        thr, raw = (d[1] for d in bench.disk_args(p, {"thr": "/d/t", "raw": "/d/r"},
                                                  twin=p["DEVICE"]))
        self.assertTrue(raw.startswith("driver=null-co,size=%d,read-zeroes=on,"
                                       "latency-ns=250000,if=none,id=raw," % bench.DISK_SIZE), raw)
        self.assertNotIn("throttling", raw)
        self.assertIn("throttling.iops-total=1000", thr)


class KernelArgsTest(unittest.TestCase):
    """KERNEL_ARGS reaches the guest's command line as plain words only."""

    def test_extra_arguments_follow_the_harness_ones(self):
        p, _ = params.load({"KERNEL_ARGS": "nvme.poll_queues=1  quiet"})
        self.assertEqual(p["KERNEL_ARGS"], ["nvme.poll_queues=1", "quiet"])
        line = qemu.kernel_cmdline(4, "halt", p["KERNEL_ARGS"])
        self.assertEqual(line, "console=ttyS0 panic=-1 nvme.io_queue_depth=4 "
                               "nvme.poll_queues=1 quiet")

    def test_none_by_default(self):
        p, _ = params.load({})
        self.assertEqual(p["KERNEL_ARGS"], [])
        self.assertNotIn("poll_queues", qemu.kernel_cmdline(4, "halt", p["KERNEL_ARGS"]))

    def test_udev_is_a_switch(self):
        self.assertFalse(params.load({})[0]["UDEV"])
        self.assertTrue(params.load({"UDEV": "1"})[0]["UDEV"])
        for bad in ("yes", "2", "on"):
            with self.assertRaises(params.ParamError):
                params.load({"UDEV": bad})

    def test_anything_but_plain_words_is_refused(self):
        for bad in ('a="b c"', "x;reboot", "init=/bin/sh$(x)", "a\\b", "-- foo"):
            with self.assertRaises(params.ParamError, msg=bad) as cm:
                params.load({"KERNEL_ARGS": bad})
            self.assertIn("KERNEL_ARGS", str(cm.exception))


class DevcostTest(unittest.TestCase):
    def test_iops_only_charges_every_request_the_same(self):
        model = {"iops": 1000, "bps": None, "iops_size": None}
        for nbytes in (512, 4096, 1 << 20):
            self.assertAlmostEqual(devcost.request_cost(nbytes, model), 0.001)

    def test_iops_size_charges_size_over_it_and_at_least_one(self):
        model = {"iops": 1000, "bps": None, "iops_size": 4096}
        self.assertAlmostEqual(devcost.request_cost(512, model), 0.001)
        self.assertAlmostEqual(devcost.request_cost(4096, model), 0.001)
        self.assertAlmostEqual(devcost.request_cost(6144, model), 0.0015)  # not rounded
        self.assertAlmostEqual(devcost.request_cost(65536, model), 0.016)

    def test_bps_is_the_larger_of_the_two(self):
        model = {"iops": 1000, "bps": 8192000, "iops_size": None}
        self.assertAlmostEqual(devcost.request_cost(4096, model), 0.001)   # iops bound
        self.assertAlmostEqual(devcost.request_cost(65536, model), 0.008)  # bytes bound
        self.assertAlmostEqual(devcost.request_cost(65536, {"iops": 1000}), 0.001)


    def test_without_an_iops_throttle_only_bytes_cost(self):
        model = {"iops": None, "bps": 8192000, "iops_size": None}
        self.assertAlmostEqual(devcost.request_cost(4096, model), 0.0005)
        self.assertAlmostEqual(devcost.request_cost(65536, model), 0.008)
        self.assertEqual(devcost.request_cost(4096, {"iops": None}), 0.0)


class SizeScaleTest(unittest.TestCase):
    def test_size_scale_for(self):
        b = 1e-6
        self.assertEqual(devcost.size_scale_for(0.0, b), 1000)      # all cost is size
        self.assertEqual(devcost.size_scale_for(0.001, 0.0), 0)     # size costs nothing
        self.assertEqual(devcost.size_scale_for(4096 * b, b), 500)  # half of a 4k request
        self.assertEqual(devcost.size_scale_for(0.001, -1e-9), 0)   # noise: clamped
        self.assertEqual(devcost.size_scale_for(-1e-5, b), 1000)
        with self.assertRaises(ValueError):
            devcost.size_scale_for(0.0, 0.0)


def guest_plan_reader():
    """guest/init's plan loop under busybox sh, run_step replaced by its own
    first lines (the argument defaults) and a line per step that prints them."""
    with open(os.path.join(params.TOP, "guest", "init")) as f:
        init = f.read()
    defaults = re.findall(r"^\tname=\$1 .*$|^\tjob=.*$", init, re.M)
    loop = init[init.index("while read -r name"):init.index("done < /out/plan")]
    return ("run_step() {\n%s\n\techo \"$name $serial $tune $job\"\n}\n%sdone < \"$1\"\n"
            % ("\n".join(defaults), loop))


class CalibrateSizeTest(unittest.TestCase):
    def load(self, **env):
        return calibrate_size.load_params({k: str(v) for k, v in env.items()})

    def test_size_charging_is_on_unless_given(self):
        p, _ = self.load()
        self.assertEqual(params.device_cost_model(p),
                         {"iops": 1000, "bps": None, "iops_size": 4096, **ON_FILE})
        p, _ = self.load(BPS=8192000)
        self.assertEqual(params.device_cost_model(p),
                         {"iops": 1000, "bps": 8192000, "iops_size": None, **ON_FILE})
        p, _ = self.load(IOPS_SIZE=0, IOPS=500)
        self.assertEqual(params.device_cost_model(p),
                         {"iops": 500, "bps": None, "iops_size": None, **ON_FILE})

    def test_iops_off_needs_bps(self):
        with self.assertRaises(params.ParamError) as cm:
            self.load(IOPS="off")
        self.assertIn("IOPS=off: calibrate-size measures what a throttle charges each size, "
                      "and with IOPS=off only BPS could", str(cm.exception))
        p, _ = self.load(IOPS="off", BPS=8192000)
        self.assertEqual(params.device_cost_model(p),
                         {"iops": None, "bps": 8192000, "iops_size": None, **ON_FILE})

    def test_one_scheduler_variant(self):
        p, _ = self.load(SCHED="fiops:read_scale=2", TUNE="write_scale=3")
        self.assertEqual((p["SCHED"], p["VARIANT"]), ("fiops", "fiops_read_scale=2"))
        self.assertEqual(p["TUNE"], [("write_scale", "3"), ("read_scale", "2")])
        with self.assertRaises(params.ParamError) as cm:
            self.load(SCHED="none fiops")
        self.assertIn("calibrate-size runs under one scheduler", str(cm.exception))

    def test_plan_runs_each_size_with_its_jobfile_on_the_throttled_device(self):
        p, _ = self.load(SCHED="bfq", CAL_RUNTIME=3)
        with tempfile.TemporaryDirectory() as run:
            calibrate_size.write_steps(run, p)
            with open(os.path.join(run, "plan")) as f:
                lines = [l for l in f.read().splitlines() if not l.startswith("#")]
            self.assertEqual(lines[0], "guest/size-4k thr bfq 64 3 0 - job-4k.fio")
            self.assertEqual([l.split()[0] for l in lines],
                             ["guest/size-%dk" % k for k in (4, 8, 16, 32, 64, 128, 256)])
            env = dict(os.environ, FIO_DEV="/dev/null", FIO_RUNTIME="3", FIO_RAMP="2")
            for line in lines:
                job = os.path.join(run, line.split()[7])
                with open(job) as f:
                    text = f.read()
                self.assertTrue(text.startswith(jobfile.PRELUDE))
                size = 1024 * int(line.split()[0][len("guest/size-"):-1])
                self.assertIn("\nbs=%d\n" % size, text)
                self.assertEqual(jobfile.total_depth(text), 4)
                out = subprocess.run(["fio", "--parse-only", job], env=env,
                                     capture_output=True, text=True)
                self.assertEqual(out.returncode, 0, out.stderr)

    @unittest.skipUnless(shutil.which("busybox"), "no busybox")
    def test_guest_reads_the_jobfile_column_and_defaults_to_job_fio(self):
        p, _ = self.load()
        with tempfile.TemporaryDirectory() as run:
            calibrate_size.write_steps(run, p)
            with open(os.path.join(run, "plan"), "a") as f:
                f.write("guest/main thr fiops 64 30 1 write_scale=3\n")  # bench's 7 columns
            out = subprocess.run(["busybox", "sh", "-c", guest_plan_reader(), "sh",
                                  os.path.join(run, "plan")],
                                 capture_output=True, text=True, timeout=30)
        self.assertEqual(out.stderr, "")
        lines = out.stdout.splitlines()
        self.assertEqual(lines[0], "guest/size-4k thr - /out/job-4k.fio")
        self.assertEqual(lines[6], "guest/size-256k thr - /out/job-256k.fio")
        self.assertEqual(lines[7], "guest/main thr write_scale=3 /out/job.fio")
        self.assertEqual(len(lines), 8)

    def fake_iops(self, model):
        return {calibrate_size.step_name(s): 1.0 / devcost.request_cost(s, model)
                for s in calibrate_size.SIZES}

    def test_fit_recovers_the_device_model(self):
        p, _ = self.load()
        out = calibrate_size.result(p, self.fake_iops(params.device_cost_model(p)), {})
        self.assertEqual([r["bs"] for r in out["sizes"]], list(calibrate_size.SIZES))
        self.assertAlmostEqual(out["sizes"][-1]["t_s"], 0.064)
        self.assertAlmostEqual(out["a"], 0.0)
        self.assertAlmostEqual(out["b"] * 4096, 0.001)
        self.assertAlmostEqual(out["r2"], 1.0)
        self.assertEqual((out["size_scale"], out["failed"]), (1000, {}))
        p, _ = self.load(IOPS_SIZE=0)  # every request one I/O: size costs nothing
        out = calibrate_size.result(p, self.fake_iops(params.device_cost_model(p)), {})
        self.assertEqual(out["size_scale"], 0)

    def test_failed_steps_are_left_out_of_the_fit(self):
        p, _ = self.load()
        iops = self.fake_iops(params.device_cost_model(p))
        del iops["size-8k"]
        iops["size-16k"] = 0.0
        out = calibrate_size.result(p, iops, {"size-8k": "fio exited 1"})
        self.assertEqual(out["failed"], {"size-8k": "fio exited 1",
                                         "size-16k": "fio measured no I/O"})
        self.assertEqual(len(out["sizes"]), 5)
        self.assertEqual(out["size_scale"], 1000)
        out = calibrate_size.result(p, {}, {"size-4k": "qemu exited 1"})
        self.assertEqual(out["failed"]["fit"], "fewer than 2 sizes measured")
        self.assertIsNone(out["size_scale"])


class RunDirTest(unittest.TestCase):
    def test_runs_never_overwrite(self):
        with tempfile.TemporaryDirectory() as d:
            saved = bench.RESULTS
            bench.RESULTS = d
            try:
                when = bench.utc_now()
                a = bench.make_run_dir("bfq", "equal-readers", when)
                b = bench.make_run_dir("bfq", "equal-readers", when)
                c = bench.make_run_dir("bfq", "/x/y/my job.fio", when)
            finally:
                bench.RESULTS = saved
            self.assertNotEqual(a, b)
            self.assertTrue(os.path.basename(a).endswith("-bfq-equal-readers"))
            self.assertTrue(b.endswith(".2"))
            self.assertTrue(c.endswith("-bfq-my_job"))

    def with_results(self, fn):
        with tempfile.TemporaryDirectory() as d:
            saved = bench.RESULTS
            bench.RESULTS = d
            try:
                return fn(d)
            finally:
                bench.RESULTS = saved

    def test_variants_get_their_own_run_folders_and_plan_lines(self):
        p, _ = params.load({"SCHED": "bfq bfq:low_latency=0", "TUNE": "slice_idle=0",
                            "NR_REQUESTS": "64"})

        def plan(results):
            boot, runs = bench.make_runs(p, bench.utc_now())
            bench.write_inputs(boot, p, bench.plan_steps(runs, boot), "[r]\nrw=read\n")
            with open(os.path.join(boot, "plan")) as f:
                return boot, runs, f.read().splitlines()

        boot, runs, lines = self.with_results(plan)
        self.assertTrue(os.path.basename(boot).endswith("-bfq+bfq_low_latency=0-equal-readers"))
        self.assertEqual([d for _, d in runs],
                         [os.path.join(boot, "bfq"), os.path.join(boot, "bfq_low_latency=0")])
        # The guest reads seven columns (guest/init: read -r name serial ... tune).
        steps = [line.split() for line in lines if not line.startswith("#")]
        self.assertEqual(steps, [
            ["bfq/guest/calibration", "raw", "bfq", "64", "5", "0", "slice_idle=0"],
            ["bfq/guest/main", "thr", "bfq", "64", "30", "1", "slice_idle=0"],
            ["bfq_low_latency=0/guest/calibration", "raw", "bfq", "64", "5", "0",
             "slice_idle=0,low_latency=0"],
            ["bfq_low_latency=0/guest/main", "thr", "bfq", "64", "30", "1",
             "slice_idle=0,low_latency=0"]])

    def test_nr_requests_kernel_plans_no_write(self):
        """0 in the plan: guest/init's set_sched leaves nr_requests as the
        kernel set it (it writes only a number other than 0)."""
        p, _ = params.load({"SCHED": "none bfq", "NR_REQUESTS": "kernel"})

        def plan(results):
            boot, runs = bench.make_runs(p, bench.utc_now())
            return bench.plan_steps(runs, boot)

        self.assertEqual([s[3] for s in self.with_results(plan)], [0, 0, 0, 0])
        p, _ = params.load({"SCHED": "none bfq", "NR_REQUESTS": "100"})
        self.assertEqual([s[3] for s in self.with_results(plan)], [0, 0, 100, 100])
        with open(os.path.join(params.TOP, "guest", "init")) as f:
            self.assertIn('if [ "$sched" != none ] && [ "$3" != 0 ]; then\n'
                          '\t\techo "$3" > "$q/nr_requests"', f.read())

    @staticmethod
    def guest_steps(run, iops):
        """A run's guest files as guest/init leaves them: {step: the IOPS
        fio measured for its one job}; blktrace dropped nothing, dmesg is
        clean."""
        for step, rate in iops.items():
            d = os.path.join(run, "guest", step)
            os.makedirs(d)
            for name, text in (("fio.rc", "0"), ("pids.txt", "201"),
                               ("queue.txt", "scheduler=none [bfq]\nnr_requests=6\n"
                                             "nr_tags=3\n"),
                               ("blktrace.log", "  Total:   99 events (dropped 0),   1 KiB\n")):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            with open(os.path.join(d, "fio.json"), "w") as f:
                json.dump({"jobs": [fio_job("r1", rate)]}, f)
        open(os.path.join(run, "dmesg.txt"), "w").close()

    def test_meta_records_the_nr_requests_the_guest_read_back(self):
        p, _ = params.load({"SCHED": "bfq", "NR_REQUESTS": "kernel"})
        p = params.run_params(p, p["VARIANTS"][0])
        with tempfile.TemporaryDirectory() as run:
            self.guest_steps(run, {"calibration": 5000.0, "main": 5000.0})
            meta = {"device_cost_model": params.device_cost_model(p)}
            # p asks for "kernel"; the record is the number the guest read.
            result = bench.analyse(run, p, meta)
        self.assertEqual((meta["nr_requests_set"], meta["device_tags"]), (6, 3))
        self.assertEqual(result["nr_requests"], 6)

    def test_an_unthrottled_run_has_no_ceiling_to_be_under(self):
        """IOPS=off: a ceiling of 50 IOPS invalidates no run, since no
        throttle is there to be under; with IOPS=1000 it does."""
        outcomes = {}
        for iops in ("off", "1000"):
            p, _ = params.load({"SCHED": "none", "IOPS": iops})
            p = params.run_params(p, p["VARIANTS"][0])
            with tempfile.TemporaryDirectory() as run:
                self.guest_steps(run, {"calibration": 50.0, "main": 4000.0})
                meta = {"device_cost_model": params.device_cost_model(p)}
                outcomes[iops] = meta, bench.analyse(run, p, meta)
        meta, result = outcomes["off"]
        self.assertEqual((meta["valid"], meta["run_invalid_reasons"]), (True, []))
        self.assertEqual(meta["calibration"]["ceiling_iops"], 50.0)
        self.assertIsNone(meta["calibration"]["ceiling_over_throttle"])
        self.assertEqual((result["valid"], result["unthrottled"], result["total_iops"]),
                         (True, True, 4000.0))
        self.assertIsNone(result["throttle_iops"])
        self.assertIsNone(result["throttle_utilization"])
        meta, result = outcomes["1000"]
        self.assertEqual(meta["run_invalid_reasons"],
                         ["ceiling 50 IOPS unthrottled is under 2x the 1000 IOPS throttle: the "
                          "guest, not the throttle, is the bottleneck"])
        self.assertEqual((result["valid"], result["unthrottled"]), (False, False))
        self.assertEqual(meta["calibration"]["ceiling_over_throttle"], 0.05)

    def test_an_unthrottled_run_keeps_the_other_checks(self):
        p, _ = params.load({"IOPS": "off"})
        cal = {"total_iops": 50.0, "fio_errors": 0}
        self.assertEqual(bench.validity(p, cal, {"blktrace_dropped": 0, "fio_errors": 0}, []),
                         [])
        self.assertEqual(bench.validity(p, cal, {"blktrace_dropped": 3, "fio_errors": 1},
                                        ["WARNING: x"]),
                         ["blktrace dropped 3 events", "fio reported I/O errors",
                          "dmesg has 1 kernel reports (WARNING, BUG, lockdep, KASAN, hung task)"])

    def test_one_variant_runs_in_the_boot_folder(self):
        p, _ = params.load({"SCHED": "fiops:write_scale=3"})
        boot, runs = self.with_results(lambda _: bench.make_runs(p, bench.utc_now()))
        self.assertTrue(os.path.basename(boot).endswith("-fiops_write_scale=3-equal-readers"))
        self.assertEqual([d for _, d in runs], [boot])

    def test_failed_variant_run_records_scheduler_and_variant(self):
        p, _ = params.load({"SCHED": "none bfq:low_latency=0", "TUNE": "slice_idle=0"})
        with tempfile.TemporaryDirectory() as boot:
            run = os.path.join(boot, "bfq_low_latency=0")
            os.mkdir(run)
            boot_meta = {"params": {k: v for k, v in p.items() if k != "JOBFILE"}}
            with contextlib.redirect_stderr(io.StringIO()) as err:
                code = bench.finish_run(params.run_params(p, p["VARIANTS"][1]), boot_meta, run,
                                        boot, "qemu exited 1")
            meta = bench.read_json(os.path.join(run, "meta.json"))
        self.assertEqual(code, 1)
        self.assertIn("FAILED (bfq_low_latency=0): qemu exited 1", err.getvalue())
        self.assertEqual((meta["status"], meta["reason"]), ("failed", "qemu exited 1"))
        self.assertEqual((meta["scheduler"], meta["variant"]), ("bfq", "bfq_low_latency=0"))
        self.assertEqual(meta["params"]["SCHED"], "bfq")
        self.assertEqual(meta["params"]["TUNE"], [["slice_idle", "0"], ["low_latency", "0"]])
        self.assertNotIn("variant", boot_meta)

    def test_blktrace_drop_count(self):
        with tempfile.NamedTemporaryFile("w") as f:
            f.write("  Total:     25826 events (dropped 3),     1211 KiB data\n")
            f.flush()
            self.assertEqual(bench.blktrace_dropped(f.name), 3)
        self.assertIsNone(bench.blktrace_dropped("/nonexistent"))


class CompareTest(unittest.TestCase):
    def test_variants_rotate_and_reach_bench_intact(self):
        cells = compare.matrix({"SCHEDS": "bfq cfq:low_latency=0,slice_idle=0",
                                "WORKLOADS": "equal-readers", "DEPTHS": "4", "REPEAT": "2"})
        self.assertEqual([c["scheds"] for c in cells],
                         [["bfq", "bfq:low_latency=0,slice_idle=0"],
                          ["bfq:low_latency=0,slice_idle=0", "bfq"]])
        # run_cell hands bench.py the cell's schedulers as SCHED, space-separated.
        again = params.parse_scheds(" ".join(cells[1]["scheds"]), [])
        self.assertEqual([v["label"] for v in again], ["bfq_low_latency=0_slice_idle=0", "bfq"])

    def test_default_matrix_is_every_workload_at_every_depth(self):
        cells = compare.matrix({})
        self.assertEqual(len(cells), 81)        # the arithmetic in compare.py's comment
        self.assertEqual([c["cell"] for c in cells], list(range(1, 82)))
        self.assertEqual({(c["workload"], c["depth"]) for c in cells},
                         {(w, d) for w in compare.WORKLOADS for d in (4, 32, 1023)})
        knee = [c for c in cells if c["workload"] == "deep-knee"]
        self.assertEqual({c["device"] for c in knee}, {"nvme-null"})
        self.assertEqual({c["device"] for c in cells if c not in knee}, {"nvme"})
        env = compare.cell_env({}, knee[0])
        self.assertEqual((env["LATENCY_US"], env["IOPS"]), ("4000", "2000"))
        # What the environment sets wins over the workload's device.
        self.assertEqual(compare.cell_env({"IOPS": "500"}, knee[0])["IOPS"], "500")
        # many-tasks' own lengths win over SHORT's, and the cells record them.
        many = [c for c in cells if c["workload"] == "many-tasks"]
        self.assertEqual({(c["lengths"]["RUNTIME"], c["lengths"]["CAL_RUNTIME"]) for c in many},
                         {("12", "2")})
        self.assertEqual({c["lengths"]["RUNTIME"] for c in cells if c not in many}, {"4"})
        self.assertEqual(compare.cell_env({"RUNTIME": "6"}, many[0])["RUNTIME"], "6")
        given = compare.matrix({"WORKLOADS": "equal-readers", "DEPTHS": "4 64", "REPEAT": "1"})
        self.assertEqual([c["depth"] for c in given], [4, 64])
        with self.assertRaises(ValueError):
            compare.matrix({"REPEAT": "0"})

    def test_cells_pick_from_the_matrix(self):
        self.assertEqual(compare.parse_cells("3 1-2 2", 5), [3, 1, 2])
        for bad in ("0", "6", "2-1", "x", "1-", " "):
            with self.assertRaises(ValueError, msg=bad):
                compare.parse_cells(bad, 5)

    def fake_part(self, top, cells, fingerprint="f"):
        """A compare folder as run_matrix leaves it, its cells run."""
        folder = tempfile.mkdtemp(dir=top)
        for cell in cells:
            os.mkdir(os.path.join(folder, "boot%d" % cell))
        record = {"matrix_cells": 4, "fingerprint": fingerprint, "env": {}, "elapsed_s": 10,
                  "cells": [{"cell": n, "exit": 0, "boot": "boot%d" % n, "seconds": 5}
                            for n in cells]}
        with open(os.path.join(folder, "compare.json"), "w") as f:
            json.dump(record, f)
        return folder

    def test_merge_joins_the_parts_of_one_matrix(self):
        with tempfile.TemporaryDirectory() as top:
            parts = [self.fake_part(top, [1, 3]), self.fake_part(top, [2])]
            saved = bench.RESULTS
            bench.RESULTS = top
            try:
                out, missing = compare.merge(parts)
                self.assertEqual(missing, [4])
                with open(os.path.join(out, "compare.json")) as f:
                    record = json.load(f)
                self.assertEqual([c["cell"] for c in record["cells"]], [1, 2, 3])
                self.assertEqual((record["elapsed_s"], record["parts_elapsed_s"]), (15, 20))
                self.assertEqual(record["cells"][1]["boot"], "c2-boot2")
                self.assertTrue(os.path.isdir(os.path.join(out, "c2-boot2")))
                with self.assertRaisesRegex(ValueError, "cell 1 ran in both"):
                    compare.merge(parts + [self.fake_part(top, [1])])
                failed = self.fake_part(top, [4])
                record_path = os.path.join(failed, "compare.json")
                with open(record_path) as f:
                    record = json.load(f)
                record["cells"][0]["exit"] = 2
                with open(record_path, "w") as f:
                    json.dump(record, f)
                again = self.fake_part(top, [4])
                # The good run counts whatever the order of the parts.
                for order in ([failed, again, failed], [again, failed, failed]):
                    out, missing = compare.merge(parts + order)
                    with open(os.path.join(out, "compare.json")) as f:
                        record = json.load(f)
                    self.assertEqual(missing, [])
                    self.assertEqual(record["cells"][-1]["part"], os.path.basename(again))
                    self.assertEqual([c["exit"] for c in record["replaced_cells"]], [2, 2])
                # FOLDER:CELLS takes some cells of a part: cell 1 from the
                # first part is left for a run of it elsewhere.
                out, missing = compare.merge([parts[0] + ":3", parts[1],
                                              self.fake_part(top, [1])])
                with open(os.path.join(out, "compare.json")) as f:
                    record = json.load(f)
                self.assertEqual([c["cell"] for c in record["cells"]], [1, 2, 3])
                self.assertEqual(record["parts"][0]["taken"], "3")
                with self.assertRaisesRegex(ValueError, "different matrices"):
                    compare.merge(parts + [self.fake_part(top, [4], "g")])
                with self.assertRaisesRegex(ValueError, "no compare.json"):
                    compare.merge([top])
            finally:
                bench.RESULTS = saved

    def test_a_cell_bench_would_refuse_stops_the_matrix(self):
        with self.assertRaises(params.ParamError) as cm:
            compare.matrix({"WORKLOADS": "equal-readers integrity", "DEVICE": "nvme-null",
                            "LATENCY_US": "4000"})
        self.assertIn("WORKLOAD=integrity: v1, v2, v3, v4 verify", str(cm.exception))
        cells = compare.matrix({"WORKLOADS": "equal-readers", "DEVICE": "nvme-null",
                                "LATENCY_US": "4000", "REPEAT": "1", "DEPTHS": "4"})
        env = compare.cell_env({"DEVICE": "nvme-null", "LATENCY_US": "4000"}, cells[0])
        self.assertEqual((env["DEVICE"], env["LATENCY_US"], env["DEPTH"], env["RUNTIME"]),
                         ("nvme-null", "4000", "4", compare.SHORT["RUNTIME"]))


class KtapTest(unittest.TestCase):
    CONSOLE = """[    1.20] KTAP version 1
[    1.21] 1..2
[    1.22]     KTAP version 1
[    1.23]     # Subtest: fiops
[    1.24]     1..3
[    1.25]     ok 1 fiops_test_scale
[    1.26]     not ok 2 fiops_test_wrap
[    1.27]     ok 3 fiops_test_cgroup # SKIP no cgroups
[    1.28] not ok 1 fiops
[    1.29] ok 2 other_suite
"""

    def test_suites_and_cases(self):
        suites, cases = kunit.parse_ktap(self.CONSOLE)
        self.assertEqual(suites, [("fiops", False, False), ("other_suite", True, False)])
        self.assertEqual(cases, [("fiops_test_scale", True, False),
                                 ("fiops_test_wrap", False, False),
                                 ("fiops_test_cgroup", True, True)])

    def test_no_ktap(self):
        self.assertEqual(kunit.parse_ktap("Linux version 6.1\nKernel panic\n"), ([], []))


class CliTest(unittest.TestCase):
    """bench.py as make runs it: bad parameters fail before any boot."""

    def run_bench(self, **env):
        with tempfile.TemporaryDirectory() as results:
            full = dict(os.environ, RESULTS=results, **env)
            out = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "bench.py")],
                                 capture_output=True, text=True, env=full, timeout=60)
            return out, os.listdir(results)

    def test_bad_parameter_fails_without_a_run(self):
        out, runs = self.run_bench(SCHED="anticipatory")
        self.assertEqual(out.returncode, 1)
        self.assertIn("SCHED=anticipatory: must be one of", out.stderr)
        self.assertEqual(runs, [])


    def test_verifying_workload_on_the_null_device_fails_without_a_run(self):
        out, runs = self.run_bench(DEVICE="nvme-null", WORKLOAD="smoke-verify")
        self.assertEqual(out.returncode, 1)
        self.assertIn("WORKLOAD=smoke-verify: rw1, rw2 verify the data", out.stderr)
        self.assertEqual(runs, [])

    def test_calibrate_checks_the_parameters_before_it_boots(self):
        # QEMU=false: should the check let it through, nothing can boot.
        with tempfile.TemporaryDirectory() as results:
            env = dict(os.environ, RESULTS=results, QEMU="false", LATENCY_US="4000")
            out = subprocess.run([sys.executable,
                                  os.path.join(os.path.dirname(HERE), "calibrate.py")],
                                 capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(os.listdir(results), [])
        self.assertEqual(out.returncode, 1)
        self.assertIn("calibrate: LATENCY_US=4000: only DEVICE=nvme-null", out.stderr)

    def test_fiops_absent_fails_before_boot(self):
        """A kernel built without the series: SCHED=fiops fails at once."""
        with tempfile.TemporaryDirectory() as build:
            boot = os.path.join(build, "linux", "arch", "x86", "boot")
            os.makedirs(boot)
            for name in (os.path.join(boot, "bzImage"),
                         os.path.join(build, "initramfs.cpio")):
                open(name, "w").close()
            with open(os.path.join(build, "linux", ".config"), "w") as f:
                f.write("CONFIG_MQ_IOSCHED_KYBER=y\n# CONFIG_MQ_IOSCHED_FIOPS is not set\n")
            out, runs = self.run_bench(SCHED="fiops", BUILD=build)
        self.assertEqual(out.returncode, 1)
        self.assertIn("fiops is not in this kernel", out.stderr)
        self.assertEqual(runs, [])


# A QEMU that answers --version, records its pid and never finishes.
FAKE_QEMU = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "QEMU emulator version 0.0 (fake)"; exit 0; fi
echo $$ > "$FAKE_QEMU_PID"
exec sleep 300
"""


class InterruptTest(unittest.TestCase):
    """Ctrl-C or SIGTERM while a guest runs: bench.py and compare.py kill
    it, mark the runs failed and exit 130."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        top = self.tmp.name
        build = os.path.join(top, "build")
        boot = os.path.join(build, "linux", "arch", "x86", "boot")
        os.makedirs(boot)
        for name in (os.path.join(boot, "bzImage"), os.path.join(build, "initramfs.cpio")):
            open(name, "w").close()
        with open(os.path.join(build, "linux", ".config"), "w") as f:
            f.write("CONFIG_MQ_IOSCHED_FIOPS=y\n")
        with open(os.path.join(build, "kernel.json"), "w") as f:
            json.dump({"release": "fake"}, f)
        fake = os.path.join(top, "qemu")
        with open(fake, "w") as f:
            f.write(FAKE_QEMU)
        os.chmod(fake, 0o755)
        self.pidfile = os.path.join(top, "qemu.pid")
        self.results = os.path.join(top, "results")
        os.makedirs(self.results)
        self.env = dict(os.environ, BUILD=build, RESULTS=self.results, QEMU=fake,
                        FAKE_QEMU_PID=self.pidfile, ACCEL="tcg")

    def tearDown(self):
        self.tmp.cleanup()

    def interrupt(self, script, sig, **env):
        """Start script, send sig once the fake guest runs; return the exit
        code and the fake guest's pid."""
        proc = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(HERE), script)],
                                env=dict(self.env, **env), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                if os.path.exists(self.pidfile) and os.path.getsize(self.pidfile):
                    break
                time.sleep(0.1)
            else:
                self.fail("the fake guest never started")
            with open(self.pidfile) as f:
                guest = int(f.read())
            proc.send_signal(sig)
            return proc.wait(timeout=60), guest
        finally:
            if proc.poll() is None:
                proc.kill()

    def assertGone(self, pid):
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    def run_meta(self, folder):
        with open(os.path.join(folder, "meta.json")) as f:
            return json.load(f)

    def test_bench_sigterm(self):
        code, guest = self.interrupt("bench.py", signal.SIGTERM, SCHED="none")
        self.assertEqual(code, 130)
        self.assertGone(guest)
        [run] = os.listdir(self.results)
        meta = self.run_meta(os.path.join(self.results, run))
        self.assertEqual(meta["status"], "failed")
        self.assertIn("interrupted by SIGTERM", meta["reason"])

    def test_bench_sigint_marks_every_run_of_the_boot(self):
        code, guest = self.interrupt("bench.py", signal.SIGINT, SCHED="none fiops")
        self.assertEqual(code, 130)
        self.assertGone(guest)
        [boot] = os.listdir(self.results)
        boot = os.path.join(self.results, boot)
        self.assertEqual(self.run_meta(boot)["status"], "failed")
        for run in self.run_meta(boot)["runs"]:
            meta = self.run_meta(os.path.join(boot, run))
            self.assertEqual(meta["status"], "failed")
            self.assertIn("interrupted by SIGINT", meta["reason"])

    def test_compare_stops_the_matrix(self):
        code, guest = self.interrupt("compare.py", signal.SIGTERM, SCHEDS="none",
                                     WORKLOADS="equal-readers", DEPTHS="4", REPEAT="2")
        self.assertEqual(code, 130)
        self.assertGone(guest)
        [folder] = os.listdir(self.results)
        with open(os.path.join(self.results, folder, "compare.json")) as f:
            record = json.load(f)
        self.assertEqual(record["interrupted"], "SIGTERM")
        first, second = record["cells"]
        self.assertEqual(first["exit"], 130)
        self.assertNotIn("exit", second)
        meta = self.run_meta(os.path.join(self.results, folder, first["boot"]))
        self.assertEqual(meta["status"], "failed")


def no_space(path, *args, **kwargs):
    raise OSError(28, "No space left on device", path)


class FullDiskTest(unittest.TestCase):
    """A full disk while a run's results are written: a clear error, and
    no half-written file that make report would read."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_failed_write_leaves_the_old_file_whole(self):
        path = os.path.join(self.dir, "tasks.csv")
        with open(path, "w") as f:
            f.write("old\n")
        with self.assertRaises(OSError):
            with files.replacing(path) as tmp:
                with open(tmp, "w") as f:
                    f.write("half a ta")
                no_space(tmp)
        with open(path) as f:
            self.assertEqual(f.read(), "old\n")
        self.assertEqual(os.listdir(self.dir), ["tasks.csv"])

    def test_bench_says_so_and_leaves_the_run_running(self):
        bench.write_json(os.path.join(self.dir, "meta.json"), {"status": "running"})
        p = {"SCHED": "fiops", "VARIANT": "fiops", "TUNE": []}
        err = io.StringIO()
        with mock.patch.object(bench, "analyse", side_effect=lambda *a: no_space(
                os.path.join(self.dir, "tasks.csv.new"))), \
                mock.patch.object(bench, "write_json", side_effect=no_space), \
                contextlib.redirect_stderr(err):
            code = bench.finish_run(p, {"params": {}}, self.dir, self.dir, None)
        self.assertEqual(code, 1)
        self.assertIn("FAILED (fiops): [Errno 28] No space left on device", err.getvalue())
        self.assertIn("the run stays marked running and make report leaves it out",
                      err.getvalue())
        self.assertEqual(bench.read_json(os.path.join(self.dir, "meta.json"))["status"],
                         "running")


class StressInputsTest(unittest.TestCase):
    """make stress's settings and the table of bad sysfs values."""

    def test_bad_settings_are_named(self):
        for env, word in (({"STRESS": "long"}, "STRESS=long"),
                          ({"STRESS_CASES": "switch nosuch"}, "no case nosuch"),
                          ({"STRESS_KERNEL": "/nonexistent/bzImage"}, "/nonexistent/bzImage")):
            with self.assertRaises(ValueError) as cm:
                stress.settings(env)
            self.assertIn(word, str(cm.exception))

    def test_every_tunable_gets_the_issue_table(self):
        for name, (low, high) in stress.FIOPS_LIMITS.items():
            values = dict(stress.bad_values(name))
            self.assertEqual(values["above-max"], b"%d" % (high + 1), name)
            self.assertEqual("below-min" in values, low > 0, name)
            for label in ("empty", "abc", "minus-one", "2^32", "two-numbers", "4KiB",
                          "all-bytes", "byte-00", "byte-ff"):
                self.assertIn(label, values, name)
            # A digit alone may be a valid value; it is not in the table.
            self.assertNotIn("byte-31", values)
        self.assertIn(b"nosuch", dict(stress.bad_values("scheduler")).values())
        self.assertIn(b"2049", dict(stress.bad_values("nr_requests")).values())

    def test_kernel_info_is_the_builds(self):
        with tempfile.TemporaryDirectory() as d:
            bench.write_json(os.path.join(d, "kernel-debug.json"), {"release": "6.1-debug"})
            kernel = os.path.join(d, "linux-debug", "arch", "x86", "boot", "bzImage")
            self.assertEqual(stress.kernel_info(kernel), {"release": "6.1-debug"})
            self.assertEqual(stress.kernel_info("/elsewhere/bzImage"),
                             {"bzImage": "/elsewhere/bzImage"})

    def test_inputs_give_each_case_its_device(self):
        with tempfile.TemporaryDirectory() as d:
            stress.write_inputs(d, ["churn", "unplug"], stress.FORMS["short"]["args"])
            with open(os.path.join(d, "stress", "cases")) as f:
                self.assertEqual(f.read(), "churn thr 200\nunplug plug plug\n")
            with open(os.path.join(d, "stress", "bad-values", "read_scale", "000"), "rb") as f:
                self.assertEqual(f.read(), b"\n")
            self.assertTrue(os.path.exists(os.path.join(d, "stress", "verify.fio")))


class OverheadPlanTest(unittest.TestCase):
    """make overhead's matrix: settings checked, schedulers rotated."""

    def test_plan_rotates_the_schedulers(self):
        s = overhead.settings({"SCHEDS": "none fiops bfq", "JOBS": "1", "QDS": "1 8",
                                     "REPEAT": "1"})
        firsts = [p[1] for p in overhead.plan(s)[::3]]
        self.assertEqual(firsts, ["none", "fiops"])
        self.assertEqual(len(overhead.plan(s)), 6)

    def test_bad_settings(self):
        for env in ({"JOBS": "0"}, {"QDS": "x"}, {"SCHEDS": "cfq"}, {"CLOCKS": "kvm"},
                    {"ICOUNT_SHIFT": "11"}, {"ICOUNT_SHIFT": "1 2"}, {"ICOUNT_RUNTIME": "0"},
                    {"PROFILE": "yes"}):
            with self.assertRaises(ValueError, msg=env):
                overhead.settings(env)

    def test_profile_needs_its_initramfs(self):
        self.assertEqual(overhead.initrd(overhead.settings({})), bench.INITRD)
        s = overhead.settings({"PROFILE": "1"})
        self.assertTrue(s["PROFILE"])
        with tempfile.TemporaryDirectory() as build, \
                mock.patch.object(bench, "BUILD", build):
            with self.assertRaisesRegex(ValueError, "make overhead PROFILE=1 builds it"):
                overhead.initrd(s)
            open(os.path.join(build, "initramfs-perf.cpio"), "w").close()
            self.assertEqual(overhead.initrd(s), os.path.join(build, "initramfs-perf.cpio"))

    def test_icount_boots_one_queue_on_one_vcpu(self):
        s = overhead.settings({"HWQS": "1 2", "ICOUNT_SHIFT": "0"})
        self.assertEqual(overhead.boots(s), [("wall", 1), ("wall", 2), ("icount", 1)])
        self.assertEqual(overhead.CLOCKS["icount"], 1)
        cmd = qemu.command("bz", None, "tcg", 1, 512, "", "c.log", None, [],
                           icount=s["ICOUNT_SHIFT"])
        self.assertEqual(cmd[cmd.index("-icount") + 1], "shift=0")
        self.assertNotIn("-icount", qemu.command("bz", None, "tcg", 2, 512, "", "c.log",
                                                 None, []))



class WorkloadsTest(unittest.TestCase):
    def test_every_workload_parses(self):
        wdir = os.path.join(params.TOP, "workloads")
        names = sorted(f for f in os.listdir(wdir) if f.endswith(".fio"))
        self.assertTrue(names)
        env = dict(os.environ, FIO_DEV="/dev/null", FIO_RUNTIME="1", FIO_RAMP="0")
        for name in names:
            with open(os.path.join(wdir, name)) as f:
                text = f.read()
            self.assertTrue(jobfile.description(text), name + " has no opening comment")
            with tempfile.NamedTemporaryFile("w", suffix=".fio") as job:
                job.write(jobfile.prepare(text))
                job.flush()
                out = subprocess.run(["fio", "--parse-only", job.name], env=env,
                                     capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, name + ": " + out.stderr)


if __name__ == "__main__":
    unittest.main()
