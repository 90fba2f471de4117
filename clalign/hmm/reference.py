"""Plain numpy reference of HMMER 3.4's MSV and SSV byte filters (no striping, no kernels).

These are the exact recurrences of ``p7_MSVFilter`` (``impl_sse/msvfilter.c``) and
``p7_SSVFilter`` (``impl_sse/ssvfilter.c``), written from their published description, on
unstriped profiles (``rbv``/``sbv`` of shape (28, M), rows = clalign PROTEIN codes):

MSV (unsigned bytes; 0 is -inf, ``base_b`` is 0 nats), per residue ``x`` of a sequence::

    M[k]  = subus(addus(max(M_prev[k-1], xB), bias_b), rbv[x][k])      M_prev[-1] = 0
    xE    = max_k M[k];   if xE >= 255 - bias_b: score = +inf (stop)
    xJ    = max(xJ, subus(xE, tec_b));   xB = subus(max(base_b, xJ), tjbm)
    with xJ = 0, xB = subus(base_b, tjbm), tjbm = (tjb_b + tbm_b) mod 256 at the start;
    score = ((xJ - tjb_b) - base_b) / scale_b - 3            (float32 arithmetic)

SSV (3.4: signed bytes, no J state; every diagonal starts at -128)::

    V[k]  = subss(V_prev[k-1], sbv[x][k])      V_prev[-1] = -128, V = -128 at the start
    xE    = max over all cells of V viewed as *unsigned* bytes (initially 128)

and the decisions of ``p7_SSVFilter`` (``ssv_score``) give +inf, a score, or "no result"
(NaN here; pyhmmer returns ``None``) when the J state might have been used or the overflow
is not conclusive. pyhmmer's ``msv_filter`` (and HMMER's ``p7_MSVFilter``) first runs the SSV
filter and falls back to the full MSV recurrence only on "no result"; :func:`msv_reference`
reproduces that, :func:`msv_pure_reference` is the MSV recurrence alone.

Sequences are processed together (a row step updates every sequence still running), so the
reference is fast enough for thousands of sequences against models of a few hundred states.
"""
from __future__ import annotations

import weakref

import numpy as np

#: hmmer_lengths of each Database (one array per database: later models reuse it and what
#: is derived from it, e.g. length_classes)
_HMMER_LENGTHS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def tjb_table(profile, lengths) -> np.ndarray:
    """tjb_b of each length (int64); every profile's ``tjb_b`` takes an array of lengths."""
    return np.asarray(profile.tjb_b(np.asarray(lengths, dtype=np.int64)), dtype=np.int64)


_CLASSES: list = []      # [(lengths array, uniq, inv)], the last few, newest last
#: Smallest length array :func:`length_classes` keeps (smaller ones cost < 1 ms to redo).
_KEEP_MIN = 1 << 16


def length_classes(lengths):
    """(distinct lengths, index of each sequence's length among them) for a length array.

    A search asks this for the same database lengths once per model (np.unique of 572,100
    lengths: ~35 ms); the last few arrays' answers are kept, matched by identity. Only arrays
    of a database's size are kept (:data:`_KEEP_MIN`): a search also asks for the lengths of
    each model's survivors, and those must not push the database's own out of the cache."""
    if isinstance(lengths, np.ndarray) and lengths.size >= _KEEP_MIN:
        for arr, uniq, inv in _CLASSES:
            if arr is lengths:
                return uniq, inv
    arr = np.asarray(lengths, dtype=np.int64)
    uniq, inv = np.unique(arr, return_inverse=True)
    if isinstance(lengths, np.ndarray) and lengths.size >= _KEEP_MIN:
        _CLASSES.append((lengths, uniq, inv))
        del _CLASSES[:-4]
    return uniq, inv


def _tjb_per_seq(profile, lengths):
    uniq, inv = length_classes(lengths)
    return tjb_table(profile, uniq)[inv] if inv.size else np.zeros(0, np.int64)


def _as_list(seqs):
    return [np.asarray(s, dtype=np.uint8) for s in seqs]


def _padded(seqs):
    """(lengths int64[n], codes uint8[n, longest]) of a list of code arrays, zero-padded."""
    seqs = _as_list(seqs)
    lengths = np.array([s.size for s in seqs], dtype=np.int64)
    pad = np.zeros((len(seqs), int(lengths.max()) if seqs else 0), dtype=np.uint8)
    for j, s in enumerate(seqs):
        pad[j, :s.size] = s
    return lengths, pad


def msv_bytes(profile, seqs):
    """Run the MSV recurrence; return (xJ int64[n], overflow bool[n])."""
    lengths, pad = _padded(seqs)
    n, Lmax = pad.shape
    rbv = np.asarray(profile.rbv, dtype=np.int32)
    M = rbv.shape[1]
    base, bias, tec, tbm = int(profile.base_b), int(profile.bias_b), int(profile.tec_b), int(profile.tbm_b)
    tjbm = (_tjb_per_seq(profile, lengths) + tbm) & 0xFF
    dp = np.zeros((n, M), dtype=np.int32)
    xJ = np.zeros(n, dtype=np.int64)
    xB = np.maximum(base - tjbm, 0)
    ovf = np.zeros(n, dtype=bool)
    for i in range(Lmax):
        act = np.flatnonzero((lengths > i) & ~ovf)
        if act.size == 0:
            break
        prev = dp[act]
        mpv = np.empty_like(prev)
        mpv[:, 0] = 0
        mpv[:, 1:] = prev[:, :-1]
        sv = np.maximum(mpv, xB[act, None])
        sv = np.minimum(sv + bias, 255)
        sv = np.maximum(sv - rbv[pad[act, i]], 0)
        dp[act] = sv
        xE = sv.max(axis=1)
        o = xE >= 255 - bias
        ovf[act[o]] = True
        keep = act[~o]
        xE = xE[~o]
        xJ[keep] = np.maximum(xJ[keep], np.maximum(xE - tec, 0))
        xB[keep] = np.maximum(np.maximum(base, xJ[keep]) - tjbm[keep], 0)
    return xJ, ovf


def ssv_xe(profile, seqs):
    """Run the SSV recurrence; return xE (int64[n]) = unsigned max over all cells (>= 128)."""
    lengths, pad = _padded(seqs)
    n, Lmax = pad.shape
    sbv = np.asarray(profile.sbv, dtype=np.int32)
    M = sbv.shape[1]
    dp = np.full((n, M), -128, dtype=np.int32)
    xE = np.full(n, 128, dtype=np.int64)
    for i in range(Lmax):
        act = np.flatnonzero(lengths > i)
        prev = dp[act]
        mpv = np.empty_like(prev)
        mpv[:, 0] = -128
        mpv[:, 1:] = prev[:, :-1]
        v = np.clip(mpv - sbv[pad[act, i]], -128, 127)
        dp[act] = v
        xE[act] = np.maximum(xE[act], (v & 0xFF).max(axis=1))
    return xE


def _finish(xJ, tjb, base, scale):
    """HMMER's float conversion: ((float)(xJ - tjb) - (float)base) / scale - 3 in float32."""
    f = np.float32(xJ - tjb) - np.float32(base)
    return np.float32(np.float32(f / np.float32(scale)) - np.float32(3.0))


def ssv_score(profile, xE, L):
    """The score (float32) p7_SSVFilter reports for an unsigned max ``xE`` on a length-L target;
    +inf on a conclusive overflow, NaN where HMMER returns eslENORESULT."""
    base, bias, tec = int(profile.base_b), int(profile.bias_b), int(profile.tec_b)
    tbm, tjb = int(profile.tbm_b), int(profile.tjb_b(int(L)))
    if tjb + tbm + tec + bias >= 127:
        return np.float32(np.nan)
    xE = int(xE)
    if xE >= 255 - bias:
        return np.float32(np.nan) if base - tjb - tbm < 128 else np.float32(np.inf)
    xE = (xE + base - tjb - tbm) & 0xFFFF
    xE = (xE - 128) & 0xFFFF
    if xE >= 255 - bias:
        return np.float32(np.inf)
    xJ = (xE - tec) & 0xFFFF
    if xJ > base:
        return np.float32(np.nan)
    return _finish(xJ, tjb, base, profile.scale_b)


def msv_pure_reference(profile, seqs):
    """Scores (float32 nats) of the MSV recurrence alone; +inf on overflow."""
    seqs = _as_list(seqs)
    xJ, ovf = msv_bytes(profile, seqs)
    out = np.empty(len(seqs), dtype=np.float32)
    for j, s in enumerate(seqs):
        out[j] = np.inf if ovf[j] else _finish(int(xJ[j]), int(profile.tjb_b(s.size)), int(profile.base_b),
                                                profile.scale_b)
    return out


def ssv_reference(profile, seqs):
    """Scores (float32) as pyhmmer's ``ssv_filter``: NaN where it returns ``None``."""
    seqs = _as_list(seqs)
    xE = ssv_xe(profile, seqs)
    return np.array([ssv_score(profile, e, s.size) for e, s in zip(xE, seqs)], dtype=np.float32)


def msv_reference(profile, seqs):
    """Scores (float32) as pyhmmer's ``msv_filter`` / HMMER's p7_MSVFilter: the SSV filter's
    score where it gives one, else the full MSV recurrence."""
    seqs = _as_list(seqs)
    ssv = ssv_reference(profile, seqs)
    out = ssv.copy()
    redo = np.flatnonzero(np.isnan(ssv))
    if redo.size:
        out[redo] = msv_pure_reference(profile, [seqs[j] for j in redo])
    return out


def msv_from_bytes(profile, xJ, ovf, lengths):
    """Turn the MSV recurrence's final ``xJ`` byte and overflow flag per sequence into the
    score of :func:`msv_reference` without running the SSV filter.

    Why this is exact: the J state only raises xB, so MSV cells are never below the J-less
    (SSV) cells; an MSV overflow is an SSV overflow, and when J was never used (final
    ``xJ <= base_b``) the two recurrences agree and the SSV filter reports
    ``max(xE_max, xB) - tec``, i.e. ``max(xJ, xB - tec_b)``, whenever its precondition
    ``tjb+tbm+tec+bias < 127`` holds. In every other case HMMER falls back to the MSV value.
    """
    xJ = np.asarray(xJ, dtype=np.int64)
    ovf = np.asarray(ovf, dtype=bool)
    lengths = np.asarray(lengths, dtype=np.int64)
    base, bias, tec, tbm = int(profile.base_b), int(profile.bias_b), int(profile.tec_b), int(profile.tbm_b)
    tjb = _tjb_per_seq(profile, lengths)
    xB = np.maximum(base - ((tjb + tbm) & 0xFF), 0)
    ssv_ok = (tjb + tbm + tec + bias < 127) & (xJ <= base)
    xJ2 = np.where(ssv_ok, np.maximum(xJ, xB - tec), xJ)
    f = (xJ2 - tjb).astype(np.float32) - np.float32(base)
    out = (f / np.float32(profile.scale_b)).astype(np.float32) - np.float32(3.0)
    out = out.astype(np.float32)
    out[ovf] = np.inf
    return out


def ssv_from_bytes(profile, xE, lengths):
    """Scores of :func:`ssv_reference` from the SSV recurrence's unsigned max per sequence."""
    xE = np.asarray(xE, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    base, bias, tec, tbm = int(profile.base_b), int(profile.bias_b), int(profile.tec_b), int(profile.tbm_b)
    tjb = _tjb_per_seq(profile, lengths)
    out = np.full(xE.size, np.nan, dtype=np.float32)
    pre = tjb + tbm + tec + bias < 127
    ovf = xE >= 255 - bias
    out[pre & ovf & (base - tjb - tbm >= 128)] = np.inf
    e2 = (((xE + base - tjb - tbm) & 0xFFFF) - 128) & 0xFFFF
    inf2 = pre & ~ovf & (e2 >= 255 - bias)
    out[inf2] = np.inf
    xJ = (e2 - tec) & 0xFFFF
    ok = pre & ~ovf & ~inf2 & (xJ <= base)
    f = (xJ[ok] - tjb[ok]).astype(np.float32) - np.float32(base)
    out[ok] = (f / np.float32(profile.scale_b)).astype(np.float32) - np.float32(3.0)
    return out


def hmmer_lengths(db) -> np.ndarray:
    """Target lengths as HMMER counts them: residues plus the trailing ``*`` stops the FASTA
    reader stripped (``db.stops``). Why the stops change nothing else: a ``*`` row has cost 255
    (MSV) / +127 (SSV) in every state, so it empties the MSV row (xE = 0: xJ, xB unchanged) and
    sends every SSV cell below its start value or keeps an overflow that was already seen;
    only the length terms (tjb in the MSV recurrence and in the score conversion) move."""
    hit = _HMMER_LENGTHS.get(db)
    if hit is None:
        lengths = np.asarray(db.lengths, dtype=np.int64)
        stops = getattr(db, "stops", None)
        hit = _HMMER_LENGTHS[db] = lengths if stops is None else lengths + np.asarray(stops, dtype=np.int64)
    return hit
