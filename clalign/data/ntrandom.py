"""The bases makeblastdb stores at ambiguous positions of its 2-bit data, reproduced exactly.

BLAST+ seeds nucleotide searches on the 2-bit bytes of the database, where makeblastdb has put
a pseudo-random base of each ambiguity's set (N: any base, R: A or G ...). To give the same
hits from a FASTA file as BLAST+ gives on the database made from it, we must put the same
bases there. The rule (found by matching every ambiguous base of databases made here by
makeblastdb 2.12, see ``tests/test_ntrandom.py``; the generator is NCBI's ``CRandom``):

- each sequence gets a fresh generator seeded with **its length** (``CRandom::SetSeed``:
  ``state[0] = seed``, ``state[i] = 1103515245 * state[i-1] + 12345`` mod 2^32 for i < 33,
  then 330 discarded draws);
- a draw is the additive lagged Fibonacci step ``x = state[k] + state[j]`` (mod 2^32, lags 33
  and 13: ``x_n = x_(n-33) + x_(n-13)``), returned as ``x >> 1``;
- ambiguous bases take one draw each, in position order: N (NCBI4NA 15) gets ``r & 3``, an
  ambiguity of c bases gets the ``(r % c)``-th of its bases in A C G T order.

Vectorised: many sequences' generators step together (one numpy row each), and once 33 draws
exist the recurrence produces 13 draws a step.
"""
from __future__ import annotations

import numpy as np

_STATE = 33
_LAG = 13
_WARMUP = 10 * _STATE
#: BASE_PICK[code, k]: the k-th base (NCBI2na) of NCBI4NA ``code``'s set; POPCOUNT[code]: set size.
POPCOUNT = np.array([bin(c).count("1") for c in range(16)], dtype=np.uint32)
BASE_PICK = np.zeros((16, 4), dtype=np.uint8)
for _c in range(16):
    _bits = [b for b in range(4) if _c >> b & 1]
    BASE_PICK[_c, :len(_bits)] = _bits
#: Rows x draws of one batch of generators (memory bound for the draws array).
_BATCH = 1 << 23


def draws(seeds, count) -> np.ndarray:
    """``(len(seeds), count)`` uint32 raw draws (before the final ``>> 1``) of seeded generators."""
    seeds = np.asarray(seeds, dtype=np.uint32)
    m = seeds.size
    s = np.empty((m, _STATE), dtype=np.uint32)
    s[:, 0] = seeds
    for i in range(1, _STATE):
        s[:, i] = s[:, i - 1] * np.uint32(1103515245) + np.uint32(12345)
    out = np.empty((m, count), dtype=np.uint32)
    j, k = 12, _STATE - 1  # CRandom's kStateOffset and last slot
    for step in range(_WARMUP + min(count, _STATE)):
        x = s[:, k] + s[:, j]
        s[:, k] = x
        j, k = j - 1, k - 1
        if k < 0:
            k = _STATE - 1
        elif j < 0:
            j = _STATE - 1
        if step >= _WARMUP:
            out[:, step - _WARMUP] = x
    for n in range(_STATE, count, _LAG):
        e = min(n + _LAG, count)
        out[:, n:e] = out[:, n - _STATE:e - _STATE] + out[:, n - _LAG:e - _LAG]
    return out


def fill_bases(lengths, counts, codes) -> np.ndarray:
    """makeblastdb's 2-bit base (uint8 0..3) for every ambiguous base.

    ``counts[i]``: ambiguous bases of sequence i (whose length ``lengths[i]`` seeds its
    generator); ``codes``: their NCBI4NA codes, sequence by sequence, in position order
    (``counts.sum()`` of them). Code 0 (a gap; makeblastdb accepts none) is drawn like N.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.uint8)
    first = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    out = np.empty(codes.size, dtype=np.uint8)
    todo = np.flatnonzero(counts)
    todo = todo[np.argsort(counts[todo], kind="stable")]
    a = 0
    while a < todo.size:
        b = a + 1
        while b < todo.size and (b - a + 1) * int(counts[todo[b]]) <= _BATCH:
            b += 1
        group = todo[a:b]
        kmax = int(counts[group[-1]])
        r = draws(lengths[group], kmax) >> np.uint32(1)
        cnt = counts[group]
        rows = np.repeat(np.arange(group.size), cnt)
        rank = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        at = np.repeat(first[group], cnt) + rank
        c = codes[at]
        c = np.where(c == 0, 15, c)
        out[at] = BASE_PICK[c, (r[rows, rank] % POPCOUNT[c]).astype(np.intp)]
        a = b
    return out
