"""HMMER3 profile HMMs: model files, HMMER's MSV/SSV byte profiles, MSV statistics and
``clalign hmmsearch`` (device MSV filter, then pyhmmer for the exact remaining stages).

``msv_scores``/``ssv_scores`` (the OpenCL filters) live in :mod:`clalign.hmm.engine` and are
imported on first use, so model reading and profile building work without an OpenCL driver.
"""
from .hmmfile import HMM, read_hmm, read_hmms
from .profile import MSVProfile, build_msv_profile
from .pvalue import msv_pass, msv_pvalue

__all__ = ["HMM", "read_hmm", "read_hmms", "MSVProfile", "build_msv_profile", "msv_pass", "msv_pvalue",
           "msv_scores", "ssv_scores"]


def __getattr__(name):
    if name in ("msv_scores", "ssv_scores"):
        from . import engine
        return getattr(engine, name)
    raise AttributeError(f"module 'clalign.hmm' has no attribute {name!r}")
