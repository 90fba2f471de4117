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

With ``prelim`` (``BLASTN_SCAN.PRELIM``, -task blastn / blastn-short), ``finish`` also runs
``kernels/blast_nucl_gapped.mako`` on every saved row: the preliminary stage's score-only DP of
each hit, which depends on the hit alone, handed to the workers as 8 more columns
(``nucl_stages_nb.prelim_rows``' ``pre``).

So the keys (``NBUCKET``: the hash buckets, or the array's cells modulo ``NBUCKET``) are
independent; their starts are put in key order by a stable counting sort on the device (the
host sums the histogram). Within a key, pieces of ``PIECE`` starts run in parallel (nw_spec),
each as if the store entered it holding only *dead* cells -- ends at or before every start of
the piece: such a cell never blocks and is always stale, so (hash) a diagonal reuses the first
dead cell from the chain's head and the piece's decisions are those of a chain of unlimited dead
cells, as long as the real chain has at least as many cells as the piece used (else it would
have pushed new cells at the head: another layout). A piece is kept when that held: no store
clear before it in the block, every end written earlier in its key at or before its least
start, its cells within SLOTS and (hash) within the chain's length (kept pieces push nothing,
so the length stays). The host checks it with nw_spec's ends (:func:`_keep_plan`); each key
with a piece not kept goes to nw_redo, which walks the key's pieces on the real store: a piece
the real store bears out is kept (the cells it used, head first, written as nw_spec left them),
any other searched again start by start. So a long alignment's piece is redone, not the rest of
its key's block (a block of 1,000 genes redid ~30,000 starts per such key before).
"""
from __future__ import annotations

import time

import numpy as np
import pyopencl as cl

from ..errors import ParameterError
from ..runtime.jit import njit
from . import nucl_words
from .hsp import lexsort_packed
from .params import (BLASTN_GAPPED, BLASTN_UNGAPPED, NDP_COLS as DP_COLS, NDP_COST_MAX, NDP_DONE,
                     NW_HEAD, NW_KEYS, NW_ROW as ROW)

TUNABLE = ("WG", "TILE", "PIECE", "GAP", "SLOTS")
#: Override keys of the preliminary DP's kernel (BLASTN_GAPPED's WG, BAND, LAUNCH, CELLS).
DP_TUNABLE = {"DP_WG": "WG", "DP_BAND": "BAND", "DP_LAUNCH": "LAUNCH", "DP_CELLS": "CELLS"}
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
    override = {k: x for k, x in dict(override or {}).items() if k not in DP_TUNABLE}
    fixed = set(override) - set(TUNABLE)
    if fixed:
        raise ParameterError(f"blastn device ungapped: unknown or fixed parameter(s) {sorted(fixed)}")
    v.update(override)
    v.update(WIDTH=flat.width, WORD=flat.word_size,
             HASH=batch_length > nucl_words.QUERY_LEN_FOR_HASH,
             EXACT=flat.word_size < nucl_words.EXACT_WORD_BELOW)
    return BLASTN_UNGAPPED.validate(v)


def prelim_values(override=None) -> dict:
    """Template values (validated) of the preliminary DP's kernel: BLASTN_GAPPED's defaults and
    the ``DP_*`` keys of ``override`` (:data:`DP_TUNABLE`)."""
    v = {p.name: p.default for p in BLASTN_GAPPED.all()}
    v.update({DP_TUNABLE[k]: x for k, x in dict(override or {}).items() if k in DP_TUNABLE})
    return BLASTN_GAPPED.validate(v)


def prelim_fits(st) -> bool:
    """Whether the search's costs and scores stay in the kernel's int32 bounds (its doc)."""
    o, b = st.opts, st.batch
    top = int(np.asarray(st.matrix).max()) * int(max(b.lengths.max(), 1)) if len(b.lengths) else 0
    return max(int(st.xdrop_gap), o.gap_open + o.gap_extend, top) < NDP_COST_MAX


def pieces(base, cuts):
    """(lo, key) of the pieces that cut each key's run ``base[b]..base[b+1]-1`` of the sorted
    starts at the keys' bounds and at ``cuts`` (nw_cuts' starts, ascending, 0 = none): lo has
    one entry more (the end). One compiled merge of the two ascending runs (the feeder threads
    share the interpreter lock with the workers; numpy's sort, dedupe and search took ~18 ms a
    block there)."""
    base = np.ascontiguousarray(base, np.int64)
    cuts = np.ascontiguousarray(cuts, np.int64)
    lo = np.empty(len(base) + len(cuts), np.int64)
    key = np.empty(len(lo), np.int64)
    n = _merge_pieces(base, cuts, lo, key)
    if n < 0:       # the cuts not ascending (not nw_cuts' output): sort them with the bounds
        lo = np.union1d(base, cuts[cuts > 0])
        return lo, np.searchsorted(base, lo[:-1], side="right") - 1
    return lo[:n], key[:n - 1]


@njit(cache=True, nogil=True)
def _merge_pieces(base, cuts, lo, key):
    """:func:`pieces` into ``lo`` and ``key``; returns the number of bounds, or -1 when the
    nonzero cuts are not ascending."""
    n, i, j, k, last = 0, 0, 0, 0, 0
    while i < base.shape[0] or j < cuts.shape[0]:
        if j < cuts.shape[0] and cuts[j] <= 0:
            j += 1
            continue
        if j < cuts.shape[0]:
            if cuts[j] < last:
                return -1
            last = cuts[j]
        if j >= cuts.shape[0] or (i < base.shape[0] and base[i] <= cuts[j]):
            v = base[i]
            i += 1
        else:
            v = cuts[j]
            j += 1
        if n and lo[n - 1] == v:
            continue
        while k + 1 < base.shape[0] and base[k + 1] <= v:
            k += 1
        lo[n] = v
        key[n] = k
        n += 1
    return n


def segment_hits(raw: np.ndarray) -> np.ndarray:
    """One segment's saved hits in ``Blast_InitHitListSortByScore``'s order (score desc,
    s_start, length desc, q_start) with scan order last (the CPU path's stable sort), from its
    rows (word index, q_off, s_off, q_start, s_start, length, score, context, any further
    columns: the device DP's) in any order: int64 rows (q_off, s_off, q_start, s_start, length,
    score, context, the further columns). The search's workers call it on their own pieces,
    so the sort is spread over them instead of the device's feeder thread."""
    order = lexsort_packed((raw[:, 0], raw[:, 3], -raw[:, 5], raw[:, 4], -raw[:, 6]))
    return np.ascontiguousarray(raw[order, 1:], dtype=np.int64)


@njit(cache=True, nogil=True)
def _keep_plan(pinfo, piece_key, k, hashed, slots, keep, first_bad):
    """:meth:`DeviceUngapped._redo_plan`'s rule in one pass over the pieces (ascending keys):
    a piece is good when every end written earlier in its key (running maximum of the pieces'
    ``max_end``) lies at or before its least start, it used at most ``slots`` cells and (hash
    store) no more than its key's chain holds, and no clear preceded it; ``keep[i]``: no bad
    piece at or before i in its key; ``first_bad[key]``: its first bad piece (else unchanged)."""
    cur, acc, bad = -1, 0, False
    for i in range(piece_key.shape[0]):
        key = piece_key[i]
        if key != cur:
            cur, before, bad = key, 0, False
            acc = pinfo[i, 1]
        else:
            before = acc
            acc = max(acc, pinfo[i, 1])
        room = min(k[key], slots) if hashed else slots
        ok = before <= pinfo[i, 2] and pinfo[i, 0] <= room and pinfo[i, 3] == 0
        if not ok and not bad:
            bad = True
            first_bad[key] = i
        keep[i] = not bad


def store_clears(lengths) -> np.ndarray:
    """``DiagState.exit_subject``'s store clears over the database's segments in order:
    int64 c[g] = clears before segment g (``c[-1]``: after the last). A block a..e-1 enters
    its segments with ``c[a:e + 1] - c[a]`` (its ``resets``)."""
    out = np.zeros(len(lengths) + 1, np.int64)
    r, offset = 0, 0
    for i, n in enumerate(np.asarray(lengths).tolist()):
        out[i] = r
        if offset >= nucl_words.INT4_MAX // 4:
            offset = 0
            r += 1
        else:
            offset += n
    out[-1] = r
    return out


class DeviceUngapped:
    """The per-search program, constant buffers and carried diagonal-store state."""

    def __init__(self, dev, st, override=None, prelim=False):
        self.dev = dev
        rt, b, f = dev.rt, st.batch, st.flat
        self.values = v = ungapped_values(f, len(b.seq), override)
        self.prg = rt.program("blast_nucl_ungapped.mako", BLASTN_UNGAPPED, v)
        self.dp = None           # the preliminary DP's values and program (``prelim``)
        if prelim and prelim_fits(st):
            self.dp = prelim_values(override)
            self.dp_prg = rt.program("blast_nucl_gapped.mako", BLASTN_GAPPED, self.dp)
            self.dp_args = (np.int32(st.opts.gap_open), np.int32(st.opts.gap_extend),
                            np.int32(st.xdrop_gap))
            self.b_gapped = cl.Buffer(rt.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                                      hostbuf=np.ascontiguousarray(st.cutoff_gapped, np.int32))
        #: columns of :meth:`finish`'s rows: 9, plus the DP's results with ``prelim``
        self.width = NW_HEAD + (DP_COLS if self.dp is not None else 0)
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
        self.clears = store_clears(dev.seg[3])

    def resets(self, a: int, e: int) -> np.ndarray:
        """int32 resets[g] = store clears before segment g of the block a..e-1 (resets[-1]:
        after its last)."""
        return (self.clears[a:e + 1] - self.clears[a]).astype(np.int32)

    def skip(self, resets):
        """A block with no word starts: only its store clears matter."""
        if resets[-1] > 0:
            self.k[:] = 0

    def _launch(self, lane, name, n, key="device_ungapped"):
        """The kernel ``name`` of ``lane`` (its arguments set) on n work-items (rounded up to
        WG), not waited on; its device seconds go to ``key`` (``device_ung_sort``: the binning
        and cut kernels; ``device_ungapped``: nw_spec; ``device_ung_redo``: nw_redo) at the
        block's ``kernel_times``."""
        lane.launch(lane.kernel(self.prg, name), n, key, self.values["WG"])

    def run(self, words, n: int, blk: dict, resets, lane=None) -> np.ndarray:
        """Saved hits (int64 rows (segment, then the columns :func:`segment_hits` takes),
        block-local segments, in no particular order) of the ``n`` word starts in
        ``words`` (int4 rows in scan order) of the block ``blk`` (the buffers and arrays of
        :meth:`NuclDeviceWords.block`): :meth:`start` and :meth:`finish` on ``lane``."""
        lane = lane or self.dev.lanes[0]
        return self.finish(self.start(words, n, blk, resets, lane), lane)

    def start(self, words, n: int, blk: dict, resets, lane) -> dict:
        """The block's part that needs no other block: binning, cuts, pieces and nw_spec's
        first launch (buffers by role and uploads not waited on, as the block's other stages),
        up to reading the pieces' info; returns what :meth:`finish` needs."""
        v = self.values
        q = lane.queue
        t0 = time.perf_counter()
        tile, nb = v["TILE"], NW_KEYS
        ngroups = -(-n // tile)
        counts = lane.buffer("ung_counts", 4 * nb * ngroups)
        lane.kernel(self.prg, "nw_hist").set_args(words, np.uint32(n), np.int32(self.dlen), counts,
                                                  np.uint32(ngroups))
        lane.add("device_copies", time.perf_counter() - t0)
        self._launch(lane, "nw_hist", ngroups * v["WG"], "device_ung_sort")
        t0 = time.perf_counter()
        h = np.empty(nb * ngroups, np.uint32)
        cl.enqueue_copy(q, h, counts)
        offsets = np.zeros(nb * ngroups + 1, np.int64)
        np.cumsum(h, out=offsets[1:])
        base = offsets[::ngroups].astype(np.uint32)          # nb + 1 entries, last = n
        b_offsets = lane.upload("ung_offsets", offsets[:-1].astype(np.uint32))
        perm = lane.buffer("ung_perm", 4 * max(n, 1))
        lane.kernel(self.prg, "nw_scatter").set_args(words, np.uint32(n), np.int32(self.dlen),
                                                     b_offsets, np.uint32(ngroups), perm)
        lane.add("device_copies", time.perf_counter() - t0)
        self._launch(lane, "nw_scatter", ngroups * v["WG"], "device_ung_sort")
        t0 = time.perf_counter()
        nwin = -(-n // v["PIECE"])
        b_cuts = lane.buffer("ung_cuts", 4 * nwin)
        b_segoff = lane.upload("ung_segoff", blk["segoff"])
        lane.kernel(self.prg, "nw_cuts").set_args(
            words, perm, blk["pos0"], np.int32(blk["nseg"]), b_segoff, np.int32(self.dlen),
            np.uint32(n), np.uint32(v["PIECE"]), np.int32(v["GAP"]), b_cuts)
        lane.add("device_copies", time.perf_counter() - t0)
        self._launch(lane, "nw_cuts", nwin, "device_ung_sort")
        t0 = time.perf_counter()
        cuts = np.empty(nwin, np.uint32)
        cl.enqueue_copy(q, cuts, b_cuts)
        lo, piece_key = pieces(base, cuts)
        dev = self.dev
        job = dict(lo=lo, piece_key=piece_key, base=base, n=n, blk=blk,
                   search=[blk["data"], blk["byte"], blk["len"], b_segoff, dev.b_q,
                           np.int32(dev.qn), dev.b_ctx_off, dev.b_ctx_len, np.int32(dev.nctx),
                           dev.b_cell, dev.b_qoffs, self.b_matrix, self.b_table, self.b_cutoff,
                           self.b_xdrop, self.b_reduced, lane.counters],
                   head=[words, perm, blk["pos0"], np.int32(blk["nseg"]),
                         lane.upload("ung_resets", resets), np.int32(self.dlen)],
                   b_lo=lane.upload("ung_lo", lo.astype(np.uint32)),
                   b_slots=lane.buffer("ung_slots", 8 * v["SLOTS"] * max(len(piece_key), 1)),
                   b_pinfo=lane.buffer("ung_pinfo", 16 * max(len(piece_key), 1)),
                   room=max(MIN_SAVED, n // STARTS_PER_SAVED), resets=resets)
        lane.add("device_copies", time.perf_counter() - t0)
        job["out"] = self._spec(job, lane)
        t0 = time.perf_counter()
        job["pinfo"] = np.empty((len(piece_key), 4), np.int32)
        cl.enqueue_copy(q, job["pinfo"], job["b_pinfo"])
        lane.add("device_split", time.perf_counter() - t0)
        return job

    def _spec(self, job, lane):
        """nw_spec on every piece, its saved hits into an output of ``job['room']`` rows
        (counter reset first); returns the output buffer."""
        lane.write(lane.counters, np.zeros(4, np.uint32))
        out = lane.buffer("ung_out", 4 * ROW * job["room"])
        npieces = len(job["piece_key"])
        lane.kernel(self.prg, "nw_spec").set_args(
            *job["head"], job["b_lo"], np.uint32(npieces), job["b_slots"], job["b_pinfo"],
            *job["search"], out, np.uint32(job["room"]))
        self._launch(lane, "nw_spec", npieces)
        return out

    def finish(self, job: dict, lane) -> np.ndarray:
        """:meth:`settle`, then :meth:`rows`."""
        self.settle(job, lane)
        return self.rows(job, lane)

    def settle(self, job: dict, lane) -> None:
        """The block's part in block order (it reads and updates the carried store state): the
        keep plan, nw_redo on the keys with a piece not kept (both kernels again with room for
        all when the first output was too small), which pieces were kept in the end and the
        chains' lengths after the block."""
        t0 = time.perf_counter()
        keep_piece, keys, r = self._redo_plan(job["pinfo"], job["piece_key"], job["base"],
                                              lane)
        lane.add("device_split", time.perf_counter() - t0)
        out = job["out"]
        k_out = np.empty(NW_KEYS, np.int32) if self.hash and len(keys) else None
        # nw_redo's final word on every piece, read back where the host filters the rows
        # (without the device DP; nd_pass reads it on the device)
        read_keep = len(keys) > 0 and self.dp is None
        if read_keep:
            keep_piece = np.empty_like(keep_piece)
        while True:
            if len(keys):
                if not self.hash:
                    cl.enqueue_fill_buffer(lane.queue, r["levels"], np.int32(0), 0, 4 * self.dlen)
                lane.kernel(self.prg, "nw_redo").set_args(
                    *job["head"], job["b_lo"], r["keys"], r["pk"], np.uint32(len(keys)),
                    job["b_pinfo"], job["b_slots"], r["levels"], r["cdiag"], r["clevel"],
                    r["cbase"], r["k_in"], r["k_out"], r["keep"], *job["search"], out,
                    np.uint32(job["room"]))
                self._launch(lane, "nw_redo", len(keys), "device_ung_redo")
                # not waited on: the counters' read below passes them
                if read_keep:
                    cl.enqueue_copy(lane.queue, keep_piece, r["keep"], is_blocking=False)
                if k_out is not None:
                    cl.enqueue_copy(lane.queue, k_out, r["k_out"], is_blocking=False)
            got = lane.read_counters()
            saved = int(got[0])
            if saved <= job["room"]:
                break
            job["room"] = saved
            out = self._spec(job, lane)
        if job["resets"][-1] > 0:    # a clear after a key's last start empties its chain
            self.k[:] = 0
        if k_out is not None:
            self.k[keys] = k_out[keys]
        job.update(out=out, saved=saved, b_keep=r["keep"] if len(keys) else None,
                   keep_piece=keep_piece.view(np.bool_) if self.dp is None else None)
        with lane.lock:
            counts = self.dev.times.setdefault("device_counts", {})
            counts["pieces"] = counts.get("pieces", 0) + len(job["piece_key"])
            counts["redo_keys"] = counts.get("redo_keys", 0) + len(keys)
            counts["redo_starts"] = counts.get("redo_starts", 0) + int(got[1])
            counts["ungapped_saved"] = counts.get("ungapped_saved", 0) + saved

    def rows(self, job: dict, lane) -> np.ndarray:
        """The settled block's saved hits (int64 rows as :meth:`run` returns them), with the
        device DP's columns when it runs (then only the rows the workers can use: nd_pass):
        needs no other block, so the next block settles meanwhile."""
        out, saved = job["out"], job["saved"]
        if self.dp is not None:
            return self._passed(job, lane)
        t0 = time.perf_counter()
        rows = np.empty((saved, ROW), np.int32)
        if saved:
            cl.enqueue_copy(lane.queue, rows, out)
        lane.add("device_copies", time.perf_counter() - t0)
        lane.kernel_times()
        t0 = time.perf_counter()
        tag = rows[:, ROW - 1]
        kept = (tag < 0) | job["keep_piece"][np.maximum(tag, 0)]
        got = rows[kept, :NW_HEAD].astype(np.int64)
        lane.add("device_split", time.perf_counter() - t0)
        return got

    def _passed(self, job: dict, lane) -> np.ndarray:
        """nd_prelim on every saved row, then nd_pass: the rows of kept pieces whose DP the
        workers cannot skip (left to them, or at the gapped cutoff), read as int64 rows."""
        saved = job["saved"]
        if not saved:
            lane.kernel_times()
            return np.empty((0, self.width), np.int64)
        b_res = self._prelim(job["out"], saved, job["blk"], lane)
        t0 = time.perf_counter()
        dest = lane.buffer("ndp_pass", 4 * self.width * saved)
        keep = job["b_keep"]
        k = lane.kernel(self.dp_prg, "nd_pass")
        k.set_args(job["out"], np.uint32(saved), b_res, keep if keep is not None else dest,
                   np.int32(keep is not None), self.b_gapped, lane.counters, dest)
        lane.launch(k, saved, "device_prelim", self.dp["WG"])
        m = int(lane.read_counters()[2])
        got = np.empty((m, self.width), np.int32)
        if m:
            cl.enqueue_copy(lane.queue, got, dest)
        lane.add("device_copies", time.perf_counter() - t0)
        lane.kernel_times()
        got = got.astype(np.int64)
        left = int((got[:, NW_HEAD + DP_COLS - 1] != NDP_DONE).sum())
        with lane.lock:
            counts = self.dev.times.setdefault("device_counts", {})
            counts["prelim_left"] = counts.get("prelim_left", 0) + left
        return got

    def _prelim(self, out, n: int, blk: dict, lane):
        """nd_prelim on the ``n`` saved hits in ``out`` (every row nw_spec / nw_redo wrote, kept
        or not); returns its result buffer (``DP_COLS`` ints a row)."""
        dp = self.dp
        wg = dp["WG"]
        size = min(-(-n // wg) * wg, dp["LAUNCH"] // wg * wg or wg)
        res = lane.buffer("ndp_res", 4 * DP_COLS * n)
        ring = lane.buffer("ndp_ring", 8 * dp["BAND"] * size)
        dev = self.dev
        k = lane.kernel(self.dp_prg, "nd_prelim")
        k.set_args(
            out, np.uint32(n), blk["data"], blk["byte"], blk["len"], dev.b_q, np.int32(dev.qn),
            dev.b_ctx_off, dev.b_ctx_len, self.b_matrix, *self.dp_args, ring, res)
        lane.launch(k, size, "device_prelim", wg)
        return res

    def _redo_plan(self, pinfo, piece_key, base, lane):
        """Which pieces nw_spec got right by nw_spec's own ends (:func:`_keep_plan`), and the
        keys with a piece not kept, for nw_redo, with its buffers. Returns (keep per piece as
        uint8, which nw_redo's read replaces; keys; a dict of nw_redo's buffers)."""
        keep = np.empty(len(piece_key), np.bool_)
        first_bad = np.full(NW_KEYS, len(piece_key), np.int64)
        piece_key = np.ascontiguousarray(piece_key, np.int64)
        _keep_plan(np.ascontiguousarray(pinfo, np.int32), piece_key, self.k, self.hash,
                   self.values["SLOTS"], keep, first_bad)
        keep = keep.view(np.uint8)
        keys = np.flatnonzero(first_bad < len(piece_key))
        if not len(keys):
            return keep, keys, {}
        pk = np.empty((len(keys), 2), np.uint32)
        pk[:, 0] = np.searchsorted(piece_key, keys, "left")
        pk[:, 1] = np.searchsorted(piece_key, keys, "right")
        # hash: a chain holds its entering cells and at most one more per start of its key
        count = np.diff(base.astype(np.int64))[keys]
        cells = self.k[keys].astype(np.int64) + count if self.hash else np.zeros(len(keys), np.int64)
        cbase = np.zeros(len(keys), np.int64)
        np.cumsum(cells[:-1], out=cbase[1:])
        nc = max(int(cells.sum()), 1)
        up = lambda role, a: lane.upload("ung_" + role, a)
        r = dict(keys=up("keys", np.asarray(keys, np.uint32)), pk=up("pk", pk),
                 levels=lane.buffer("ung_levels", 4 * (self.dlen if not self.hash else 1)),
                 cdiag=lane.buffer("ung_cdiag", 4 * nc), clevel=lane.buffer("ung_clevel", 4 * nc),
                 cbase=up("cbase", cbase.astype(np.uint32)), k_in=up("k_in", self.k.copy()),
                 k_out=lane.buffer("ung_k_out", 4 * NW_KEYS), keep=up("keep", keep))
        return keep, keys, r
