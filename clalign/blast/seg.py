"""SEG low-complexity masking of protein queries, as BLAST+ 2.12 runs it (``-seg``).

Wootton & Federhen's SEG in the form of BLAST+'s ``blast_seg.c``: a trigger window of
``window`` residues whose compositional entropy (bits, over the 20 standard amino acids) is at
most ``locut`` is grown left and right while the entropy stays at most ``hicut``; the grown
region is trimmed to the sub-window of least probability (at most ``maxtrim`` = 50 residues
trimmed; log-probability from the number of compositions and permutations, with ln 20 per
residue); a trigger left of the trimmed region is searched again on its own. Residues outside
the 20 letters are "bogus": a window with more than 2 of them gets no entropy, and they do not
count in its composition. BLAST+ then merges overlapping segments (``overlaps`` on).

The rule is reproduced with BLAST+'s floating-point operations in the same order (so a value
that sits on ``locut``/``hicut`` is decided the same way): ``ln n!`` is the 6-decimal table of
BLAST+ below 10,001 (``round(lgamma(n + 1), 6)``) and Stirling's formula above; a window of 10
standard letters uses BLAST+'s tabulated ``ln(k / 10)``. Two quirks of the C code are kept: a
left re-search contributes only its last segment, and the merge compares each segment with the
next one in discovery-reversed order only.

The per-position entropies and the trim search run compiled (``seg_nb``); the plain Python
versions here are the reference they are tested against (``compiled=False``).

``seg_mask(codes, params)`` returns a bool mask over the NCBIstdaa codes; how the
mask acts on the search (hard: the residues become X; soft: only the lookup table skips them)
is ``mask_query``'s business.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from . import seg_nb

WINDOW, LOCUT, HICUT = 12, 2.2, 2.5   # kSegWindow, kSegLocut, kSegHicut
MAXTRIM, MAXBOGUS = 50, 2             # SegParametersNewAa
X_CODE = 21                           # NCBIstdaa X (kProtMask): what hard masking writes
_LN2 = 0.69314718055994530941723212145818   # NCBIMATH_LN2
_LN20 = 2.9957322735539909                  # the C code's ln 20
_LNFACT_TABLE = 10001
# ln(k/10) for k = 0..10 as BLAST+ tabulates them (its k = 5 entry is -0.6931478, not ln 0.5)
_LOG_WIN10 = (0.0, -2.30258509, -1.60943791, -1.203982804, -0.91629073, -0.6931478,
              -0.510825623, -0.356674944, -0.22314355, -0.105360515, 0.0)
# NCBIstdaa codes of the 20 standard letters, in code order: A C..W Y
_STANDARD = np.zeros(256, dtype=np.int8) - 1
for _k, _c in enumerate([1] + list(range(3, 21)) + [22]):
    _STANDARD[_c] = _k


def _lnfact(n: int) -> float:
    if n < _LNFACT_TABLE:
        return _lnfact_table()[0][n]
    return (n + 0.5) * math.log(n) - n + 0.9189385332


@functools.lru_cache(maxsize=None)
def _lnfact_table():
    """BLAST+'s ln n! table printed to 6 decimals, as a list and an array: made on SEG's first
    use (10,001 entries, ~25 ms), not at import (``-seg no`` is blastp's default)."""
    table = [float("%.6f" % math.lgamma(n + 1)) for n in range(_LNFACT_TABLE)]
    return table, np.array(table)


_LOG_WIN10_ARR = np.array(_LOG_WIN10)


@dataclass(frozen=True)
class SegParams:
    """``-seg "window locut hicut"``; BLAST+ replaces non-positive values by the defaults."""

    window: int = WINDOW
    locut: float = LOCUT
    hicut: float = HICUT

    def checked(self) -> "SegParams":
        """``BlastSetUp_Filter`` + ``s_SegParametersCheck``: defaults for values <= 0, and
        hicut raised to locut."""
        w = self.window if self.window > 0 else WINDOW
        lo = self.locut if self.locut > 0 else LOCUT
        hi = self.hicut if self.hicut > 0 else HICUT
        return SegParams(w, lo, max(hi, lo))


class _Win:
    """A window of the letter-class array: composition of the 20 letters, bogus count."""

    __slots__ = ("cls", "start", "length", "comp", "bogus")

    def __init__(self, cls, start, length):
        self.cls, self.start, self.length = cls, start, length
        self.comp = [0] * 20
        self.bogus = 0
        for c in cls[start:start + length]:
            if c >= 0:
                self.comp[c] += 1
            else:
                self.bogus += 1

    def state(self):
        return sorted((c for c in self.comp if c), reverse=True)

    def shift(self) -> bool:
        """Move one residue right inside the parent; False at its end."""
        if self.start + self.length + 1 > len(self.cls):
            return False
        old, new = self.cls[self.start], self.cls[self.start + self.length]
        if old >= 0:
            self.comp[old] -= 1
        else:
            self.bogus -= 1
        if new >= 0:
            self.comp[new] += 1
        else:
            self.bogus += 1
        self.start += 1
        return True


def _entropy(sv) -> float:
    total = sum(sv)
    if total == 0:
        return 0.0
    ent = 0.0
    if total == 10:
        for c in sv:
            ent += float(c) * _LOG_WIN10[c] / _LN2
    else:
        for c in sv:
            ent += float(c) * math.log(float(c) / float(total)) / _LN2
    return abs(ent / float(total))


def _ln_ass(sv) -> float:
    """ln of the number of compositions in the state's complexity class (``s_LnAss``)."""
    ans = _lnfact_table()[0][20]
    if not sv:
        return ans
    padded = list(sv) + [0] * (21 - len(sv))
    total, klass = 20, 1
    svim1 = padded[0]
    i = 0
    while True:
        i += 1
        if i == 20:
            ans -= _lnfact(klass)
            break
        svi = padded[i]
        if svi == svim1:
            klass += 1
        else:
            total -= klass
            ans -= _lnfact(klass)
            if svi == 0:
                ans -= _lnfact(total)
                break
            klass = 1
        svim1 = svi
    return ans


def _ln_prob(sv, length: int) -> float:
    ans1 = _ln_ass(sv)
    ans2 = 0.0
    if ans1 > -100000.0:
        ans2 = _lnfact(length)
        for c in sv:
            ans2 -= _lnfact(c)
    return ans1 + ans2 - float(length) * _LN20


def _entropies_ref(cls, start, length, window):
    """Per-position entropy of the window centred there (-1: none), or None if too short."""
    if window > length:
        return None
    downset = (window + 1) // 2 - 1
    upset = window - downset
    h = [-1.0] * length
    win = _Win(cls, start, window)
    maxbogus = min(MAXBOGUS, window)
    for i in range(downset, length - upset + 1):
        if win.bogus <= maxbogus:
            h[i] = _entropy(win.state())
        if win.start + window < start + length:
            win.shift()
    return h


def _trim_ref(cls, start, length):
    """(lend, rend) of the least probable sub-window of cls[start:start+length]."""
    lend, rend = 0, length - 1
    minlen = max(1, length - MAXTRIM)
    minprob = 1.0
    for ln in range(length, minlen, -1):
        win = _Win(cls, start, ln)
        i = 0
        while True:
            prob = _ln_prob(win.state(), ln)
            if prob < minprob:
                minprob, lend, rend = prob, i, ln + i - 1
            if win.start + ln >= start + length:
                break
            win.shift()
            i += 1
    return lend, rend


def _entropies_nb(cls, start, length, window):
    if window > length:
        return None
    return seg_nb.entropies(cls, start, length, window, min(MAXBOGUS, window), _LOG_WIN10_ARR)


def _trim_nb(cls, start, length):
    return seg_nb.trim(cls, start, length, MAXTRIM, _lnfact_table()[1])


def _seg(cls, start, length, p: SegParams, offset, compiled=True):
    """Segments (begin, end) of cls[start:start+length], head first as BLAST+'s list;
    ``compiled``: the numba loops of ``seg_nb`` (else the plain ones here)."""
    segs = []
    window, locut, hicut = p.window, p.locut, p.hicut
    downset = (window + 1) // 2 - 1
    upset = window - downset
    h = (_entropies_nb if compiled else _entropies_ref)(cls, start, length, window)
    if h is None:
        return segs
    first, last = downset, length - upset
    lowlim = first
    i = first
    while i <= last:
        if h[i] <= locut and h[i] != -1.0:
            j = i
            while j >= lowlim and h[j] != -1.0 and h[j] <= hicut:
                j -= 1
            loi = j + 1
            j = i
            while j <= last and h[j] != -1.0 and h[j] <= hicut:
                j += 1
            hii = j - 1
            leftend = loi - downset
            rightend = hii + upset - 1
            lend, rend = (_trim_nb if compiled else _trim_ref)(cls, start + leftend,
                                                               rightend - leftend + 1)
            span = rightend - leftend + 1
            leftend, rightend = leftend + lend, rightend - (span - rend - 1)
            if i + upset - 1 < leftend:        # a trigger window inside the left trim
                a, b = loi - downset, leftend - 1
                left = _seg(cls, start + a, b - a + 1, p, offset + a, compiled)
                if left:
                    segs.insert(0, left[0])    # BLAST+ keeps the head of that list only
            segs.insert(0, (leftend + offset, rightend + offset))
            i = min(hii, rightend + downset)
            lowlim = i + 1
        i += 1
    return segs


def _merge(segs):
    """``s_MergeSegs`` with hilenmin 0 on the head-first list."""
    segs = [list(s) for s in segs]
    k = 0
    while k + 1 < len(segs):
        cur, nxt = segs[k], segs[k + 1]
        if cur[0] - nxt[1] - 1 < 0:
            cur[1] = max(cur[1], nxt[1])
            cur[0] = min(cur[0], nxt[0])
            del segs[k + 1]
        else:
            k += 1
    return [tuple(s) for s in segs]


def seg_segments(codes, params: SegParams = SegParams(), compiled=True):
    """Masked intervals [(first, last)] (0-based, inclusive), sorted and merged;
    ``compiled=False``: the plain Python reference throughout."""
    p = params.checked()
    cls = _STANDARD[np.asarray(codes, dtype=np.uint8)].astype(np.int64)
    segs = _merge(_seg(cls if compiled else cls.tolist(), 0, len(cls), p, 0, compiled))
    out = []
    for a, b in sorted(segs):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def seg_mask(codes, params: SegParams = SegParams()) -> np.ndarray:
    """Bool mask of the residues SEG masks."""
    mask = np.zeros(len(codes), dtype=bool)
    for a, b in seg_segments(codes, params):
        mask[a:b + 1] = True
    return mask


def parse_seg(value: str):
    """``-seg`` value as BLAST+ reads it: 'no' -> None, 'yes' -> defaults, 'W L H' -> those
    (integer window; values <= 0 mean the defaults); anything else is an error."""
    v = str(value).strip()
    if v == "no":
        return None
    if v == "yes":
        return SegParams()
    parts = v.split()
    try:
        if len(parts) != 3:
            raise ValueError
        return SegParams(int(parts[0]), float(parts[1]), float(parts[2]))
    except ValueError:
        from ..errors import InputError
        raise InputError(f"-seg {value}: expected 'yes', 'no' or 'window locut hicut' "
                         "(e.g. '12 2.2 2.5')") from None
