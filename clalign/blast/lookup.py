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

import numba
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
    for c0 in range(0, len(uniq), 256):          # neighbours of 256 distinct words at a time
        lt = letters[c0:c0 + 256]
        total = np.zeros((len(lt), 1), dtype=np.int32)
        for i in range(word_size):
            total = (total[:, :, None] + m[lt[:, i]][:, None, :]).reshape(len(lt), -1)
        if threshold > 0:
            k, w = np.nonzero(total >= threshold)
        else:
            k = w = np.zeros(0, dtype=np.int64)
        word_list.append(dense[w])
        uniq_index.append(k + c0)
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


@numba.njit(cache=True, nogil=True, inline="always")
def _grow(words, n):
    """``words[:n]`` in an array twice as long (a loop: numba compiles a costly error path for
    an array-to-slice assignment)."""
    bigger = np.empty(2 * n, dtype=np.int32)
    for i in range(n):
        bigger[i] = words[i]
    return bigger


@numba.njit(cache=True, nogil=True)
def _neighbours(uniq, m, threshold, w):
    """CSR (starts, words) of every word scoring >= threshold against each distinct query word
    (all 28**w words, pruned by the best score still reachable), plus the word itself."""
    best = np.empty(ALPHABET, dtype=np.int64)
    for a in range(ALPHABET):
        best[a] = m[a, 0]
        for b in range(ALPHABET):
            best[a] = max(best[a], m[a, b])
    starts = np.zeros(uniq.shape[0] + 1, dtype=np.int64)
    cap = max(1024, 64 * uniq.shape[0])
    words = np.empty(cap, dtype=np.int32)
    n = 0
    letters = np.empty(w, dtype=np.int64)
    rest = np.empty(w + 1, dtype=np.int64)
    idx = np.zeros(w, dtype=np.int64)
    part = np.zeros(w + 1, dtype=np.int64)
    for u in range(uniq.shape[0]):
        for i in range(w):
            letters[i] = (uniq[u] >> (CHARSIZE * (w - 1 - i))) & 31
        rest[w] = 0
        for i in range(w - 1, -1, -1):
            rest[i] = rest[i + 1] + best[letters[i]]
        self_seen = False
        if threshold > 0 and rest[0] >= threshold:
            # depth-first over positions; idx[i] is the letter tried at position i
            depth = 0
            idx[0] = 0
            while depth >= 0:
                if idx[depth] >= ALPHABET:
                    depth -= 1
                    if depth >= 0:
                        idx[depth] += 1
                    continue
                sc = part[depth] + m[letters[depth], idx[depth]]
                if sc + rest[depth + 1] < threshold:
                    idx[depth] += 1
                    continue
                if depth == w - 1:
                    code = 0
                    for i in range(w):
                        code = (code << CHARSIZE) | idx[i]
                    if n == words.shape[0]:
                        words = _grow(words, n)
                    words[n] = code
                    n += 1
                    if code == uniq[u]:
                        self_seen = True
                    idx[depth] += 1
                else:
                    part[depth + 1] = sc
                    depth += 1
                    idx[depth] = 0
        if not self_seen:
            if n == words.shape[0]:
                words = _grow(words, n)
            words[n] = uniq[u]
            n += 1
        starts[u + 1] = n
    return starts, words[:n]


@numba.njit(cache=True, nogil=True)
def _fill_table(inverse, nb_starts, nb_words, size):
    """CSR word -> query offsets (ascending) from each query offset's distinct word."""
    counts = np.zeros(size, dtype=np.int32)
    for i in range(inverse.shape[0]):
        u = inverse[i]
        for j in range(nb_starts[u], nb_starts[u + 1]):
            counts[nb_words[j]] += 1
    starts = np.zeros(size + 1, dtype=np.int32)
    for c in range(size):
        starts[c + 1] = starts[c] + counts[c]
    qoffs = np.empty(starts[size], dtype=np.int32)
    pos = starts[:size].copy()
    for i in range(inverse.shape[0]):
        u = inverse[i]
        for j in range(nb_starts[u], nb_starts[u + 1]):
            c = nb_words[j]
            qoffs[pos[c]] = i
            pos[c] += 1
    return starts, qoffs, counts > 0


def build_lookup_fast(query: np.ndarray, matrix: np.ndarray, threshold: int,
                      word_size: int = 3, mask=None) -> LookupTable:
    """``build_lookup`` compiled (same table, tested equal): neighbours enumerated per distinct
    query word with BLAST+'s pruning by the best score still reachable; ``mask`` as there."""
    q = np.asarray(query, dtype=np.int32)
    size = 1 << (CHARSIZE * word_size)
    codes = word_codes(q, word_size)
    kept = None
    if mask is not None and len(codes):
        kept = unmasked_words(mask, word_size).astype(np.int32)
        codes = codes[kept]
    uniq, inverse = np.unique(codes, return_inverse=True)
    m = np.ascontiguousarray(matrix[:ALPHABET, :ALPHABET], dtype=np.int64)
    nb_starts, nb_words = _neighbours(uniq.astype(np.int64), m, int(threshold), int(word_size))
    starts, qoffs, present = _fill_table(inverse.astype(np.int64).ravel(), nb_starts, nb_words, size)
    if kept is not None:
        qoffs = kept[qoffs]           # ascending positions stay ascending per word
    return LookupTable(word_size, threshold, starts, qoffs, present)
