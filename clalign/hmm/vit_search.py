"""hmmsearch's bias, Viterbi and Forward filters decided here, so that pyhmmer runs only on the
targets that pass them all (or come near a threshold).

HMMER's pipeline (``p7_Pipeline``, p7_pipeline.c) after the MSV filter, per target: the bias
filter (P of the MSV score against the bias filter score <= F1), then ``if (P > F2)`` the
Viterbi filter (P of its score against the same filter score <= F2; a target whose bias-filter
P is already <= F2 skips it and passes), then the Forward filter (P of the Forward score against
the filter score, exponential tail, <= F3) and the domains. A pyhmmer ``Pipeline(F2=1.0)``
never runs the Viterbi filter (P > 1 is never true), one with ``F3=1.0`` passes every target's
Forward filter, and on exactly the targets HMMER passes through those filters they give the
same hits, E-values, domZ and counts as HMMER's full pipeline on the whole database (checked on
the bundled models x proteome; ``tests/test_hmm_vit_search.py``). So per model:

* every MSV survivor gets its bias-filter score (:mod:`clalign.hmm.bias_engine` on devices
  with doubles, else :mod:`clalign.hmm.vit_bias` on the host) and, where HMMER would run it,
  its Viterbi filter score (:mod:`clalign.hmm.vit_engine`); those past Viterbi get their
  Forward score (:mod:`clalign.hmm.fwd_engine`), all on the device;
* a target whose every decision is clear by more than :data:`MARGIN_BITS` (Forward:
  :data:`FWD_MARGIN_BITS`) is *sure*: it goes to pyhmmer with F2 = F3 = 1 (it passes every
  filter) or is dropped, and the stages it passed are counted here (HMMER's
  ``n_past_msv``/``n_past_bias``/``n_past_vit``);
* the rare target near a threshold goes to pyhmmer's own pipeline: with HMMER's F2 and F3
  when the MSV, bias or Viterbi decision is near, with F2 = 1 and HMMER's F3 when only the
  Forward one is; pyhmmer decides and counts it itself. So do targets longer than
  :data:`LONG_TARGET` and models longer than the kernels take.

The tables list the pipeline's thresholds from the first merged ``TopHits``: the part with
HMMER's F2 and F3 is always first (an empty one if no target was near a threshold).
"""
from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

import numpy as np

from ..runtime.jit import njit
from .pvalue import LN2, msv_bit_threshold, null_nats

#: Decisions closer than this to their threshold (in bits) are left to pyhmmer's pipeline.
MARGIN_BITS = 1e-3
_T_EPS = 1e-6
#: HMMER's Viterbi filter threshold (hmmsearch --F2 default; clalign has no --F2 option).
F2_DEFAULT = 1e-3
#: HMMER's Forward filter threshold (hmmsearch --F3 default; clalign has no --F3 option).
F3_DEFAULT = 1e-5
#: Whether the targets past the device Viterbi filter get their Forward filter decided on the
#: device too (:meth:`DeviceViterbi._forward`): pyhmmer then runs only on those that pass it.
FORWARD = True
#: Forward decisions closer than this to F3's threshold (bits) are left to pyhmmer: the kernel
#: sums in float32 in another order than HMMER (1e-5 nats apart on the bundled proteome, scores
#: up to 117 nats: tests/test_hmm_forward.py), and the bias score it is taken against is exact.
FWD_MARGIN_BITS = 1e-2
#: Environment override of the engine choice: "device" or "pyhmmer".
ENV = "CLALIGN_HMM_VITERBI"
#: Targets longer than this (HMMER's L) are left to pyhmmer's own pipeline: the kernels take one
#: row per residue in sequence, so a launch lasts as long as its longest target (a 35,000-residue
#: protein, ~0.1 s of a model's Viterbi stage on the H200), for a handful of MSV survivors.
LONG_TARGET = 8192


#: Device kinds where hmmsearch with the device Viterbi filter was *measured* faster end to end
#: than with pyhmmer's (``tools/bench_viterbi.py --e2e``, tables identical). PoCL, 2 cores: no
#: (docs/perf/hmmsearch.md, 0.26-0.40x). GPUs: by the size of the search (:data:`GPU_MIN_WORK`).
MEASURED_FASTER = {"cpu": False}


#: On a GPU the device path runs when a search's filter work (model states x residues, summed
#: over models) reaches this. What it saves: pyhmmer's Viterbi filter (~1-2 GCUPS per thread)
#: on the ~2 % of targets that pass MSV, and the pyhmmer sequences of those targets built on the
#: main thread; what it costs: the bias and Viterbi programs (from the cache), two launches per
#: model, the stage's threads shared with MSV. Measured on the H200 (run y61, 2026-11-29, with
#: the bias filter on the device and no numba): the 14 bundled models x 572,100 proteins
#: (4.2e11 cells) took 2.29-2.48 s with it against 2.85-3.02 s with pyhmmer's Viterbi (tables
#: identical); the 1,000 Pfam-like models (4.1e13) ran with it at 3.86-3.97x pyhmmer (y19).
#: Smaller searches (14 models x the 2,100-protein proteome: 1.4e9) were not measured and keep
#: pyhmmer's.
GPU_MIN_WORK = 1e11


def use_device_viterbi(caps, work: float | None = None) -> bool:
    """Whether a search runs the Viterbi filter on the device: where :data:`MEASURED_FASTER`
    says so for the device kind, or on a GPU for a search of at least :data:`GPU_MIN_WORK`
    (``work``); ``CLALIGN_HMM_VITERBI=device|pyhmmer`` overrides."""
    env = os.environ.get(ENV, "").strip().lower()
    if env in ("device", "pyhmmer"):
        return env == "device"
    if MEASURED_FASTER.get("gpu" if caps.is_gpu else "cpu", False):
        return True
    return bool(caps.is_gpu) and work is not None and work >= GPU_MIN_WORK


def _bits(score, null) -> np.ndarray:
    """HMMER's ``seq_score = (score - null) / eslCONST_LOG2`` (float operands, float result)."""
    d = (np.asarray(score, dtype=np.float32) - np.asarray(null, dtype=np.float32)).astype(np.float32)
    with np.errstate(invalid="ignore"):
        return (d.astype(np.float64) / LN2).astype(np.float32).astype(np.float64)


def _decide(bits, stats, F) -> tuple:
    """(surely P <= F, surely P > F) for Gumbel P-values of ``bits`` under ``stats``. The
    survival function falls with the score, so both are comparisons with the score T whose
    P-value is F, moved a further ``_T_EPS`` bits away for its float error: two comparisons
    instead of two survival functions (~16 numpy calls a model less, from threads that share
    the interpreter lock)."""
    [(hi, lo)] = _thresholds(stats, F).reshape(-1, 2)
    return _sure(bits, hi, lo, MARGIN_BITS)


def _sure(bits, hi, lo, margin) -> tuple:
    """(surely P <= F, surely P > F) of scores ``bits`` against the bounds (t + eps, t - eps) of
    the score t whose P-value is F, ``margin`` bits further away; NaN is neither."""
    with np.errstate(invalid="ignore"):
        return bits - margin >= hi, bits + margin < lo


def _thresholds(stats, *Fs) -> np.ndarray:
    """(t + eps, t - eps) per P-value threshold F: the bounds :func:`_decide` compares with."""
    out = []
    for F in Fs:
        t = msv_bit_threshold((float(np.float32(stats[0])), float(np.float32(stats[1]))), F)
        out += [t + _T_EPS, t - _T_EPS]
    return np.array(out, dtype=np.float64)


@njit(cache=True, nogil=True)
def _decide_nb(score, null, bounds, margin):
    """:func:`_decide` of :func:`_bits` (``score`` against ``null``) for each threshold pair in
    ``bounds`` (:func:`_thresholds`), in one pass: bit 2j set where surely P <= F_j, bit 2j+1
    where surely P > F_j."""
    n = score.shape[0]
    out = np.zeros(n, dtype=np.uint8)
    for i in range(n):
        d = np.float32(np.float32(score[i]) - np.float32(null[i]))
        bits = np.float64(np.float32(np.float64(d) / LN2))
        code = 0
        for j in range(bounds.shape[0] // 2):
            if bits - margin >= bounds[2 * j]:
                code |= 1 << (2 * j)
            if bits + margin < bounds[2 * j + 1]:
                code |= 2 << (2 * j)
        out[i] = code
    return out


def _decided(score, null, stats, *Fs) -> list:
    """[(surely P <= F, surely P > F)] per F: :func:`_decide` of :func:`_bits`, compiled where
    numba is loaded already (else numpy: a GPU search need not load numba for it)."""
    if "numba" not in sys.modules:
        bits = _bits(score, null)
        return [_decide(bits, stats, F) for F in Fs]
    code = _decide_nb(np.ascontiguousarray(score, dtype=np.float32), np.ascontiguousarray(null, dtype=np.float32),
                      _thresholds(stats, *Fs), MARGIN_BITS)
    return [((code >> (2 * j)) & 1 == 1, (code >> (2 * j + 1)) & 1 == 1) for j in range(len(Fs))]


@dataclass
class VitPlan:
    """One model's targets after the device filters: ``groups`` [(database indices, F2, F3)]
    for pyhmmer (HMMER's thresholds first; then past Viterbi, F2 = 1; then past Forward too,
    F2 = F3 = 1; None: HMMER's), and what the dropped sure targets add to the pipeline counts
    (see :meth:`counts`)."""

    groups: list
    extra_msv: int
    extra_bias: int
    extra_vit: int = 0
    vit_seconds: float = 0.0
    vit_targets: int = 0

    @property
    def passing(self) -> np.ndarray:
        return np.sort(np.concatenate([g for g, _, _ in self.groups]))

    def counts(self, st: dict) -> dict:
        """pyhmmer's merged pipeline counts plus the targets dropped here after passing a stage."""
        return {**st, "n_past_msv": st["n_past_msv"] + self.extra_msv,
                "n_past_bias": st["n_past_bias"] + self.extra_bias,
                "n_past_vit": st["n_past_vit"] + self.extra_vit}


class DeviceViterbi:
    """The bias, Viterbi and Forward filters of one search (database arrays prepared once).
    ``overrides``: kernel values (WG, P) for every model instead of the per-model choice."""

    overrides: dict | None = None

    def __init__(self, db, codes, stops, F1: float, device=None, Ms=(), threads: int = 4, cmap=None,
                 layouts: dict | None = None):
        """``codes``: the database's residues, in Easel's codes or turned into them by
        ``cmap`` (the host bias filter reads them through it: no translated copy of the
        database). ``layouts``: the search's layout cache, whose device copy of the residues
        (:func:`clalign.hmm.layout_dev.residues_on_device`) the kernels read: none of their own."""
        from ..runtime import Runtime
        from .bias_engine import usable
        from .vit_engine import prebuild_viterbi

        self.db, self.codes, self.cmap, self.stops = db, codes, cmap, np.asarray(stops, dtype=np.int64)
        self.off = np.asarray(db.offsets, dtype=np.int64)
        self.F1, self.device, self.threads = float(F1), device, max(1, int(threads))
        self.cache: dict = {}                        # the database's device copy
        self.layouts = layouts
        #: the bias filter on the device (else the host's compiled loop, :mod:`clalign.hmm.vit_bias`)
        self.device_bias = usable(Runtime.get(device).caps)
        self._local = threading.local()              # per thread: its own command queue
        self._lock = threading.Lock()
        if self.overrides is None and len(Ms):       # every model's kernel, built in the background
            prebuild_viterbi(Ms, device, min(4, self.threads))

    def _on_device(self) -> tuple:
        """(this thread's command queue, the database's device copy). A search runs models in
        several threads: each waits for its own launches only; the copy is made once, under a
        lock, and is kept in ``cache`` where :func:`clalign.hmm.vit_engine.vit_words_device`
        finds it."""
        from ..runtime import Runtime
        from .vit_engine import resident_key, _Resident

        rt = Runtime.get(self.device)
        q = getattr(self._local, "queue", None)
        if q is None:
            q = self._local.queue = rt.new_queue()
        key = resident_key(rt)
        with self._lock:
            if key not in self.cache:
                res = None
                if self.layouts is not None:
                    from .layout_dev import residues_on_device

                    res = residues_on_device(self.layouts, rt, q, self.db.residues)
                self.cache[key] = _Resident(rt.ctx, self.db.residues, self.off, res)
        return q, self.cache[key]

    def _bias(self, hmm, idx, L) -> np.ndarray:
        """Bias-filter scores of database targets ``idx`` (HMMER's lengths ``L``)."""
        if self.device_bias:
            from .bias_engine import bias_scores_device

            q, res = self._on_device()
            return bias_scores_device(hmm.M, hmm.compo, res.res, res.offs, idx, L, self.device, q)
        from .vit_bias import filter_scores          # numba: loaded when a model needs it, not to decide

        return filter_scores(hmm.M, hmm.compo, self.codes, self.off[idx], self.off[idx + 1], self.stops[idx],
                             self.cmap, self.threads)   # parallel inside

    def plan(self, hmm, msv_nats, passing, lengths) -> VitPlan | None:
        """:meth:`split` of a model, or None for a model longer than the kernel takes."""
        from .vit_engine import VIT_MAX_M

        return None if hmm.M > VIT_MAX_M else self.split(hmm, msv_nats, passing, lengths)

    def split(self, hmm, msv_nats, passing, lengths) -> VitPlan:
        """Split ``passing`` (a superset of the MSV survivors, database indices; ``msv_nats``
        their MSV scores, in the same order) as above."""
        from .vit_engine import vit_words_device
        from .vit_reference import build_vit_profile, vit_nats

        idx = np.asarray(passing, dtype=np.int64)
        L = np.asarray(lengths, dtype=np.int64)[idx]
        usc = np.asarray(msv_nats, dtype=np.float32)
        [(m_ok, m_no)] = _decided(usc, null_nats(L), hmm.msv, self.F1)
        exact = ~(m_ok | m_no)                       # near the MSV threshold: pyhmmer decides
        if LONG_TARGET is not None:                  # and for the long targets (LONG_TARGET)
            long_ = L > LONG_TARGET
            exact |= m_ok & long_
            m_ok = m_ok & ~long_
        fs = np.zeros(idx.size, dtype=np.float32)
        sel = np.flatnonzero(m_ok)
        fs[sel] = self._bias(hmm, idx[sel], L[sel])
        (b_ok, b_no), (s_ok, s_no) = _decided(usc, fs, hmm.msv, self.F1, F2_DEFAULT)   # P <= F2 skips Viterbi
        exact |= m_ok & ~(b_ok | b_no)
        exact |= m_ok & b_ok & ~(s_ok | s_no)
        run = np.flatnonzero(m_ok & b_ok & s_no & ~exact)
        v_ok = np.zeros(idx.size, dtype=bool)
        seconds = 0.0
        if run.size:
            prof = build_vit_profile(hmm)
            lens = L[run]
            words, seconds = vit_words_device(prof, self.db.residues, self.off, idx[run], lens, self.device,
                                              self.overrides, cache=self.cache, queue=self._on_device()[0])
            [(ok, no)] = _decided(vit_nats(words, lens), fs[run], hmm.viterbi, F2_DEFAULT)
            v_ok[run] = ok
            exact[run[~(ok | no)]] = True
        sure = ~exact
        fast = sure & m_ok & b_ok & (s_ok | v_ok)
        fwd_ok, dropped = self._forward(hmm, idx, L, fs, fast)
        extra_msv = int((sure & m_ok & ~fast).sum()) + int(dropped.sum())
        extra_bias = int((sure & m_ok & b_ok & ~fast).sum()) + int(dropped.sum())
        rest = fast & ~fwd_ok & ~dropped             # past Viterbi, Forward left to pyhmmer
        return VitPlan(groups=[(idx[exact], None, None), (idx[rest], 1.0, None), (idx[fwd_ok], 1.0, 1.0)],
                       extra_msv=extra_msv, extra_bias=extra_bias, extra_vit=int(dropped.sum()),
                       vit_seconds=seconds, vit_targets=int(run.size))

    def _forward(self, hmm, idx, L, fs, fast) -> tuple:
        """(surely past the Forward filter, surely not) of the targets ``fast`` marks (past the
        Viterbi stage): their Forward scores on the device (:mod:`clalign.hmm.fwd_engine`)
        against HMMER's F3 with :data:`FWD_MARGIN_BITS`; none where :data:`FORWARD` is off or
        the model has no Forward statistics."""
        none = np.zeros(idx.size, dtype=bool)
        sel = np.flatnonzero(fast)
        if not FORWARD or not sel.size or hmm.forward is None:
            return none, none
        from .fwd_engine import fwd_scores_device
        from .fwd_reference import build_fwd_profile, fwd_bit_threshold

        prof = build_fwd_profile(hmm)
        q, res = self._on_device()
        bits = _bits(fwd_scores_device(prof, res.res, res.offs, idx[sel], L[sel], self.device, q, self.overrides),
                     fs[sel])
        t = fwd_bit_threshold(prof.tau, prof.lam, F3_DEFAULT)
        ok, no = _sure(bits, t + _T_EPS, t - _T_EPS, FWD_MARGIN_BITS)   # NaN (HMMER's range error): pyhmmer's
        out_ok, out_no = none.copy(), none.copy()
        out_ok[sel[ok]] = True
        out_no[sel[no]] = True
        return out_ok, out_no
