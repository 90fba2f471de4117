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
scan order (position, then the cell's query offsets in table order) with no sort. Pipeline:
feeder threads run the blocks ahead (at most ``AHEAD`` finished blocks waiting), so the device
works on block i+1 while the CPU extends block i. With ``LANES`` = 2 two feeders, each with its
own queue and buffers (:class:`~nucl_lane.Lane`), take alternate blocks: a block's first phase
(everything up to the device ungapped stage's speculative kernel) runs at once, its second
(the stage's redo, which reads the diagonal store carried from the block before) in block
order, so one block's host work between kernels overlaps the other's kernels.
"""
from __future__ import annotations

import queue
import threading
import time

import numpy as np

from ..errors import DeviceError, ParameterError
from ..runtime import Runtime, choose
from ..runtime.tuning import lookup
from .nucl_lane import Lane
from .nucl_search import subject_chunks
from .nucl_upload import Uploads
from .nucl_words import EXTENDERS
from .params import BLASTN_SCAN

AHEAD = 2                      # finished blocks the producer may hold before the CPU takes them
#: Least room (entries) of the pair and survivor buffers; a launch that finds more is repeated.
MIN_ROOM = 1 << 16
HOST_PARAMS = ("WG", "USE", "BLOCK_BASES", "PIPELINE", "LANES", "UNGAPPED", "PRELIM")


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
        # the search's read-only buffers, copied on a thread (Uploads) while the program loads
        # and the blocks are planned; every lane orders itself after the copies (Lane.launch)
        self.uploads = up = Uploads(rt)
        b = st.batch
        self.qn = len(b.seq)
        self.nctx = len(b.offsets)
        self.b_pv = up.add(flat.present)
        self.b_cell = up.add(flat.cell_start.view(np.uint32))   # int32 counts below 2**31
        self.b_qoffs = up.add(np.asarray(flat.q_offs, np.int32))
        self.b_q = up.add(np.asarray(b.seq, np.uint8))
        self.b_cq = up.add(np.asarray(st.compressed_query, np.uint8))
        self.b_ctx_off = up.add(b.offsets.astype(np.int32))
        self.b_ctx_len = up.add(b.lengths.astype(np.int32))
        up.start()
        self.prg = rt.program("blast_nucl.mako", BLASTN_SCAN, v)
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
            self.ung = DeviceUngapped(self, st, ungapped_override,
                                      prelim=v["PRELIM"] and not st.opts.greedy)
        self.keep = None             # a dict: run_block stores its matched positions and pairs
        self.done_seg = 0            # segments whose results have been taken
        self.results = {}            # oid -> [(hq, hs)] per chunk
        self._next_block = 0
        self._arrived = {}           # blocks queued ahead of the one the consumer needs next
        self._queue = None
        self._stop = threading.Event()
        if pipeline is None:
            pipeline = v["PIPELINE"]
        pipeline = pipeline and len(self.blocks) > 1
        nlanes = v["LANES"] if pipeline else 1
        self._lock = threading.Lock()
        self.lanes = [Lane(rt, rt.queue if i == 0 else rt.new_queue(), self.times, self._lock,
                           self.wg) for i in range(nlanes)]
        for lane in self.lanes:      # every kernel of a lane after the copies of the uploads
            lane.before_first = up.order
        if pipeline:
            self._queue = queue.Queue(maxsize=AHEAD)
            self._turn = threading.Condition()
            self._next_turn = 0      # the block whose second phase may run now
            self._threads = [threading.Thread(target=self._produce, args=(i,), daemon=True,
                                              name=f"clalign-nscan-{i}") for i in range(nlanes)]
            for t in self._threads:
                t.start()
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
    def _ordered(self, lane, src, runs, ngroups, n, width, key, role):
        """``src`` (n rows of ``width`` uints, written as the ``ngroups`` work-groups' runs in any
        order; ``runs`` their (start, count) buffer) copied into the buffer of ``role`` with the
        runs in work-group order: nscan_dest sums the counts, nscan_order moves the runs, both
        on the device and not waited on."""
        dst = lane.buffer(role, 4 * width * max(n, 1))
        if n:
            dest = lane.buffer(role + "_dest", 4 * ngroups)
            k = lane.kernel(self.prg, "nscan_dest")
            k.set_args(runs, np.uint32(ngroups), dest)
            lane.launch(k, self.wg, key)
            k = lane.kernel(self.prg, "nscan_order")
            k.set_args(src, dst, runs, dest, np.int32(width))
            lane.launch(k, ngroups * self.wg, key)
        return dst

    def block(self, a: int, e: int, lane=None) -> dict:
        """Segments a..e-1: ``total`` scan positions, the host's ``pos0s`` (nseg + 1 entries),
        ``nseg``, ``segoff`` (bases of the block's segments before each) and, where ``total``,
        their uploads on ``lane`` (default the first; buffers by role, not waited on): their
        bytes (``data``, 4 zero bytes after), per segment first byte, length and first scan
        position (``byte``, ``len``, ``pos0``)."""
        lane = lane or self.lanes[0]
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
            blk.update(data=lane.upload("data", data),
                       byte=lane.upload("byte", (byte[a:e] - lo).astype(np.uint32)),
                       len=lane.upload("len", length[a:e].astype(np.int32)),
                       pos0=lane.upload("pos0", pos0[:-1].astype(np.uint32)))
        return blk

    def alloc_limit(self) -> int:
        """The largest buffer this device allocates (bytes: CL_DEVICE_MAX_MEM_ALLOC_SIZE)."""
        return int(self.rt.caps.max_alloc)

    def run_block(self, a: int, e: int, lane=None) -> np.ndarray:
        """Word starts of segments a..e-1 in scan order: int64 rows (segment, q, s); with
        ``self.ung``, the segments' saved initial hits instead, in no particular order (rows
        (segment, word index, q_off, s_off, q_start, s_start, length, score, context, then
        the device DP's results where it runs: ``DeviceUngapped.width`` columns)).
        A block whose word pairs would need a buffer larger than the device allocates (many
        short queries: ``-task blastn-short``'s words of 7 match most positions) is run as its
        two halves, in order; a single segment that still does not fit is an error. The two
        phases (:meth:`_start`, :meth:`_finish`) on ``lane`` (default the first)."""
        lane = lane or self.lanes[0]
        return self._finish(self._start(a, e, lane), lane)

    def _start(self, a: int, e: int, lane) -> dict:
        """A block's first phase, which depends on no other block: uploads, scan, lookup,
        mini-extension (and the device's ungapped stage up to its speculative kernel). Returns
        the job :meth:`_finish` completes: ``rows`` when already final, ``halves`` when the
        block's pairs do not fit one buffer, ``ung`` the ungapped stage's state."""
        job = dict(a=a, e=e, rows=None, halves=False, counts=None, ung=None,
                   resets=None if self.ung is None else self.ung.resets(a, e))
        t0 = time.perf_counter()
        blk = self.block(a, e, lane)
        pos0, total, nseg = blk["pos0s"], blk["total"], blk["nseg"]
        if total == 0:
            return job
        b_data, b_byte, b_len, b_pos0 = blk["data"], blk["byte"], blk["len"], blk["pos0"]
        groups = lambda n: -(-n // self.wg)
        lane.write(lane.counters, np.zeros(4, np.uint32))
        matched = lane.buffer("matched", 8 * total)
        runs = lane.buffer("runs_scan", 8 * groups(total))
        lane.add("device_copies", time.perf_counter() - t0)
        k = lane.kernel(self.prg, "nscan_scan")
        k.set_args(b_data, b_byte, b_pos0, np.int32(nseg), np.uint32(total), self.b_pv,
                   lane.counters, matched, runs)
        lane.launch(k, total, "device_scan")
        nmatched = int(lane.read_counters()[0])
        if nmatched == 0:
            lane.kernel_times()
            return job
        matched = self._ordered(lane, matched, runs, groups(total), nmatched, 2, "device_order",
                                "matched_o")
        # the extension's output (16 bytes a pair at most) bounds the pairs one block may have
        fit = self.alloc_limit() // 16
        room = min(max(MIN_ROOM, 2 * nmatched), fit)
        runs = lane.buffer("runs_lookup", 8 * groups(nmatched))
        k = lane.kernel(self.prg, "nscan_lookup")
        while True:
            pairs = lane.buffer("pairs", 8 * room)
            k.set_args(matched, np.uint32(nmatched), self.b_cell, lane.counters, pairs,
                       np.uint32(room), runs)
            lane.launch(k, nmatched, "device_lookup")
            npairs = int(lane.read_counters()[1])
            if npairs <= room:
                break
            if npairs > fit:
                lane.kernel_times()
                job["halves"] = True
                return job
            room = npairs
            lane.zero(1)
        pairs = self._ordered(lane, pairs, runs, groups(nmatched), npairs, 2, "device_order",
                              "pairs_o")
        if self.keep is not None:   # the tests' view of the first two kernels' outputs
            self.keep.update(pos0=pos0, matched=lane.read(matched, nmatched, 2),
                             pairs=lane.read(pairs, npairs, 2))
        room = npairs if self.values["EXT"] == 0 else max(MIN_ROOM, npairs // 4)
        runs = lane.buffer("runs_extend", 8 * groups(npairs))
        k = lane.kernel(self.prg, "nscan_extend")
        while True:
            out = lane.buffer("out", 16 * max(room, 1))
            k.set_args(pairs, np.uint32(npairs), b_data, b_byte, b_len, b_pos0, np.int32(nseg),
                       self.b_qoffs, self.b_q, np.int32(self.qn), self.b_cq, self.b_ctx_off,
                       self.b_ctx_len, np.int32(self.nctx), lane.counters, out, np.uint32(room),
                       runs)
            lane.launch(k, npairs, "device_extend")
            nout = int(lane.read_counters()[2])
            if nout <= room:
                break
            room = nout
            lane.zero(2)
        out = self._ordered(lane, out, runs, groups(npairs), nout, 4, "device_order", "out_o")
        job["counts"] = (total, nmatched, npairs, nout)
        if self.ung is not None:
            if nout == 0:
                lane.kernel_times()
            else:
                job["ung"] = self.ung.start(out, nout, blk, job["resets"], lane)
            return job
        t0 = time.perf_counter()
        rows = lane.read(out, nout, 4).view(np.int32)
        lane.add("device_copies", time.perf_counter() - t0)
        lane.kernel_times()
        t0 = time.perf_counter()
        seg = np.searchsorted(pos0[1:], rows[:, 0].astype(np.int64), side="right")
        job["rows"] = np.column_stack([seg + a, rows[:, 2], rows[:, 3]]).astype(np.int64)
        lane.add("device_split", time.perf_counter() - t0)
        return job

    def _finish(self, job: dict, lane) -> np.ndarray:
        """A block's second phase: :meth:`_settle`, then :meth:`_rows`."""
        self._settle(job, lane)
        return self._rows(job, lane)

    def _settle(self, job: dict, lane) -> None:
        """The part of a block's second phase that must follow the block before it (the
        ungapped stage's diagonal store carries from block to block): its redo and the store's
        state after it; a block run as halves runs whole here."""
        a, e = job["a"], job["e"]
        if job["halves"]:
            if e - a == 1:
                raise DeviceError(
                    f"blastn device: the word pairs of one {int(self.seg[3][a]):,}-base database "
                    f"segment need more than the device's largest buffer ({self.alloc_limit():,} "
                    f"bytes); search fewer queries at once, or without --device")
            m = (a + e) // 2
            job["rows"] = np.concatenate([self.run_block(a, m, lane), self.run_block(m, e, lane)])
            return
        with self._lock:
            counts = self.times.setdefault("device_counts", {"positions": 0, "matched": 0,
                                                             "pairs": 0, "words": 0})
            if job["counts"] is not None:
                for key, n in zip(("positions", "matched", "pairs", "words"), job["counts"]):
                    counts[key] += n
        if self.ung is not None:
            if job["ung"] is None:
                self.ung.skip(job["resets"])
            else:
                self.ung.settle(job["ung"], lane)

    def _rows(self, job: dict, lane) -> np.ndarray:
        """The rows of :meth:`run_block` of a settled block (needs no other block)."""
        if job["rows"] is not None:
            return job["rows"]
        if self.ung is None:
            return np.zeros((0, 3), np.int64)
        if job["ung"] is None:
            return np.zeros((0, self.ung.width), np.int64)
        rows = self.ung.rows(job["ung"], lane)    # its last read passes every launch
        with self._lock:
            counts = self.times["device_counts"]
            counts["saved"] = counts.get("saved", 0) + len(rows)
        rows[:, 0] += job["a"]
        return rows

    # ---- results in CPU order ----------------------------------------------------------
    def _produce(self, li: int):
        """Feeder thread of lane ``li``: the blocks li, li + LANES, ...; each block's first
        phase at once, its settling when the block before it has settled, then its rows (the
        other lane settles its next block meanwhile); queued with their block's index, the
        consumer puts them back in order."""
        lane, step = self.lanes[li], len(self.lanes)
        try:
            for i in range(li, len(self.blocks), step):
                a, e = self.blocks[i]
                job = self._start(a, e, lane)
                with self._turn:
                    while self._next_turn != i and not self._stop.is_set():
                        self._turn.wait(0.5)
                if self._stop.is_set():
                    return
                self._settle(job, lane)
                with self._turn:
                    self._next_turn = i + 1
                    self._turn.notify_all()
                item = (i, a, e, self._rows(job, lane))
                while not self._stop.is_set():
                    try:
                        self._queue.put(item, timeout=0.5)
                        break
                    except queue.Full:
                        continue
                if self._stop.is_set():
                    return
        except BaseException as exc:   # handed to the consumer, raised there
            self._stop.set()
            with self._turn:
                self._turn.notify_all()
            self._queue.put(("error", exc, None, None))

    def _take_block(self):
        if self._queue is None:
            a, e = self.blocks[self._next_block]
            rows = self.run_block(a, e)
        else:
            while self._next_block not in self._arrived:   # lanes may finish out of order
                i, a, e, rows = self._queue.get()
                if i == "error":
                    raise a
                self._arrived[i] = (a, e, rows)
            a, e, rows = self._arrived.pop(self._next_block)
        self._next_block += 1
        oid = self.seg[0]
        seg = rows[:, 0]
        order = None
        if self.ung is not None:    # the saved hits: grouped by segment here, sorted by hits()
            order = np.argsort(seg, kind="stable")
            seg = seg[order]
        cuts = np.searchsorted(seg, np.arange(a, e + 1))
        for g in range(a, e):
            if order is None:
                r = rows[cuts[g - a]:cuts[g - a + 1]]
                got = (r[:, 1].copy(), r[:, 2].copy())
            else:
                got = rows[order[cuts[g - a]:cuts[g - a + 1]], 1:]
            self.results.setdefault(int(oid[g]), []).append(got)
        self.done_seg = e

    def pairs(self, oid: int, raw: bool = False):
        """[(hq, hs)] word starts of each chunk of subject ``oid`` (scan order; int64); with
        ``self.ung``, each chunk's saved initial hits (int64 rows (q_off, s_off, q_start,
        s_start, length, score, context), sorted as :func:`nucl_search.initial_hits`; with the
        device's preliminary DP, its 8 results follow: ``nucl_stages_nb.prelim_rows``' ``pre``), or
        with ``raw`` their unsorted rows for :meth:`hits` (so that callers sharing this object
        under a lock sort outside it)."""
        t0 = time.perf_counter()
        while self.done_seg <= self.last_seg[oid]:
            self._take_block()
        self.times["device_wait"] = self.times.get("device_wait", 0.0) + time.perf_counter() - t0
        got = self.results.pop(oid, [])
        return got if raw else [self.hits(c) for c in got]

    def hits(self, chunk):
        """A chunk of :meth:`pairs` ``(raw=True)`` as :meth:`pairs` gives it."""
        if self.ung is None:
            return chunk
        from .nucl_device_ungapped import segment_hits
        return segment_hits(chunk)

    def close(self):
        """Stop the feeder threads (a search that ends early)."""
        self._stop.set()
