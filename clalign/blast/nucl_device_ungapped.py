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
- array store (batch of at most ``QUERY_LEN_FOR_HASH`` bases, ``L``; ``2^k >= L`` cells,
  diagonal ``s - q`` folded to ``(s + 2^k - q) mod 2^k``): diagonals of one segment sharing a
  cell differ by ``2^k``, say ``d`` and ``d + 2^k``. An end written on ``d`` is at most
  ``L + d <= 2^k + d``, and every start on ``d + 2^k`` has ``s' >= d + 2^k``: never blocked by
  it. A start on ``d`` has ``s <= L - word + d``, so its lookup position (at most
  ``s + word - width``) is below ``s'``: it is processed before every start on ``d + 2^k`` (scan
  order: lookup positions ascending) and never meets that diagonal's ends. So each cell acts as
  one diagonal per segment (tested against ``word_finder_ref``'s dict in
  ``test_array_store_folded_diagonals``);
- hash store: a bucket's chain is shared by its diagonals (a stale cell of one diagonal, whose
  end lies before ``s + word - 1``, may be reused by another), so the key is the bucket; its
  state entering a segment is its chain's length (all cells stale there; which cell a diagonal
  reuses depends on that length, their contents never matter), carried from block to block
  in ``self.k``, and cleared where BLAST+'s ``Blast_ExtendWordExit`` clears the store.

So the keys (``NBUCKET``: the hash buckets, or the array's cells modulo ``NBUCKET``) are
independent; their starts are put in key order by a stable counting sort on the device (the
host sums the histogram). Within a key, pieces of ``PIECE`` starts run in parallel (nw_spec),
each as if the store entered it holding only *dead* cells -- ends at or before every start of
the piece: such a cell never blocks and is always stale, so (hash) a diagonal reuses the first
dead cell from the chain's head and the piece's decisions are those of a chain of unlimited dead
cells, as long as the real chain has at least as many cells as the piece used (else it would
have pushed new cells at the head: another layout). The host keeps a piece when that held: no
store clear before it in the block, every end written earlier in its key at or before its
least start, and (hash) the carried chain length at least the cells it used (kept pieces
push nothing, so the length stays). A key's first piece not kept, and all after it, are redone
by nw_redo on the real store, the kept pieces' updates replayed from their recorded ends.
"""
from __future__ import annotations

import time

import numpy as np
import pyopencl as cl

from ..errors import ParameterError
from . import nucl_words
from .hsp import lexsort_packed
from .params import BLASTN_UNGAPPED, NW_KEYS

TUNABLE = ("WG", "TILE", "PIECE", "GAP", "SLOTS")
ROW = 10                 # ints per saved hit written by nw_spec / nw_redo
MAX_BLOCK_POSITION = 1 << 30      # block positions (and the kernel's STALE) stay in an int
#: Room (saved hits) of a block's first nw_spec/nw_redo launch: the larger of MIN_SAVED and one
#: per STARTS_PER_SAVED word starts; a block that saves more runs again with room for all.
MIN_SAVED = 1 << 12
STARTS_PER_SAVED = 16


def diag_length(query_length: int) -> int:
    """Cells of BLAST+'s diagonal array: the least power of two >= the batch length."""
    n = 1
    while n < query_length:
        n <<= 1
    return n


def ungapped_values(flat, batch_length: int, override=None) -> dict:
    """Template values (validated) of one search: the search's width, word, store and extender
    rule; the :data:`TUNABLE` ones from ``override`` or the defaults."""
    v = {p.name: p.default for p in BLASTN_UNGAPPED.all()}
    override = dict(override or {})
    fixed = set(override) - set(TUNABLE)
    if fixed:
        raise ParameterError(f"blastn device ungapped: unknown or fixed parameter(s) {sorted(fixed)}")
    v.update(override)
    v.update(WIDTH=flat.width, WORD=flat.word_size,
             HASH=batch_length > nucl_words.QUERY_LEN_FOR_HASH,
             EXACT=flat.word_size < nucl_words.EXACT_WORD_BELOW)
    return BLASTN_UNGAPPED.validate(v)


def pieces(base, cuts):
    """(lo, key) of the pieces that cut each key's run ``base[b]..base[b+1]-1`` of the sorted
    starts at the keys' bounds and at ``cuts`` (nw_cuts' starts, 0 = none): lo has one entry
    more (the end)."""
    base = np.asarray(base, np.int64)
    cuts = np.asarray(cuts, np.int64)
    lo = np.concatenate([base, cuts[cuts > 0]])
    lo.sort(kind="stable")          # two ascending runs: merged, not sorted (np.union1d: 15x)
    lo = lo[np.r_[True, lo[1:] != lo[:-1]]]
    key = np.searchsorted(base, lo[:-1], side="right") - 1
    return lo, key


def sort_hits(rows: np.ndarray) -> np.ndarray:
    """The kernels' rows (segment, word index, q_off, s_off, q_start, s_start, length,
    score, context) in segment order, each segment's as ``Blast_InitHitListSortByScore`` (score
    desc, s_start, length desc, q_start) with scan order last (the CPU path's stable sort)."""
    order = lexsort_packed((rows[:, 1], rows[:, 4], -rows[:, 6], rows[:, 5], -rows[:, 7], rows[:, 0]))
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
        self.k_cuts = cl.Kernel(prg, "nw_cuts")
        self.k_spec = cl.Kernel(prg, "nw_spec")
        self.k_redo = cl.Kernel(prg, "nw_redo")
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
        """Enqueue ``kernel`` on n work-items (rounded up to WG), not waited on (the block's
        in-order queue, as ``NuclDeviceWords._launch``); its device seconds go to ``key``
        (``device_ung_sort``: the binning and cut kernels; ``device_ungapped``: nw_spec;
        ``device_ung_redo``: nw_redo) at the block's ``_kernel_times``."""
        wg = self.values["WG"]
        ev = cl.enqueue_nd_range_kernel(self.dev.rt.queue, kernel, (-(-n // wg) * wg,), (wg,))
        self.dev._events.append((ev, key))

    def run(self, words, n: int, blk: dict, resets) -> np.ndarray:
        """Sorted saved hits (:func:`sort_hits`, int64 rows, block-local segments) of the ``n``
        word starts in ``words`` (int4 rows in scan order) of the block ``blk`` (the buffers and
        arrays of :meth:`NuclDeviceWords.block`). Buffers by role (``ung_*``) and uploads
        not waited on, as the block's other stages; the block's kernel times are added after
        the last read."""
        dev, v = self.dev, self.values
        q = dev.rt.queue
        t0 = time.perf_counter()
        tile, nb = v["TILE"], NW_KEYS
        ngroups = -(-n // tile)
        counts = dev._buffer("ung_counts", 4 * nb * ngroups)
        self.k_hist.set_args(words, np.uint32(n), np.int32(self.dlen), counts, np.uint32(ngroups))
        dev._add("device_copies", time.perf_counter() - t0)
        self._launch(self.k_hist, ngroups * v["WG"], "device_ung_sort")
        t0 = time.perf_counter()
        h = np.empty(nb * ngroups, np.uint32)
        cl.enqueue_copy(q, h, counts)
        offsets = np.zeros(nb * ngroups + 1, np.int64)
        np.cumsum(h, out=offsets[1:])
        base = offsets[::ngroups].astype(np.uint32)          # nb + 1 entries, last = n
        b_offsets = dev._upload("ung_offsets", offsets[:-1].astype(np.uint32))
        perm = dev._buffer("ung_perm", 4 * max(n, 1))
        self.k_scatter.set_args(words, np.uint32(n), np.int32(self.dlen), b_offsets,
                                np.uint32(ngroups), perm)
        dev._add("device_copies", time.perf_counter() - t0)
        self._launch(self.k_scatter, ngroups * v["WG"], "device_ung_sort")
        t0 = time.perf_counter()
        nwin = -(-n // v["PIECE"])
        b_cuts = dev._buffer("ung_cuts", 4 * nwin)
        b_segoff = dev._upload("ung_segoff", blk["segoff"])
        self.k_cuts.set_args(words, perm, blk["pos0"], np.int32(blk["nseg"]), b_segoff,
                             np.int32(self.dlen), np.uint32(n), np.uint32(v["PIECE"]),
                             np.int32(v["GAP"]), b_cuts)
        dev._add("device_copies", time.perf_counter() - t0)
        self._launch(self.k_cuts, nwin, "device_ung_sort")
        t0 = time.perf_counter()
        cuts = np.empty(nwin, np.uint32)
        cl.enqueue_copy(q, cuts, b_cuts)
        lo, piece_key = pieces(base, cuts)
        npieces = len(piece_key)
        search = [blk["data"], blk["byte"], blk["len"], b_segoff, dev.b_q,
                  np.int32(dev.qn), dev.b_ctx_off, dev.b_ctx_len, np.int32(dev.nctx), dev.b_cell,
                  dev.b_qoffs, self.b_matrix, self.b_table, self.b_cutoff, self.b_xdrop,
                  self.b_reduced, dev.counters]
        head = [words, perm, blk["pos0"], np.int32(blk["nseg"]), dev._upload("ung_resets", resets),
                np.int32(self.dlen)]
        b_lo = dev._upload("ung_lo", lo.astype(np.uint32))
        b_lev = dev._buffer("ung_lev", 4 * max(n, 1))
        b_pinfo = dev._buffer("ung_pinfo", 16 * max(npieces, 1))
        room = max(MIN_SAVED, n // STARTS_PER_SAVED)
        dev._add("device_copies", time.perf_counter() - t0)
        redo = None
        while True:
            dev._write(dev.counters, np.zeros(4, np.uint32))
            out = dev._buffer("ung_out", 4 * ROW * room)
            self.k_spec.set_args(*head, b_lo, np.uint32(npieces), b_lev, b_pinfo, *search, out,
                                 np.uint32(room))
            self._launch(self.k_spec, npieces)
            if redo is None:
                t0 = time.perf_counter()
                pinfo = np.empty((npieces, 4), np.int32)
                cl.enqueue_copy(q, pinfo, b_pinfo)
                redo = self._redo_plan(pinfo, lo, piece_key, base)
                dev._add("device_split", time.perf_counter() - t0)
            keep_piece, keys, r = redo
            if len(keys):
                if not self.hash:
                    cl.enqueue_fill_buffer(q, r["levels"], np.int32(0), 0, 4 * self.dlen)
                self.k_redo.set_args(*head, r["base"], r["keys"], r["from"], np.uint32(len(keys)),
                                     b_lev, r["levels"], r["cdiag"], r["clevel"], r["cbase"],
                                     r["k_in"], r["k_out"], *search, out, np.uint32(room))
                self._launch(self.k_redo, len(keys), "device_ung_redo")
            saved = int(dev._counters()[0])
            if saved <= room:
                break
            room = saved
        t0 = time.perf_counter()
        rows = np.empty((saved, ROW), np.int32)
        if saved:
            cl.enqueue_copy(q, rows, out)
        if resets[-1] > 0:    # a clear after a key's last start empties its chain
            self.k[:] = 0
        if self.hash and len(keys):
            k_out = np.empty(NW_KEYS, np.int32)
            cl.enqueue_copy(q, k_out, r["k_out"])
            self.k[keys] = k_out[keys]
        dev._add("device_copies", time.perf_counter() - t0)
        dev._kernel_times()
        t0 = time.perf_counter()
        tag = rows[:, 9]
        rows = rows[(tag < 0) | keep_piece[np.maximum(tag, 0)]]
        counts = dev.times.setdefault("device_counts", {})
        counts["pieces"] = counts.get("pieces", 0) + npieces
        counts["redo_keys"] = counts.get("redo_keys", 0) + len(keys)
        counts["redo_starts"] = counts.get("redo_starts", 0) + r["starts"]
        rows = sort_hits(rows[:, :9].astype(np.int64))
        dev._add("device_split", time.perf_counter() - t0)
        return rows

    def _redo_plan(self, pinfo, lo, piece_key, base):
        """Which pieces nw_spec got right (the store entered each with enough dead cells: no
        clear before it, every end written before it in its key at or before its least start,
        and, hash store, at least as many cells as it used); the keys to redo from their first
        piece not kept, with nw_redo's buffers. Returns (keep per piece, keys, a dict of nw_redo's
        buffers and ``starts``, the starts it searches again)."""
        dev = self.dev
        used, max_end, min_s, cleared = (pinfo[:, c].astype(np.int64) for c in range(4))
        shift = piece_key.astype(np.int64) << 32
        acc = np.maximum.accumulate(max_end + shift) - shift      # within each key
        first = np.ones(len(piece_key), bool)
        first[1:] = piece_key[1:] != piece_key[:-1]
        before = np.where(first, 0, np.roll(acc, 1))
        ok = (before <= min_s) & (used <= (self.k[piece_key] if self.hash else 0))
        if self.hash:
            ok &= cleared == 0
        idx = np.where(ok, len(ok), np.arange(len(ok)))
        starts = np.flatnonzero(first)
        first_bad = np.full(NW_KEYS, len(ok), np.int64)
        if len(starts):
            first_bad[piece_key[starts]] = np.minimum.reduceat(idx, starts)
        keep = np.arange(len(ok)) < first_bad[piece_key]
        keys = np.flatnonzero(first_bad < len(ok))
        if not len(keys):
            return keep, keys, {"starts": 0}
        frm = lo[first_bad[keys]]
        count = np.diff(base.astype(np.int64))[keys]
        cells = self.k[keys].astype(np.int64) + count if self.hash else np.zeros(len(keys), np.int64)
        cbase = np.zeros(len(keys), np.int64)
        np.cumsum(cells[:-1], out=cbase[1:])
        nc = max(int(cells.sum()), 1)
        up = lambda role, a: dev._upload("ung_" + role, a)
        r = dict(base=up("base", base), keys=up("keys", np.asarray(keys, np.uint32)),
                 **{"from": up("from", frm.astype(np.uint32))},
                 levels=dev._buffer("ung_levels", 4 * (self.dlen if not self.hash else 1)),
                 cdiag=dev._buffer("ung_cdiag", 4 * nc), clevel=dev._buffer("ung_clevel", 4 * nc),
                 cbase=up("cbase", cbase.astype(np.uint32)), k_in=up("k_in", self.k.copy()),
                 k_out=dev._buffer("ung_k_out", 4 * NW_KEYS),
                 starts=int((base[keys + 1].astype(np.int64) - frm).sum()))
        return keep, keys, r
