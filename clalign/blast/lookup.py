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


def build_lookup(query: np.ndarray, matrix: np.ndarray, threshold: int, word_size: int = 3,
                 mask=None) -> LookupTable:
    """Neighbourhood lookup table of one query (NCBIstdaa codes), BLAST+'s rule; ``mask``
    (bool per residue, e.g. SEG's): words touching a masked residue are not indexed."""
    q = np.asarray(query, dtype=np.int32)
    size = 1 << (CHARSIZE * word_size)
    codes = word_codes(q, word_size)
    kept = None
    if mask is not None and len(codes):
        touched = np.convolve(np.asarray(mask, dtype=np.int64), np.ones(word_size, dtype=np.int64),
                              "valid") > 0
        kept = np.flatnonzero(~touched).astype(np.int32)
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
