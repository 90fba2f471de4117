"""pyhmmer sequences of a search's targets, built once each and only for those that pass
the device filter (the hand-off from :mod:`clalign.hmm.search` to HMMER's later stages).

Why it is done this way: a search of 572,100 targets hands ~2 % of them per model to
pyhmmer; translating the whole database into Easel's codes first cost ~1 s, and building a
``DigitalSequence`` holds the GIL (~3-7 µs each, more than half of it the description).
So the residues of the new targets of a block are translated and given their trailing
``*`` in one compiled pass, each target's sequence is built once per search and kept, and
the description is set only where a table needs it (``described``): the pass that only
sizes HMMER's hit list runs on bare sequences.
"""
from __future__ import annotations

import sys

import numpy as np

from .profile import EASEL_OF_CODE

#: Easel code of '*' (nonresidue) in the amino alphabet.
EASEL_STAR = 27
#: Fewest residues translated by the compiled loop when numba is not loaded yet; fewer go
#: through numpy in pieces (numba's import and first call cost ~0.5-1 s; numpy ~10-20 ns a
#: residue). Once numba is loaded (a large FASTA, a GPU block layout), batches of
#: ``COMPILED_LOADED_MIN`` residues and more take the compiled loop.
COMPILED_MIN_RESIDUES = 1 << 26
COMPILED_LOADED_MIN = 1 << 16
#: Residues per numpy piece (bounds its int64 temporaries).
_PIECE = 1 << 22


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

    def name(self, i: int) -> bytes:
        return self.iblob[int(self.ioff[i]):int(self.ioff[i + 1])]

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
        out = np.full(total, EASEL_STAR, dtype=np.uint8)      # residues, then the stops
        cuts = np.searchsorted(out_off, np.arange(0, total, _PIECE), side="right") - 1
        for a, b in zip(cuts.tolist(), [*cuts[1:].tolist(), idx.size]):
            base = int(out_off[a])
            n = int(out_off[b]) - base
            within = np.arange(n, dtype=np.int64) - np.repeat(out_off[a:b] - base, lens[a:b])
            rl = self.off[idx[a:b] + 1] - self.off[idx[a:b]]
            is_res = within < np.repeat(rl, lens[a:b])
            src = (np.repeat(self.off[idx[a:b]], lens[a:b]) + within)[is_res]
            out[base:base + n][is_res] = EASEL_OF_CODE[self.res[src]]
        return out, out_off


def block(targets: Targets, indices, abc, described: bool = True):
    """pyhmmer DigitalSequenceBlock of the given targets, in Easel codes, stops restored.

    Names (and with ``described`` descriptions) are the database's raw header bytes. A block
    holds references to the kept sequences, not copies."""
    from pyhmmer.easel import DigitalSequence, DigitalSequenceBlock

    t = targets
    idx = np.asarray(indices, dtype=np.int64)
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
    return DigitalSequenceBlock(abc, [cache[i] for i in idx.tolist()])
