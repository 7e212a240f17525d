"""Make blktrace's message events readable by Debian's blkparse 1.2.

Since Linux 5.8 (35fe6d763229, "block: use standard blktrace API to output
cgroup info for debug notes"), a kernel built with CONFIG_BLK_CGROUP tags
every message event (blk_add_trace_msg: bfq's log, FIOPS's dispatch notes)
with __BLK_TA_CGROUP and puts an 8-byte cgroup id before the text.
blkparse 1.2.0 compares the whole action with BLK_TN_MESSAGE, finds no
match and drops the message silently; later blkparse versions read the id.
untag() copies a device's per-CPU trace files with those records written
as untagged messages (flag cleared, id removed), which every blkparse
prints; all other records are copied byte for byte.
"""

import glob
import os
import struct

# struct blk_io_trace (include/uapi/linux/blktrace_api.h), native order.
RECORD = struct.Struct("<IIQQIIIIIHH")
MAGIC_MASK, MAGIC = 0xffffff00, 0x65617400
ACTION_FIELD, PDU_FIELD = 5, 10
BLK_TC_NOTIFY = 1 << 10
BLK_TC_SHIFT = 16
BLK_TN_MESSAGE = 2
TA_CGROUP = 1 << 8
CGROUP_ID_LEN = 8


def is_tagged_message(action):
    return ((action >> BLK_TC_SHIFT) & BLK_TC_NOTIFY
            and action & TA_CGROUP
            and action & 0xff == BLK_TN_MESSAGE)


def untag_records(data):
    """(rewritten bytes, number of messages untagged) of one trace file.

    A record that does not start with blktrace's magic ends the rewrite:
    the rest is copied as it is, for blkparse to judge.
    """
    out, pos, count = bytearray(), 0, 0
    while pos + RECORD.size <= len(data):
        fields = list(RECORD.unpack_from(data, pos))
        if fields[0] & MAGIC_MASK != MAGIC:
            break
        pdu_len = fields[PDU_FIELD]
        payload = data[pos + RECORD.size:pos + RECORD.size + pdu_len]
        if is_tagged_message(fields[ACTION_FIELD]) and pdu_len >= CGROUP_ID_LEN:
            fields[ACTION_FIELD] &= ~TA_CGROUP
            fields[PDU_FIELD] = pdu_len - CGROUP_ID_LEN
            payload = payload[CGROUP_ID_LEN:]
            count += 1
        out += RECORD.pack(*fields) + payload
        pos += RECORD.size + pdu_len
    out += data[pos:]
    return bytes(out), count


def untag(trace_dir, device, out_dir):
    """Copy <device>.blktrace.* from trace_dir to out_dir, untagging the
    messages; return how many were untagged."""
    total = 0
    for path in glob.glob(os.path.join(trace_dir, device + ".blktrace.*")):
        with open(path, "rb") as f:
            data, count = untag_records(f.read())
        with open(os.path.join(out_dir, os.path.basename(path)), "wb") as f:
            f.write(data)
        total += count
    return total
