"""HMMER3 profile HMMs: model files, HMMER's MSV/SSV byte profiles, MSV statistics and
``clalign hmmsearch`` (device MSV filter, then pyhmmer for the exact remaining stages).

The names below are imported on first use (PEP 562): ``clalign hmmsearch`` imports this
package before it starts the device's context (:mod:`clalign.cl_early`), and that context is
made while numpy is imported only if the package itself does not import numpy.
``msv_scores``/``ssv_scores`` (the OpenCL filters) live in :mod:`clalign.hmm.engine`, so
model reading and profile building work without an OpenCL driver.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_WHERE = {"HMM": "hmmfile", "read_hmm": "hmmfile", "read_hmms": "hmmfile", "MSVProfile": "profile",
          "build_msv_profile": "profile", "msv_pass": "pvalue", "msv_pvalue": "pvalue",
          "msv_scores": "engine", "ssv_scores": "engine"}

__all__ = list(_WHERE)

if TYPE_CHECKING:       # pragma: no cover
    from .engine import msv_scores, ssv_scores  # noqa: F401
    from .hmmfile import HMM, read_hmm, read_hmms  # noqa: F401
    from .profile import MSVProfile, build_msv_profile  # noqa: F401
    from .pvalue import msv_pass, msv_pvalue  # noqa: F401


def __getattr__(name):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'clalign.hmm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
