"""clalign: vendor-neutral OpenCL sequence search.

Engines: Smith-Waterman database search (:func:`sw_scores`, :func:`sw_search`) and the
HMMER3 MSV/SSV filters (:func:`msv_scores`, :func:`ssv_scores`), on one data layer
(:class:`Database`) and one OpenCL runtime (:mod:`clalign.runtime`).

Every API that takes a database accepts a :class:`Database`, the path of a prepared
database (``clalign makedb``) or the path of a FASTA file (plain or gzip).
"""
from importlib import import_module

__version__ = "0.1.0"

_EXPORTS = {
    "Database": "clalign.data",
    "makedb": "clalign.data",
    "read_fasta": "clalign.data",
    "sw_scores": "clalign.sw",
    "sw_search": "clalign.sw",
    "msv_scores": "clalign.hmm",
    "ssv_scores": "clalign.hmm",
    "Runtime": "clalign.runtime",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    # Lazy, so `import clalign` stays cheap and `clalign makedb` needs no OpenCL driver.
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'clalign' has no attribute {name!r}")
    return getattr(import_module(mod), name)
