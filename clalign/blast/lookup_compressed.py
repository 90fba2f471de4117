"""The compressed-alphabet lookup table of ``-task blastp-fast`` (word size 6 or 7), BLAST+ 2.12.

``blast_aalookup.c``/``blast_stat.c``: subject and query words are read in a reduced alphabet
(15 letters for W = 6, 10 for W = 7; Edgar's groups, below). Letters outside it (X, U, ``*``,
O, the gap) end a word: query words holding one are not indexed, subject words holding one are
not looked up. A subject word hits query offset q when the score of the compressed subject word
against the query word, in a 28 x A matrix scaled by 100 / lambda_ungapped(matrix), is at least
``100 * threshold`` (truncated), or when it is the query word's own compressed word (added when
its self-score is below that, as for the standard table; threshold 0: exact words only). The
matrix entry for query letter q and group g is
``Nint(ln(sum_{a in g} r(q, a) P(a | g)) * 100 / lambda)``, with r the matrix's frequency
ratios (``data/freq_ratios.txt``) and P(a | g) the normalised Robinson background of a within its
group; a sum below 1e-8 gives BLAST_SCORE_MIN.

The table is CSR over word indices ``c0 + A c1 + ... + A^(W-1) c(W-1)`` (first letter least
significant, as BLAST+'s). Extension, the two-hit rule and everything after use the real
residues and matrix, as with the standard table. ``scan_db`` is the CPU scan for this table and
for the one-hit finder (``-window_size 0``) on either table; ``build_word_lookup`` builds the
standard table for word sizes 4 and 5 by the same pruned enumeration.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

from ..runtime.jit import njit
import numpy as np

from ..data.alphabet import PROTEIN
from ..stats.karlin import ROBINSON
from ..stats.tables import PROTEIN_TABLES
from .lookup import unmasked_words
from .ungapped_nb import _extend_two_hit, _grow_rows
from .ungapped_onehit import _extend_one_hit

ALPHABETS = {6: "ST IJV LM KR EQZ A G BD P N F Y H C W",   # 15 groups (SE_B(14))
             7: "IJLMV AST BDENZ KQR G FY P H C W"}         # 10 groups (SE-V(10))
MATRIX_SCALE = 100.0
SCORE_MIN = -32768   # BLAST_SCORE_MIN
_DATA = os.path.join(os.path.dirname(__file__), "data", "freq_ratios.txt")


@lru_cache(maxsize=None)
def freq_ratios(matrix: str) -> np.ndarray:
    """28 x 28 frequency ratios of a BLAST+ matrix (NCBIstdaa order)."""
    rows, name = {}, None
    with open(_DATA) as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            if line.startswith(">"):
                name = line[1:].strip()
                rows[name] = []
            elif line.strip():
                rows[name].append([float(x) for x in line.split()])
    if matrix not in rows:
        raise KeyError(matrix)
    return np.array(rows[matrix], dtype=np.float64)


def _nint(x: float) -> int:
    """BLAST_Nint: half away from zero, then truncation."""
    return int(x + 0.5) if x >= 0.0 else int(x - 0.5)


@dataclass(frozen=True)
class CompressedAlphabet:
    size: int
    table: np.ndarray    # int16 (256,): NCBIstdaa code -> group, or -1 outside the alphabet
    matrix: np.ndarray   # int32 (28, size): scaled scores of query letter vs group


@lru_cache(maxsize=None)
def compressed_alphabet(matrix: str, word_size: int) -> CompressedAlphabet:
    """The reduced alphabet and its score matrix (``SCompressedAlphabetNew``)."""
    groups = ALPHABETS[word_size].split()
    codes = {ch: i for i, ch in enumerate(PROTEIN.letters)}
    table = np.full(256, -1, dtype=np.int16)
    members = []
    for g, letters in enumerate(groups):
        members.append([codes[ch] for ch in letters])
        for ch in letters:
            table[codes[ch]] = g
    # normalised Robinson background (Blast_ResFreqStdComp), summed in code order as BLAST+
    prob = [ROBINSON.get(ch, 0.0) for ch in PROTEIN.letters]
    total = 0.0
    for p in prob:
        total += p
    prob = [p / total for p in prob]
    cond = [0.0] * len(prob)
    for mem in members:
        s = 0.0
        for a in mem:
            s += prob[a]
        for a in mem:
            cond[a] = prob[a] / s
    lam = PROTEIN_TABLES[matrix][0][2]     # the ungapped lambda (RPSfindUngappedLambda)
    scale = MATRIX_SCALE / lam
    fr = freq_ratios(matrix)
    out = np.zeros((28, len(groups)), dtype=np.int32)
    for q in range(28):
        for g, mem in enumerate(members):
            val = 0.0
            for a in mem:
                val += fr[q, a] * cond[a]
            if val < 1e-8:
                out[q, g] = _nint(SCORE_MIN / scale * scale)
            else:
                out[q, g] = _nint(float(np.log(val)) * scale)
    return CompressedAlphabet(len(groups), table, out)


@dataclass(frozen=True)
class CompressedLookup:
    """CSR compressed word index -> query offsets (ascending), with the alphabet used."""

    word_size: int
    threshold: int        # scaled by 100
    alphabet: CompressedAlphabet
    starts: np.ndarray    # int32 (size**W + 1,)
    qoffs: np.ndarray     # int32

    def offsets(self, index: int) -> np.ndarray:
        return self.qoffs[self.starts[index]:self.starts[index + 1]]


@njit(cache=True, nogil=True, inline="always")
def _emit(idx, qo, n, code, off):
    """Append (code, off), doubling the arrays when full; returns them and the new count."""
    if n == idx.shape[0]:
        bigger_i = np.empty(2 * n, dtype=np.int64)
        bigger_q = np.empty(2 * n, dtype=np.int32)
        for k in range(n):     # loops: no numba slice-copy error path
            bigger_i[k] = idx[k]
            bigger_q[k] = qo[k]
        idx, qo = bigger_i, bigger_q
    idx[n] = code
    qo[n] = off
    return idx, qo, n + 1


@njit(cache=True, nogil=True)
def _neighbours(q, table, cm, w, threshold, offsets, power):
    """(word index, query offset) pairs of the words at the given query offsets: every word g
    (letters in ``table``'s alphabet, columns of ``cm``) with sum_p cm[q_p, g_p] >= threshold,
    and the query word itself when it scores less (threshold 0: only it); a query word with a
    letter outside the alphabet (``table`` < 0) gives none. Index = sum_p g_p * power[p].
    Pairs come offset by offset (ascending, as ``offsets``); within one, a depth-first walk over
    each position's letters in decreasing score, a level closed as soon as the best score still
    reachable falls below the threshold, the last position a straight run down its sorted row."""
    size = cm.shape[1]
    row_max = np.empty(cm.shape[0], dtype=np.int64)
    order = np.empty(cm.shape, dtype=np.int64)
    ranked = np.empty(cm.shape, dtype=np.int64)     # cm[r, order[r, k]]
    for r in range(cm.shape[0]):
        row_max[r] = cm[r].max()
        order[r] = np.argsort(-cm[r].astype(np.int64), kind="mergesort")
        for k in range(size):
            ranked[r, k] = cm[r, order[r, k]]
    idx = np.empty(1 << 16, dtype=np.int64)
    qo = np.empty(1 << 16, dtype=np.int32)
    n = 0
    letters = np.zeros(w, dtype=np.int64)
    choice = np.zeros(w, dtype=np.int64)     # rank tried at each position
    partial = np.zeros(w + 1, dtype=np.int64)
    pcode = np.zeros(w + 1, dtype=np.int64)
    suffix = np.zeros(w + 1, dtype=np.int64)
    for off in offsets:
        skip = False
        self_score = 0
        exact = 0
        for p in range(w):
            letters[p] = q[off + p]
            g = table[letters[p]]
            if g < 0:
                skip = True
                break
            self_score += cm[letters[p], g]
            exact += g * power[p]
        if skip:
            continue
        if threshold == 0 or self_score < threshold:
            idx, qo, n = _emit(idx, qo, n, exact, off)
        if threshold == 0:
            continue
        # best possible score of the remaining positions, for pruning
        suffix[w] = 0
        for p in range(w - 1, -1, -1):
            suffix[p] = suffix[p + 1] + row_max[letters[p]]
        if suffix[0] < threshold:
            continue
        last = letters[w - 1]     # word sizes are 2 or more (options.blastp_options)
        p = 0
        choice[0] = 0
        while p >= 0:
            if choice[p] >= size:
                p -= 1
                if p >= 0:
                    choice[p] += 1
                continue
            lp = letters[p]
            s = partial[p] + ranked[lp, choice[p]]
            if s + suffix[p + 1] < threshold:   # later ranks score no more: close this level
                choice[p] = size
                continue
            code = pcode[p] + order[lp, choice[p]] * power[p]
            if p == w - 2:
                need = threshold - s
                for r in range(size):
                    if ranked[last, r] < need:
                        break
                    idx, qo, n = _emit(idx, qo, n, code + order[last, r] * power[w - 1], off)
                choice[p] += 1
            else:
                partial[p + 1] = s
                pcode[p + 1] = code
                p += 1
                choice[p] = 0
    return idx[:n], qo[:n]


def build_compressed_lookup(query, matrix_name: str, threshold: float, word_size: int,
                            mask=None) -> CompressedLookup:
    """The compressed lookup of one query (NCBIstdaa codes); ``mask``: residues whose words
    are not indexed (SEG)."""
    alpha = compressed_alphabet(matrix_name, word_size)
    q = np.asarray(query, dtype=np.uint8)
    n = len(q) - word_size + 1
    offs = np.arange(max(n, 0), dtype=np.int64)
    if mask is not None and n > 0:
        offs = unmasked_words(mask, word_size)
    t = int(MATRIX_SCALE * threshold)
    power = alpha.size ** np.arange(word_size, dtype=np.int64)   # first letter least significant
    idx, qo = _neighbours(q, alpha.table, alpha.matrix, word_size, t, offs, power)
    starts, qoffs = _csr(idx, qo, alpha.size ** word_size)
    return CompressedLookup(word_size, t, alpha, starts, qoffs)


def build_word_lookup(query, matrix: np.ndarray, threshold: int, word_size: int, mask=None):
    """The standard table (``lookup.LookupTable``: all 28 letters, 5-bit letter codes, first
    letter highest) by the same pruned enumeration, for word sizes whose 28**W dense
    enumeration ``lookup.build_lookup`` cannot afford (4, 5)."""
    from .lookup import CHARSIZE, LookupTable

    q = np.asarray(query, dtype=np.uint8)
    n = len(q) - word_size + 1
    offs = np.arange(max(n, 0), dtype=np.int64)
    if mask is not None and n > 0:
        offs = unmasked_words(mask, word_size)
    table = np.full(256, -1, dtype=np.int16)
    table[:28] = np.arange(28)
    power = np.array([1 << (CHARSIZE * (word_size - 1 - p)) for p in range(word_size)], dtype=np.int64)
    idx, qo = _neighbours(q, table, np.ascontiguousarray(matrix[:28, :28], dtype=np.int32),
                          word_size, int(threshold), offs, power)
    size = 1 << (CHARSIZE * word_size)
    starts, qoffs = _csr(idx, qo, size)
    return LookupTable(word_size, int(threshold), starts, qoffs, np.diff(starts) > 0)


@njit(cache=True, nogil=True)
def _csr(idx, qo, size):
    """(index, offset) pairs into CSR by a counting sort; stable (pairs come in ascending
    offset order, and stay so within an index)."""
    n = len(idx)
    starts = np.zeros(size + 1, dtype=np.int32)
    for i in idx:
        starts[i + 1] += 1
    for c in range(size):
        starts[c + 1] += starts[c]
    out = np.empty(n, dtype=np.int32)
    for k in range(n - 1, -1, -1):   # fill each bucket from its end: starts[c + 1] -> begin(c)
        c = idx[k]
        starts[c + 1] -= 1
        out[starts[c + 1]] = qo[k]
    for c in range(size):      # shift down (a loop: no numba slice-copy error path)
        starts[c] = starts[c + 1]
    starts[size] = n
    return starts, out


@njit(cache=True, nogil=True)
def scan_db(q, matrix, starts, qoffs, table, size, first_low, residues, offsets, first, last,
            window, w, dropoff, cutoff):
    """Initial HSPs of subjects first..last-1 with words read through ``table`` (letter ->
    0..size-1, or -1: no word holds it) and indexed first letter lowest (``first_low``: the
    compressed table) or highest (the standard table): rows (subject, score, q_start, s_start,
    length, q_off, s_off) in subject order, as ``ungapped_nb.two_hit_db``. ``window`` 0: the
    one-hit finder (``ungapped_onehit``), else the two-hit rule."""
    qlen = q.shape[0]
    max_slen = 0
    for k in range(first, last):
        max_slen = max(max_slen, offsets[k + 1] - offsets[k])
    ndiag = qlen + max_slen + 1
    last_hit = np.zeros(ndiag, dtype=np.int32)
    flag = np.zeros(ndiag, dtype=np.uint8)
    stamp = np.full(ndiag, -1, dtype=np.int32)
    cap = 1024
    res = np.empty((cap, 7), dtype=np.int32)
    nres = 0
    ext = np.empty(6, dtype=np.int32)
    top = 1
    for _ in range(w - 1):
        top *= size
    span = top * size
    for k in range(first, last):
        base = offsets[k]
        slen = offsets[k + 1] - base
        if slen < w:
            continue
        code = 0
        good = 0          # valid letters ending at the current one
        for i in range(slen):
            g = table[residues[base + i]]
            if g < 0:
                good = 0
                code = 0
                continue
            if first_low:
                code = code // size + g * top
            else:
                code = (code * size) % span + g
            good += 1
            if good < w:
                continue
            s_off = i - w + 1
            for j in range(starts[code], starts[code + 1]):
                q_off = qoffs[j]
                d = q_off - s_off + max_slen
                keep = False
                if window == 0:
                    if stamp[d] == k and s_off < last_hit[d]:
                        continue
                    _extend_one_hit(matrix, q, residues, base, slen, s_off, q_off, dropoff, w, ext)
                    stamp[d] = k
                    last_hit[d] = ext[4] - (w - 1)
                    keep = ext[0] >= cutoff
                else:
                    if stamp[d] != k:
                        stamp[d] = k
                        flag[d] = 0
                        last_hit[d] = s_off
                        continue
                    if flag[d] != 0:
                        if s_off < last_hit[d]:
                            continue
                        last_hit[d] = s_off
                        flag[d] = 0
                        continue
                    diff = s_off - last_hit[d]
                    if diff >= window:
                        last_hit[d] = s_off
                        continue
                    if diff < w:
                        continue
                    _extend_two_hit(matrix, q, residues, base, slen, last_hit[d] + w, s_off, q_off,
                                    dropoff, w, ext)
                    keep = ext[0] >= cutoff
                    if ext[4] != 0:
                        flag[d] = 1
                        last_hit[d] = ext[5] - (w - 1)
                    else:
                        last_hit[d] = s_off
                if keep:
                    if nres == cap:
                        res = _grow_rows(res, cap)
                        cap *= 2
                    res[nres, 0] = k
                    res[nres, 1] = ext[0]
                    res[nres, 2] = ext[1]
                    res[nres, 3] = ext[2]
                    res[nres, 4] = ext[3]
                    res[nres, 5] = q_off
                    res[nres, 6] = s_off
                    nres += 1
    return res[:nres].copy()
