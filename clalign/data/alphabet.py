"""Residue alphabets: NCBIstdaa protein codes and a 2-bit-packable DNA code.

Protein (``PROTEIN``) uses NCBIstdaa exactly as BLAST+ does (``blast_encoding.c``,
``raw_scoremat.c`` ``kNCBIstdaa``): ``-ABCDEFGHIKLMNPQRSTVWXYZU*OJ`` are codes 0..27.
How BLAST+ treats the unusual letters (facts from ``blast_stat.c`` in the NCBI C++ toolkit):

- ``U`` (selenocysteine) and ``O`` (pyrrolysine) keep their own codes (24, 26) in the database,
  but every score matrix gives them the ``X`` row and column (``BlastScoreBlkProteinMatrixLoad``
  and ``BlastScoreBlkProteinMatrixRead`` copy X into U and O "so they can align").
- ``B`` (D/N), ``Z`` (E/Q), ``X`` (any) and ``*`` (stop) are ordinary rows of the NCBI matrices.
- ``J`` (I/L) has code 27; the built-in NCBI matrices have no J row, so BLAST+ scores it with
  the matrix default score (its minimum) -- see :mod:`clalign.data.matrices`.
- ``-`` (gap, code 0) is never scored against residues (BLAST leaves it at BLAST_SCORE_MIN);
  we accept it in input for completeness.

Lowercase letters are accepted and uppercased (BLAST uses case only for masking).
Any other character is an error.

DNA (``DNA``) codes A=0, C=1, G=2, T=3 like NCBI2na, so ``codes & 3`` of an unambiguous base
is its 2-bit value; the IUPAC ambiguity letters ``N R Y K M S W B D H V`` and ``-`` get codes
4..15. ``U`` is read as ``T`` (decoded as ``T``). :meth:`DNAAlphabet.pack2` packs four bases a
byte (first base in the high bits, as NCBI2na) and keeps ambiguity codes aside as runs, which
:meth:`DNAAlphabet.unpack2` puts back exactly -- the same split BLAST databases make between
the packed sequence and its ambiguity table.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError

#: LUT value of a byte that is not a letter of the alphabet.
ILLEGAL = 255


class Alphabet:
    """A residue alphabet: ``letters`` in code order, ``encode``/``decode`` and a 256-byte LUT."""

    def __init__(self, name, letters, aliases=None):
        self.name = name
        self.letters = letters
        self.size = len(letters)
        lut = np.full(256, ILLEGAL, dtype=np.uint8)
        for code, ch in enumerate(letters):
            lut[ord(ch)] = code
            lut[ord(ch.lower())] = code
        for ch, target in (aliases or {}).items():
            lut[ord(ch)] = lut[ord(ch.lower())] = letters.index(target)
        lut.setflags(write=False)
        #: 256-entry uint8 table: byte -> code, ILLEGAL (255) for anything else.
        self.lut = lut
        self._table = lut.tobytes()  # for bytes.translate
        self._decode = np.frombuffer(letters.encode("ascii"), dtype=np.uint8)

    def __repr__(self):
        return f"<Alphabet {self.name}: {self.letters}>"

    def __reduce__(self):  # alphabets are singletons; pickle by name
        return (alphabet_by_name, (self.name,))

    def encode(self, text) -> np.ndarray:
        """Codes (np.uint8) of a string of letters; InputError naming the first illegal one."""
        try:
            raw = text.encode("latin-1") if isinstance(text, str) else bytes(text)
        except UnicodeEncodeError as exc:
            raise InputError(f"illegal character {text[exc.start]!r} at position {exc.start + 1} "
                             f"for the {self.name} alphabet") from None
        codes = np.frombuffer(raw.translate(self._table), dtype=np.uint8)
        bad = np.flatnonzero(codes == ILLEGAL)
        if bad.size:
            i = int(bad[0])
            raise InputError(f"illegal character {chr(raw[i])!r} at position {i + 1} for the {self.name} alphabet")
        return codes.copy()

    def decode(self, codes) -> str:
        """Letters of an array of codes."""
        codes = np.asarray(codes)
        if codes.size and int(codes.max()) >= self.size:
            raise ValueError(f"code {int(codes.max())} out of range for the {self.name} alphabet")
        return self._decode[codes.astype(np.intp, copy=False)].tobytes().decode("ascii")


class DNAAlphabet(Alphabet):
    """DNA codes (A=0 C=1 G=2 T=3, ambiguity 4..15) with NCBI2na-style 2-bit packing."""

    def pack2(self, codes):
        """Pack codes 4 bases a byte (first base in bits 7..6).

        Returns ``(packed, ambiguity)``: ``packed`` np.uint8 of ``ceil(n/4)`` bytes, where an
        ambiguous position holds A (0); ``ambiguity`` np.int64 ``(k, 3)`` rows of
        ``(start, run length, code)`` for each run of one ambiguity code.
        """
        codes = np.asarray(codes, dtype=np.uint8)
        n = codes.size
        amb = np.flatnonzero(codes >= 4)
        if amb.size:
            acodes = codes[amb]
            brk = np.flatnonzero((np.diff(amb) != 1) | (np.diff(acodes) != 0)) + 1
            starts = np.concatenate(([0], brk))
            ends = np.concatenate((brk, [amb.size]))
            table = np.stack([amb[starts], ends - starts, acodes[starts].astype(np.int64)], axis=1).astype(np.int64)
        else:
            table = np.zeros((0, 3), dtype=np.int64)
        base = np.where(codes < 4, codes, 0).astype(np.uint8)
        pad = (-n) % 4
        if pad:
            base = np.concatenate((base, np.zeros(pad, dtype=np.uint8)))
        q = base.reshape(-1, 4)
        packed = (q[:, 0] << 6) | (q[:, 1] << 4) | (q[:, 2] << 2) | q[:, 3]
        return packed.astype(np.uint8), table

    def unpack2(self, packed, length, ambiguity=None):
        """Inverse of :meth:`pack2`: codes (np.uint8, ``length`` long) with ambiguities restored."""
        packed = np.asarray(packed, dtype=np.uint8)
        if length > packed.size * 4:
            raise ValueError(f"length {length} exceeds the {packed.size * 4} bases packed")
        shifts = np.array([6, 4, 2, 0], dtype=np.uint8)
        codes = ((packed[:, None] >> shifts) & 3).reshape(-1)[:length].astype(np.uint8)
        if ambiguity is not None:
            for start, run, code in np.asarray(ambiguity, dtype=np.int64).reshape(-1, 3):
                codes[start:start + run] = code
        return codes


#: NCBIstdaa protein alphabet (BLAST+ codes 0..27).
PROTEIN = Alphabet("protein", "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ")
#: DNA: A C G T (0..3, NCBI2na values), IUPAC ambiguity N R Y K M S W B D H V and - (4..15); U reads as T.
DNA = DNAAlphabet("dna", "ACGTNRYKMSWBDHV-", aliases={"U": "T"})

_BY_NAME = {"protein": PROTEIN, "prot": PROTEIN, "dna": DNA, "nucl": DNA}


def alphabet_by_name(name) -> Alphabet:
    """``"protein"``/``"prot"`` -> PROTEIN, ``"dna"``/``"nucl"`` -> DNA (an Alphabet passes through)."""
    if isinstance(name, Alphabet):
        return name
    try:
        return _BY_NAME[str(name).lower()]
    except KeyError:
        raise InputError(f"unknown alphabet {name!r} (expected protein or dna)") from None
