"""numpy FASTA scan of the common case, in threads: the bytes of a whole file to residue codes,
offsets, lengths and id/description blobs without numba.

Why: numba's import and first cache load cost ~0.5 s of one core (more under the interpreter
lock beside a command's start), which a 16-core host pays on the critical path of
``hmmsearch`` from FASTA while the parse itself takes ~0.1 s; a prepared database imports no
numba at all. numpy's vectorised loops release the interpreter lock, so chunks of records
parse side by side in a thread pool.

The common case only: every record is a ``>`` header line ended by ``\\n``, then sequence lines
whose bytes are letters of the alphabet and ``\\n``; each header is ``id`` alone or ``id``, one
blank and a description, with no blank at either end. Anything else (a CR, a blank or ``*`` in a
sequence, an illegal letter, an empty record, a leading or doubled or trailing blank in a header,
too long a header or sequence, text before the first ``>``, a NUL byte) makes :func:`parse`
answer None, and the caller reads the file with its other readers (:mod:`clalign.data.fasta`),
which apply every rule and name the file and line of an error. So when this answers, it is
with exactly the arrays those readers make.

Per chunk (records cut at header starts, ~4 MB each), three passes in the pool: the newlines
(one compare) give the header and sequence lines, hence every record's residue count and offset
before any residue is touched; then the sequence bytes (a mask made with ``np.repeat`` over
the header/sequence runs) are compressed out and translated two bytes per look-up straight
into the record's place in the output; then the header lines give the ids and descriptions.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: Codes the look-up table gives a blank and a '*' the alphabet forbids inside (either: None).
_SKIP, _STAR = 254, 253
#: Bytes per chunk (0: one chunk per thread, 4-16 MB). Small chunks keep the fresh mask of each
#: in malloc's reuse (16 MB chunks cost 0.7-1.4 s more system time for 233 MB on the VM: page
#: faults); large ones make fewer numpy calls, each of which takes the interpreter lock for a
#: moment -- while the main thread runs Python a waiting thread gets it only every switch
#: interval (5 ms): with a busy main thread 233 MB took ~12 s in 4 MB chunks, ~5 s in 16 MB.
CHUNK_BYTES = 4 << 20
MIN_CHUNK, MAX_CHUNK = 4 << 20, 16 << 20
_BLANK = np.zeros(256, dtype=bool)
_BLANK[[32, 9, 10, 13, 11, 12]] = True


def threads() -> int:
    return max(1, min(32, os.cpu_count() or 1))


def _runs(lengths_a, lengths_b):
    """A bool mask: per record, lengths_a[r] False then lengths_b[r] True."""
    n = lengths_a.size
    reps = np.empty(2 * n, dtype=np.int64)
    reps[0::2], reps[1::2] = lengths_a, lengths_b
    vals = np.zeros(2 * n, dtype=bool)
    vals[1::2] = True
    return np.repeat(vals, reps)


def pair_table(lut):
    """The 65,536-entry table of byte pairs (uint16, native order) for :func:`_translate`."""
    pairs = np.arange(1 << 16, dtype=np.uint16).view(np.uint8).reshape(-1, 2)
    return lut[pairs].reshape(-1).view(np.uint16)


def _translate(lut, letters, codes):
    """``lut[letters]`` into ``codes``, two bytes per look-up (``lut`` a (256-entry table, its
    pair table)): numpy's take casts each index to intp, so half the indices is ~3x faster."""
    table, pairs = lut
    n = letters.size
    m = n - (n & 1)
    np.take(pairs, letters[:m].view(np.uint16), out=codes[:m].view(np.uint16), mode="clip")
    if n & 1:
        codes[-1] = table[letters[-1]]
    return codes


_LOCAL = threading.local()


def _scratch(n):
    """This thread's reusable (bool, uint8, uint8) buffers of ``n`` bytes or more. Why: fresh memory
    for every chunk's temporaries is given back by malloc and faulted in again by the kernel,
    which cost as much system time as the scan's own work."""
    got = getattr(_LOCAL, "buffers", None)
    if got is None or got[0].size < n:
        got = _LOCAL.buffers = (np.empty(n, dtype=bool), np.empty(n, dtype=np.uint8), np.empty(n, dtype=np.uint8))
    return got


class _Chunk:
    """One chunk's structure (first pass): header starts/ends and residue counts, or ``ok`` False."""

    def __init__(self, arr, lo, hi, max_head, max_stops, max_len):
        self.lo, self.hi, self.ok = lo, hi, False
        a = arr[lo:hi]
        L = a.size
        buf = _scratch(L)[0]
        nl = np.flatnonzero(np.equal(a, 10, out=buf[:L]))
        if not nl.size or nl[-1] != L - 1:         # every line, the last included, ends with '\n'
            return
        ls = nl[:-1] + 1
        hs = np.concatenate(([0], ls[a[ls] == 62]))
        idx = np.searchsorted(nl, hs)
        he = nl[idx]
        se = np.append(hs[1:], L)
        nl_in = np.searchsorted(nl, se) - idx - 1   # newlines of the sequence lines
        raw = (se - he - 1) - nl_in                 # residues with their trailing '*'
        stops = np.zeros(hs.size, dtype=np.uint32)
        if np.equal(a, 42, out=buf[:L]).any():
            from .fasta import _trailing_stops
            stops = _trailing_stops(a.tobytes(), he, se)
        lens = raw - stops
        if (lens <= 0).any() or (stops > max_stops).any() or (he - hs > max_head).any() or (raw > max_len).any():
            return
        self.a, self.hs, self.he, self.se, self.raw, self.lens, self.stops = a, hs, he, se, raw, lens, stops
        self.ok = True

    def residues(self, lut, out) -> bool:
        """Residue codes into ``out`` (exactly sum(lens) long); False when a byte breaks the case."""
        a, hs, he, se = self.a, self.hs, self.he, self.se
        buf, letters, codes = _scratch(a.size)
        keep = _runs(he - hs + 1, se - he - 1)      # the sequence lines (the only fresh mask)
        self.head_lines = a[np.logical_not(keep, out=buf[:a.size])]    # '>', header, '\n' each
        keep &= np.not_equal(a, 10, out=buf[:a.size])
        k = int(self.raw.sum())                     # sequence bytes but '\n'
        letters = np.compress(keep, a, out=letters[:k])
        del keep
        codes = _translate(lut, letters, codes[:k])
        if not self.stops.any():
            out[:] = codes
            return int(out.max()) < _STAR           # a blank, an illegal byte or a '*' it forbids
        if int(codes.max()) >= _SKIP:               # a blank or illegal byte (maybe in a '*' tail)
            return False
        np.compress(~_runs(self.lens, self.stops), codes, out=out)   # the trailing '*' left out
        return int(out.max()) < _STAR

    def headers(self):
        """(id lengths, id bytes, description lengths, description bytes), or None for an
        irregular header (a blank at an end, or two blanks after the id). After :meth:`residues`."""
        hs, he = self.hs, self.he
        hlen = he - hs - 1
        hmask = _runs(np.append(1, np.full(hlen.size - 1, 2)), hlen)   # each '>' and '\n' off
        blob = self.head_lines[:hmask.size][hmask]
        hoff = _offsets(hlen)
        if not blob.all():                          # a NUL byte: not a FASTA file (read_bytes says so)
            return None
        blank = _BLANK[blob]
        some = hlen > 0
        first, last = hoff[:-1][some], hoff[1:][some] - 1
        if blank[first].any() or blank[last].any():
            return None
        bpos = np.flatnonzero(blank)
        j = np.searchsorted(bpos, hoff[:-1])
        fb = np.append(bpos, hoff[-1])[j]
        fb = np.minimum(fb, hoff[1:])               # first blank of each header, or its end
        has = fb < hoff[1:]
        if blank[fb[has] + 1].any():
            return None
        idl = fb - hoff[:-1]
        dsl = np.where(has, hoff[1:] - fb - 1, 0)
        id_mask = ~_runs(idl, hlen - idl)            # per header: its id, then the rest
        ds_mask = _runs(hlen - dsl, dsl)             # per header: all but its description, then it
        return idl, blob[id_mask], dsl, blob[ds_mask]


def parse(arr, lut, max_head, max_stops, max_len, workers=None):
    """(residues, offsets, lengths, stops, id_blob, id_offsets, desc_blob, desc_offsets) of a whole
    file's bytes ``arr`` through the alphabet's table ``lut``, or None when the file is not of
    the common case (see the module docstring). ``workers``: threads (default: all cores)."""
    n = arr.size
    if not n or arr[0] != 62:
        return None
    table = lut.copy()
    if table[ord("*")] == _SKIP:      # fasta's sentinel: '*' only at a record's end in this alphabet
        table[ord("*")] = _STAR
    table[_BLANK] = _SKIP
    T = workers or threads()
    cuts = _cuts(arr, n, CHUNK_BYTES or min(max(-(-n // T), MIN_CHUNK), MAX_CHUNK))
    with ThreadPoolExecutor(max_workers=T) as pool:
        chunks = list(pool.map(lambda c: _Chunk(arr, c[0], c[1], max_head, max_stops, max_len), zip(cuts[:-1], cuts[1:])))
        if not all(c.ok for c in chunks):
            return None
        lens = np.concatenate([c.lens for c in chunks])
        offsets = _offsets(lens)
        residues = np.empty(int(offsets[-1]), dtype=np.uint8)
        starts = np.cumsum([0] + [c.lens.size for c in chunks])
        outs = [residues[offsets[a]:offsets[b]] for a, b in zip(starts[:-1], starts[1:])]
        tables = (table, pair_table(table))
        good = list(pool.map(lambda co: co[0].residues(tables, co[1]), zip(chunks, outs)))
        if not all(good):
            return None
        heads = list(pool.map(_Chunk.headers, chunks))
    if any(h is None for h in heads):
        return None
    idl = np.concatenate([h[0] for h in heads])
    dsl = np.concatenate([h[2] for h in heads])
    stops = np.concatenate([c.stops for c in chunks])
    return (residues, offsets, lens, stops, np.concatenate([h[1] for h in heads]), _offsets(idl),
            np.concatenate([h[3] for h in heads]), _offsets(dsl))


def _offsets(lengths):
    """0 and the running sums of ``lengths`` (int64)."""
    off = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    return off


def _cuts(arr, n, size):
    """Chunk bounds at record starts ('>' after '\\n'), about ``size`` bytes apart."""
    cuts = [0]
    pos = size
    while pos < n:
        k = arr[pos - 1:pos + (1 << 16)].tobytes().find(b"\n>")
        if k < 0:
            pos += 1 << 16
            continue
        cuts.append(pos + k)
        pos += k + size
    cuts.append(n)
    return cuts
