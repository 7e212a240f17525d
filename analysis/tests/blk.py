"""Synthetic traces for the tests: blkparse text in trace.FORMAT, and binary
blktrace files for blkparse itself."""

import struct

from analysis import trace

FOOTER = "Events (nvme0n1): {n} entries\nSkips: {skips} forward ({skips} -   0.0%)\n"


class Text:
    """Lines as blkparse prints them with trace.FORMAT, one call an event."""

    def __init__(self):
        self.lines = []

    def ev(self, time, pid, action, sector, sectors, rwbs="R", comm="fio", cpu=0, error=0):
        self.lines.append("@ %d %d %.9f %d %s %s %d %d %d %s" % (
            cpu, len(self.lines) + 1, time, pid, action, rwbs, sector, sectors, error, comm))
        return self

    def msg(self, time, text, pid=0, cpu=0):
        """A message event, in blkparse's default layout (it bypasses -f)."""
        self.lines.append("259,0  %2d        0 %15.9f %5d  m   N %s" % (cpu, time, pid, text))
        return self

    def fiops(self, time, pid, sector, sectors, cost, vios, min_vios, queued, cls="be",
              level=4):
        """FIOPS's dispatch message for a request of task pid."""
        return self.msg(time, dispatch_text(pid, cls, level, cost, vios, min_vios, queued,
                                            sector, sectors), pid=7)

    def depth(self, time, depth, steady, iops=2000, lat_us=4180, probe=False, lifted=False):
        """FIOPS's message at a change of its dispatch depth."""
        return self.msg(time, depth_text(depth, steady, iops, lat_us, probe, lifted))

    def io(self, pid, sector, sectors, queued, completed, rwbs="R"):
        """A bio that becomes a request of its own: Q G I D C."""
        for action, time, who, comm in (("Q", queued, pid, "fio"), ("G", queued, pid, "fio"),
                                        ("I", queued, pid, "fio"), ("D", queued, 7, "kworker/0:1H"),
                                        ("C", completed, 0, "swapper/0")):
            self.ev(time, who, action, sector, sectors, rwbs, comm)
        return self

    def text(self, skips=0):
        return "\n".join(self.lines) + "\n" + FOOTER.format(n=len(self.lines), skips=skips)

    def events(self, skips=0):
        return trace.parse(self.text(skips))


def dispatch_text(pid, cls, level, cost, vios, min_vios, queued, sector, sectors):
    return ("fiops dispatch pid=%d %s/%d cost=%d vios=%d min=%d q=%d "
            "%d+%d" % (pid, cls, level, cost, vios, min_vios, queued,
                                         sector, sectors))


def depth_text(depth, steady, iops, lat_us, probe=False, lifted=False):
    return "fiops depth %d steady=%d iops=%d lat=%dus%s%s" % (
        depth, steady, iops, lat_us, " probe" if probe else "", " lifted" if lifted else "")


# struct blk_io_trace, and the action and category bits of blktrace_api.h.
EVENT = struct.Struct("=IIQQIIIIIHH")
MAGIC = 0x65617407
ACTIONS = {"Q": 1, "M": 2, "F": 3, "G": 4, "D": 7, "C": 8, "I": 12, "X": 13}
CATEGORY = {"Q": 0x10, "M": 0x10, "F": 0x10, "G": 0x10, "I": 0x110, "X": 0,
            "D": 0x140, "C": 0x180}
READ, NOTIFY = 0x1, 0x400
MESSAGE = 2       # __BLK_TN_MESSAGE, a notify event
DEVICE = (259 << 20) | 1


def binary(events):
    """A blktrace file's bytes: events are (ns, pid, action, sector, sectors),
    (ns, pid, "comm", name) for the pid's command name or (ns, pid, "msg",
    text) for a message (blk_add_trace_msg: no sequence number, no NUL)."""
    out = []
    for seq, e in enumerate(events, 1):
        if e[2] == "comm":
            pdu = e[3].encode().ljust(16, b"\0")
            out.append(EVENT.pack(MAGIC, seq, e[0], 0, 0, NOTIFY << 16, e[1], DEVICE, 0, 0,
                                  len(pdu)) + pdu)
        elif e[2] == "msg":
            pdu = e[3].encode()
            out.append(EVENT.pack(MAGIC, 0, e[0], 0, 0, MESSAGE | NOTIFY << 16, e[1], DEVICE,
                                  0, 0, len(pdu)) + pdu)
        else:
            action = ACTIONS[e[2]] | ((CATEGORY[e[2]] | READ) << 16)
            out.append(EVENT.pack(MAGIC, seq, e[0], e[3], e[4] * 512, action, e[1], DEVICE,
                                  0, 0, 0))
    return b"".join(out)
