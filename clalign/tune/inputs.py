"""Representative inputs for tuning: synthetic proteins with Swiss-Prot-like lengths.

Lengths follow the long-tail model of ``tools/gen_protein_db.py`` (which documents it): a
log-normal body with median 290 aa, and a tail of ~0.45 % of the sequences with density
L^-2.5 on [2,000, 35,000] aa. First-pass kernels are tuned on the body (subjects up to
``TAIL_MIN``); the intra-task kernel on tail subjects, as the engine splits them. Residues are
i.i.d. with the Robinson & Robinson background frequencies (BLAST's BLOSUM62 statistics).
"""
from __future__ import annotations

import math

import numpy as np

from ..data import PROTEIN, Database

MEDIAN_LEN, BODY_SIGMA = 290.0, 0.65
TAIL_MIN, MAX_LEN, TAIL_EXPONENT = 2000, 35000, 2.5
_ROBINSON = dict(A=78.05, C=19.25, D=53.64, E=62.95, F=38.56, G=73.77, H=21.99, I=51.42, K=57.44,
                 L=90.19, M=22.43, N=44.87, P=52.03, Q=42.64, R=51.29, S=71.20, T=58.41, V=64.41,
                 W=13.30, Y=32.16)


def body_lengths(n: int, rng) -> np.ndarray:
    """``n`` lengths of the model's body, below TAIL_MIN."""
    out = np.rint(rng.lognormal(math.log(MEDIAN_LEN), BODY_SIGMA, size=n))
    return np.clip(out, 2, TAIL_MIN - 1).astype(np.int64)


def tail_lengths(n: int, rng, hi: int = MAX_LEN) -> np.ndarray:
    """``n`` lengths of the tail (stratified draws of L^-2.5 on [TAIL_MIN, hi])."""
    b = 1.0 - TAIL_EXPONENT
    u = (np.arange(n) + rng.random(n)) / max(1, n)
    lo_b, hi_b = float(TAIL_MIN) ** b, float(hi) ** b
    return np.clip(np.rint((lo_b + u * (hi_b - lo_b)) ** (1.0 / b)), TAIL_MIN, hi).astype(np.int64)


def residues(total: int, rng) -> np.ndarray:
    """``total`` PROTEIN codes drawn with the Robinson frequencies."""
    p = np.array(list(_ROBINSON.values()))
    letters = PROTEIN.encode("".join(_ROBINSON))
    return letters[rng.choice(len(p), size=total, p=p / p.sum())]


def database(lengths, rng, extra=()) -> Database:
    """A Database of random sequences of ``lengths`` followed by the code arrays ``extra``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    codes = residues(int(lengths.sum()), rng)
    seqs = [codes[a:b] for a, b in zip(np.concatenate([[0], np.cumsum(lengths)[:-1]]), np.cumsum(lengths))]
    seqs += [np.asarray(e, dtype=np.uint8) for e in extra]
    return Database.from_sequences(seqs)


def query(length: int, rng) -> np.ndarray:
    return residues(int(length), rng)
