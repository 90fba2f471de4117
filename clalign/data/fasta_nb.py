"""Compiled (numba, GIL released) FASTA scan: the bytes of a whole file to residue codes,
offsets, stop counts and id/description blobs, in parallel over file and record chunks.

Same rules as :func:`clalign.data.fasta.parse_fasta` (see there), applied byte by byte:

- a record starts at a ``>`` at the start of the file or after ``\\n``; its header runs to the
  next ``\\n``; the id is the first run of non-blanks, the description the rest without its
  surrounding blanks (``bytes.strip``/``split(None, 1)``, blanks = space, \\t \\n \\r \\v \\f);
- sequence bytes are translated through the alphabet's 256-entry table, blanks skipped; the
  run of ``*`` codes at the end is removed and counted (``stops``).

This module finds no errors itself: any record that breaks a rule (an illegal byte, no
residues, a ``*`` inside a sequence where the alphabet has none, too many stops, too long a
header or sequence) is only *flagged*, and the caller re-reads the file with the per-record
reader, which names the file and line of the first problem. So every message stays that
reader's, and a good file never pays for finding lines.

Work is cut into one chunk per core and run in a thread pool: the compiled functions hold
no GIL, so the threads run in parallel without numba's own threading layer (which must not
be entered from two threads at once).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from ..runtime.jit import njit
import numpy as np

#: Flag bits of a record (``bad``): any one sends the whole file to the per-record reader.
BAD_CHAR, BAD_EMPTY, BAD_LONG = 1, 2, 4


#: 1 for the blank bytes (space, \t, \n, \r, \v, \f), 0 for every other byte.
BLANK = np.zeros(256, dtype=np.uint8)
BLANK[[32, 9, 10, 13, 11, 12]] = 1
#: The identity table (bytes copied as they are).
IDENTITY = np.arange(256, dtype=np.uint8)

# Three compiled functions (numba's first call in a process costs ~0.3 s, each further load ~5 ms).


@njit(cache=True, nogil=True, boundscheck=False)
def _histogram(arr, starts, ends, out):
    """Counts of the byte values in the ranges arr[starts[i]:ends[i]], added to ``out``."""
    for i in range(starts.size):
        for p in range(starts[i], ends[i]):
            out[arr[p]] += 1


@njit(cache=True, nogil=True, boundscheck=False)
def _scan(arr, hs, r0, r1, lut, blank, star, star_inside_ok, max_head, max_stops, max_len,
          he, lens, stops, ida, idb, dsa, dsb, bad):
    """Records r0..r1-1: header end and id/description bounds; residue count, trailing stops
    and rule flags (see the module docstring)."""
    n = arr.size
    nrec = hs.size
    for r in range(r0, r1):
        a = hs[r]
        e = a + 1
        while e < n and arr[e] != 10:
            e += 1
        he[r] = e
        flag = 0
        if e - a > max_head:
            flag |= BAD_LONG
        # header a+1 .. e-1: id = first non-blank run, description = rest, blanks trimmed
        p = a + 1
        while p < e and blank[arr[p]]:
            p += 1
        ida[r] = p
        while p < e and not blank[arr[p]]:
            p += 1
        idb[r] = p
        while p < e and blank[arr[p]]:
            p += 1
        q = e
        while q > p and blank[arr[q - 1]]:
            q -= 1
        dsa[r] = p
        dsb[r] = q
        se = hs[r + 1] if r + 1 < nrec else n
        count = 0
        trail = 0
        for i in range(e + 1, se):
            b = arr[i]
            if blank[b]:
                continue
            c = lut[b]
            if c == 255:
                flag |= BAD_CHAR
            if c == star:
                trail += 1
            else:
                if trail and not star_inside_ok:
                    flag |= BAD_CHAR
                trail = 0
            count += 1
        length = count - trail
        if length == 0:
            flag |= BAD_EMPTY
        if trail > max_stops or length + trail > max_len:
            flag |= BAD_LONG
        lens[r] = length
        stops[r] = trail
        bad[r] = flag


@njit(cache=True, nogil=True, boundscheck=False)
def _pack(arr, r0, r1, starts, lut, skip, out_off, out):
    """Records r0..r1-1: bytes from arr[starts[r]] on, through ``lut``, bytes with
    ``skip[byte]`` set left out, until out[out_off[r]:out_off[r + 1]] is full."""
    for r in range(r0, r1):
        k = out_off[r]
        end = out_off[r + 1]
        i = starts[r]
        while k < end:          # branch-free: every byte written, k moves past the kept ones
            b = arr[i]
            i += 1
            out[k] = lut[b]
            k += 1 - skip[b]


_PIECE = 1 << 22


def threads() -> int:
    return max(1, min(32, os.cpu_count() or 1))


def _cuts(n, parts):
    return np.linspace(0, n, parts + 1).astype(np.int64)


def _parallel(fn, cuts, *args):
    """fn(*args-with-lo-hi) over the chunks [cuts[k], cuts[k+1]) in a thread pool."""
    jobs = [(int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]
    if len(jobs) <= 1:
        for lo, hi in jobs:
            fn(lo, hi, *args)
        return
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        for f in [pool.submit(fn, lo, hi, *args) for lo, hi in jobs]:
            f.result()


def header_starts(arr) -> np.ndarray:
    """int64 positions of every record's '>' (start of the file or of a line): numpy's
    vectorised compare finds the '>' bytes, their previous bytes decide."""
    def part(lo):
        gt = np.flatnonzero(arr[lo:lo + _PIECE] == 62) + lo     # 4 MiB pieces: no large temporaries
        return gt[(gt == 0) | (arr[np.maximum(gt - 1, 0)] == 10)]

    starts = range(0, arr.size, _PIECE)
    if len(starts) <= 1:
        return part(0).astype(np.int64)
    with ThreadPoolExecutor(max_workers=threads()) as pool:      # numpy releases the GIL here
        return np.concatenate(list(pool.map(part, starts))).astype(np.int64)


def byte_counts(arr, hs, he) -> np.ndarray:
    """Counts of every byte value in the sequence lines (the whole file less its header lines)."""
    T = threads() if arr.size >= (1 << 22) else 1
    parts = np.zeros((T, 256), dtype=np.int64)
    cuts = _cuts(arr.size, T)
    _parallel(lambda lo, hi: _histogram(arr, np.array([lo]), np.array([hi]),
                                        parts[np.searchsorted(cuts, lo, "right") - 1]), cuts)
    heads = np.zeros(256, dtype=np.int64)
    _histogram(arr, hs, he, heads)
    return parts.sum(axis=0) - heads


def scan(arr, hs, lut, star, star_inside_ok, max_head, max_stops, max_len):
    """Per record: header end, residue count, stops, id/description bounds and flags."""
    nrec = hs.size
    he, lens = np.empty(nrec, np.int64), np.empty(nrec, np.int64)
    stops = np.empty(nrec, np.uint32)
    ida, idb, dsa, dsb = (np.empty(nrec, np.int64) for _ in range(4))
    bad = np.empty(nrec, np.uint8)
    T = threads() if arr.size >= (1 << 22) else 1
    _parallel(lambda r0, r1: _scan(arr, hs, r0, r1, lut, BLANK, star, star_inside_ok, max_head, max_stops,
                                   max_len, he, lens, stops, ida, idb, dsa, dsb, bad), _cuts(nrec, T))
    return he, lens, stops, (ida, idb), (dsa, dsb), bad


def pack(arr, starts, counts, lut=IDENTITY, skip=None):
    """For each record, ``counts[r]`` bytes from ``arr[starts[r]]`` on (through ``lut``,
    ``skip`` bytes left out), packed into one array; returns it and its n + 1 offsets."""
    off = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    out = np.empty(int(off[-1]), dtype=np.uint8)
    skip = np.zeros(256, np.uint8) if skip is None else skip
    T = threads() if out.size >= (1 << 22) else 1
    _parallel(lambda r0, r1: _pack(arr, r0, r1, starts, lut, skip, off, out), _balanced(off, T))
    return out, off


def fill(arr, lut, he, lens):
    """Residue codes of every record, concatenated, and the n + 1 offsets."""
    return pack(arr, he + 1, lens, lut, BLANK)


def gather(arr, a, b):
    """The byte ranges arr[a[r]:b[r]] packed into one blob, and its n + 1 offsets."""
    return pack(arr, a, b - a)


def _balanced(offsets, parts):
    """Record cuts giving each part about the same number of bytes."""
    total = int(offsets[-1])
    marks = np.linspace(0, total, parts + 1)
    cuts = np.searchsorted(offsets, marks, side="left").astype(np.int64)
    cuts[0], cuts[-1] = 0, offsets.size - 1
    return np.maximum.accumulate(cuts)
