"""pyhmmer sequences of a search's targets, built once each and only for those that pass
the device filter (the hand-off from :mod:`clalign.hmm.search` to HMMER's later stages).

Why it is done this way: a search of 572,100 targets hands ~2 % of them per model to
pyhmmer; translating the whole database into Easel's codes first cost ~1 s, and building a
``DigitalSequence`` holds the GIL (~3-7 µs each, more than half of it the description).
So the residues of the new targets of a block are translated and given their trailing
``*`` in one compiled pass, each target's sequence is built once per search and kept, and
the description is set only where a table needs it (``described``): the pass that only
sizes HMMER's hit list runs on bare sequences.

pyhmmer releases the interpreter lock inside each ``DigitalSequence`` it builds and each
sequence it appends to a block; with the device stage's threads and pyhmmer's workers
running, every such release costs the building thread a wait for the lock (1,000 models on
the H100 host: the main loop spent ~42 of 62 s here, 2.4 s of it holding the lock). So a
block takes its sequences in one slice assignment (:func:`new_block`), and a search whose
models will, between them, pass most targets builds all of them once before its threads
start (:meth:`Targets.build_all`).
"""
from __future__ import annotations

import sys

import numpy as np

from .profile import EASEL_OF_CODE

#: Easel code of '*' (nonresidue) in the amino alphabet.
EASEL_STAR = 27
#: Fewest residues translated by the compiled loop when numba is not loaded yet; fewer go
#: through numpy (numba's import and first call cost ~0.5-1 s; numpy: the targets' slices
#: concatenated, one table look-up, ~0.5 us a target and ~1 ns a residue). Once numba is
#: loaded (a large FASTA), batches of ``COMPILED_LOADED_MIN`` residues and more take the
#: compiled loop.
COMPILED_MIN_RESIDUES = 1 << 26
COMPILED_LOADED_MIN = 1 << 16


#: Every target's pyhmmer sequence is built before the search's threads start when the models
#: are expected to pass at least this share of the targets between them, 1 - (1 - F1)^models
#: (0.5: 35 models at F1 = 0.02); otherwise each is built when a model first passes it. Built
#: later, beside the device stage and pyhmmer's workers, a sequence costs ~5-10x more
#: (the module's note).
PREBUILD_SHARE = 0.5


def prebuild_all(models: int, F1: float) -> bool:
    """Whether a search of ``models`` models at MSV threshold ``F1`` builds every target's
    sequence up front (:data:`PREBUILD_SHARE`)."""
    return 1.0 - (1.0 - min(max(F1, 0.0), 1.0)) ** models >= PREBUILD_SHARE


#: Fewest candidates for which :meth:`Targets.named` uses the name hashes.
_HASH_MIN = 2048
_HASH_MUL = 0x100000001B3          # FNV's 64-bit prime, as a polynomial base
_MASK64 = (1 << 64) - 1


def _hash_of(name: bytes) -> int:
    """sum name[j] * _HASH_MUL**j mod 2**64 (what :func:`_name_hashes` computes per name)."""
    h, p = 0, 1
    for c in name:
        h = (h + c * p) & _MASK64
        p = (p * _HASH_MUL) & _MASK64
    return h


def _name_hashes(blob: bytes, offsets, idx=None) -> np.ndarray:
    """:func:`_hash_of` of the names ``idx`` (default: every name) of a packed name table
    (uint64, wrapping arithmetic)."""
    off = np.asarray(offsets, dtype=np.int64)
    idx = np.arange(off.size - 1) if idx is None else np.asarray(idx, dtype=np.int64)
    first = off[idx]
    lens = off[idx + 1] - first
    out = np.zeros(lens.size, dtype=np.uint64)
    if not lens.size or not int(lens.sum()):
        return out
    starts = np.cumsum(lens) - lens                  # of each name in the gathered bytes
    pos = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(starts, lens)
    b = np.frombuffer(blob, dtype=np.uint8)[np.repeat(first, lens) + pos].astype(np.uint64)
    pw = np.ones(int(lens.max()), dtype=np.uint64)
    for j in range(1, pw.size):
        pw[j] = np.uint64((int(pw[j - 1]) * _HASH_MUL) & _MASK64)
    with np.errstate(over="ignore"):
        terms = b * pw[pos]
        nz = lens > 0
        out[nz] = np.add.reduceat(terms, starts[nz])
    return out


class Targets:
    """What building pyhmmer sequences needs, kept once per database: residues, offsets,
    stop counts, the raw id/description bytes, and the sequences built so far."""

    def __init__(self, db, stops):
        self.res = np.asarray(db.residues)
        self.off = np.asarray(db.offsets)
        self.iblob, self.ioff = db.ids.blob.tobytes(), np.asarray(db.ids.offsets)
        self.dblob, self.doff = db.descriptions.blob.tobytes(), np.asarray(db.descriptions.offsets)
        self.stops = np.asarray(stops)
        self.name_lengths = np.diff(self.ioff)
        self.seqs = {}              # database index -> DigitalSequence without description
        self.described = {}         # database index -> DigitalSequence with it

    def build_all(self, abc, described: bool = False):
        """Build (and keep) every target's sequence now, in one pass (see the module's note)."""
        _build(self, np.arange(self.off.size - 1), abc, described)

    def name(self, i: int) -> bytes:
        return self.iblob[int(self.ioff[i]):int(self.ioff[i + 1])]

    def named(self, names, among) -> dict:
        """{name: the indices of ``among`` (database indices, in their order) whose target has
        that name} for a few ``names`` (bytes). Many candidates are matched through a 64-bit
        hash of every name (computed once per search, vectorised) and then compared; a few
        directly. Why: a model's hit list holds a handful of names, its MSV survivors ~11,000
        at 572,100 targets, and slicing all their names cost ~5 ms per model."""
        among = np.asarray(among, dtype=np.int64)
        out = {nm: [] for nm in names}
        if not out or not among.size:
            return {nm: np.zeros(0, dtype=np.int64) for nm in out}
        if among.size < _HASH_MIN:
            for k, a, b in zip(among.tolist(), self.ioff[among].tolist(), self.ioff[among + 1].tolist()):
                lst = out.get(self.iblob[a:b])
                if lst is not None:
                    lst.append(k)
        else:          # the candidates' names hashed (not the whole database's: one model's
            # second pass does this while others run; every name at once was ~0.2 s on the H200)
            want = np.array(sorted({_hash_of(nm) for nm in out}), dtype=np.uint64)
            for k in among[np.isin(_name_hashes(self.iblob, self.ioff, among), want)].tolist():
                lst = out.get(self.name(k))
                if lst is not None:
                    lst.append(k)
        return {nm: np.asarray(v, dtype=np.int64) for nm, v in out.items()}

    def codes(self, idx):
        """(Easel codes of the targets ``idx`` with their stops, packed; n + 1 offsets)."""
        idx = np.asarray(idx, dtype=np.int64)
        lens = self.off[idx + 1] - self.off[idx] + self.stops[idx]
        out_off = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum(lens, out=out_off[1:])
        total = int(out_off[-1])
        if total >= (COMPILED_LOADED_MIN if "numba" in sys.modules else COMPILED_MIN_RESIDUES):
            from .layout_nb import easel_codes

            out = np.empty(total, dtype=np.uint8)
            easel_codes(self.res, EASEL_OF_CODE, self.off, self.stops, idx, EASEL_STAR, out_off, out)
            return out, out_off
        res, a, b = self.res, self.off[idx], self.off[idx + 1]
        parts = [res[i:j] for i, j in zip(a.tolist(), b.tolist())]       # views, one per target
        out = EASEL_OF_CODE[np.concatenate(parts)] if parts else np.zeros(0, dtype=np.uint8)
        st = np.asarray(self.stops[idx], dtype=np.int64)
        if st.any():                  # each target's stops after its residues
            out = np.insert(out, np.repeat(np.cumsum(b - a), st), EASEL_STAR)
        return out, out_off


def new_block(abc, seqs: list):
    """A pyhmmer DigitalSequenceBlock of ``seqs`` (DigitalSequence objects, in order), filled by
    one slice assignment: one allocation and no per-sequence release of the interpreter lock
    (the constructor appends them one by one; 20,000 sequences beside two busy Python
    threads: 0.1 s against 0.3 ms). pyhmmer versions without slice assignment get the
    constructor."""
    from pyhmmer.easel import DigitalSequenceBlock

    blk = DigitalSequenceBlock(abc)
    try:
        blk[:] = seqs
    except (TypeError, NotImplementedError, AttributeError):
        return DigitalSequenceBlock(abc, seqs)
    return blk


def block(targets: Targets, indices, abc, described: bool = True):
    """pyhmmer DigitalSequenceBlock of the given targets, in Easel codes, stops restored.

    Names (and with ``described`` descriptions) are the database's raw header bytes. A block
    holds references to the kept sequences, not copies."""
    idx = np.asarray(indices, dtype=np.int64)
    cache = _build(targets, idx, abc, described)
    return new_block(abc, [cache[i] for i in idx.tolist()])


def _build(t: Targets, idx, abc, described: bool) -> dict:
    """Build and keep the sequences of the targets ``idx`` not built yet; returns the cache
    they are kept in (``t.described`` or ``t.seqs``). Threads may call it at once: a target
    two of them build is kept once (either copy: the same sequence)."""
    from pyhmmer.easel import DigitalSequence

    cache = t.described if described else t.seqs
    new = [i for i in idx.tolist() if i not in cache]
    if new:
        nx = np.asarray(new, dtype=np.int64)
        codes, co = t.codes(nx)
        mv = memoryview(codes)
        names = zip(t.ioff[nx].tolist(), t.ioff[nx + 1].tolist())
        if described:
            for i, (i0, i1), d0, d1, a, b in zip(new, names, t.doff[nx].tolist(), t.doff[nx + 1].tolist(),
                                                 co[:-1].tolist(), co[1:].tolist()):
                cache[i] = DigitalSequence(abc, name=t.iblob[i0:i1], description=t.dblob[d0:d1] or None,
                                           sequence=mv[a:b])
        else:
            for i, (i0, i1), a, b in zip(new, names, co[:-1].tolist(), co[1:].tolist()):
                cache[i] = DigitalSequence(abc, name=t.iblob[i0:i1], sequence=mv[a:b])
    return cache
