"""Symmetric DUST (Morgulis et al. 2006) exactly as BLAST+ 2.12 runs it on blastn queries.

BLAST+ masks low-complexity query regions with ``CSymDustMasker`` (the same masker as
``dustmasker``), defaults level 20, window 64, linker 1. The rules reproduced here:

- bases read in upper case; C=1, G=2, T=3, N = a pseudo-random base (NCBI's ``CRandom`` from
  its reset state, one draw each time the masker reads an N), every other letter = 0;
  triplets are 6-bit codes of three consecutive bases;
- a window holds at most ``window - 2`` triplets; its score sum is ``sum c(c-1)/2`` over the
  triplet counts; the *suffix* is the longest tail of the window where no triplet occurs more
  than ``level // 5`` times (kept incrementally);
- after each shift, if the suffix is shorter than the window and ``10 * sum > level * len(suffix)``,
  the prefixes beyond the suffix are walked backwards; an interval ``[pos, last base]`` with
  ``10 * score > level * (triplets - 1)`` and a score/length ratio at least that of every
  perfect interval it contains becomes perfect (kept in a list ordered by start, descending);
- a full window of one triplet value (homopolymer, or period-3 of one triplet) is a special
  state: it slides by one base at a time adding a perfect interval per base (``shift_high``),
  and the first different triplet restarts the whole scan at the window's start;
- perfect intervals that leave the window are reported, merged with the previous report when
  they start at most ``linker`` bases after its end;
- when the scan reaches the end it is restarted at the last window's start while that start is
  not 0 (so the tail is scanned again with a fresh window), as BLAST+ does.

Intervals are 0-based, inclusive (``dustmasker -outfmt interval``). :func:`dust_intervals` is
the plain reference; :func:`dust_mask` gives a boolean mask.
"""
from __future__ import annotations

import numpy as np

DUST_LEVEL = 20
DUST_WINDOW = 64
DUST_LINKER = 1

#: DUST's code of each upper-case ASCII letter (C=1 G=2 T=3, N=-1: a random base, else 0).
_BASE2 = np.zeros(256, dtype=np.int8)
for _c, _v in ((b"C", 1), (b"G", 2), (b"T", 3), (b"N", -1)):
    _BASE2[_c[0]] = _v
    _BASE2[_c[0] + 32] = _v
#: NCBI ``CRandom``'s state after ``Reset()`` (the generator of a default-constructed masker).
_RANDOM_STATE = (
    0xd53f1852, 0xdfc78b83, 0x4f256096, 0x0e643df7, 0x82c359bf, 0xc7794dfa, 0xd5e9ffaa,
    0x2c8cb64a, 0x2f07b334, 0xad5a7eb5, 0x96dc0cde, 0x6fc24589, 0xa5853646, 0xe71576e2,
    0x0dae30df, 0xb09ce711, 0x5e56ef87, 0x4b4b0082, 0x6f4f340e, 0xc5bb17e8, 0xd788d765,
    0x67498087, 0x9d7aba26, 0x261351d4, 0x411ee7ea, 0x0393a263, 0x2c5a5835, 0xc115fcd8,
    0x25e9132c, 0xd0c6e906, 0xc2bc5b2d, 0x6c065c98, 0x6e37bd55)


def dust_codes(seq) -> np.ndarray:
    """DUST's codes of a sequence (str/bytes any case, or uint8 ASCII): 0..3, -1 for N."""
    if isinstance(seq, str):
        seq = seq.encode("ascii")
    if isinstance(seq, (bytes, bytearray)):
        seq = np.frombuffer(bytes(seq), dtype=np.uint8)
    return _BASE2[np.asarray(seq, dtype=np.uint8)]


class _Reader:
    """Reads bases as the masker's converter does: each N read draws a fresh random base.

    The generator is NCBI's additive lagged-Fibonacci ``CRandom`` from its reset state (one
    per masker, i.e. per blastn query); a base read twice (scan restarts) draws twice.
    """

    def __init__(self, codes):
        self.codes = codes
        self.state = list(_RANDOM_STATE)
        self.k = 32
        self.j = 12

    def __call__(self, i):
        c = self.codes[i]
        if c >= 0:
            return c
        s = self.state
        r = (s[self.k] + s[self.j]) & 0xFFFFFFFF
        s[self.k] = r
        self.k -= 1
        self.j -= 1
        if self.k < 0:
            self.k = 32
        elif self.j < 0:
            self.j = 32
        return (r >> 1) & 3


def check_dust_params(level: int, window: int, linker: int):
    """BLAST+ silently replaces out-of-range values by defaults; we refuse them instead."""
    if not 2 <= level <= 64:
        raise ValueError(f"DUST level must be in 2..64, got {level}")
    if not 8 <= window <= 64:
        raise ValueError(f"DUST window must be in 8..64, got {window}")
    if not 1 <= linker <= 32:
        raise ValueError(f"DUST linker must be in 1..32, got {linker}")


class _Window:
    """Triplets of the current window (``tri[k]`` = triplet starting at base k of this pass)."""

    def __init__(self, max_size, low_k, thresholds, perfect):
        self.tri = []
        self.max_size = max_size
        self.low_k = low_k
        self.th = thresholds
        self.P = perfect          # list of [first, last, score, len], first descending
        self.start = 0            # first triplet in the window
        self.stop = 0             # one past the last triplet
        self.L = 0                # first triplet of the suffix
        self.cw = [0] * 64
        self.cv = [0] * 64
        self.rw = 0
        self.rv = 0
        self.ndiff = 0

    def size(self):
        return self.stop - self.start

    def _drop_oldest_w(self):
        s = self.tri[self.start]
        self.cw[s] -= 1
        self.rw -= self.cw[s]
        if self.cw[s] == 0:
            self.ndiff -= 1
        return s

    def _add_w(self, t):
        if self.cw[t] == 0:
            self.ndiff += 1
        self.rw += self.cw[t]
        self.cw[t] += 1

    def shift_high(self, t):
        """Slide a full single-valued window; False while it stays single-valued."""
        self._drop_oldest_w()
        self.start += 1
        self.tri.append(t)
        self._add_w(t)
        self.stop += 1
        if self.ndiff <= 1:
            self.P.insert(0, [self.start, self.stop + 1, 0, 0])
            return False
        return True

    def shift(self, t):
        """Append triplet ``t`` (at index ``stop``); False when entering the single-valued state."""
        if self.size() >= self.max_size:
            if self.ndiff <= 1:
                return self.shift_high(t)
            s = self._drop_oldest_w()
            if self.L == self.start:
                self.L += 1
                self.cv[s] -= 1
                self.rv -= self.cv[s]
            self.start += 1
        self.tri.append(t)
        self._add_w(t)
        self.rv += self.cv[t]
        self.cv[t] += 1
        if self.cv[t] > self.low_k:
            while True:
                u = self.tri[self.L]
                self.cv[u] -= 1
                self.rv -= self.cv[u]
                self.L += 1
                if u == t:
                    break
        self.stop += 1
        if self.size() >= self.max_size and self.ndiff <= 1:
            self.P.clear()
            self.P.insert(0, [self.start, self.stop + 1, 0, 0])
            return False
        return True

    def needs_processing(self):
        count = self.stop - self.L
        return count < self.size() and 10 * self.rw > self.th[count]

    def find_perfect(self):
        counts = list(self.cv)
        count = self.stop - self.L
        score = self.rv
        k = 0                      # position in P (first descending)
        max_score = 0
        max_len = 0
        P = self.P
        last = self.stop + 1
        for pos in range(self.L - 1, self.start - 1, -1):
            t = self.tri[pos]
            cnt = counts[t]
            score += cnt
            counts[t] = cnt + 1
            if cnt > 0 and score * 10 > self.th[count]:
                while k < len(P) and pos <= P[k][0]:
                    if max_score == 0 or max_len * P[k][2] > max_score * P[k][3]:
                        max_score = P[k][2]
                        max_len = P[k][3]
                    k += 1
                if max_score == 0 or score * max_len >= max_score * count:
                    max_score = score
                    max_len = count
                    P.insert(k, [pos, last, score, count])
            count += 1


def _save(res, P, wstart, offset, linker):
    """Report the oldest perfect interval if it left the window; drop all that left."""
    if P and P[-1][0] < wstart:
        a, b = P[-1][0] + offset, P[-1][1] + offset
        if res and res[-1][1] + linker >= a:
            res[-1][1] = max(res[-1][1], b)
        else:
            res.append([a, b])
        while P and P[-1][0] < wstart:
            P.pop()


def dust_intervals(seq, level: int = DUST_LEVEL, window: int = DUST_WINDOW,
                   linker: int = DUST_LINKER):
    """Masked intervals ``[(first, last), ...]`` (0-based, inclusive) of one sequence."""
    check_dust_params(level, window, linker)
    codes = dust_codes(seq).tolist()
    read = _Reader(codes)
    n = len(codes)
    res = []
    if n == 0:
        return []
    thresholds = [1] + [i * level for i in range(1, window - 2)]
    low_k = level // 5
    stop = n - 1
    start = 0
    while stop > 2 + start:
        P = []
        w = _Window(window - 2, low_k, thresholds, P)
        t = read(start) << 2
        t += read(start + 1)
        it = start + 2
        done = False
        while not done and it <= stop:
            _save(res, P, w.start, start, linker)
            t = ((t << 2) & 63) + read(it)
            it += 1
            if w.shift(t):
                if w.needs_processing():
                    w.find_perfect()
            else:
                while it <= stop:
                    _save(res, P, w.start, start, linker)
                    t = ((t << 2) & 63) + read(it)
                    if w.shift(t):
                        done = True
                        break
                    it += 1
        wstart = w.start
        while P:
            _save(res, P, wstart, start, linker)
            wstart += 1
        if w.start > 0:
            start += w.start
        else:
            break
    return [(a, b) for a, b in res]


def dust_mask(seq, level: int = DUST_LEVEL, window: int = DUST_WINDOW,
              linker: int = DUST_LINKER) -> np.ndarray:
    """Boolean mask (True = masked by DUST) of one sequence."""
    n = len(seq)
    mask = np.zeros(n, dtype=bool)
    for a, b in dust_intervals(seq, level, window, linker):
        mask[a:b + 1] = True
    return mask


def lowercase_intervals(seq):
    """Runs of lower-case letters ``[(first, last)]`` (``-lcase_masking``)."""
    if isinstance(seq, str):
        seq = seq.encode("ascii")
    a = np.frombuffer(bytes(seq), dtype=np.uint8) if isinstance(seq, (bytes, bytearray)) \
        else np.asarray(seq, dtype=np.uint8)
    low = np.concatenate([[False], (a >= 97) & (a <= 122), [False]])
    edges = np.flatnonzero(low[1:] != low[:-1])
    return [(int(s), int(e) - 1) for s, e in zip(edges[0::2], edges[1::2])]


def merge_intervals(ivs):
    """Sorted union of intervals, overlapping or abutting ones merged (``fMerge_All``)."""
    out = []
    for a, b in sorted(ivs):
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def query_mask_intervals(seq, dust: bool = True, lcase: bool = False, level: int = DUST_LEVEL,
                         window: int = DUST_WINDOW, linker: int = DUST_LINKER, fast: bool = True):
    """The query mask blastn applies at the lookup table: DUST and/or lower-case runs, merged."""
    ivs = lowercase_intervals(seq) if lcase else []
    if dust:
        if fast:
            from .nucl_dust_nb import dust_intervals_fast as run
        else:
            run = dust_intervals
        ivs = ivs + run(seq, level, window, linker)
    return merge_intervals(ivs)


def query_masks(texts, dust: bool = True, lcase: bool = False, threads: int = 1):
    """:func:`query_mask_intervals` of every query text (lists): :func:`query_mask_arrays` of
    the texts joined."""
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=starts[1:])
    joined = b"".join(t.encode("ascii") if isinstance(t, str) else bytes(t) for t in texts)
    return list(query_mask_arrays(joined, starts, dust, lcase, threads))


class MaskArrays:
    """Every query's mask as arrays: ``intervals`` ``(n, 2)`` int64 (0-based, inclusive), query
    by query, ``counts`` per query and ``first`` (its cumulative sum, one longer).
    ``masks[k]`` is query ``k``'s ``[(first, last)]`` list, as :func:`query_mask_intervals`
    gives it."""

    def __init__(self, intervals, counts):
        self.intervals, self.counts = intervals, counts
        self.first = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=self.first[1:])

    def __len__(self):
        return self.counts.size

    def __getitem__(self, k):
        if not -len(self) <= k < len(self):
            raise IndexError("query index out of range")
        k %= len(self)
        return [(a, b) for a, b in self.intervals[self.first[k]:self.first[k + 1]].tolist()]


def query_mask_arrays(text, starts, dust: bool = True, lcase: bool = False,
                      threads: int = 1) -> MaskArrays:
    """:func:`query_mask_intervals` of the sequences ``text[starts[k]:starts[k + 1]]`` (letters:
    bytes or uint8) as :class:`MaskArrays`: DUST of all in one compiled call per group of
    queries on ``threads`` threads (:func:`~clalign.blast.nucl_dust_nb.dust_arrays`). Python
    runs only for the queries whose intervals need :func:`merge_intervals`: those with a
    lower-case letter under ``lcase``, or with DUST intervals out of order, overlapping or
    abutting (DUST's linker already joins those; a merge of the others changes nothing)."""
    from .nucl_dust_nb import dust_arrays

    text = (np.frombuffer(text, dtype=np.uint8) if isinstance(text, (bytes, bytearray))
            else np.asarray(text, dtype=np.uint8))
    starts = np.asarray(starts, dtype=np.int64)
    n = max(starts.size - 1, 0)
    if dust:
        ivs, counts = dust_arrays(text, starts, threads=threads)
    else:
        ivs, counts = np.zeros((0, 2), dtype=np.int64), np.zeros(n, dtype=np.int64)
    owner = np.repeat(np.arange(n), counts)
    redo = np.zeros(n, dtype=bool)
    if len(ivs):
        redo[owner[ivs[:, 0] > ivs[:, 1]]] = True
        joins = (owner[1:] == owner[:-1]) & (ivs[1:, 0] <= ivs[:-1, 1] + 1)
        redo[owner[1:][joins]] = True
    if lcase and n:
        low = np.zeros(text.size + 1, dtype=np.int64)
        np.cumsum((text >= 97) & (text <= 122), out=low[1:])
        redo |= low[starts[1:]] > low[starts[:-1]]
    todo = np.flatnonzero(redo).tolist()
    if not todo:
        return MaskArrays(ivs, counts)
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    rows, row_of = [ivs[~redo[owner]]], [owner[~redo[owner]]]
    counts = counts.copy()
    for k in todo:
        d = [(a, b) for a, b in ivs[first[k]:first[k + 1]].tolist()]
        low_runs = lowercase_intervals(text[starts[k]:starts[k + 1]]) if lcase else []
        m = merge_intervals(low_runs + d)
        counts[k] = len(m)
        rows.append(np.array(m, dtype=np.int64).reshape(-1, 2))
        row_of.append(np.full(len(m), k, dtype=np.int64))
    order = np.argsort(np.concatenate(row_of), kind="stable")
    return MaskArrays(np.concatenate(rows)[order], counts)
