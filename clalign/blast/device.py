"""BLASTP phases 2-4 on an OpenCL device (``kernels/blast_ungapped.mako``), cuBLASTP's split.

Two kernel designs (``KERNEL``): 'sorted' -- for a block of subjects the device finds every
word hit (one work-item per residue position, output space reserved with one global atomic per
work-group), the host sorts the packed keys (subject, diagonal, position) so each diagonal's hits
are contiguous and in subject order, and the device applies BLAST+'s two-hit rule and ungapped
extension with one work-item per diagonal run; 'subject' (default, no key array and no sort) --
one work-item scans a whole subject (longest subjects first) with its diagonal state in global
memory. The result is the same set of initial HSPs as ``ungapped_nb.two_hit_db`` (rows: subject,
score, q_start, s_start, length, q_off, s_off), ordered by ``sort_init_hsps``.

Subjects are uploaded once (blocks of at most ``BLOCK_RESIDUES`` residues and 2**22 subjects,
separated by SEPARATOR) and reused for every query.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl

from ..errors import InputError
from ..runtime import Runtime, choose
from .params import BLAST_UNGAPPED, KEY_DIAG_BITS, KEY_POS_BITS, KEY_SUBJ_BITS, SEPARATOR
from .ungapped_nb import sort_init_hsps

BLOCK_RESIDUES = 1 << 25


@dataclass
class _Block:
    first: int
    last: int
    n: int                  # word start positions (stream length without the tail pad)
    max_slen: int
    res: cl.Buffer
    base: cl.Buffer
    lens: cl.Buffer
    lens_host: np.ndarray
    order: cl.Buffer        # blast_scan tasks (subject << 8 | bucket), longest subjects first
    ntasks: int
    nbuckets: cl.Buffer     # uint8 per subject
    diag: cl.Buffer = None  # diagonal state of blast_scan, grown on demand
    diag_size: int = 0


@dataclass
class PhaseTimes:
    """Seconds per phase (device kernels from profiling events; sort and copies on the host)."""

    hits: float = 0.0
    sort: float = 0.0
    two_hit: float = 0.0
    copies: float = 0.0
    counts: dict = field(default_factory=lambda: {"hits": 0, "init_hsps": 0})


class DeviceUngapped:
    """Word hits, two-hit rule and ungapped extension of queries against fixed subjects."""

    def __init__(self, subjects, device=None, override=None, block_residues=BLOCK_RESIDUES):
        self.rt = Runtime.get(device)
        self.values = choose(BLAST_UNGAPPED, {}, None, override)
        self.prg = self.rt.program("blast_ungapped.mako", BLAST_UNGAPPED, self.values)
        self.k_hits = cl.Kernel(self.prg, "blast_hits")
        self.k_two_hit = cl.Kernel(self.prg, "blast_two_hit")
        self.k_scan = cl.Kernel(self.prg, "blast_scan")
        self.kernel = self.values["KERNEL"]
        self.lock = threading.Lock()   # kernels' arguments are per object: one query at a time
        self.wg = self.values["WG"]
        self.word = self.values["WORD"]
        self.subjects = subjects
        self.times = PhaseTimes()
        lengths = np.diff(subjects.offsets)
        if len(lengths) and lengths.max() >= (1 << KEY_POS_BITS):
            raise InputError(f"subjects longer than {(1 << KEY_POS_BITS) - 1} residues are not "
                             "supported on the device path")
        self.blocks = []
        first = 0
        while first < len(lengths):
            last, total = first, 0
            while last < len(lengths) and last - first < (1 << KEY_SUBJ_BITS) and (
                    last == first or total + lengths[last] + 1 <= block_residues):
                total += int(lengths[last]) + 1
                last += 1
            self.blocks.append(self._upload(first, last))
            first = last

    def _upload(self, first, last):
        s = self.subjects
        lens = np.diff(s.offsets[first:last + 1]).astype(np.int32)
        base = np.zeros(len(lens), dtype=np.int64)
        base[1:] = np.cumsum(lens[:-1] + 1)
        n = int(base[-1] + lens[-1] + 1) if len(lens) else 0
        stream = np.full(n + self.word, SEPARATOR, dtype=np.uint8)
        src = s.residues[s.offsets[first]:s.offsets[last]]
        idx = np.repeat(base - np.concatenate([[0], np.cumsum(lens[:-1])]), lens) + np.arange(len(src))
        stream[idx] = src
        mf = cl.mem_flags
        ctx = self.rt.ctx
        split = self.values["SPLIT"]
        nb = np.ones(len(lens), dtype=np.uint8) if split == 0 else \
            np.clip((lens + split - 1) // split, 1, 255).astype(np.uint8)
        by_len = np.argsort(-lens, kind="stable").astype(np.int32)
        reps = nb[by_len].astype(np.int64)
        subj = np.repeat(by_len, reps)
        bucket = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        tasks = ((subj.astype(np.int64) << 8) | bucket).astype(np.int32)
        buf = lambda a: cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        return _Block(first, last, n, int(lens.max()) if len(lens) else 0, buf(stream), buf(base),
                      buf(lens), lens, buf(tasks), len(tasks), buf(nb))

    def _event_seconds(self, ev):
        ev.wait()
        return (ev.profile.end - ev.profile.start) * 1e-9

    def initial_hsps(self, qs) -> np.ndarray:
        """Initial HSPs of one query set up by ``engine.setup_query`` (sorted as the CPU path)."""
        with self.lock:
            return self._initial_hsps(qs)

    def _initial_hsps(self, qs) -> np.ndarray:
        ctx, queue, mf = self.rt.ctx, self.rt.queue, cl.mem_flags
        lk = qs.lookup
        present = np.packbits(lk.present.astype(np.uint8), bitorder="little").view(np.uint8)
        present = np.concatenate([present, np.zeros((-len(present)) % 4, np.uint8)]).view(np.uint32)
        bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))
                for a in (present, lk.starts.astype(np.int32), lk.qoffs.astype(np.int32),
                          qs.codes.astype(np.uint8), qs.matrix[:28, :28].astype(np.int32).ravel())]
        b_present, b_starts, b_qoffs, b_query, b_matrix = bufs
        counter = cl.Buffer(ctx, mf.READ_WRITE, 4)
        out_rows = []
        for blk in self.blocks:
            if blk.max_slen + len(qs.codes) >= (1 << KEY_DIAG_BITS):
                raise InputError("query and subject too long for the device key layout")
            if self.kernel == "subject":
                rows = self._scan(blk, qs, b_query, b_matrix, b_present, b_starts, b_qoffs, counter)
            else:
                keys = self._hits(blk, b_present, b_starts, b_qoffs, counter)
                if len(keys) == 0:
                    continue
                rows = self._two_hit(blk, keys, qs, b_query, b_matrix, counter)
            rows[:, 0] += blk.first
            out_rows.append(rows)
        rows = np.concatenate(out_rows) if out_rows else np.zeros((0, 7), dtype=np.int32)
        self.times.counts["init_hsps"] += len(rows)
        return sort_init_hsps(rows)

    def _scan(self, blk, qs, b_query, b_matrix, b_present, b_starts, b_qoffs, counter):
        ctx, queue, mf = self.rt.ctx, self.rt.queue, cl.mem_flags
        qlen = len(qs.codes)
        span = blk.lens_host.astype(np.int64) + qlen + 1
        dbase = np.zeros(len(span), dtype=np.int64)
        dbase[1:] = np.cumsum(span[:-1])
        need = int(span.sum())
        if need > blk.diag_size:
            blk.diag = cl.Buffer(ctx, mf.READ_WRITE, 4 * need)
            blk.diag_size = need
        b_dbase = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=dbase)
        nsubj = blk.last - blk.first
        gsize = ((blk.ntasks + self.wg - 1) // self.wg) * self.wg
        capacity = max(1024, nsubj // 4)
        zero = np.zeros(1, dtype=np.uint32)
        while True:
            fill = cl.enqueue_fill_buffer(queue, blk.diag, np.int32(-2 ** 31), 0, 4 * need)
            out = cl.Buffer(ctx, mf.READ_WRITE, 28 * capacity)
            cl.enqueue_copy(queue, counter, zero)
            self.k_scan.set_args(blk.order, np.int32(blk.ntasks), blk.nbuckets, b_query,
                                 np.int32(qlen), blk.res,
                                 blk.base, blk.lens, b_dbase, blk.diag, b_present, b_starts,
                                 b_qoffs, b_matrix, np.int32(qs.opts.window),
                                 np.int32(qs.xdrop_ungapped), np.int32(qs.cutoff_ungapped), out,
                                 np.uint32(capacity), counter)
            ev = cl.enqueue_nd_range_kernel(queue, self.k_scan, (gsize,), (self.wg,))
            self.times.two_hit += self._event_seconds(ev) + self._event_seconds(fill)
            got = np.zeros(1, dtype=np.uint32)
            cl.enqueue_copy(queue, got, counter)
            total = int(got[0])
            if total <= capacity:
                break
            capacity = total
        rows = np.empty((total, 7), dtype=np.int32)
        if total:
            cl.enqueue_copy(queue, rows, out)
        return rows

    def _hits(self, blk, b_present, b_starts, b_qoffs, counter):
        ctx, queue = self.rt.ctx, self.rt.queue
        capacity = max(1 << 16, blk.n * 2)
        zero = np.zeros(1, dtype=np.uint32)
        gsize = ((blk.n + self.wg - 1) // self.wg) * self.wg
        while True:
            keys_buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 8 * capacity)
            cl.enqueue_copy(queue, counter, zero)
            self.k_hits.set_args(blk.res, np.int64(blk.n), blk.base, np.int32(blk.last - blk.first),
                                 b_present, b_starts, b_qoffs, np.int32(blk.max_slen), keys_buf,
                                 np.uint32(capacity), counter)
            ev = cl.enqueue_nd_range_kernel(queue, self.k_hits, (gsize,), (self.wg,))
            self.times.hits += self._event_seconds(ev)
            got = np.zeros(1, dtype=np.uint32)
            cl.enqueue_copy(queue, got, counter)
            total = int(got[0])
            if total <= capacity:
                break
            capacity = total
        t0 = time.perf_counter()
        keys = np.empty(total, dtype=np.uint64)
        if total:
            cl.enqueue_copy(queue, keys, keys_buf)
        t1 = time.perf_counter()
        keys.sort()
        t2 = time.perf_counter()
        self.times.copies += t1 - t0
        self.times.sort += t2 - t1
        self.times.counts["hits"] += total
        return keys

    def _two_hit(self, blk, keys, qs, b_query, b_matrix, counter):
        ctx, queue, mf = self.rt.ctx, self.rt.queue, cl.mem_flags
        t0 = time.perf_counter()
        b_keys = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=keys)
        self.times.copies += time.perf_counter() - t0
        capacity = max(1024, len(keys) // 8)
        zero = np.zeros(1, dtype=np.uint32)
        gsize = ((len(keys) + self.wg - 1) // self.wg) * self.wg
        while True:
            out = cl.Buffer(ctx, mf.READ_WRITE, 28 * capacity)
            cl.enqueue_copy(queue, counter, zero)
            self.k_two_hit.set_args(b_keys, np.uint32(len(keys)), b_query, np.int32(len(qs.codes)),
                                    blk.res, blk.base, blk.lens, b_matrix, np.int32(blk.max_slen),
                                    np.int32(qs.opts.window), np.int32(qs.xdrop_ungapped),
                                    np.int32(qs.cutoff_ungapped), out, np.uint32(capacity), counter)
            ev = cl.enqueue_nd_range_kernel(queue, self.k_two_hit, (gsize,), (self.wg,))
            self.times.two_hit += self._event_seconds(ev)
            got = np.zeros(1, dtype=np.uint32)
            cl.enqueue_copy(queue, got, counter)
            total = int(got[0])
            if total <= capacity:
                break
            capacity = total
        rows = np.empty((total, 7), dtype=np.int32)
        if total:
            cl.enqueue_copy(queue, rows, out)
        return rows
