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

Our own 2-bit databases (:meth:`NucleotideDatabase.from_database`, ``clalign makedb -dbtype
nucl``) use the same in-memory form and put at ambiguous positions the very bases makeblastdb
2.12 puts there (:mod:`clalign.data.ntrandom`), so a FASTA file packed here scans exactly like
the makeblastdb database made from it.
"""
from __future__ import annotations

import os

import numpy as np

from .alphabet import DNA

#: NCBI4NA code of each of our DNA codes (A C G T N R Y K M S W B D H V -).
DNA_TO_NCBI4NA = np.array([1, 2, 4, 8, 15, 5, 10, 12, 3, 6, 9, 14, 13, 11, 7, 0], dtype=np.uint8)
#: Our DNA code of each NCBI4NA code 0..15.
NCBI4NA_TO_DNA = np.zeros(16, dtype=np.uint8)
NCBI4NA_TO_DNA[DNA_TO_NCBI4NA] = np.arange(16, dtype=np.uint8)
#: NCBI4NA letters by code (for display and tests).
NCBI4NA_LETTERS = "-ACMGRSVTWYHKDBN"
#: BLASTNA, the code BLAST+ scores nucleotides in: A C G T (= NCBI2na), then ambiguities, N, gap.
BLASTNA_LETTERS = "ACGTRYMKWSBDHVN-"
#: BLASTNA's sentinel (its gap letter, BLAST+'s kNuclSentinel): the query letter between contexts
#: and past a batch's ends, appended to subjects, and the gap in alignment columns.
BLASTNA_SENTINEL = BLASTNA_LETTERS.index("-")
#: NCBI4NA code of each BLASTNA code, and the inverse.
BLASTNA_TO_NCBI4NA = np.array([NCBI4NA_LETTERS.index(c) for c in BLASTNA_LETTERS], dtype=np.uint8)
NCBI4NA_TO_BLASTNA = np.zeros(16, dtype=np.uint8)
NCBI4NA_TO_BLASTNA[BLASTNA_TO_NCBI4NA] = np.arange(16, dtype=np.uint8)
#: BLASTNA code of each of our DNA codes.
DNA_TO_BLASTNA = NCBI4NA_TO_BLASTNA[DNA_TO_NCBI4NA]
_SHIFTS = np.array([6, 4, 2, 0], dtype=np.uint8)
#: UNPACK[byte] = its four 2-bit bases, first base first (one gather unpacks a byte array).
UNPACK = ((np.arange(256, dtype=np.uint8)[:, None] >> _SHIFTS) & 3).astype(np.uint8)


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
        return UNPACK[p].reshape(-1)[:int(self.lengths[i])]

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
                    q = UNPACK[np.asarray(data[s + b0:s + b1])].reshape(-1)
                    take = min(length - 4 * b0, q.size)
                    out[o + 4 * b0:o + 4 * b0 + take] = q[:take]
            else:
                k = np.arange(i, j)
                bstart = cum[k] - cum[i]
                total_b = int(cum[j] - cum[i])
                idx = np.repeat(self.starts[k] - bstart, nb[k]) + np.arange(total_b, dtype=np.int64)
                q = UNPACK[np.asarray(data[idx])].reshape(-1)
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
                at_all = first + np.arange(int(cum[j] - cum[i]), dtype=np.int64)
                out[at_all] = NCBI4NA_TO_DNA[np.repeat(rr[:, 3], rr[:, 2])]
            i = j

    def to_database(self):
        """A :class:`~clalign.data.Database` of our DNA codes (1 byte a base) with ``db.nucleotide = self``."""
        from .database import Database

        residues, offsets = self.all_codes()
        db = Database(residues, offsets, self.ids, self.descriptions, DNA,
                      lengths=self.lengths.astype(np.int32), source=self.title,
                      _checked=True)  # codes made here from checked 2-bit data; ids may be lazy
        db.nucleotide = self
        return db

    @classmethod
    def from_database(cls, db, chunk=1 << 22, blast_fill=True):
        """Pack a DNA :class:`~clalign.data.Database`, ambiguity runs kept aside.

        ``blast_fill``: ambiguous positions get the very bases makeblastdb 2.12 stores there
        (:mod:`clalign.data.ntrandom`), so the 2-bit bytes equal a makeblastdb database's and
        seeds match BLAST+'s; with False they hold A. Works in pieces of about ``chunk`` bases
        (many short sequences at once, a long one slice by slice).
        """
        if db.alphabet is not DNA:
            raise ValueError("from_database needs a DNA database")
        chunk = max(4, chunk - chunk % 4)
        lengths = np.asarray(db.lengths, dtype=np.int64)
        offsets = np.asarray(db.offsets, dtype=np.int64)
        n = lengths.size
        nb = (lengths + 3) // 4
        starts = np.zeros(n, dtype=np.int64)
        if n:
            np.cumsum(nb[:-1], out=starts[1:])
        data = np.zeros(int(nb.sum()), dtype=np.uint8)
        runs = []
        i = 0
        while i < n:
            j = max(i + 1, int(np.searchsorted(offsets, offsets[i] + chunk, side="right")) - 1)
            if j == i + 1:
                for p0 in range(0, int(lengths[i]), chunk):
                    res = np.asarray(db.residues[offsets[i] + p0:offsets[i] + min(int(lengths[i]), p0 + chunk)])
                    seq_of = np.full(res.size, i, dtype=np.int64)
                    _pack_into(data, starts[i] * 4 + p0, res, seq_of, np.arange(p0, p0 + res.size), runs)
            else:
                res = np.asarray(db.residues[offsets[i]:offsets[j]])
                seq_of = np.repeat(np.arange(i, j, dtype=np.int64), lengths[i:j])
                pos = np.arange(res.size, dtype=np.int64) - (offsets[seq_of] - offsets[i])
                _pack_into(data, None, res, seq_of, pos, runs, quad_at=4 * starts[seq_of] + pos)
            i = j
        runs = _merge_runs(np.concatenate(runs) if runs else np.zeros((0, 4), dtype=np.int64))
        if blast_fill and runs.size:
            _blast_fill(data, starts, lengths, runs, chunk)
        return cls(data, starts, lengths, runs, ids=db.ids, descriptions=db.descriptions, title=db.source)


def _blast_fill(data, starts, lengths, runs, chunk):
    """OR makeblastdb's bases into the (zero) 2-bit slots of every ambiguous base, by sequence groups."""
    from .ntrandom import fill_bases

    per_seq = np.bincount(runs[:, 0], weights=runs[:, 2], minlength=lengths.size).astype(np.int64)
    seqs = np.flatnonzero(per_seq)
    cum = np.concatenate(([0], np.cumsum(per_seq[seqs])))
    rfirst = np.searchsorted(runs[:, 0], seqs)
    rlast = np.searchsorted(runs[:, 0], seqs, side="right")
    i = 0
    while i < seqs.size:
        j = max(i + 1, int(np.searchsorted(cum, cum[i] + chunk, side="right")) - 1)
        rr = runs[rfirst[i]:rlast[j - 1]]
        n = rr[:, 2]
        within = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
        slot = np.repeat(4 * starts[rr[:, 0]] + rr[:, 1], n) + within
        vals = fill_bases(lengths[seqs[i:j]], per_seq[seqs[i:j]], np.repeat(rr[:, 3], n))
        np.bitwise_or.at(data, slot >> 2, (vals << (6 - 2 * (slot & 3))).astype(np.uint8))
        i = j


def _pack_into(data, quad0, res, seq_of, pos, runs, quad_at=None):
    """Pack bases ``res`` (our codes) into ``data`` at base slots ``quad_at`` (or from ``quad0`` on)
    and append their ambiguity runs ``(sequence, start, length, NCBI4NA)`` to ``runs``."""
    base = np.where(res < 4, res, 0).astype(np.uint8)
    if quad_at is None:  # one slice of a sequence, from a byte boundary: pack 4 by 4
        pad = np.zeros(-res.size % 4, dtype=np.uint8)
        q = np.concatenate((base, pad)).reshape(-1, 4)
        b0 = int(quad0) >> 2
        data[b0:b0 + len(q)] = (q[:, 0] << 6) | (q[:, 1] << 4) | (q[:, 2] << 2) | q[:, 3]
    else:
        _or_packed(data, quad_at, base, (6 - 2 * (quad_at & 3)).astype(np.uint8))
    amb = np.flatnonzero(res >= 4)
    if amb.size:
        cont = (np.diff(amb) == 1) & (np.diff(res[amb]) == 0) & (np.diff(seq_of[amb]) == 0)
        first = np.concatenate(([0], np.flatnonzero(~cont) + 1))
        last = np.concatenate((first[1:], [amb.size]))
        a0 = amb[first]
        runs.append(np.stack([seq_of[a0], pos[a0], last - first,
                              DNA_TO_NCBI4NA[res[a0]].astype(np.int64)], axis=1).astype(np.int64))


def _or_packed(data, quad_at, base, shift):
    """OR 2-bit values into bytes: ``quad_at`` ascends, so a byte's slots are consecutive and
    their (disjoint) bits can be summed per byte."""
    if not quad_at.size:
        return
    byte = quad_at >> 2
    vals = (base.astype(np.uint16) << shift).astype(np.uint16)
    brk = np.flatnonzero(np.diff(byte) != 0) + 1
    starts = np.concatenate(([0], brk))
    data[byte[starts]] |= np.add.reduceat(vals, starts).astype(np.uint8)


def _merge_runs(runs):
    """Join runs split at piece boundaries (same sequence and code, adjacent)."""
    if len(runs) < 2:
        return runs
    join = ((runs[1:, 0] == runs[:-1, 0]) & (runs[1:, 3] == runs[:-1, 3])
            & (runs[1:, 1] == runs[:-1, 1] + runs[:-1, 2]))
    if not join.any():
        return runs
    head = np.concatenate(([True], ~join))
    group = np.cumsum(head) - 1
    out = runs[head].copy()
    out[:, 2] = np.bincount(group, weights=runs[:, 2]).astype(np.int64)
    return out


#: Files a ``clalign makedb -dbtype nucl`` folder holds next to the standard ones (2-bit form).
PACKED_FILES = ("nt_packed", "nt_starts", "nt_runs")


def save_packed(nt, folder):
    """Add ``nt``'s 2-bit arrays to a prepared database folder (each file written, then renamed).

    Readers that do not know them ignore them; :func:`open_nucleotide` uses them when present
    and consistent, and packs the residues itself otherwise.
    """
    arrays = {"nt_packed": np.asarray(nt.data, dtype=np.uint8), "nt_starts": nt.starts, "nt_runs": nt.runs}
    for name in PACKED_FILES:
        final = os.path.join(folder, name + ".npy")
        tmp = os.path.join(folder, f".{name}.tmp-{os.getpid()}.npy")
        try:
            np.save(tmp, arrays[name], allow_pickle=False)
            os.replace(tmp, final)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


def add_packed(db, folder):
    """Pack the DNA database ``db`` (just written to ``folder`` by makedb) and save its 2-bit files there."""
    save_packed(NucleotideDatabase.from_database(db), folder)


def _load_packed(db, folder):
    try:
        a = {n: np.load(os.path.join(folder, n + ".npy"), mmap_mode="r", allow_pickle=False) for n in PACKED_FILES}
    except (OSError, ValueError):
        return None
    n = len(db)
    nb = (np.asarray(db.lengths, dtype=np.int64) + 3) // 4
    starts, runs = np.asarray(a["nt_starts"]), np.asarray(a["nt_runs"])
    ok = (a["nt_packed"].ndim == 1 and starts.shape == (n,) and runs.ndim == 2 and runs.shape[1] == 4
          and (n == 0 or (starts.min() >= 0 and int((starts + nb).max()) <= a["nt_packed"].size)))
    if ok and runs.size:
        ok = (runs[:, 0].min() >= 0 and runs[:, 0].max() < n and runs[:, 1].min() >= 0 and runs[:, 2].min() >= 1
              and np.all(runs[:, 1] + runs[:, 2] <= np.asarray(db.lengths)[runs[:, 0]])
              and np.all(np.diff(runs[:, 0]) >= 0) and runs[:, 3].min() >= 0 and runs[:, 3].max() <= 15)
    if not ok:
        return None
    return NucleotideDatabase(a["nt_packed"], starts, db.lengths, runs, ids=db.ids, descriptions=db.descriptions,
                              title=db.source)


def open_nucleotide(source):
    """A :class:`NucleotideDatabase` from a BLAST+ nucleotide database, a ``clalign makedb``
    folder (its 2-bit files when present, else packed here), a DNA :class:`Database` or a FASTA file."""
    from ..errors import InputError
    from .blastdb import find_blastdb, open_blast_nucleotide
    from .database import Database, as_database

    if isinstance(source, Database):
        db = source
    else:
        path = os.fspath(source)
        if not os.path.isdir(path) and find_blastdb(path, "nucl") is not None:
            return open_blast_nucleotide(path)
        if not os.path.isdir(path) and find_blastdb(path, "prot") is not None:
            raise InputError("not a nucleotide database (a protein BLAST database)", path)
        db = as_database(path, "dna")
        if os.path.isdir(path) and db.alphabet is DNA:
            nt = _load_packed(db, path)
            if nt is not None:
                return nt
    if db.alphabet is not DNA:
        raise InputError(f"not a nucleotide database ({db.alphabet.name})", getattr(db, "path", None) or str(source))
    return NucleotideDatabase.from_database(db)


def blastna_matrix(reward, penalty):
    """BLAST+'s 16 x 16 nucleotide score matrix in BLASTNA codes (``[query, subject]``).

    Bases A C G T score ``reward``/``penalty``. A pair whose base sets intersect scores
    ``round(((d - 1) * penalty + reward) / d)`` (halves away from zero), d the number of bases
    of the *column* code, the upper triangle mirrored; disjoint sets score ``penalty``; the
    gap row and column (code 15, BLAST's strand sentinel) score ``-2^30``. This is the rule of
    BLAST+'s ``BlastScoreBlkNuclMatrixCreate`` in 2.12 (the C toolkit rounded before dividing),
    and the final scores of blastn 2.12 follow it for ambiguity codes on either side
    (``tests/test_ntrandom.py``). The database's 2-bit bytes, with their random bases, only
    decide where seeds are; extensions score the restored codes with this matrix.
    """
    sets = BLASTNA_TO_NCBI4NA.astype(np.int64)
    degen = np.array([bin(int(c)).count("1") for c in sets], dtype=np.int64)
    degen[:4] = 1
    m = np.full((16, 16), penalty, dtype=np.int64)
    for i in range(16):
        for j in range(i, 16):
            if sets[i] & sets[j]:
                x = ((degen[j] - 1) * penalty + reward) / degen[j]
                m[i, j] = m[j, i] = int(x + 0.5) if x >= 0 else -int(-x + 0.5)
    m[15, :] = m[:, 15] = -(1 << 30)
    return m
