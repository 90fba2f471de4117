"""Scoring scheme of a Smith-Waterman search and the query profiles the kernels read."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data import get_matrix
from ..errors import ParameterError
from .params import ALPHA, SENTINEL

#: Largest score a 32-bit lane holds exactly is below this bound minus the matrix maximum.
INT32_MAX = 2 ** 31 - 1


@dataclass(frozen=True)
class Scoring:
    """Matrix and gap penalties, with the derived per-width constants."""

    scores: np.ndarray      # (ALPHA, ALPHA) int64; rows/cols >= 28 score ``smin``
    gap_open: int
    gap_extend: int
    smin: int               # min(matrix min, 0): score of sentinel residues
    smax: int               # max(matrix max, 0)

    @classmethod
    def make(cls, matrix, gap_open, gap_extend):
        m = get_matrix(matrix)
        if int(gap_open) < 0 or int(gap_extend) < 0:
            raise ParameterError(f"gap penalties must be >= 0 (got open {gap_open}, extend {gap_extend})")
        if int(gap_open) + int(gap_extend) > 1 << 20:
            raise ParameterError("gap penalties above 2^20 are not supported")
        smin = min(int(m.min), 0)
        smax = max(int(m.max), 0)
        if smax - smin > 1 << 20:
            raise ParameterError(f"matrix {m.name}: score range {smin}..{smax} too wide")
        big = np.full((ALPHA, ALPHA), smin, dtype=np.int64)
        big[:28, :28] = m.scores
        return cls(big, int(gap_open), int(gap_extend), smin, smax)

    @property
    def goe(self) -> int:
        return self.gap_open + self.gap_extend

    def width_ok(self, width: int) -> bool:
        """Whether lanes of ``width`` bits can hold this scoring scheme at all."""
        if width == 8:
            bias = -self.smin
            return self.goe <= 255 and 255 - bias - self.smax > 0
        if width == 16:
            return self.smax < 16384 and self.goe + self.gap_extend < 16384 and -self.smin < 16384
        return True

    def profile_bits(self) -> int:
        """The narrowest signed lane (8, 16 or 32 bits) that holds every score of the matrix."""
        for bits in (8, 16):
            if -(1 << (bits - 1)) <= self.smin and self.smax < (1 << (bits - 1)):
                return bits
        return 32

    def kernel_consts(self, width: int):
        """(bias, goe, ext, thresh) kernel arguments; a lane max >= thresh means 'overflowed'.

        32 bits: an H can only wrap when its diagonal predecessor is above INT32_MAX - smax,
        i.e. after the lane's max has reached the threshold, so a lane below it is exact and a
        lane at or above it is reported (-1) instead of returning a wrapped score."""
        if width == 8:
            bias = -self.smin
            return bias, self.goe, self.gap_extend, 255 - bias - self.smax
        if width == 16:
            return 0, self.goe, self.gap_extend, 32767 - self.smax
        return 0, self.goe, self.gap_extend, INT32_MAX - self.smax


def build_profile(qcodes, scoring: Scoring, width: int, rows: int, layout: str) -> np.ndarray:
    """Inter-task query profile words (np.uint32) in the layout the kernel expects.

    The query is padded to a multiple of ``rows`` with sentinel rows. Per strip of ``rows`` rows:
    ``plain``: for each residue code a, the strip's scores packed ``32/width`` rows per word;
    ``pairs`` (8/16 bits): for each pair index ``a0 | a1 << 5``, words holding both lanes'
    scores (16 bits: one row per word; 8 bits: two rows x two lanes per word).
    """
    q = np.asarray(qcodes, dtype=np.intp)
    m = len(q)
    ns = max(1, -(-m // rows))
    qp = np.full(ns * rows, SENTINEL, dtype=np.intp)
    qp[:m] = q
    P = scoring.scores[qp, :]                        # (ns*rows, ALPHA) scores
    if width == 8:
        P = P - scoring.smin                          # biased, >= 0
        dt = np.uint8
    elif width == 16:
        dt = np.int16
    else:
        dt = np.int32
    P = P.reshape(ns, rows, ALPHA)
    if layout == "plain" or width == 32:
        # Residue-minor: (strip, word group, residue, VW words) so that one vector load of a
        # wavefront, whose lanes hold different residues, reads one contiguous stretch.
        arr = np.ascontiguousarray(P.transpose(0, 2, 1)).astype(dt)    # (ns, a, rows)
        words = arr.reshape(ns, ALPHA, -1).view(np.uint32) if dt != np.int32 else arr.view(np.uint32)
        words = words.reshape(ns, ALPHA, -1)                           # (ns, a, RW)
        rw = words.shape[2]
        vw = 4 if rw % 4 == 0 else (2 if rw % 2 == 0 else 1)
        words = words.reshape(ns, ALPHA, rw // vw, vw).transpose(0, 2, 1, 3)
        return np.ascontiguousarray(words).reshape(-1)
    pair = np.arange(ALPHA * ALPHA)
    a0, a1 = pair % ALPHA, pair // ALPHA
    if width == 16:
        V = np.stack([P[:, :, a0], P[:, :, a1]], axis=-1)   # (ns, rows, pair, lane)
        V = V.transpose(0, 2, 1, 3)                         # (ns, pair, rows, lane)
    else:
        V = np.stack([P[:, :, a0], P[:, :, a1]], axis=-1)   # (ns, rows, pair, lane)
        V = V.reshape(ns, rows // 2, 2, ALPHA * ALPHA, 2)   # (ns, t, r, pair, lane)
        V = V.transpose(0, 3, 1, 2, 4)                      # (ns, pair, t, r, lane)
    return np.ascontiguousarray(V).astype(dt).reshape(-1).view(np.uint32)


def build_row_profile(qcodes, scoring: Scoring, rows: int, bits: int = 32) -> np.ndarray:
    """Intra-task query profile (ALPHA, mpad) of signed ``bits``-bit scores, row ``a`` = the scores
    of every query row against subject code ``a``; the query is padded with sentinel rows to
    ``mpad``, a multiple of ``rows`` (a work-group's strip), so a work-item reads its rows with
    vector loads of packed words (little-endian: row r is lane r % (32 / bits) of its word)."""
    q = np.asarray(qcodes, dtype=np.intp)
    mpad = max(1, -(-len(q) // rows)) * rows
    qp = np.full(mpad, SENTINEL, dtype=np.intp)
    qp[:len(q)] = q
    dt = {8: np.int8, 16: np.int16, 32: np.int32}[bits]
    return np.ascontiguousarray(scoring.scores[qp, :].T).astype(dt)


def build_striped_profile(qcodes, scoring: Scoring, vec: int, dtype, bias: int = 0) -> np.ndarray:
    """Striped query profile (Farrar): (ALPHA, seglen, vec), element k of vector i of code a
    = score of query row i + k * seglen against a, plus ``bias`` (the u8 lanes' offset that makes
    every score >= 0); rows past the query are sentinels."""
    q = np.asarray(qcodes, dtype=np.intp)
    seglen = max(1, -(-len(q) // vec))
    qp = np.full(seglen * vec, SENTINEL, dtype=np.intp)
    qp[:len(q)] = q
    rows = qp.reshape(vec, seglen).T                       # [i, k] = row i + k * seglen
    # scores[query code, subject code] as [subject code a, query code] in the profile's type first
    # (a 32 x 32 table), then gathered: [a, i, k] (matrices may be asymmetric). 15,000 rows: 0.3 ms
    # on the 2-core VM instead of 5 ms for the gather and transpose in int64.
    table = (np.asarray(scoring.scores).T + bias).astype(dtype)
    return np.ascontiguousarray(table[:, rows])
