"""Substitution matrices indexed by NCBIstdaa protein codes (28 x 28, np.int32).

Standard matrices (BLOSUM45/50/62/80/90, PAM30/70/250) come from the maintained
``scoring-matrices`` package: its 24 letters ``ARNDCQEGHILKMFPSTWYVBZX*`` are NCBI's published
matrix files (ftp.ncbi.nih.gov/blast/matrices), the same values parasail, SWIPE and CUDASW++
use. Any other matrix is read from an NCBI-format text file (``#`` comments, a line of column
letters, then one row per letter; errors name file and line; non-integer scores are rounded
half away from zero, as BLAST's reader does).

The four codes outside those 24 letters are filled the way BLAST+ does it (``blast_stat.c``:
``BlastScoreBlkProteinMatrixLoad`` / ``BlastScoreBlkProteinMatrixRead``, and
``NCBISM_GetScore`` in ``raw_scoremat.c`` of the NCBI C++ toolkit):

- ``U`` (selenocysteine) and ``O`` (pyrrolysine): a copy of the ``X`` row and column
  (BLAST overwrites them with X "so they can align to non-gap residues").
- ``J`` (I or L): the NCBI built-in matrices have no J row, so ``NCBISM_GetScore`` returns the
  matrix default score, which is the matrix minimum (-4 for BLOSUM62) -- for every pair,
  J/J included. We give J the matrix minimum as well (a file may give J its own row).
- ``-`` (gap, code 0): BLAST leaves BLAST_SCORE_MIN there; the code never occurs in a
  database residue stream, and we use the matrix minimum instead so the row stays in the
  range narrow (8/16-bit) kernels can hold.
- ``*`` (stop) is an ordinary row of NCBI matrices (BLOSUM62: -4 against residues, +1 with
  itself); a file without ``*`` gets the minimum.

Note: BLAST+'s compiled-in BLOSUM62 (``sm_blosum62.c`` of the toolkit) differs from the
published file in the X row (-1 against every residue; the file has 0/-2 for some); we keep the
published values, which is what parasail/SWIPE/CUDASW++ (our golden references) score with.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .alphabet import PROTEIN

STANDARD = ("BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80", "BLOSUM90", "PAM30", "PAM70", "PAM250")
_CODE = {ch: i for i, ch in enumerate(PROTEIN.letters)}


@dataclass(frozen=True)
class Matrix:
    """A protein substitution matrix: ``scores[a, b]`` for NCBIstdaa codes a, b."""

    name: str
    scores: np.ndarray  # int32 (28, 28), read-only
    min: int
    max: int

    def score(self, a: str, b: str) -> int:
        """Score of two letters (convenience)."""
        return int(self.scores[_CODE[a.upper()], _CODE[b.upper()]])


def _complete(name, given: dict) -> Matrix:
    """Build the 28x28 matrix from ``given[(row_letter, col_letter)] = score`` (BLAST fill rules)."""
    letters = sorted({a for a, _ in given} | {b for _, b in given})
    lo = min(given.values())
    m = np.full((28, 28), lo, dtype=np.int32)
    for (a, b), v in given.items():
        m[_CODE[a], _CODE[b]] = v
    if "X" in letters:
        x = _CODE["X"]
        for ch in "UO":
            c = _CODE[ch]
            m[c, :] = m[x, :]
            m[:, c] = m[:, x]
    gap = _CODE["-"]
    m[gap, :] = lo
    m[:, gap] = lo
    m.setflags(write=False)
    return Matrix(name, m, int(m.min()), int(m.max()))


@functools.lru_cache(maxsize=None)
def _standard(name) -> Matrix:
    from scoring_matrices import ScoringMatrix

    sm = ScoringMatrix.from_name(name)
    alpha = sm.alphabet
    given = {}
    for i, a in enumerate(alpha):
        row = sm[a]
        for j, b in enumerate(alpha):
            given[(a, b)] = int(round(row[j]))
    return _complete(name, given)


def _round_blast(x: float) -> int:
    return int(x + (0.5 if x >= 0 else -0.5))


@functools.lru_cache(maxsize=32)
def _from_file(path, mtime) -> Matrix:
    try:
        with open(path, "r", encoding="latin-1") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise InputError(f"cannot read matrix file: {exc.strerror}", path) from None
    cols = None
    given = {}
    rows_seen = {}
    for lineno, raw in enumerate(lines, 1):
        text = raw.split("#", 1)[0].split()
        if not text:
            continue
        if cols is None:
            cols = [t.upper() for t in text]
            for t in cols:
                if len(t) != 1 or t not in _CODE:
                    raise InputError(f"matrix column header: {t!r} is not a protein letter", path, lineno)
            if len(set(cols)) != len(cols):
                raise InputError("matrix column header repeats a letter", path, lineno)
            continue
        row = text[0].upper()
        if len(row) != 1 or row not in _CODE:
            raise InputError(f"matrix row label {text[0]!r} is not a protein letter", path, lineno)
        if row in rows_seen:
            raise InputError(f"matrix row {row!r} repeated (first on line {rows_seen[row]})", path, lineno)
        rows_seen[row] = lineno
        vals = text[1:]
        if len(vals) != len(cols):
            raise InputError(f"matrix row {row!r} has {len(vals)} scores, expected {len(cols)}", path, lineno)
        for col, v in zip(cols, vals):
            try:
                x = float(v)
            except ValueError:
                raise InputError(f"matrix score {v!r} (row {row!r}, column {col!r}) is not a number", path, lineno) from None
            if not np.isfinite(x) or abs(x) > 10000:
                raise InputError(f"matrix score {v!r} out of range", path, lineno)
            given[(row, col)] = _round_blast(x)
    if cols is None or len(rows_seen) < 2:
        raise InputError("not an NCBI-format matrix (needs a column header line and at least two rows)", path)
    missing = [c for c in cols if c not in rows_seen]
    if missing:
        raise InputError(f"matrix has no row for {''.join(missing)!r}", path)
    name = os.path.basename(path)
    return _complete(name, given)


def get_matrix(name_or_path) -> Matrix:
    """A standard matrix by name (case-insensitive) or an NCBI-format matrix file by path."""
    if isinstance(name_or_path, Matrix):
        return name_or_path
    s = os.fspath(name_or_path)
    if s.upper() in STANDARD:
        return _standard(s.upper())
    if os.path.isfile(s):
        return _from_file(os.path.abspath(s), os.stat(s).st_mtime_ns)
    raise InputError(f"unknown matrix {s!r}: not one of {', '.join(STANDARD)} and no such file")
