"""BLASTP's preliminary gapped extensions on an OpenCL device (``kernels/blast_gapped.mako``).

``DeviceGapped(rt, subjects).extend(qs, rows)`` computes, for every initial HSP of one query
(rows as ``DeviceUngapped.initial_hsps`` / ``engine.initial_hsps`` give them), the score-only
extension the preliminary stage would compute from it, in the DP mode (full or restricted) the
stage's first pass over its subject uses: an int32 (n, 8) array, row for row (score, q_start,
q_end, s_start, s_end, q_off, s_off, status; status 0 = not computed, the band overflowed).
``stages_nb.prelim_chunk`` then replays BLAST+'s per-subject rule on it, computing on
the CPU only what is missing, so the stage's rows equal the CPU path's.

Launches: rows ordered by decreasing ungapped length (a proxy of the extension's size, so a
warp's items take similar time and the longest start first), at most ``LAUNCH`` per launch.
The device work has its own command queue and lock, so one query's extensions run while the
chunk kernel (``DeviceUngapped``, its own lock) scans another query; the lock covers only the
launches (the upload before, the read-back's wait after, ``IN_FLIGHT`` reused buffer slots), so
the queries' host work overlaps the device. A query's inputs go up in one copy into its slot's
buffer (``device_chunk.Arena``: matrix, query, restriction flags, rows, launch order) and all
its launches' results come back in one read (each launch takes its items from ``first``): no
buffer is made per query (``cl.Buffer`` with a host copy holds the interpreter lock for the
copy), and every copy or wait is one fewer release and re-acquisition of that lock.

Chosen in one place: ``BLAST_GAPPED.ENABLE`` (tuning table; off on CPU devices, where the
numba stage is faster than PoCL's kernel: docs/perf/blastp.md), and subjects that fit in half
of one device allocation (they are uploaded whole) -- ``for_device`` returns None when the
device does not run the stage.
"""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from ..errors import ParameterError
from ..runtime import choose
from ..runtime.tuning import lookup
from .stages_nb import NPRE
from .options import RESTRICTED_MULT
from .params import BLAST_GAPPED
from .device_chunk import Arena, sub_align


IN_FLIGHT = 3   # queries whose launches may be queued at once (each holds one slot's buffers)


@dataclass
class _Slot:
    inp: object = None       # device_chunk.Arena of one query's inputs
    out: object = None       # cl.Buffer of its launches' results, grown on demand
    scratch: object = None


def restricted_rows(qs, rows) -> np.ndarray:
    """uint8 per row: 1 where the preliminary stage's first pass over the row's subject uses the
    restricted DP (the subject's best ungapped score, its first row's, below 0.68 x cutoff)."""
    n = len(rows)
    if n == 0 or not qs.restricted_ok:
        return np.zeros(n, dtype=np.uint8)
    r_cut = int(RESTRICTED_MULT * qs.cutoff_gapped)
    starts = np.flatnonzero(np.r_[True, rows[1:, 0] != rows[:-1, 0]])
    best = np.repeat(rows[starts, 1], np.diff(np.r_[starts, n]))
    return (best < r_cut).astype(np.uint8)


class DeviceGapped:
    """The blast_gapped program, the subjects on the device, and one query's launches."""

    def __init__(self, rt, subjects, override=None):
        override = dict(override or {})
        unknown = set(override) - set(BLAST_GAPPED.names())
        if unknown:
            raise ParameterError(f"blastp device gapped: unknown parameter(s) {sorted(unknown)}")
        self.rt = rt
        values = choose(BLAST_GAPPED, {}, lookup(BLAST_GAPPED.family, rt.caps), override)
        if values["SCRATCH_LOCAL"] and values["WG"] * values["BAND"] * 8 + 4096 > rt.caps.local_mem:
            values["SCRATCH_LOCAL"] = False
        self.values = BLAST_GAPPED.validate(values)
        # the subjects go to the device whole: a database beyond one allocation stays on the CPU
        self.enabled = self.values["ENABLE"] and 0 < subjects.total_length <= rt.caps.max_alloc // 2
        self.wg, self.band = self.values["WG"], self.values["BAND"]
        self.launch = self.values["LAUNCH"]
        self.queue = rt.new_queue()
        self.lock = threading.Lock()
        self.kernel_seconds = 0.0
        self.setup_seconds = 0.0   # program and upload (``_setup``)
        self.counts = {"extensions": 0, "overflow": 0}
        self._kernel = None
        self._slots = queue.SimpleQueue()   # output and scratch buffers of the queries in flight
        for _ in range(IN_FLIGHT):
            self._slots.put(_Slot())
        self.subjects = subjects
        self._res = self._offsets = None

    def prepare(self):
        """Build and upload now (``run_blastp`` calls it in the background at start-up)."""
        if self.enabled:
            with self.lock:
                self._setup()

    def _setup(self):
        """Program and subject upload, on first use (under the lock)."""
        if self._kernel is not None:
            return
        t0 = time.perf_counter()
        mf, ctx = cl.mem_flags, self.rt.ctx
        prg = self.rt.program("blast_gapped.mako", BLAST_GAPPED, self.values)
        res = self.subjects.residues
        # asynchronous writes on the stage's in-order queue (its launches come after them): a
        # buffer made with its host copy holds the interpreter lock for all 200 MB
        host = (np.ascontiguousarray(res) if len(res) else np.zeros(1, np.uint8),
                np.ascontiguousarray(self.subjects.offsets, dtype=np.int64))
        self._res, self._offsets = (cl.Buffer(ctx, mf.READ_ONLY, a.nbytes) for a in host)
        self._uploads = [cl.enqueue_copy(self.queue, buf, a, is_blocking=False)
                         for buf, a in zip((self._res, self._offsets), host)]
        self.queue.flush()
        self._kernel = cl.Kernel(prg, "blast_gapped")
        self.setup_seconds = time.perf_counter() - t0

    def extend(self, qs, rows, restrict=None, times=None) -> np.ndarray:
        """int32 (n, 8) speculative extensions of ``rows`` (see the module doc); ``restrict``
        (uint8 per row, default ``restricted_rows``) picks the DP per row; ``times``: a dict
        that gets the kernels' profiling seconds added under ``dev_gapped_kernel``."""
        n = len(rows)
        out = np.zeros((n, NPRE), dtype=np.int32)
        if n == 0:
            return out
        rows32 = np.ascontiguousarray(rows, dtype=np.int32)
        if restrict is None:
            restrict = restricted_rows(qs, rows32)
        restrict = np.ascontiguousarray(restrict, dtype=np.uint8)
        order = np.argsort(-rows32[:, 4], kind="stable").astype(np.int32)
        if self._kernel is None:
            with self.lock:
                self._setup()
        # everything but the launches happens outside the lock: the upload here, the wait for
        # the read-back after it, so the device's turn is enqueueing (see docs/perf/blastp.md)
        mf, ctx = cl.mem_flags, self.rt.ctx
        size = min(n, self.launch)
        arrays = {"matrix": np.ascontiguousarray(qs.matrix[:28, :28], dtype=np.int32).ravel(),
                  "query": qs.codes.astype(np.uint8), "restrict": restrict, "rows": rows32,
                  "order": order}
        got = np.empty((n, NPRE), dtype=np.int32)   # in launch order
        slot = self._slots.get()
        try:
            if slot.inp is None:
                slot.inp = Arena(ctx, sub_align(self.rt), mf.READ_ONLY)
            slot.inp.fit({name: a.nbytes for name, a in arrays.items()})
            host = slot.inp.pack(arrays)
            if slot.out is None or slot.out.size < got.nbytes:
                grown = 2 * slot.out.size if slot.out is not None else 0
                slot.out = cl.Buffer(ctx, mf.WRITE_ONLY, max(got.nbytes, grown))
            scratch = ()
            if not self.values["SCRATCH_LOCAL"]:
                need = 8 * self.band * (-(-size // self.wg) * self.wg)
                if slot.scratch is None or slot.scratch.size < need:
                    slot.scratch = cl.Buffer(ctx, mf.READ_WRITE, need)
                scratch = (slot.scratch,)
            # the in-order queue runs this query's launches after its upload
            upload = cl.enqueue_copy(self.queue, slot.inp.buf, host, is_blocking=False)
            sub, kevs = slot.inp.sub, []
            with self.lock:
                for lo in range(0, n, size):
                    m = min(size, n - lo)
                    self._kernel.set_args(self._res, self._offsets, sub["rows"], sub["order"],
                                          sub["restrict"], np.int32(lo), np.int32(m), sub["query"],
                                          np.int32(len(qs.codes)), sub["matrix"],
                                          np.int32(qs.opts.gap_open), np.int32(qs.opts.gap_extend),
                                          np.int32(qs.xdrop_gapped), *scratch, slot.out)
                    gsize = -(-m // self.wg) * self.wg
                    kevs.append(cl.enqueue_nd_range_kernel(self.queue, self._kernel, (gsize,),
                                                           (self.wg,)))
                read = cl.enqueue_copy(self.queue, got, slot.out, is_blocking=False)
                self.queue.flush()
            # the launches' events too: an in-order queue's later command may complete before
            # NVIDIA marks an earlier one complete (profiling info not available yet)
            cl.wait_for_events([read, *kevs])
            del upload
        finally:
            self._slots.put(slot)
        out[order] = got
        ksec = sum((ev.profile.end - ev.profile.start) * 1e-9 for ev in kevs)
        with self.lock:
            self.kernel_seconds += ksec
        if times is not None:
            times["dev_gapped_kernel"] = times.get("dev_gapped_kernel", 0.0) + ksec
        self.counts["extensions"] += n
        self.counts["overflow"] += int((out[:, 7] == 0).sum())
        return out


_ATTACH = threading.Lock()


def for_device(dev, override=None):
    """The DeviceGapped attached to a ``DeviceUngapped`` (made on first use with the device's
    runtime and subjects), or None when the tuning table / ``override`` disables the stage."""
    g = getattr(dev, "_gapped", None)
    if g is None:
        with _ATTACH:
            g = getattr(dev, "_gapped", None)
            if g is None:
                g = DeviceGapped(dev.rt, dev.subjects, override)
                dev._gapped = g
    return g if g.enabled else None
