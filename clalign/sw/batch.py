"""Database batches on a device and the lane layout of the inter-task kernel.

A batch is a contiguous range of the database uploaded to one device: residues, offsets,
lengths and a score buffer, with the subjects split into the length-sorted ``order`` that the
first-pass kernels take and the ``long`` subjects the intra-task kernel takes (longest first).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl


@dataclass
class Layout:
    """Host-side description of one inter-task pass: which subject sits in which lane."""

    lanes: np.ndarray       # int32 (ngroups * S), -1 = empty lane
    glen: np.ndarray        # int32 (ngroups)
    boff: np.ndarray        # int64 (nblocks + 1): first column of each block (multiples of 4)
    ngroups: int
    nblocks: int
    columns: int            # sum of block lengths


def make_layout(ids: np.ndarray, lengths: np.ndarray, S: int, WG: int) -> Layout:
    """Pack ``ids`` (already length-sorted) S per group, WG groups per block."""
    n = len(ids)
    ngroups = max(1, -(-n // S))
    lanes = np.full(ngroups * S, -1, dtype=np.int32)
    lanes[:n] = ids
    ln = np.zeros(ngroups * S, dtype=np.int64)
    ln[:n] = lengths[ids]
    glen = ln.reshape(ngroups, S).max(axis=1)
    nblocks = -(-ngroups // WG)
    gl = np.zeros(nblocks * WG, dtype=np.int64)
    gl[:ngroups] = glen
    blen = (gl.reshape(nblocks, WG).max(axis=1) + 3) & ~3     # whole chunks of 4 columns
    boff = np.zeros(nblocks + 1, dtype=np.int64)
    np.cumsum(blen, out=boff[1:])
    return Layout(lanes, glen.astype(np.int32), boff, ngroups, nblocks, int(blen.sum()))


@dataclass
class Batch:
    """One uploaded database range and what the passes cached for it."""

    start: int                      # first subject (database order)
    n: int                          # subjects
    res: cl.Buffer                  # residue codes
    offs: cl.Buffer                 # int32 first residue of each subject
    lens: cl.Buffer                 # int32 lengths
    scores: cl.Buffer               # int32 per subject, written by the passes
    lengths: np.ndarray             # int32 host copy of the lengths
    host: tuple                     # host arrays kept alive while their copies run
    order: np.ndarray = None        # first-pass subjects (batch-local), ascending length
    long: np.ndarray = None         # intra-task subjects (batch-local), longest first
    threshold: int = 0              # subjects longer than this are in ``long``
    uploads: list = field(default_factory=list)    # the upload events (every first kernel waits for them)
    events: list = field(default_factory=list)     # uploads/interleaves the next first-pass kernel waits for
    sched: str | None = None        # first-pass schedule (computed once)
    cache: dict = field(default_factory=dict)      # per-layout device buffers of the first pass
    ready: list = field(default_factory=list)      # interleaves every first pass waits for (any queue)
    slot_scores: dict = field(default_factory=dict)  # score buffers of slots > 0 (queries in flight)

    def score_buffer(self, slot: int = 0):
        """The score buffer a pass on slot ``slot`` writes (slot 0: ``scores``; others their own)."""
        if slot == 0:
            return self.scores
        buf = self.slot_scores.get(slot)
        if buf is None:
            buf = self.slot_scores[slot] = cl.Buffer(self.scores.context, cl.mem_flags.READ_WRITE,
                                                     self.scores.size)
        return buf

    def take_events(self) -> list:
        evs, self.events = self.events, []
        return evs

    def split(self, threshold: int) -> None:
        """Subjects longer than ``threshold`` go to the intra-task kernel."""
        order = np.argsort(self.lengths, kind="stable").astype(np.int32)
        nlong = int((self.lengths > threshold).sum())
        self.threshold = int(threshold)
        self.order = order[:len(order) - nlong]
        self.long = np.ascontiguousarray(order[len(order) - nlong:][::-1])
        self.sched = None
        self.cache.clear()
        self.ready = list(self.uploads)


def plan_batches(db, lim: int) -> list:
    """[(start, stop)] contiguous ranges of the database, each within ``lim`` residues."""
    lim = max(1, int(lim))
    n = len(db)
    if n == 0:
        return []
    cum = np.asarray(db.offsets, dtype=np.int64) - int(db.offsets[0])
    out, start = [], 0
    while start < n:
        stop = int(np.searchsorted(cum, cum[start] + lim, side="right")) - 1
        stop = min(max(stop, start + 1), n)
        out.append((start, stop))
        start = stop
    return out


def upload_batch(ctx, queue, db, start: int, stop: int) -> Batch:
    """Copy subjects ``start:stop`` to the device (non-blocking on ``queue``)."""
    o0, o1 = int(db.offsets[start]), int(db.offsets[stop])
    res = np.asarray(db.residues[o0:o1])
    if res.size == 0:
        res = np.zeros(1, dtype=np.uint8)
    lens = np.ascontiguousarray(db.lengths[start:stop], dtype=np.int32)
    offs = (np.asarray(db.offsets[start:stop], dtype=np.int64) - o0).astype(np.int32)
    mf = cl.mem_flags
    b = Batch(start, stop - start,
              cl.Buffer(ctx, mf.READ_ONLY, res.nbytes),
              cl.Buffer(ctx, mf.READ_ONLY, max(4, offs.nbytes)),
              cl.Buffer(ctx, mf.READ_ONLY, max(4, lens.nbytes)),
              cl.Buffer(ctx, mf.READ_WRITE, max(4, lens.nbytes)),
              lens, (res, lens, offs))
    b.uploads = [cl.enqueue_copy(queue, b.res, res, is_blocking=False),
                cl.enqueue_copy(queue, b.offs, offs, is_blocking=False),
                cl.enqueue_copy(queue, b.lens, lens, is_blocking=False)]
    b.events = list(b.uploads)
    return b
