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


def _all_word_scores(matrix: np.ndarray, word: tuple) -> np.ndarray:
    """Score of every W-letter word (codes in BLAST packing, 28 letters) against ``word``."""
    m = matrix[:ALPHABET, :ALPHABET].astype(np.int64)
    total = np.zeros((1,), dtype=np.int64)
    for letter in word:
        total = (total[:, None] + m[letter][None, :]).reshape(-1)
    return total


def _dense_codes(w: int) -> np.ndarray:
    """BLAST code of the dense index of each word over 28 letters (first letter slowest)."""
    codes = np.zeros(1, dtype=np.int32)
    for _ in range(w):
        codes = ((codes[:, None] << CHARSIZE) | np.arange(ALPHABET, dtype=np.int32)[None, :]).reshape(-1)
    return codes


def build_lookup(query: np.ndarray, matrix: np.ndarray, threshold: int, word_size: int = 3) -> LookupTable:
    """Neighbourhood lookup table of one query (NCBIstdaa codes), BLAST+'s rule."""
    q = np.asarray(query, dtype=np.int32)
    size = 1 << (CHARSIZE * word_size)
    codes = word_codes(q, word_size)
    dense = _dense_codes(word_size)
    pair_words, pair_q = [], []
    uniq, inverse = np.unique(codes, return_inverse=True)
    for k, code in enumerate(uniq):
        where = np.nonzero(inverse == k)[0].astype(np.int32)
        letters = tuple(int(q[where[0] + i]) for i in range(word_size))
        if threshold > 0:
            hits = dense[_all_word_scores(matrix, letters) >= threshold]
        else:
            hits = np.zeros(0, dtype=np.int32)
        if not np.any(hits == code):
            hits = np.append(hits, np.int32(code))
        pair_words.append(np.repeat(hits, len(where)))
        pair_q.append(np.tile(where, len(hits)))
    if pair_words:
        words = np.concatenate(pair_words)
        qs = np.concatenate(pair_q)
    else:
        words = qs = np.zeros(0, dtype=np.int32)
    order = np.lexsort((qs, words))
    words, qs = words[order], qs[order].astype(np.int32)
    counts = np.bincount(words, minlength=size)
    starts = np.zeros(size + 1, dtype=np.int32)
    np.cumsum(counts, out=starts[1:])
    return LookupTable(word_size, threshold, starts, qs, counts > 0)
