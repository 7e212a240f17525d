"""Attribute every completion to the bio, and so the task, that queued it.

Only Q events carry the owner: D and C carry whichever task ran on that CPU
(a kworker, the idle task, another fio job).  So completions are matched to
queued bios by sector range, following the request through the events that
change its range:

  Q  a bio is queued: a new unit [sector, sector + sectors) holding one piece.
  X  the unit starting at sector is split; the front keeps sectors sectors,
     the rest becomes a unit of its own (same bio, one more piece).
  M  back merge: the unit [sector, end) joins the unit that ends at sector.
     The kernel traces both a bio merging into a request and a request
     merging into another this way.
  F  front merge: the unit [sector, end) joins the unit that starts at end.
  D  the unit with that range is dispatched; R puts it back (requeue).
  C  the units covering [sector, sector + sectors) complete from sector on;
     a completion shorter than its unit completes the pieces inside it.

A bio is complete when all its pieces are: its completion time is the last
piece's, and its Q2C latency runs from its Q.  Each C with data is also one
device command, counted ("commands") on the first-queued bio of the unit it
completes first, with its size ("command_sectors", the C event's sectors):
writeback merges many bios into one command, and the throttle counts
commands (and, when it charges by size, their sizes).  A bio counts once however it
was merged or split, as fio counts one I/O per queued bio.  Tasks that exit
do not matter: ownership is fixed at Q.  Zero-length events (flushes) carry
no range and are only counted.  Events that match nothing (the trace began
with I/O in flight, or events were lost) are counted, never guessed.
"""

from collections import defaultdict

import pandas as pd

BIO_COLUMNS = ["pid", "comm", "rwbs", "sector", "sectors", "q_time", "c_time", "error",
               "commands", "command_sectors"]
C_TIME, ERROR, COMMANDS, COMMAND_SECTORS = (BIO_COLUMNS.index(c) for c in (
    "c_time", "error", "commands", "command_sectors"))
STATS = ("bios", "completed", "incomplete", "flushes", "splits", "back_merges",
         "front_merges", "requeues", "dispatches", "completions",
         "unmatched_splits", "unmatched_merges", "unmatched_dispatches",
         "unmatched_completions")


class Unit:
    """A bio or request as the trace sees it: a sector range made of pieces.

    A piece is [bio index, start, end]; a bio split in two has two pieces.
    """
    __slots__ = ("start", "end", "pieces", "dispatched")

    def __init__(self, start, end, pieces):
        self.start, self.end, self.pieces = start, end, pieces
        self.dispatched = False


class Tracker:
    def __init__(self):
        self.bios = []        # rows of BIO_COLUMNS
        self.left = []        # per bio, how many of its pieces are not complete
        self.by_start = defaultdict(list)
        self.by_end = defaultdict(list)
        self.stats = dict.fromkeys(STATS, 0)

    # -- the unit index -------------------------------------------------

    # Units at one key are kept in the order they appeared: oldest first.

    def add(self, unit):
        self.by_start[unit.start].append(unit)
        self.by_end[unit.end].append(unit)

    def drop(self, unit):
        for index, key in ((self.by_start, unit.start), (self.by_end, unit.end)):
            index[key].remove(unit)
            if not index[key]:
                del index[key]

    def find(self, index, key, dispatched=None, newest=False, test=None):
        """The oldest (or newest) unit at key that passes test, preferring
        the dispatched state asked for: a completion can be traced before
        its dispatch when the CPUs' clocks differ a little."""
        units = [u for u in index.get(key, ()) if test is None or test(u)]
        if newest:
            units = units[::-1]
        for u in units:
            if dispatched is None or u.dispatched == dispatched:
                return u
        return units[0] if units else None

    def new_unit(self, start, end, pieces):
        self.add(Unit(start, end, pieces))

    # -- events -----------------------------------------------------------

    def queue(self, e):
        bio = len(self.bios)
        self.bios.append([e.pid, e.comm, e.rwbs, e.sector, e.sectors, e.time, None, 0, 0, ()])
        self.left.append(1)
        self.stats["bios"] += 1
        self.new_unit(e.sector, e.sector + e.sectors, [[bio, e.sector, e.sector + e.sectors]])

    def split(self, e):
        cut = e.sector + e.sectors
        unit = self.find(self.by_start, e.sector, newest=True,
                         test=lambda u: u.end > cut and not u.dispatched)
        if unit is None:
            self.stats["unmatched_splits"] += 1
            return
        self.stats["splits"] += 1
        front, back = [], []
        for bio, start, end in unit.pieces:
            if end <= cut:
                front.append([bio, start, end])
            elif start >= cut:
                back.append([bio, start, end])
            else:
                front.append([bio, start, cut])
                back.append([bio, cut, end])
                self.left[bio] += 1
        self.drop(unit)
        tail = unit.end
        unit.end, unit.pieces = cut, front
        self.add(unit)
        self.new_unit(cut, tail, back)

    def merge(self, e, front):
        end = e.sector + e.sectors
        unit = self.find(self.by_start, e.sector, newest=True,
                         test=lambda u: u.end == end and not u.dispatched)
        index, key = (self.by_start, end) if front else (self.by_end, e.sector)
        target = unit and self.find(index, key, test=lambda u: u is not unit and not u.dispatched)
        if target is None:
            self.stats["unmatched_merges"] += 1
            return
        self.stats["front_merges" if front else "back_merges"] += 1
        self.drop(unit)
        self.drop(target)
        if front:
            target.start, target.pieces = unit.start, unit.pieces + target.pieces
        else:
            target.end, target.pieces = unit.end, target.pieces + unit.pieces
        self.add(target)

    def dispatch(self, e, requeue=False):
        end = e.sector + e.sectors
        unit = self.find(self.by_start, e.sector, dispatched=requeue, test=lambda u: u.end == end)
        if unit is None:
            self.stats["unmatched_dispatches"] += 1
            return
        self.stats["requeues" if requeue else "dispatches"] += 1
        unit.dispatched = not requeue

    def complete(self, e):
        self.stats["completions"] += 1
        cursor, end = e.sector, e.sector + e.sectors
        while cursor < end:
            unit = self.find(self.by_start, cursor, dispatched=True)
            if unit is None:
                self.stats["unmatched_completions"] += 1
                return
            if cursor == e.sector:      # the command's first unit: who started it
                first = self.bios[min(p[0] for p in unit.pieces)]
                first[COMMANDS] += 1
                first[COMMAND_SECTORS] += (e.sectors,)
            self.drop(unit)
            done = [p for p in unit.pieces if p[2] <= end]
            for bio, _, _ in done:
                self.finish(bio, e)
            if unit.end > end:      # partial completion: the rest stays queued
                unit.pieces = [[b, max(s, end), t] for b, s, t in unit.pieces if t > end]
                unit.start = end
                self.add(unit)
            cursor = unit.end

    def finish(self, bio, e):
        row = self.bios[bio]
        row[C_TIME] = e.time if row[C_TIME] is None else max(row[C_TIME], e.time)
        row[ERROR] = row[ERROR] or e.error
        self.left[bio] -= 1

    def handle(self, e):
        if e.sectors == 0:
            self.stats["flushes"] += e.action == "Q"
            return
        if e.action == "Q":
            self.queue(e)
        elif e.action == "X":
            self.split(e)
        elif e.action in ("M", "F"):
            self.merge(e, front=e.action == "F")
        elif e.action in ("D", "R"):
            self.dispatch(e, requeue=e.action == "R")
        elif e.action == "C":
            self.complete(e)

    def result(self):
        for row, left in zip(self.bios, self.left):
            if left:
                row[C_TIME] = None      # some piece never completed
        bios = pd.DataFrame(self.bios, columns=BIO_COLUMNS)
        bios["c_time"] = bios["c_time"].astype(float)
        bios["complete"] = bios["c_time"].notna()
        bios["latency"] = bios["c_time"] - bios["q_time"]
        self.stats["completed"] = int(bios["complete"].sum())
        self.stats["incomplete"] = len(bios) - self.stats["completed"]
        return bios, dict(self.stats)


def attribute(events):
    """events (trace.parse) -> (bios DataFrame, stats dict).

    One row per queued bio: owner pid and comm, its Q range, q_time, c_time
    (NaN until every piece completed), latency (Q2C, seconds), error,
    commands (device commands it was the first-queued bio of),
    command_sectors (a tuple: each such command's size in sectors) and
    complete.  stats counts what was matched and what was not.
    """
    tracker = Tracker()
    for e in events.itertuples(index=False):
        tracker.handle(e)
    return tracker.result()
