"""One alignment record (an HSP) shared by every engine, and BLAST+'s hit ordering.

Coordinates are 1-based and inclusive (``qstart..qend``, ``sstart..send``) as BLAST prints them;
``qseq``/``sseq`` are the aligned strings with ``-`` for gaps. Counts (identities, positives,
gaps, gap openings) are derived from the strings once, when the record is made (or given, made
from the same strings elsewhere).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import numpy as np

EPS_EVALUE = 1.0e-180   # BLAST's s_EvalueComp: E-values below this compare equal
_GAP = ord("-")
_NO_LUT = np.full(256, -1, dtype=np.int64)
_NO_SCORES = np.zeros((1, 1), dtype=np.int64)


@lru_cache(maxsize=64)
def _letter_index(letters) -> np.ndarray:
    """Byte -> index of the letter in ``letters`` (the last one of a repeated letter), -1 if none."""
    lut = np.full(256, -1, dtype=np.int64)
    for i, ch in enumerate(letters):
        lut[ord(ch)] = i
    return lut


def _column_counts_py(q, s, lut, scores, use_scores):
    """(identities, positives, gap columns, gap openings, first unscored letter or -1) of two
    aligned byte strings: a gap opening is a gap column whose gap (in the query or the
    subject) the previous column does not continue; positives are the non-gap columns scoring
    > 0 (identities without ``use_scores``)."""
    nident = positive = gaps = opens = 0
    prev_q = prev_s = False
    for k in range(q.size):
        a, b = q[k], s[k]
        gq, gs = a == _GAP, b == _GAP
        if gq or gs:
            gaps += 1
            if (gq and not prev_q) or (gs and not prev_s):
                opens += 1
        else:
            if a == b:
                nident += 1
            if use_scores:
                i, j = lut[a], lut[b]
                if i < 0 or j < 0:
                    return nident, positive, gaps, opens, (a if i < 0 else b)
                if scores[i, j] > 0:
                    positive += 1
            elif a == b:
                positive += 1
        prev_q, prev_s = gq, gs
    return nident, positive, gaps, opens, -1


_COUNTS = []


def counts_dispatcher():
    """The compiled :func:`_column_counts_py` (made on first use: importing numba takes ~0.3-0.5 s,
    which a command's start-up need not wait for before its device work begins)."""
    if not _COUNTS:
        import numba

        _COUNTS.append(numba.njit(cache=True, nogil=True)(_column_counts_py))
    return _COUNTS[0]


def _column_counts(q, s, lut, scores, use_scores):
    """:func:`_column_counts_py`, compiled (``counts_dispatcher``)."""
    return counts_dispatcher()(q, s, lut, scores, use_scores)


@dataclass(frozen=True)
class Alignment:
    """A local alignment of a query against a database subject, with its statistics."""

    query_id: str
    subject_id: str
    qlen: int
    slen: int
    score: int
    bitscore: float
    evalue: float
    qstart: int
    qend: int
    sstart: int
    send: int
    qseq: str
    sseq: str
    nident: int
    positive: int
    gaps: int
    gapopen: int
    subject_index: int = -1           # database order (BLAST's oid), for the ordering tie rule
    subject_title: str = ""           # the subject's whole definition line (stitle)
    query_title: str = ""
    sstrand: str = "N/A"              # nucleotide searches: subject strand, 'plus' or 'minus'

    @classmethod
    def make(cls, query_id, subject_id, qlen, slen, score, bitscore, evalue, qstart, sstart, qseq, sseq,
             scores=None, letters=None, counts=None, **extra) -> "Alignment":
        """Build a record from the aligned strings; ``qstart``/``sstart`` are 1-based.

        ``scores``: the substitution matrix (codes x codes) and ``letters`` its code letters, to
        count positives (pairs scoring > 0, BLAST's definition); without them positives = identities.
        ``counts``: (identities, positives, gap columns, gap openings) made elsewhere from the same
        strings (BLASTP's stage process: this process then needs no compiled code).
        """
        if len(qseq) != len(sseq):
            raise ValueError("aligned strings differ in length")
        if counts is not None:
            nident, positive, gaps, opens = counts
        else:
            qa = np.frombuffer(qseq.encode("latin-1"), dtype=np.uint8)
            sa = np.frombuffer(sseq.encode("latin-1"), dtype=np.uint8)
            if scores is None:
                lut, sc = _NO_LUT, _NO_SCORES
            else:
                lut = _letter_index(letters if isinstance(letters, str) else tuple(letters))
                sc = np.asarray(scores)
            nident, positive, gaps, opens, bad = _column_counts(qa, sa, lut, sc, scores is not None)
            if bad >= 0:   # a letter the matrix does not score
                raise KeyError(chr(bad))
        qres = len(qseq) - qseq.count("-")
        sres = len(sseq) - sseq.count("-")
        return cls(str(query_id), str(subject_id), int(qlen), int(slen), int(score), float(bitscore),
                   float(evalue), int(qstart), int(qstart) + qres - 1, int(sstart), int(sstart) + sres - 1,
                   qseq, sseq, nident, positive, gaps, opens, **extra)

    # -- derived columns --------------------------------------------------------------------
    @property
    def length(self) -> int:
        return len(self.qseq)

    @property
    def mismatch(self) -> int:
        return self.length - self.nident - self.gaps

    @property
    def pident(self) -> float:
        return (self.nident / self.length * 100) if self.length > 0 else 0.0

    @property
    def ppos(self) -> float:
        return (self.positive / self.length * 100) if self.length > 0 else 0.0

    @property
    def cigar(self) -> str:
        """CIGAR of the alignment from the query's view: M aligned pair, I residue only in the
        query (gap in the subject), D residue only in the subject."""
        return cigar(self.qseq, self.sseq)

    @property
    def btop(self) -> str:
        return btop(self.qseq, self.sseq)


def btop(qseq: str, sseq: str) -> str:
    """BLAST trace-back operations of two aligned strings: identical-run lengths, else query
    letter + subject letter."""
    out, run = [], 0
    for a, b in zip(qseq, sseq):
        if a == b and a != "-":
            run += 1
            continue
        if run:
            out.append(str(run))
            run = 0
        out.append(a + b)
    if run:
        out.append(str(run))
    return "".join(out)


def cigar(qseq: str, sseq: str) -> str:
    """Run-length CIGAR (M/I/D) of two aligned strings."""
    ops = []
    for a, b in zip(qseq, sseq):
        ops.append("I" if b == "-" else ("D" if a == "-" else "M"))
    out, i = [], 0
    while i < len(ops):
        j = i
        while j < len(ops) and ops[j] == ops[i]:
            j += 1
        out.append(f"{j - i}{ops[i]}")
        i = j
    return "".join(out)


def _ev_key(e: float) -> float:
    return 0.0 if e < EPS_EVALUE else e


def hsp_order_key(a: Alignment):
    """BLAST+'s order of the HSPs of one subject (``s_EvalueCompareHSPs`` then
    ``ScoreCompareHSPs``): E-value, score descending, subject start, subject end descending,
    query start, query end descending. Offsets are compared as BLAST+ holds them: a
    minus-strand nucleotide HSP (``sstart > send``) by its subject range low end first and by
    its offsets on the reverse-complemented query (``qlen - qend``, ``qlen - qstart + 1``)."""
    if a.sstart <= a.send:
        return (_ev_key(a.evalue), -a.score, a.sstart, -a.send, a.qstart, -a.qend)
    return (_ev_key(a.evalue), -a.score, a.send, -a.sstart, a.qlen - a.qend, -(a.qlen - a.qstart + 1))


def order_hits(alignments):
    """Alignments of one query in BLAST+'s output order.

    Subjects go by their best HSP (``s_EvalueCompareHSPLists``): E-value ascending (values below
    1e-180 tie), then raw score descending, then the *later* database sequence first (BLAST
    compares ordinal ids in reverse); each subject's HSPs follow together in HSP order.
    """
    if len(alignments) <= 1:
        return list(alignments)
    groups = {}
    for a in alignments:
        groups.setdefault((a.subject_index, a.subject_id), []).append(a)
    lists = []
    for key, hsps in groups.items():
        hsps.sort(key=hsp_order_key)
        best = hsps[0]
        lists.append(((_ev_key(best.evalue), -best.score, -best.subject_index), hsps))
    lists.sort(key=lambda t: t[0])
    return [a for _, hsps in lists for a in hsps]


def query_coverage(alignments, qlen: int) -> int:
    """Percent of the query covered by the union of the HSPs' query ranges, rounded as BLAST+
    rounds coverage (``+0.5`` below 99 %, then truncation)."""
    return covered_percent([(a.qstart, a.qend) for a in alignments], qlen)


def covered_percent(ranges, qlen: int) -> int:
    """:func:`query_coverage` of (start, end) query ranges (1-based, either way round)."""
    if qlen <= 0 or not ranges:
        return 0
    cov = np.zeros(qlen + 1, dtype=bool)
    for a, b in ranges:
        lo, hi = sorted((a, b))
        cov[lo:hi + 1] = True
    return coverage_percent(int(cov.sum()), qlen)


def coverage_percent(covered: int, qlen: int) -> int:
    pct = 100.0 * covered / float(qlen)
    if pct < 99:
        pct += 0.5
    return int(pct)


@dataclass
class QueryHits:
    """The reported alignments of one query (what the writers take)."""

    query_id: str
    qlen: int
    hits: list = field(default_factory=list)
    title: Optional[str] = None       # whole definition line, for '# Query:'
