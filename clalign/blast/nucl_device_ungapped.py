"""BLASTN word starts extended on the device: diagonal test, word check, ungapped extension.

The host of ``kernels/blast_nucl_ungapped.mako``, run by :class:`nucl_device.NuclDeviceWords`
on each block's word starts (the mini-extension's output, left on the device) when
``BLASTN_SCAN.UNGAPPED`` sends the search there. The result of a block is every segment's saved
initial hits sorted as ``Blast_InitHitListSortByScore`` -- exactly what
:func:`nucl_search.initial_hits` gives with one :class:`~nucl_words.DiagState` carried over
the database's segments in order (the CPU path on one thread, BLAST+ on one thread).

Why a word start's decision depends on its key only (one-hit searches, window 0):

- the diagonal test reads the store's entry of the start's diagonal, the update writes it; the
  word check and the extension read only the query, the subject and the lookup table;
- positions carry BLAST+'s running offset (the bases of the segments before), so an entry made
  in an earlier segment ends at or before the current segment's first position: it never
  blocks, and the hash store holds it as stale;
- array store (batch of at most ``QUERY_LEN_FOR_HASH`` bases; ``2^k >= `` batch length cells,
  diagonal ``s - q`` folded to ``(s + 2^k - q) mod 2^k``): two diagonals of one segment that
  share a cell differ by ``2^k``; the end written on the lower one is at most ``2^k`` past it
  (an extension's query end is at most the batch length), so it never blocks a start of the
  upper one, and a start of the lower one comes at least ``word - (word - width)`` positions
  before a start of the upper one in scan order (a word's query end fits the batch), so the
  upper one's entry cannot block it either: each cell behaves as one diagonal per segment;
- hash store: a bucket's chain is shared by its diagonals (a stale cell of one diagonal, whose
  end lies before ``s + word - 1``, may be reused by another), so the key is the bucket; its
  state entering a segment is its chain's length (all cells stale there; which cell a diagonal
  reuses depends on that length, their contents never matter), carried from block to block
  in ``self.k``, and cleared where BLAST+'s ``Blast_ExtendWordExit`` clears the store.

So the kernel's work-items take one key each (``NBUCKET`` of them: the hash buckets, or the
array's cells modulo ``NBUCKET``) and walk its starts in scan order; the starts are put in key
order by a stable counting sort on the device (the host sums the histogram).
"""
from __future__ import annotations

import time

import numpy as np
import pyopencl as cl

from . import nucl_words
from .params import BLASTN_UNGAPPED, NW_KEYS

ROW = 10                 # ints per saved hit written by nw_extend
MAX_BLOCK_POSITION = 1 << 30      # block positions (and the kernel's STALE) stay in an int


def diag_length(query_length: int) -> int:
    """Cells of BLAST+'s diagonal array: the least power of two >= the batch length."""
    n = 1
    while n < query_length:
        n <<= 1
    return n


def ungapped_values(flat, batch_length: int, override=None) -> dict:
    """Template values (validated) of one search: the search's width, word, store and extender
    rule; WG and TILE from ``override`` or the defaults."""
    v = {p.name: p.default for p in BLASTN_UNGAPPED.all()}
    v.update({k: x for k, x in dict(override or {}).items() if k in ("WG", "TILE")})
    v.update(WIDTH=flat.width, WORD=flat.word_size,
             HASH=batch_length > nucl_words.QUERY_LEN_FOR_HASH,
             EXACT=flat.word_size < nucl_words.EXACT_WORD_BELOW)
    return BLASTN_UNGAPPED.validate(v)


def sort_hits(rows: np.ndarray) -> np.ndarray:
    """``nw_extend``'s rows (segment, word index, q_off, s_off, q_start, s_start, length,
    score, context) in segment order, each segment's as ``Blast_InitHitListSortByScore`` (score
    desc, s_start, length desc, q_start) with scan order last (the CPU path's stable sort)."""
    order = np.lexsort((rows[:, 1], rows[:, 4], -rows[:, 6], rows[:, 5], -rows[:, 7], rows[:, 0]))
    return rows[order]


class DeviceUngapped:
    """The per-search kernels, constant buffers and carried diagonal-store state."""

    def __init__(self, dev, st, override=None):
        self.dev = dev
        rt, b, f = dev.rt, st.batch, st.flat
        self.values = v = ungapped_values(f, len(b.seq), override)
        prg = rt.program("blast_nucl_ungapped.mako", BLASTN_UNGAPPED, v)
        self.k_hist = cl.Kernel(prg, "nw_hist")
        self.k_scatter = cl.Kernel(prg, "nw_scatter")
        self.k_extend = cl.Kernel(prg, "nw_extend")
        ctx, mf = rt.ctx, cl.mem_flags
        ro = lambda a: cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                                 hostbuf=np.ascontiguousarray(a, dtype=np.int32))
        self.b_matrix = ro(np.asarray(st.matrix).reshape(-1))
        self.b_table = ro(st.score_table)
        self.b_cutoff = ro(st.cutoff_ungapped)
        self.b_xdrop = ro(st.xdrop_ungapped)
        self.b_reduced = ro(st.reduced_cutoff)
        self.dlen = diag_length(len(b.seq))
        self.hash = v["HASH"]
        self.k = np.zeros(NW_KEYS, np.int32)     # each bucket's chain length (hash store)
        self.offset = 0                          # DiagState.offset of the CPU path

    def enter(self, lengths) -> np.ndarray:
        """Follow ``DiagState.exit_subject`` over a block's segments: int32 resets[g] = store
        clears before segment g of the block (resets[-1]: after its last)."""
        out = np.zeros(len(lengths) + 1, np.int32)
        r = 0
        for i, n in enumerate(np.asarray(lengths).tolist()):
            out[i] = r
            if self.offset >= nucl_words.INT4_MAX // 4:
                self.offset = 0
                r += 1
            else:
                self.offset += n
        out[-1] = r
        return out

    def skip(self, resets):
        """A block with no word starts: only its store clears matter."""
        if resets[-1] > 0:
            self.k[:] = 0

    def _launch(self, kernel, n, key="device_ungapped"):
        """Run ``kernel`` on n work-items (rounded up to WG); its device seconds go to ``key``
        (``device_ung_sort``: the two binning kernels; ``device_ungapped``: nw_extend)."""
        wg = self.values["WG"]
        ev = cl.enqueue_nd_range_kernel(self.dev.rt.queue, kernel, (-(-n // wg) * wg,), (wg,))
        ev.wait()
        self.dev._add(key, (ev.profile.end - ev.profile.start) * 1e-9)

    def run(self, words, n: int, blk: dict, resets) -> np.ndarray:
        """Sorted saved hits (:func:`sort_hits`, int64 rows, block-local segments) of the ``n``
        word starts in ``words`` (int4 rows in scan order) of the block ``blk`` (the buffers and
        arrays of :meth:`NuclDeviceWords.run_block`)."""
        dev, v = self.dev, self.values
        ctx, mf, q = dev.rt.ctx, cl.mem_flags, dev.rt.queue
        t0 = time.perf_counter()
        tile, nb = v["TILE"], NW_KEYS
        ngroups = -(-n // tile)
        counts = cl.Buffer(ctx, mf.READ_WRITE, 4 * nb * ngroups)
        self.k_hist.set_args(words, np.uint32(n), np.int32(self.dlen), counts, np.uint32(ngroups))
        dev._add("device_copies", time.perf_counter() - t0)
        self._launch(self.k_hist, ngroups * v["WG"], "device_ung_sort")
        t0 = time.perf_counter()
        h = np.empty(nb * ngroups, np.uint32)
        cl.enqueue_copy(q, h, counts)
        offsets = np.zeros(nb * ngroups + 1, np.int64)
        np.cumsum(h, out=offsets[1:])
        base = offsets[::ngroups].astype(np.uint32)          # nb + 1 entries, last = n
        per_key = np.diff(base.astype(np.int64))
        rw = lambda a: cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR,
                                 hostbuf=np.ascontiguousarray(a))
        b_offsets = rw(offsets[:-1].astype(np.uint32))
        perm = cl.Buffer(ctx, mf.READ_WRITE, 4 * max(n, 1))
        self.k_scatter.set_args(words, np.uint32(n), np.int32(self.dlen), b_offsets,
                                np.uint32(ngroups), perm)
        dev._add("device_copies", time.perf_counter() - t0)
        self._launch(self.k_scatter, ngroups * v["WG"], "device_ung_sort")
        t0 = time.perf_counter()
        cells = self.k.astype(np.int64) + per_key if self.hash else np.zeros(nb, np.int64)
        cbase = np.zeros(nb, np.int64)
        np.cumsum(cells[:-1], out=cbase[1:])
        ncells = int(cells.sum())
        b_cdiag = cl.Buffer(ctx, mf.READ_WRITE, 4 * max(ncells, 1))
        b_clevel = cl.Buffer(ctx, mf.READ_WRITE, 4 * max(ncells, 1))
        b_levels = cl.Buffer(ctx, mf.READ_WRITE, 4 * (self.dlen if not self.hash else 1))
        b_base, b_cbase = rw(base), rw(cbase.astype(np.uint32))
        b_kin, b_kout = rw(self.k), cl.Buffer(ctx, mf.READ_WRITE, 4 * nb)
        b_segoff, b_resets = rw(blk["segoff"]), rw(resets)
        room = max(1 << 12, n // 16)
        dev._add("device_copies", time.perf_counter() - t0)
        while True:
            if not self.hash:
                cl.enqueue_fill_buffer(q, b_levels, np.int32(0), 0, 4 * self.dlen)
            cl.enqueue_copy(q, dev.counters, np.zeros(4, np.uint32))
            out = cl.Buffer(ctx, mf.READ_WRITE, 4 * ROW * room)
            self.k_extend.set_args(
                words, perm, b_base, blk["data"], blk["byte"], blk["len"], blk["pos0"],
                np.int32(blk["nseg"]), b_segoff, b_resets, dev.b_q, np.int32(dev.qn),
                dev.b_ctx_off, dev.b_ctx_len, np.int32(dev.nctx), dev.b_cell, dev.b_qoffs,
                self.b_matrix, self.b_table, self.b_cutoff, self.b_xdrop, self.b_reduced,
                np.int32(self.dlen), b_levels, b_cdiag, b_clevel, b_cbase, b_kin, b_kout,
                dev.counters, out, np.uint32(room))
            self._launch(self.k_extend, nb)
            saved = int(dev._counters()[0])
            if saved <= room:
                break
            room = saved
        t0 = time.perf_counter()
        rows = np.empty((saved, ROW), np.int32)
        if saved:
            cl.enqueue_copy(q, rows, out)
        if self.hash:
            cl.enqueue_copy(q, self.k, b_kout)
        elif resets[-1] > 0:
            self.k[:] = 0
        dev._add("device_copies", time.perf_counter() - t0)
        t0 = time.perf_counter()
        rows = sort_hits(rows[:, :9].astype(np.int64))
        dev._add("device_split", time.perf_counter() - t0)
        return rows
