"""Nucleotide databases in 2-bit form (4 bases a byte, as BLAST's NCBI2na) with ambiguities aside.

This is what the BLASTN engine scans: the packed bytes (uploaded as they are) plus, per
sequence, the runs of ambiguous bases in NCBI4NA codes, restored exactly for extension and
traceback by :meth:`NucleotideDatabase.ncbi4na`.

Codes. NCBI2na: A=0 C=1 G=2 T=3 (the same values as our :data:`~clalign.data.alphabet.DNA`
codes 0..3). NCBI4NA is a bit set, A=1 C=2 G=4 T=8: M=3 R=5 S=6 V=7 W=9 Y=10 H=11 K=12 D=13
B=14 N=15, gap=0.

BLAST databases (read by :mod:`clalign.data.blastdb`): makeblastdb stores, at each ambiguous
position of the 2-bit data, a *random* base of the ambiguity's set (``CAmbigDataBuilder``;
N: any base), and the true code in the ambiguity table. BLAST+ scans for seeds on those 2-bit
bytes, so an engine that must agree with BLAST+ on a makeblastdb database uses
:meth:`ncbi2na` (the stored bytes), not a re-packing of the FASTA. The table after each
sequence is ``u32 word count`` (bit 31 set: "new" format) then, per run of one code,

- old format (one word): bits 31-28 code, 27-24 run length - 1, 23-0 start;
- new format (two words): bits 31-28 code, 27-16 run length - 1; then the 32-bit start.

makeblastdb uses the new format when the sequence is longer than 2^24 - 1 or a run is longer
than 15, and splits runs at 4095 bases.

Our own 2-bit databases (:meth:`NucleotideDatabase.from_database`) use the same in-memory
form; their ambiguous positions hold A (0) in the packed bytes.
"""
from __future__ import annotations

import numpy as np

from .alphabet import DNA

#: NCBI4NA code of each of our DNA codes (A C G T N R Y K M S W B D H V -).
DNA_TO_NCBI4NA = np.array([1, 2, 4, 8, 15, 5, 10, 12, 3, 6, 9, 14, 13, 11, 7, 0], dtype=np.uint8)
#: Our DNA code of each NCBI4NA code 0..15.
NCBI4NA_TO_DNA = np.zeros(16, dtype=np.uint8)
NCBI4NA_TO_DNA[DNA_TO_NCBI4NA] = np.arange(16, dtype=np.uint8)
#: NCBI4NA letters by code (for display and tests).
NCBI4NA_LETTERS = "-ACMGRSVTWYHKDBN"
_SHIFTS = np.array([6, 4, 2, 0], dtype=np.uint8)


def _be32(buf, idx):
    """Big-endian uint32 words of ``buf`` (uint8) at byte positions ``idx`` (int64 array)."""
    b = [buf[idx + k].astype(np.int64) for k in range(4)]
    return (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]


def parse_ambiguities(buf, start, end, lengths):
    """Decode the ambiguity tables ``buf[start[i]:end[i]]`` of sequences of ``lengths`` bases.

    Returns int64 ``(k, 4)`` rows ``(sequence, first base, run length, NCBI4NA code)`` in file
    order. Raises ValueError (naming the sequence) on a malformed table. All numpy: the work
    is O(number of table words), each bounded by the table's size in the file.
    """
    start = np.asarray(start, dtype=np.int64)
    size = np.asarray(end, dtype=np.int64) - start
    lengths = np.asarray(lengths, dtype=np.int64)
    has = np.flatnonzero(size > 0)
    if has.size == 0:
        return np.zeros((0, 4), dtype=np.int64)
    bad = has[(size[has] < 4) | (size[has] % 4 != 0)]
    if bad.size:
        raise ValueError(f"sequence {int(bad[0])}: table of {int(size[bad[0]])} bytes")
    w0 = _be32(buf, start[has])
    new = (w0 >> 31).astype(bool)
    nwords = w0 & 0x7FFFFFFF
    bad = has[(4 * (1 + nwords) != size[has]) | (new & (nwords % 2 == 1))]
    if bad.size:
        raise ValueError(f"sequence {int(bad[0])}: word count does not match the table size")
    total = int(nwords.sum())
    before = np.concatenate(([0], np.cumsum(nwords)[:-1]))
    within = np.arange(total, dtype=np.int64) - np.repeat(before, nwords)
    words = _be32(buf, np.repeat(start[has] + 4, nwords) + 4 * within)
    seq = np.repeat(has, nwords)
    is_new = np.repeat(new, nwords)
    old_rows = ~is_new
    first_new = is_new & (within % 2 == 0)
    w = words[old_rows]
    old = np.stack([seq[old_rows], w & 0xFFFFFF, ((w >> 24) & 0xF) + 1, w >> 28], axis=1)
    i = np.flatnonzero(first_new)
    w = words[i]
    nw = np.stack([seq[i], words[i + 1] if i.size else w, ((w >> 16) & 0xFFF) + 1, w >> 28], axis=1)
    runs = np.concatenate([old, nw])
    order = np.argsort(np.concatenate([np.flatnonzero(old_rows), i]), kind="stable")
    runs = runs[order]
    bad = np.flatnonzero(runs[:, 1] + runs[:, 2] > lengths[runs[:, 0]])
    if bad.size:
        r = runs[bad[0]]
        raise ValueError(f"sequence {int(r[0])}: run at {int(r[1])} of {int(r[2])} bases passes its end")
    return runs.astype(np.int64)


class NucleotideDatabase:
    """Sequences as 2-bit packed bytes plus ambiguity runs.

    ``data`` (uint8; may be a memory map of a BLAST ``.nsq`` file), ``starts`` (int64: first
    packed byte of each sequence), ``lengths`` (int64 bases), ``runs`` (int64 ``(k, 4)``:
    sequence, first base, length, NCBI4NA code; grouped by sequence) and ``run_offsets``
    (runs of sequence i are ``runs[run_offsets[i]:run_offsets[i+1]]``). ``ids``,
    ``descriptions`` and, for BLAST databases, ``blast_ids`` as in :class:`~clalign.data.Database`.
    """

    def __init__(self, data, starts, lengths, runs, ids=None, descriptions=None, blast_ids=None, title=None):
        self.data = data
        self.starts = np.asarray(starts, dtype=np.int64)
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.runs = np.asarray(runs, dtype=np.int64).reshape(-1, 4)
        if self.runs.size and np.any(np.diff(self.runs[:, 0]) < 0):
            raise ValueError("ambiguity runs must be grouped by sequence")
        self.run_offsets = np.searchsorted(self.runs[:, 0], np.arange(len(self.lengths) + 1)).astype(np.int64)
        n = len(self.lengths)
        self.ids = ids if ids is not None else [f"seq{i + 1}" for i in range(n)]
        self.descriptions = descriptions if descriptions is not None else [""] * n
        self.blast_ids = blast_ids
        self.title = title

    def __len__(self):
        return len(self.lengths)

    def __repr__(self):
        return f"<NucleotideDatabase: {len(self)} sequences, {self.total_bases} bases, {len(self.runs)} ambiguity runs>"

    @property
    def total_bases(self) -> int:
        return int(self.lengths.sum())

    @property
    def max_length(self) -> int:
        return int(self.lengths.max()) if len(self) else 0

    def packed(self, i) -> np.ndarray:
        """The ``ceil(length/4)`` packed bytes of sequence ``i`` (bases past the end are not bases)."""
        s = int(self.starts[i])
        return self.data[s:s + (int(self.lengths[i]) + 3) // 4]

    def ambiguities(self, i) -> np.ndarray:
        """``(first base, length, NCBI4NA code)`` rows of sequence ``i``'s ambiguity runs."""
        return self.runs[self.run_offsets[i]:self.run_offsets[i + 1], 1:]

    def ncbi2na(self, i) -> np.ndarray:
        """2-bit values (uint8 0..3) of sequence ``i`` exactly as stored (what BLAST+ scans)."""
        p = np.asarray(self.packed(i))
        return ((p[:, None] >> _SHIFTS) & 3).reshape(-1)[:int(self.lengths[i])].astype(np.uint8)

    def ncbi4na(self, i) -> np.ndarray:
        """Exact NCBI4NA codes (uint8) of sequence ``i``: the 2-bit bases with the ambiguity runs restored."""
        out = np.left_shift(np.uint8(1), self.ncbi2na(i))
        for start, run, code in self.ambiguities(i).tolist():
            out[start:start + run] = code
        return out

    def codes(self, i) -> np.ndarray:
        """Sequence ``i`` in our DNA alphabet codes (A C G T N R Y ...)."""
        return NCBI4NA_TO_DNA[self.ncbi4na(i)]

    def sequence_str(self, i) -> str:
        return DNA.decode(self.codes(i))

    def all_codes(self, chunk=1 << 22):
        """``(residues, offsets)``: every sequence in our DNA codes, concatenated.

        O(size) numpy work in pieces of about ``chunk`` bytes, so temporary index arrays stay
        small whatever the database size (short reads are gathered many at a time, a long
        chromosome is unpacked slice by slice).
        """
        n = len(self)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        out = np.empty(int(offsets[-1]), dtype=np.uint8)
        nb = (self.lengths + 3) // 4
        cum = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(nb, out=cum[1:])
        data = self.data
        i = 0
        while i < n:
            j = max(i + 1, int(np.searchsorted(cum, cum[i] + chunk, side="right")) - 1)
            if j == i + 1:  # one sequence: unpack its bytes slice by slice
                s, length, o = int(self.starts[i]), int(self.lengths[i]), int(offsets[i])
                for b0 in range(0, int(nb[i]), chunk):
                    b1 = min(int(nb[i]), b0 + chunk)
                    q = ((np.asarray(data[s + b0:s + b1])[:, None] >> _SHIFTS) & 3).reshape(-1)
                    take = min(length - 4 * b0, q.size)
                    out[o + 4 * b0:o + 4 * b0 + take] = q[:take]
            else:
                k = np.arange(i, j)
                bstart = cum[k] - cum[i]
                total_b = int(cum[j] - cum[i])
                idx = np.repeat(self.starts[k] - bstart, nb[k]) + np.arange(total_b, dtype=np.int64)
                q = ((np.asarray(data[idx])[:, None] >> _SHIFTS) & 3).reshape(-1)
                pos = np.arange(4 * total_b, dtype=np.int64) - np.repeat(4 * bstart, 4 * nb[k])
                out[offsets[i]:offsets[j]] = q[pos < np.repeat(self.lengths[k], 4 * nb[k])]
            i = j
        self._restore_runs(out, offsets, chunk)
        return out, offsets

    def _restore_runs(self, out, offsets, chunk):
        """Write every ambiguity run's code (as our DNA code) into ``out``, in bounded pieces."""
        r = self.runs
        if not r.size:
            return
        cum = np.zeros(len(r) + 1, dtype=np.int64)
        np.cumsum(r[:, 2], out=cum[1:])
        i = 0
        while i < len(r):
            j = max(i + 1, int(np.searchsorted(cum, cum[i] + chunk, side="right")) - 1)
            rr = r[i:j]
            at = offsets[rr[:, 0]] + rr[:, 1]
            if j == i + 1:
                out[at[0]:at[0] + rr[0, 2]] = NCBI4NA_TO_DNA[rr[0, 3]]
            else:
                first = np.repeat(at - (cum[i:j] - cum[i]), rr[:, 2])
                out[first + np.arange(int(cum[j] - cum[i]), dtype=np.int64)] = NCBI4NA_TO_DNA[np.repeat(rr[:, 3], rr[:, 2])]
            i = j

    def to_database(self):
        """A :class:`~clalign.data.Database` of our DNA codes (1 byte a base) with ``db.nucleotide = self``."""
        from .database import Database

        residues, offsets = self.all_codes()
        db = Database(residues, offsets, self.ids, self.descriptions, DNA,
                      lengths=self.lengths.astype(np.int32), source=self.title)
        db.nucleotide = self
        return db

    @classmethod
    def from_database(cls, db):
        """Pack a DNA :class:`~clalign.data.Database` (ambiguous positions stored as A, runs kept aside)."""
        if db.alphabet is not DNA:
            raise ValueError("from_database needs a DNA database")
        res = np.asarray(db.residues, dtype=np.uint8)
        lengths = np.asarray(db.lengths, dtype=np.int64)
        offsets = np.asarray(db.offsets, dtype=np.int64)
        n = lengths.size
        nb = (lengths + 3) // 4
        starts = np.concatenate(([0], np.cumsum(nb)[:-1])).astype(np.int64) if n else np.zeros(0, np.int64)
        seq_of = np.repeat(np.arange(n, dtype=np.int64), lengths)
        pos = np.arange(res.size, dtype=np.int64) - np.repeat(offsets[:-1], lengths)
        quads = np.zeros(4 * int(nb.sum()), dtype=np.uint8)
        quads[4 * starts[seq_of] + pos] = np.where(res < 4, res, 0)
        q = quads.reshape(-1, 4)
        data = (q[:, 0] << 6) | (q[:, 1] << 4) | (q[:, 2] << 2) | q[:, 3]
        amb = np.flatnonzero(res >= 4)
        if amb.size:
            cont = (np.diff(amb) == 1) & (np.diff(res[amb]) == 0) & (np.diff(seq_of[amb]) == 0)
            first = np.concatenate(([0], np.flatnonzero(~cont) + 1))
            last = np.concatenate((first[1:], [amb.size]))
            a0 = amb[first]
            runs = np.stack([seq_of[a0], pos[a0], last - first, DNA_TO_NCBI4NA[res[a0]].astype(np.int64)], axis=1)
        else:
            runs = np.zeros((0, 4), dtype=np.int64)
        return cls(data.astype(np.uint8), starts, lengths, runs, ids=db.ids, descriptions=db.descriptions,
                   title=db.source)
