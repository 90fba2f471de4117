"""BLASTN word finding on an OpenCL device (G-BLASTN's design): scan, lookup, mini-extension.

``NuclDeviceWords(nt, st, device)`` takes a search set up by ``nucl_setup.setup_search`` and a
:class:`~clalign.data.nucleotide.NucleotideDatabase`; ``pairs(oid)`` gives, for each chunk of
subject ``oid`` that the CPU path scans (``nucl_search.subject_chunks``), the word starts
``(q, s)`` that survived the mini-extension, in BLAST+'s scan order. The CPU word finder then
runs its diagonal, word-check and ungapped steps on them with the direct extender, so the
initial hits are the CPU path's exactly; or, as ``UNGAPPED`` says, the device runs those steps
too (:mod:`nucl_device_ungapped`) and ``pairs`` gives each chunk's saved initial hits.

Database layout: the subjects' 2-bit bytes (NCBI2na, as stored: ambiguous bases hold
makeblastdb's random bases; the ambiguity runs stay on the host for traceback, as in the CPU
path), cut into blocks of at most ``BLOCK_BASES`` bases of whole segments (a segment: a subject
or one 5,000,000-base chunk of a longer one, always starting on a byte), each uploaded once per
search. The lookup table goes up as ``cell_start``/``q_offs`` (``nucl_scan.FlatLookup``) plus
a presence vector of one bit per word code.

Per block (``kernels/blast_nucl.mako``): the scan kernel tests every scan position's presence
bit, the lookup kernel expands matched positions into (position, table index) pairs, the
extension kernel confirms full words; each writes its work-groups' runs through one global atomic
each, and an order kernel puts the runs back in work-group order, so every stage's output is in
scan order (position, then the cell's query offsets in table order) with no sort. Pipeline: a
producer thread runs the blocks ahead (at most ``AHEAD`` finished blocks waiting), so the
device works on block i+1 while the CPU extends block i.
"""
from __future__ import annotations

import queue
import threading
import time

import numpy as np
import pyopencl as cl

from ..errors import DeviceError, ParameterError
from ..runtime import Runtime, choose
from ..runtime.tuning import lookup
from .nucl_search import subject_chunks
from .nucl_words import EXTENDERS
from .params import BLASTN_SCAN

AHEAD = 2                      # finished blocks the producer may hold before the CPU takes them
#: Least room (entries) of the pair and survivor buffers; a launch that finds more is repeated.
MIN_ROOM = 1 << 16
HOST_PARAMS = ("WG", "USE", "BLOCK_BASES", "PIPELINE", "UNGAPPED")


def scan_values(rt, flat, extender: str, override=None) -> dict:
    """Template values for one search: device limits, tuning table, user override (WG, USE,
    BLOCK_BASES, PIPELINE); the table's width, stride, word size and extender are the search's."""
    override = dict(override or {})
    unknown = set(override) - set(HOST_PARAMS)
    if unknown:
        raise ParameterError(f"blastn device: unknown or fixed parameter(s) {sorted(unknown)}")
    base = choose(BLASTN_SCAN, {}, lookup(BLASTN_SCAN.family, rt.caps), override)
    base.update(WIDTH=flat.width, STEP=flat.scan_step, WORD=flat.word_size,
                EXT=EXTENDERS[extender])
    return BLASTN_SCAN.validate(base)


def use_device(device, override=None) -> bool:
    """Whether the tuning table (or the override's USE) sends BLASTN word finding to ``device``."""
    rt = Runtime.get(device)
    base = choose(BLASTN_SCAN, {}, lookup(BLASTN_SCAN.family, rt.caps),
                  {k: v for k, v in dict(override or {}).items() if k == "USE"})
    return bool(base["USE"])


def device_words(nt, st, device, times=None, override=None, hits=False):
    """A :class:`NuclDeviceWords` for this search, or None when the tuning table (or the
    override's USE) keeps BLASTN word finding off ``device``. ``hits``: the caller takes saved
    initial hits where ``UNGAPPED`` puts the ungapped extension on the device."""
    if not use_device(device, override):
        return None
    return NuclDeviceWords(nt, st, device, {k: v for k, v in dict(override or {}).items()
                                            if k != "USE"}, times, hits=hits)


def segments(nt, width: int, step: int):
    """Segments of the database in CPU order: arrays (oid, chunk number, first byte in
    ``nt.data``, bases, scan positions)."""
    lengths = np.asarray(nt.lengths, dtype=np.int64)
    starts = np.asarray(nt.starts, dtype=np.int64)
    oid, chunk, byte, length = [], [], [], []
    from .nucl_search import MAX_DBSEQ_LEN
    short = np.flatnonzero((lengths > 0) & (lengths <= MAX_DBSEQ_LEN))
    long_ = set(np.flatnonzero(lengths > MAX_DBSEQ_LEN).tolist())
    if not long_:
        oid, chunk, byte, length = short, np.zeros(len(short), np.int64), starts[short], lengths[short]
    else:
        for i in np.flatnonzero(lengths > 0).tolist():
            for c, (off, n) in enumerate(subject_chunks(int(lengths[i])) if i in long_
                                         else [(0, int(lengths[i]))]):
                oid.append(i)
                chunk.append(c)
                byte.append(int(starts[i]) + off // 4)
                length.append(n)
    oid, chunk = np.asarray(oid, np.int64), np.asarray(chunk, np.int64)
    byte, length = np.asarray(byte, np.int64), np.asarray(length, np.int64)
    npos = np.where(length >= width, (length - width) // step + 1, 0)
    return oid, chunk, byte, length, npos


class NuclDeviceWords:
    """Device scan, lookup and mini-extension of one search's batch against a database."""

    def __init__(self, nt, st, device=None, override=None, times=None, pipeline=None, hits=False,
                 ungapped_override=None):
        t0 = time.perf_counter()
        self.rt = rt = Runtime.get(device)
        flat = self.flat = st.flat
        self.values = v = scan_values(rt, flat, st.extender, override)
        self.wg = v["WG"]
        self.times = times if times is not None else {}
        prg = rt.program("blast_nucl.mako", BLASTN_SCAN, v)
        self.k_scan = cl.Kernel(prg, "nscan_scan")
        self.k_lookup = cl.Kernel(prg, "nscan_lookup")
        self.k_extend = cl.Kernel(prg, "nscan_extend")
        self.k_order = cl.Kernel(prg, "nscan_order")
        ctx, mf = rt.ctx, cl.mem_flags
        ro = lambda a: cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                                 hostbuf=np.ascontiguousarray(a) if len(a) else np.zeros(4, np.uint8))
        b = st.batch
        self.qn = len(b.seq)
        self.nctx = len(b.offsets)
        self.b_pv = ro(flat.present)
        self.b_cell = ro(flat.cell_start.view(np.uint32))   # int32 counts below 2**31
        self.b_qoffs = ro(np.asarray(flat.q_offs, np.int32))
        self.b_q = ro(np.asarray(b.seq, np.uint8))
        self.b_cq = ro(np.asarray(st.compressed_query, np.uint8))
        self.b_ctx_off = ro(b.offsets.astype(np.int32))
        self.b_ctx_len = ro(b.lengths.astype(np.int32))
        self.counters = cl.Buffer(ctx, mf.READ_WRITE, 16)
        self.nt = nt
        self.seg = segments(nt, flat.width, flat.scan_step)
        oid = self.seg[0]
        self.last_seg = np.full(len(nt), -1, np.int64)
        if len(oid):            # oid ascending: each subject's last segment
            u = np.unique(oid)
            self.last_seg[u] = np.searchsorted(oid, u, side="right") - 1
        self.blocks = self._blocks(v["BLOCK_BASES"])
        self.ung = None              # the device's diagonal test and ungapped extension
        mode = v["UNGAPPED"]
        if hits and (mode == "all" or (mode == "blastn" and not st.opts.greedy)):
            from .nucl_device_ungapped import MAX_BLOCK_POSITION, DeviceUngapped
            if max(int(self.seg[3][a:e].sum()) for a, e in self.blocks) >= MAX_BLOCK_POSITION:
                raise ParameterError("blastn device: BLOCK_BASES too large for UNGAPPED")
            self.ung = DeviceUngapped(self, st, ungapped_override)
        self.keep = None             # a dict: run_block stores its matched positions and pairs
        self.done_seg = 0            # segments whose results have been taken
        self._bufs = {}              # the blocks' buffers by role, reused (grown when too small)
        self._events = []            # (event, times key) of the block's launches
        self._held = []              # host arrays of the block's uploads not waited on
        self.results = {}            # oid -> [(hq, hs)] per chunk
        self._next_block = 0
        self._queue = None
        self._stop = threading.Event()
        if pipeline is None:
            pipeline = v["PIPELINE"]
        if pipeline and len(self.blocks) > 1:
            self._queue = queue.Queue(maxsize=AHEAD)
            self._thread = threading.Thread(target=self._produce, name="clalign-nscan", daemon=True)
            self._thread.start()
        self.times["device_setup"] = self.times.get("device_setup", 0.0) + time.perf_counter() - t0

    def _blocks(self, block_bases: int):
        """[(first segment, end segment)] of at most block_bases bases (one segment at least)."""
        length = self.seg[3]
        out, a = [], 0
        while a < len(length):
            e, total = a, 0
            while e < len(length) and (e == a or total + length[e] <= block_bases):
                total += int(length[e])
                e += 1
            out.append((a, e))
            a = e
        return out

    # ---- device work -------------------------------------------------------------------
    def _add(self, key, seconds):
        self.times[key] = self.times.get(key, 0.0) + seconds

    def _launch(self, kernel, n, key):
        """Enqueue ``kernel`` on ``n`` work-items (rounded up to work-groups); not waited on: the
        queue is in order and the next blocking read waits (kernel times: ``_kernel_times``)."""
        ev = cl.enqueue_nd_range_kernel(self.rt.queue, kernel, (-(-n // self.wg) * self.wg,),
                                        (self.wg,))
        self._events.append((ev, key))

    def _kernel_times(self):
        """Add the block's kernel times (profiling events) once a blocking read has passed them;
        the uploads' host arrays are free then too."""
        for ev, key in self._events:
            ev.wait()
            self._add(key, (ev.profile.end - ev.profile.start) * 1e-9)
        self._events = []
        self._held = []

    def _buffer(self, role: str, nbytes: int):
        """A device buffer of at least ``nbytes`` for ``role``, kept for the next blocks (one
        allocation per role and size class instead of a dozen per block). Reuse is safe on the
        in-order queue: a later write is queued behind every earlier reader."""
        got = self._bufs.get(role)
        if got is None or got.size < nbytes:
            size = max(16, nbytes, min(nbytes + nbytes // 4, self.alloc_limit()))
            got = self._bufs[role] = cl.Buffer(self.rt.ctx, cl.mem_flags.READ_WRITE, size)
        return got

    def _upload(self, role: str, a):
        """``_buffer(role)`` holding the array ``a``: a copy not waited on (``a`` is held until
        the block's last read, which the in-order queue puts after it)."""
        a = np.ascontiguousarray(a)
        buf = self._buffer(role, a.nbytes)
        if a.nbytes:
            self._write(buf, a)
        return buf

    def _write(self, buf, a):
        cl.enqueue_copy(self.rt.queue, buf, a, is_blocking=False)
        self._held.append(a)

    def _counters(self):
        got = np.zeros(4, np.uint32)
        cl.enqueue_copy(self.rt.queue, got, self.counters)
        return got

    def _read(self, buf, n, width):
        out = np.empty((n, width), np.uint32)
        if n:
            cl.enqueue_copy(self.rt.queue, out, buf)
        return out

    def _zero(self, index):
        got = self._counters()
        got[index] = 0
        self._write(self.counters, got)

    def _ordered(self, src, runs_buf, ngroups, n, width, key, role):
        """``src`` (n rows of ``width`` uints, written as work-group runs in any order) copied
        into the buffer of ``role`` with the runs in work-group order (nscan_order)."""
        q = self.rt.queue
        runs = np.empty((ngroups, 2), np.uint32)
        cl.enqueue_copy(q, runs, runs_buf)
        runs = runs[runs[:, 1] > 0]
        dst = self._buffer(role, 4 * width * max(n, 1))
        if len(runs):
            dest = np.zeros(len(runs), np.uint32)
            np.cumsum(runs[:-1, 1], out=dest[1:])
            b_runs = self._upload(role + "_runs", runs)
            b_dest = self._upload(role + "_dest", dest)
            self.k_order.set_args(src, dst, b_runs, b_dest, np.int32(width))
            self._launch(self.k_order, len(runs) * self.wg, key)
        return dst

    def block(self, a: int, e: int) -> dict:
        """Segments a..e-1: ``total`` scan positions, the host's ``pos0s`` (nseg + 1 entries),
        ``nseg``, ``segoff`` (bases of the block's segments before each) and, where ``total``,
        their uploads (buffers by role, not waited on): their bytes (``data``, 4 zero bytes
        after), per segment first byte, length and first scan position (``byte``, ``len``,
        ``pos0``)."""
        _, _, byte, length, npos = self.seg
        lo = int(byte[a])
        hi = int((byte[a:e] + (length[a:e] + 3) // 4).max())
        pos0 = np.zeros(e - a + 1, np.int64)
        np.cumsum(npos[a:e], out=pos0[1:])
        segoff = np.zeros(e - a, np.int32)
        segoff[1:] = np.cumsum(length[a:e - 1])
        blk = dict(pos0s=pos0, nseg=e - a, total=int(pos0[-1]), segoff=segoff)
        if blk["total"]:
            data = np.zeros(hi - lo + 4, np.uint8)      # 4 zero bytes past the block's last byte
            data[:hi - lo] = self.nt.data[lo:hi]
            blk.update(data=self._upload("data", data),
                       byte=self._upload("byte", (byte[a:e] - lo).astype(np.uint32)),
                       len=self._upload("len", length[a:e].astype(np.int32)),
                       pos0=self._upload("pos0", pos0[:-1].astype(np.uint32)))
        return blk

    def alloc_limit(self) -> int:
        """The largest buffer this device allocates (bytes: CL_DEVICE_MAX_MEM_ALLOC_SIZE)."""
        return int(self.rt.caps.max_alloc)

    def run_block(self, a: int, e: int) -> np.ndarray:
        """Word starts of segments a..e-1 in scan order: int64 rows (segment, q, s); with
        ``self.ung``, the segments' saved initial hits instead, sorted (rows (segment, q_off,
        s_off, q_start, s_start, length, score, context), :func:`nucl_device_ungapped.sort_hits`).
        A block whose word pairs would need a buffer larger than the device allocates (many
        short queries: ``-task blastn-short``'s words of 7 match most positions) is run as its
        two halves, in order; a single segment that still does not fit is an error."""
        offset = None if self.ung is None else self.ung.offset
        rows = self._run_block(a, e)
        if rows is not None:
            return rows
        if e - a == 1:
            raise DeviceError(
                f"blastn device: the word pairs of one {int(self.seg[3][a]):,}-base database "
                f"segment need more than the device's largest buffer ({self.alloc_limit():,} "
                f"bytes); search fewer queries at once, or without --device")
        if self.ung is not None:
            self.ung.offset = offset    # the halves enter their segments again
        m = (a + e) // 2
        return np.concatenate([self.run_block(a, m), self.run_block(m, e)])

    def _run_block(self, a: int, e: int):
        """``run_block``'s rows, or None when the block's pairs do not fit one buffer."""
        resets = None if self.ung is None else self.ung.enter(self.seg[3][a:e])
        empty = np.zeros((0, 3 if self.ung is None else 8), np.int64)
        t0 = time.perf_counter()
        blk = self.block(a, e)
        pos0, total, nseg = blk["pos0s"], blk["total"], blk["nseg"]
        if total == 0:
            if self.ung is not None:
                self.ung.skip(resets)
            return empty
        b_data, b_byte, b_len, b_pos0 = blk["data"], blk["byte"], blk["len"], blk["pos0"]
        groups = lambda n: -(-n // self.wg)
        self._write(self.counters, np.zeros(4, np.uint32))
        matched = self._buffer("matched", 8 * total)
        runs = self._buffer("runs_scan", 8 * groups(total))
        self._add("device_copies", time.perf_counter() - t0)
        self.k_scan.set_args(b_data, b_byte, b_pos0, np.int32(nseg), np.uint32(total), self.b_pv,
                             self.counters, matched, runs)
        self._launch(self.k_scan, total, "device_scan")
        nmatched = int(self._counters()[0])
        if nmatched == 0:
            self._kernel_times()
            if self.ung is not None:
                self.ung.skip(resets)
            return empty
        matched = self._ordered(matched, runs, groups(total), nmatched, 2, "device_order", "matched_o")
        # the extension's output (16 bytes a pair at most) bounds the pairs one block may have
        fit = self.alloc_limit() // 16
        room = min(max(MIN_ROOM, 2 * nmatched), fit)
        runs = self._buffer("runs_lookup", 8 * groups(nmatched))
        while True:
            pairs = self._buffer("pairs", 8 * room)
            self.k_lookup.set_args(matched, np.uint32(nmatched), self.b_cell, self.counters, pairs,
                                   np.uint32(room), runs)
            self._launch(self.k_lookup, nmatched, "device_lookup")
            npairs = int(self._counters()[1])
            if npairs <= room:
                break
            if npairs > fit:
                self._kernel_times()
                return None
            room = npairs
            self._zero(1)
        pairs = self._ordered(pairs, runs, groups(nmatched), npairs, 2, "device_order", "pairs_o")
        if self.keep is not None:   # the tests' view of the first two kernels' outputs
            self.keep.update(pos0=pos0, matched=self._read(matched, nmatched, 2),
                             pairs=self._read(pairs, npairs, 2))
        room = npairs if self.values["EXT"] == 0 else max(MIN_ROOM, npairs // 4)
        runs = self._buffer("runs_extend", 8 * groups(npairs))
        while True:
            out = self._buffer("out", 16 * max(room, 1))
            self.k_extend.set_args(pairs, np.uint32(npairs), b_data, b_byte, b_len, b_pos0,
                                   np.int32(nseg), self.b_qoffs, self.b_q, np.int32(self.qn),
                                   self.b_cq, self.b_ctx_off, self.b_ctx_len, np.int32(self.nctx),
                                   self.counters, out, np.uint32(room), runs)
            self._launch(self.k_extend, npairs, "device_extend")
            nout = int(self._counters()[2])
            if nout <= room:
                break
            room = nout
            self._zero(2)
        out = self._ordered(out, runs, groups(npairs), nout, 4, "device_order", "out_o")
        counts = self.times.setdefault("device_counts", {"positions": 0, "matched": 0, "pairs": 0,
                                                         "words": 0})
        counts["positions"] += total
        counts["matched"] += nmatched
        counts["pairs"] += npairs
        counts["words"] += nout
        if self.ung is not None:
            if nout == 0:
                self._kernel_times()
                self.ung.skip(resets)
                return empty
            rows = self.ung.run(out, nout, blk, resets)     # its last read passes every launch
            counts["saved"] = counts.get("saved", 0) + len(rows)
            rows[:, 0] += a
            return np.delete(rows, 1, axis=1)
        t0 = time.perf_counter()
        rows = self._read(out, nout, 4).view(np.int32)
        self._add("device_copies", time.perf_counter() - t0)
        self._kernel_times()
        t0 = time.perf_counter()
        seg = np.searchsorted(pos0[1:], rows[:, 0].astype(np.int64), side="right")
        self._add("device_split", time.perf_counter() - t0)
        return np.column_stack([seg + a, rows[:, 2], rows[:, 3]]).astype(np.int64)

    # ---- results in CPU order ----------------------------------------------------------
    def _produce(self):
        try:
            for a, e in self.blocks:
                item = (a, e, self.run_block(a, e))
                while not self._stop.is_set():
                    try:
                        self._queue.put(item, timeout=0.5)
                        break
                    except queue.Full:
                        continue
                if self._stop.is_set():
                    return
        except BaseException as exc:   # handed to the consumer, raised there
            self._queue.put(("error", exc, None))

    def _take_block(self):
        if self._queue is None:
            a, e = self.blocks[self._next_block]
            rows = self.run_block(a, e)
        else:
            a, e, rows = self._queue.get()
            if a == "error":
                raise e
        self._next_block += 1
        oid = self.seg[0]
        cuts = np.searchsorted(rows[:, 0], np.arange(a, e + 1))
        for g in range(a, e):
            r = rows[cuts[g - a]:cuts[g - a + 1]]
            self.results.setdefault(int(oid[g]), []).append(
                (r[:, 1].copy(), r[:, 2].copy()) if self.ung is None else np.ascontiguousarray(r[:, 1:]))
        self.done_seg = e

    def pairs(self, oid: int):
        """[(hq, hs)] word starts of each chunk of subject ``oid`` (scan order; int64); with
        ``self.ung``, each chunk's saved initial hits (int64 rows (q_off, s_off, q_start,
        s_start, length, score, context), sorted as :func:`nucl_search.initial_hits`)."""
        t0 = time.perf_counter()
        while self.done_seg <= self.last_seg[oid]:
            self._take_block()
        self.times["device_wait"] = self.times.get("device_wait", 0.0) + time.perf_counter() - t0
        return self.results.pop(oid, [])

    def close(self):
        """Stop the producer thread (a search that ends early)."""
        self._stop.set()
