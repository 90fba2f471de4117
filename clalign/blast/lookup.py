"""Query preprocessing for protein word hits: neighbourhood words and the lookup table.

A subject word ``w`` hits query position ``q`` (the query word starting there) when the
ungapped score of ``w`` against that query word is at least the threshold T, or when ``w`` is
exactly the query word (``blast_aalookup.c``: ``s_AddWordHits`` adds exact matches itself when
their self-score is below T). All 28 NCBIstdaa letters take part, as in BLAST+ (the gap code
scores BLAST_SCORE_MIN so never reaches T). Word codes pack letters 5 bits each, first letter
highest (BLAST's ``charsize``), so a table has 32**W entries.

The table is CSR: ``starts[code]..starts[code+1]`` index ``qoffs``, query offsets ascending.
The order of offsets within one subject word does not change any result (each lies on its own
diagonal).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..runtime.jit import njit, numpy_forms
import numpy as np

CHARSIZE = 5
ALPHABET = 28


def word_codes(seq: np.ndarray, w: int = 3) -> np.ndarray:
    """Packed code of every word of length w in seq (len(seq) - w + 1 codes)."""
    s = np.asarray(seq, dtype=np.int32)
    n = len(s) - w + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int32)
    code = np.zeros(n, dtype=np.int32)
    for i in range(w):
        code = (code << CHARSIZE) | s[i:i + n]
    return code


@dataclass(frozen=True)
class LookupTable:
    """CSR word -> query offsets, with a presence bit array (the ``pv`` of BLAST+)."""

    word_size: int
    threshold: int
    starts: np.ndarray   # int32 (32**W + 1,)
    qoffs: np.ndarray    # int32 (total hits,)
    present: np.ndarray  # bool (32**W,)

    def offsets(self, code: int) -> np.ndarray:
        return self.qoffs[self.starts[code]:self.starts[code + 1]]


def _dense_codes(w: int) -> np.ndarray:
    """BLAST code of the dense index of each word over 28 letters (first letter slowest)."""
    codes = np.zeros(1, dtype=np.int32)
    for _ in range(w):
        codes = ((codes[:, None] << CHARSIZE) | np.arange(ALPHABET, dtype=np.int32)[None, :]).reshape(-1)
    return codes


def unmasked_words(mask, word_size: int) -> np.ndarray:
    """Start offsets of the words that touch no masked residue (``mask``: bool per residue, e.g.
    SEG's): the only words a masked query puts in a lookup table."""
    touched = np.convolve(np.asarray(mask, dtype=np.int64), np.ones(word_size, dtype=np.int64),
                          "valid") > 0
    return np.flatnonzero(~touched)


def build_lookup(query: np.ndarray, matrix: np.ndarray, threshold: int, word_size: int = 3,
                 mask=None) -> LookupTable:
    """Neighbourhood lookup table of one query (NCBIstdaa codes), BLAST+'s rule; ``mask``
    (bool per residue, e.g. SEG's): words touching a masked residue are not indexed."""
    q = np.asarray(query, dtype=np.int32)
    size = 1 << (CHARSIZE * word_size)
    codes = word_codes(q, word_size)
    kept = None
    if mask is not None and len(codes):
        kept = unmasked_words(mask, word_size).astype(np.int32)
        codes = codes[kept]
    dense = _dense_codes(word_size)
    uniq, inverse = np.unique(codes, return_inverse=True)
    m = matrix[:ALPHABET, :ALPHABET].astype(np.int32)
    letters = np.stack([(uniq >> (CHARSIZE * (word_size - 1 - i))) & 31 for i in range(word_size)], 1)
    word_list, uniq_index = [], []
    for c0 in range(0, len(uniq), 1024):         # neighbours of 1024 distinct words at a time
        lt = letters[c0:c0 + 1024]
        if threshold <= 0:
            break
        # scores of every (W-1)-letter prefix, kept where the best last letter can still reach T
        prefix = np.zeros((len(lt), 1), dtype=np.int32)
        for i in range(word_size - 1):
            prefix = (prefix[:, :, None] + m[lt[:, i]][:, None, :]).reshape(len(lt), -1)
        last = m[lt[:, word_size - 1]]
        k, p = np.nonzero(prefix + last.max(axis=1)[:, None] >= threshold)
        kk, b = np.nonzero(prefix[k, p][:, None] + last[k] >= threshold)
        word_list.append(dense[p[kk] * ALPHABET + b])   # (word, dense code) in row-major order
        uniq_index.append(k[kk] + c0)
    words_u = np.concatenate(word_list) if word_list else np.zeros(0, dtype=np.int32)
    index_u = np.concatenate(uniq_index) if uniq_index else np.zeros(0, dtype=np.int64)
    # the exact word is always a hit (added by BLAST+ when its self-score is below T)
    exact = words_u == uniq[index_u]
    missing = np.setdiff1d(np.arange(len(uniq)), index_u[exact])
    words_u = np.concatenate([words_u, uniq[missing]]).astype(np.int32)
    index_u = np.concatenate([index_u, missing])
    # expand each distinct word's neighbours to every query offset holding that word
    by_word = np.argsort(inverse, kind="stable").astype(np.int32)
    per_word = np.bincount(inverse, minlength=len(uniq))
    first = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum(per_word, out=first[1:])
    reps = per_word[index_u]
    words = np.repeat(words_u, reps)
    pos = np.repeat(first[index_u], reps) + (np.arange(int(reps.sum())) -
                                             np.repeat(np.cumsum(reps) - reps, reps))
    qs = by_word[pos] if len(pos) else np.zeros(0, dtype=np.int32)
    if kept is not None:
        qs = kept[qs]
    order = np.lexsort((qs, words))
    words, qs = words[order], qs[order].astype(np.int32)
    counts = np.bincount(words, minlength=size)
    starts = np.zeros(size + 1, dtype=np.int32)
    np.cumsum(counts, out=starts[1:])
    return LookupTable(word_size, threshold, starts, qs, counts > 0)


@njit(cache=True, nogil=True)
def _table_nb(q, mask, m, threshold, w):
    """(starts, qoffs, present) of ``build_lookup`` in one compiled pass: the distinct query
    words (a code -> index map), each one's neighbours (a depth-first walk over letters sorted by
    score against that position's letter, cut as soon as the best score still reachable falls
    below ``threshold``, BLAST+'s pruning; the exact word added when not reached), then the CSR
    table by two passes over the query offsets in ascending order. ``mask`` (uint8 per residue,
    empty for none): words touching a masked residue are not indexed."""
    size = 1 << (CHARSIZE * w)
    n = q.shape[0] - w + 1
    order = np.empty((ALPHABET, ALPHABET), dtype=np.int64)
    best = np.empty(ALPHABET, dtype=np.int64)
    for a in range(ALPHABET):
        order[a] = np.argsort(-m[a], kind="mergesort")
        best[a] = m[a, order[a, 0]]
    index = np.full(size, -1, dtype=np.int32)       # word code -> distinct word
    word_of = np.full(max(n, 0), -1, dtype=np.int32)  # query offset -> distinct word (-1: masked)
    uniq = np.empty(max(n, 0), dtype=np.int64)
    nu = 0
    for i in range(max(n, 0)):
        code = 0
        skip = False
        for k in range(w):
            code = (code << CHARSIZE) | q[i + k]
            if mask.shape[0] and mask[i + k]:
                skip = True
        if skip:
            continue
        u = index[code]
        if u < 0:
            u = index[code] = nu
            uniq[nu] = code
            nu += 1
        word_of[i] = u
    nb_starts = np.zeros(nu + 1, dtype=np.int64)
    words = np.empty(max(1024, 64 * nu), dtype=np.int32)
    nw = 0
    letters = np.empty(w, dtype=np.int64)
    rest = np.empty(w + 1, dtype=np.int64)
    idx = np.zeros(w, dtype=np.int64)
    part = np.zeros(w + 1, dtype=np.int64)
    for u in range(nu):
        for i in range(w):
            letters[i] = (uniq[u] >> (CHARSIZE * (w - 1 - i))) & 31
        rest[w] = 0
        for i in range(w - 1, -1, -1):
            rest[i] = rest[i + 1] + best[letters[i]]
        self_seen = False
        if threshold > 0 and rest[0] >= threshold:
            depth = 0
            idx[0] = 0
            while depth >= 0:
                a = letters[depth]
                if idx[depth] < ALPHABET:
                    b = order[a, idx[depth]]
                    sc = part[depth] + m[a, b]
                    if sc + rest[depth + 1] >= threshold:
                        if depth == w - 1:
                            code = 0
                            for i in range(w - 1):
                                code = (code << CHARSIZE) | order[letters[i], idx[i]]
                            code = (code << CHARSIZE) | b
                            if nw == words.shape[0]:
                                words = _grow(words, nw)
                            words[nw] = code
                            nw += 1
                            if code == uniq[u]:
                                self_seen = True
                            idx[depth] += 1
                        else:
                            part[depth + 1] = sc
                            depth += 1
                            idx[depth] = 0
                        continue
                # letters left at this depth all score lower: back up
                depth -= 1
                if depth >= 0:
                    idx[depth] += 1
        if not self_seen:
            if nw == words.shape[0]:
                words = _grow(words, nw)
            words[nw] = uniq[u]
            nw += 1
        nb_starts[u + 1] = nw
    counts = np.zeros(size, dtype=np.int32)
    for i in range(max(n, 0)):
        u = word_of[i]
        if u >= 0:
            for j in range(nb_starts[u], nb_starts[u + 1]):
                counts[words[j]] += 1
    starts = np.zeros(size + 1, dtype=np.int32)
    for c in range(size):
        starts[c + 1] = starts[c] + counts[c]
    qoffs = np.empty(starts[size], dtype=np.int32)
    pos = starts[:size].copy()
    for i in range(max(n, 0)):
        u = word_of[i]
        if u >= 0:
            for j in range(nb_starts[u], nb_starts[u + 1]):
                c = words[j]
                qoffs[pos[c]] = i
                pos[c] += 1
    return starts, qoffs, counts > 0


@njit(cache=True, nogil=True, inline="always")
def _grow(words, n):
    """``words[:n]`` in an array twice as long (a loop: numba compiles a costly error path for
    an array-to-slice assignment)."""
    bigger = np.empty(2 * n, dtype=np.int32)
    for i in range(n):
        bigger[i] = words[i]
    return bigger


_NO_MASK = np.zeros(0, dtype=np.uint8)


def build_lookup_fast(query: np.ndarray, matrix: np.ndarray, threshold: int,
                      word_size: int = 3, mask=None) -> LookupTable:
    """``build_lookup`` compiled (same table, tested equal): one call of ``_table_nb``, which
    releases the GIL; ``mask`` as there. While a command's preload has not yet loaded
    ``_table_nb`` (numba's start, ~1.5 s), ``build_lookup`` itself (numpy) builds the table, so
    the first queries' device work need not wait for numba."""
    if numpy_forms(_table_nb):
        return build_lookup(query, matrix, threshold, word_size, mask)
    q = np.ascontiguousarray(query, dtype=np.int64)
    mk = _NO_MASK if mask is None else np.ascontiguousarray(mask, dtype=np.uint8)
    m = _matrix64(matrix)
    starts, qoffs, present = _table_nb(q, mk, m, int(threshold), int(word_size))
    return LookupTable(word_size, threshold, starts, qoffs, present)


_M64 = {}


def _matrix64(matrix):
    """The 28 x 28 int64 copy the compiled builder takes, made once per matrix object."""
    key = id(matrix)
    got = _M64.get(key)
    if got is None and len(_M64) >= 16:
        _M64.clear()
    if got is None or got[0] is not matrix:
        got = _M64[key] = (matrix, np.ascontiguousarray(np.asarray(matrix)[:ALPHABET, :ALPHABET],
                                                         dtype=np.int64))
    return got[1]
