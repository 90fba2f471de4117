"""The flat lookup table (``nucl_scan.FlatLookup``) built by a partitioned counting sort.

The reference build (``nucl_scan.build_flat_ref``) lists every indexed word as an int64 code and
an int32 offset, then counting-sorts them over the ``4^width`` cells: random increments over the
whole ``cell_start`` and random writes over the whole ``q_offs``, ~70 ns a word at 112 M words
(16 bytes a word of temporaries). Here the words are read twice from the query batch, never
listed:

1. count the words of each *part* (the code's top bits: parts of at most ``2^16`` cells);
2. write each word's offset and the code's low bits at its part's next place (sequential
   writes into one stream per part), in insertion order;
3. per part, a counting sort over its cells (its counts, 256 KiB, and its slice of the output,
   ~1 MB at 56 M words, stay in L2/L3 instead of spreading over 358 MB), stable, the part's
   offsets reversed for the megablast table's chains.

The result is the reference's ``(q_offs, cell_start, largest cell, small-table overflow)``
exactly: a part is a range of consecutive cells, and each step keeps insertion order.
Steps 1-2 run over groups of segments and step 3 over groups of parts on ``threads`` threads
(compiled, no GIL); groups write disjoint places, so the result does not depend on ``threads``.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..runtime.jit import njit

#: at most 2^PART_BITS cells in a part: 256 KiB of int32 counts (2^14: 5.4 vs 2.9 ns a word
#: to place, 4.1 vs 4.8 ns to sort, 56 M words, this VM)
PART_BITS = 16


def part_bits(width: int) -> int:
    """Bits of a code's top that name its part (0: one part, the whole table)."""
    return max(0, 2 * width - PART_BITS)


@njit(cache=True, nogil=True)
def _walk_parts(seq, seg_left, seg_right, s0, s1, width, word_size, low_bits, at, place, offs, lows):
    """The words of segments ``s0:s1`` (the reference's indexing: runs of A/C/G/T of a segment
    at least ``word_size`` long), each advancing ``at[part]`` by one: the count pass, or with
    ``place`` the write pass, which first writes the offset at ``offs[at[part]]`` and the
    code's low bits at ``lows[at[part]]``."""
    mask = (1 << (2 * width)) - 1
    low_mask = (1 << low_bits) - 1
    for k in range(s0, s1):
        left, right = seg_left[k], seg_right[k]
        if word_size > right - left + 1:
            continue
        code = 0
        run = 0
        for pos in range(left, right + 1):
            b = seq[pos]
            if b > 3:
                run = 0
                code = 0
                continue
            code = ((code << 2) | b) & mask
            run += 1
            if run >= width:
                p = code >> low_bits
                i = at[p]
                if place:
                    offs[i] = pos - width + 1
                    lows[i] = code & low_mask
                at[p] = i + 1


@njit(cache=True, nogil=True)
def _sort_parts(part_start, p0, p1, low_bits, latest_first, offs, lows, cell_start, present,
                scratch):
    """Counting sort of each part ``p0:p1`` over its cells, in place in ``offs``; fills the
    part's ``cell_start`` entries and its words of ``present`` (bit ``c & 31`` of word
    ``c >> 5``: cell ``c`` holds an offset; a part of fewer than 32 cells is the only part).
    Returns (largest cell, sum of count + 1 over cells of 2 or more offsets). ``scratch``: at
    least the largest part's size."""
    ncell = 1 << low_bits
    cnt = np.empty(ncell, dtype=np.int32)
    largest = 0
    overflow = 0
    for p in range(p0, p1):
        a, b = part_start[p], part_start[p + 1]
        base = p << low_bits
        if a == b:
            for c in range(ncell):
                cell_start[base + c] = a
            for w in range(base >> 5, (base + ncell + 31) >> 5):
                present[w] = 0
            continue
        cnt[:] = 0
        for i in range(a, b):
            cnt[lows[i]] += 1
        pos = 0
        for c0 in range(0, ncell, 32):          # one presence word per 32 cells
            word = 0
            for c in range(c0, min(c0 + 32, ncell)):
                k = cnt[c]
                if k > largest:
                    largest = k
                if k > 1:
                    overflow += k + 1
                word |= (1 if k > 0 else 0) << (c - c0)
                cell_start[base + c] = a + pos
                cnt[c] = pos
                pos += k
            present[(base + c0) >> 5] = word
        n = b - a
        for j in range(n):
            scratch[j] = offs[a + j]
        for j in range(n):
            i = n - 1 - j if latest_first else j
            c = lows[a + i]
            offs[a + cnt[c]] = scratch[i]
            cnt[c] += 1
    return largest, overflow


#: below this total weight one group (a thread pool costs ~0.5 ms: 1 query took 3.3 vs 0.9 ms)
MIN_THREADED = 1 << 16


def _groups(weights, parts):
    """Cut points of ``weights`` into at most ``parts`` consecutive groups of similar sums
    (one group below :data:`MIN_THREADED`)."""
    if parts <= 1 or weights.size == 0:
        return [0, int(weights.size)]
    cum = np.cumsum(weights)
    if cum[-1] < MIN_THREADED:
        return [0, int(weights.size)]
    cuts = np.searchsorted(cum, np.arange(1, parts) * (cum[-1] / parts), side="left") + 1
    return sorted({0, int(weights.size), *(int(x) for x in np.minimum(cuts, weights.size))})


def _run(fn, jobs, threads):
    if threads <= 1 or len(jobs) <= 1:
        return [fn(*j) for j in jobs]
    with ThreadPoolExecutor(max_workers=min(threads, len(jobs))) as pool:
        return [f.result() for f in [pool.submit(fn, *j) for j in jobs]]


def presence_words(cells: int) -> int:
    """uint32 words of a presence vector of ``cells`` bits, as the device reads it: one word
    past the last (its loads may run one word over)."""
    return (cells + 31) // 32 + 1


def flat_cells_parts(seq, seg_left, seg_right, width: int, word_size: int, latest_first: bool,
                     threads: int = 1):
    """``(q_offs int32, cell_start int32, present uint32, largest cell, overflow)`` of the
    words of the segments ``seg_left[k]..seg_right[k]`` of ``seq``: the reference's indexing and
    counting sort, and the presence bit of every cell (:func:`presence_words`). ``cell_start``
    is int32 (the offsets are int32, so are their counts): half the 4^12-cell megablast table's
    bytes to write and no copy for the device, which reads it as uint32."""
    seq = np.asarray(seq, dtype=np.uint8)
    seg_left = np.ascontiguousarray(seg_left, dtype=np.int64)
    seg_right = np.ascontiguousarray(seg_right, dtype=np.int64)
    threads = max(1, int(threads))
    low_bits = 2 * width - part_bits(width)
    nparts = 1 << part_bits(width)
    cells = 1 << (2 * width)
    cuts = _groups(np.maximum(seg_right - seg_left + 1, 0), threads)
    sjobs = list(zip(cuts[:-1], cuts[1:]))
    lows_type = np.uint16 if low_bits <= 16 else np.uint32
    counts = np.zeros((len(sjobs), nparts), dtype=np.int64)
    no_offs, no_lows = np.empty(0, dtype=np.int32), np.empty(0, dtype=lows_type)
    _run(lambda g, s0, s1: _walk_parts(seq, seg_left, seg_right, s0, s1, width, word_size,
                                       low_bits, counts[g], False, no_offs, no_lows),
         [(g, s0, s1) for g, (s0, s1) in enumerate(sjobs)], threads)
    # part-major, group-minor places: each part's words in insertion order
    flat = counts.T.reshape(-1)
    places = np.zeros(flat.size + 1, dtype=np.int64)
    np.cumsum(flat, out=places[1:])
    n = int(places[-1])
    fills = places[:-1].reshape(nparts, len(sjobs)).T.copy()
    part_start = places[::len(sjobs)].copy()          # start of each part, and the total
    if n > np.iinfo(np.int32).max:
        raise ValueError("more than 2**31 - 1 query words in one lookup table")
    offs = np.empty(n, dtype=np.int32)
    lows = np.empty(n, dtype=lows_type)
    _run(lambda g, s0, s1: _walk_parts(seq, seg_left, seg_right, s0, s1, width, word_size,
                                       low_bits, fills[g], True, offs, lows),
         [(g, s0, s1) for g, (s0, s1) in enumerate(sjobs)], threads)
    cell_start = np.empty(cells + 1, dtype=np.int32)
    cell_start[cells] = n
    present = np.zeros(presence_words(cells), dtype=np.uint32)
    sizes = np.diff(part_start)
    pcuts = _groups(sizes + 1, threads)
    res = _run(lambda p0, p1: _sort_parts(part_start, p0, p1, low_bits, latest_first, offs, lows,
                                          cell_start, present,
                                          np.empty(int(sizes[p0:p1].max(initial=0)), dtype=np.int32)),
               list(zip(pcuts[:-1], pcuts[1:])), threads)
    largest = max((r[0] for r in res), default=0)
    overflow = sum(r[1] for r in res)
    return offs, cell_start, present, int(largest), int(overflow)
