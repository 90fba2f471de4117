"""Everything clalign reads from pyhmmer beyond its documented API, in one place.

pyhmmer (HMMER 3.4) is the truth the kernels are tested against and runs hmmsearch's stages
after the MSV filter. Two things it exposes only through internals are used here:

* ``OptimizedProfile.rbv``/``sbv``/``tjb``/... of a configured profile (the MSV/SSV byte
  profile HMMER builds), for :func:`profile_from_pyhmmer`; the profile object is kept as
  ``_om`` so that tests and benchmarks can run pyhmmer's own filters with it;
* a ``TopHits``'s pipeline counters (``__getstate__()["pipeline"]``: targets past the MSV,
  bias, Viterbi and Forward filters), for hmmsearch's pipeline statistics.

If pyhmmer changes either, this module is the one to adapt.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from .profile import MSVProfile

_PYH = "ACDEFGHIKLMNPQRSTVWY-BJZOUX*~"     # pyhmmer/Easel amino digital order
_CLA = "-ABCDEFGHIKLMNPQRSTVWXYZU*OJ"      # clalign PROTEIN codes 0..27
_ROWS = np.array([_PYH.index(c) for c in _CLA], dtype=np.intp)


@dataclass
class _PyhmmerProfile(MSVProfile):
    """An MSVProfile read from pyhmmer's optimized profile (the truth the kernels are tested
    against): its bytes unstriped, and tjb from pyhmmer itself (``_om``, set to each length)."""

    _om: object = None

    def tjb_b(self, L):
        """tjb of length ``L`` (int, or an array of lengths), one pyhmmer call per length."""
        def one(x):
            self._om.L = int(x)
            return int(self._om.tjb)

        if np.ndim(L) == 0:
            return one(L)
        L = np.asarray(L)
        return np.array([one(x) for x in L.ravel()], dtype=np.int64).reshape(L.shape)


def profile_from_pyhmmer(hmm, L: int = 400) -> _PyhmmerProfile:
    """Unstripe pyhmmer's ``rbv``/``sbv`` (byte ``q*16+z`` holds state ``z*Q+q+1``) and map its
    digital alphabet rows to clalign PROTEIN codes."""
    from pyhmmer.plan7 import Background, Profile

    if hmm.alphabet.K != 20:
        raise ParameterError(f"HMM {hmm.name!r} is not a protein model (alphabet size {hmm.alphabet.K})")
    prof = Profile(hmm.M, hmm.alphabet)
    prof.configure(hmm, Background(hmm.alphabet), L)
    om = prof.to_optimized()
    M = hmm.M

    rbv_q = np.asarray(om.rbv)
    Q = rbv_q.shape[1] // 16
    rbv = rbv_q[:, :Q * 16].reshape(-1, Q, 16).transpose(0, 2, 1).reshape(-1, 16 * Q)[:, :M]
    sbv_q = np.asarray(om.sbv)[:, :Q * 16]
    sbv = sbv_q.reshape(-1, Q, 16).transpose(0, 2, 1).reshape(-1, 16 * Q)[:, :M].view(np.int8)
    try:  # pyhmmer 0.12.3 raises AttributeError on EvalueParameters.m_mu; the filters need no E-values
        mu, lam = float(hmm.evalue_parameters.m_mu), float(hmm.evalue_parameters.m_lambda)
    except (AttributeError, TypeError):
        mu = lam = float("nan")
    name = hmm.name.decode() if isinstance(hmm.name, bytes) else str(hmm.name)
    return _PyhmmerProfile(M=M, name=name, rbv=np.ascontiguousarray(rbv[_ROWS]),
                           sbv=np.ascontiguousarray(sbv[_ROWS]), rbv_easel=np.ascontiguousarray(rbv),
                           sbv_easel=np.ascontiguousarray(sbv),
                           base_b=int(om.base_b), bias_b=int(om.bias_b), tbm_b=int(om.tbm), tec_b=int(om.tec),
                           scale_b=float(om.scale_b), mu=mu, lam=lam, L=int(L), _om=om)


def pipeline_counts(hits) -> dict:
    """Targets past each filter of the pipeline that produced ``hits`` (pyhmmer TopHits):
    keys n_past_msv, n_past_bias, n_past_vit, n_past_fwd, and the thresholds F1, F2, F3."""
    st = hits.__getstate__()["pipeline"]
    return {k: st[k] for k in ("n_past_msv", "n_past_bias", "n_past_vit", "n_past_fwd", "F1", "F2", "F3")}


def merged_counts(parts: list) -> dict:
    """:func:`pipeline_counts` of the merge of TopHits whose counts are ``parts`` (in merge
    order): ``TopHits.merge`` sums the targets past each filter and keeps the first's thresholds."""
    out = dict(parts[0])
    for st in parts[1:]:
        for k in ("n_past_msv", "n_past_bias", "n_past_vit", "n_past_fwd"):
            out[k] += st[k]
    return out


def read_models(data: bytes) -> list:
    """pyhmmer HMM objects of an HMM file's bytes (plain text; callers decompress)."""
    from pyhmmer.plan7 import HMMFile

    with HMMFile(io.BytesIO(data)) as hf:
        return list(hf)


def same_name(phmm, hmm) -> bool:
    """pyhmmer's model name equals ours (compared as the file's bytes; pyhmmer cannot decode a
    non-UTF-8 name, which HMMER accepts)."""
    try:
        name = phmm.name
    except UnicodeDecodeError:
        return True
    raw = name if isinstance(name, bytes) else name.encode("utf-8")
    return raw == hmm.name.encode("latin-1")
